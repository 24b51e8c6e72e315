// Package mooncakesdk is kvshare's boundary with Mooncake Store: it loads
// the store's C ABI (store_c.h, built into libmooncake_store.so) at run
// time with purego, without cgo or a link-time dependency, and offers it
// as a small [Client] interface; it reads the store config file; and it
// refuses environments that break the driver's proofs. Package fakesdk
// implements the same Client in memory, so a driver can be tested on any
// machine.
//
// [Client] is what a store driver needs of the store: register and
// unregister a buffer, batch put-from, batch get-into, batch is-exist,
// health check and destroy, with per-key answers exactly as the store
// gives them (0, a byte count, or a negative [Code]). Each batch call
// takes its keys as strings or as a [KeyList], the keys packed as the C
// ABI takes them, written in place by the caller. [Open] is the only way
// to get a real Client: config check, environment check, library load
// and pin check, wait for the master, client setup. [StoreConfig],
// [LoadStoreConfig] and [ParseStoreConfig] read the one TOML file;
// [CheckEnvironment] and [CheckLibrary] run Open's checks without a
// client (kvshare doctor). [HandleGuard] is the call lock every Client
// keeps; [Remover] is an optional interface for tools; [Code] names the
// store's error codes.
//
// It promises:
//
//   - A Client exists only for a handle whose setup succeeded: a failed
//     setup destroys its handle before Open returns, so no call reaches it.
//   - No library function is called on a destroyed handle, and Destroy
//     never overlaps another call.
//   - A call with malformed arguments ([ErrInvalidArgument]) reaches
//     nothing; a call with an error writes no per-key result.
//   - Loading never panics: every symbol is looked up first, and all the
//     missing ones are named. No C memory is allocated, so none can leak.
//   - The per-key behaviour documented on [Client] is the real store's, as
//     a real pool answered it.
//   - The create call runs on a goroutine locked to its OS thread that
//     exits without unlocking (the library blocks signals on that thread);
//     no Go code runs on that thread again.
//
// It refuses a config with an unknown section or key, a value of the
// wrong type or out of range, an HA master list or a URL for the master,
// or an unreadable file, naming the file, section and key ([ConfigError],
// [ErrConfig]); MC_STORE_LOCAL_HOT_CACHE_SIZE other than empty or "0",
// MC_TCP_PROTO=1, and MC_USE_TENT or MC_USE_TEV1 set at all
// ([ErrEnvironment]); a library whose SHA-256 is not in [mooncake]
// sdk_sha256 when that list is set ([ErrLibraryHash]) or that lacks a
// symbol ([ErrLibrary]); and a master that does not accept a TCP
// connection within the wait ([ErrMaster]).
//
// The config keys, the environment and fakesdk's options: the module's
// README.md. The C ABI as kvshare uses it, why each environment is
// refused, and this package's decisions: docs/design/mooncakesdk.md.
package mooncakesdk
