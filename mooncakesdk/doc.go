// Package mooncakesdk is kvshare's boundary with Mooncake Store: it loads
// the store's C ABI (store_c.h, built into libmooncake_store.so) at run
// time with purego, without cgo or a link-time dependency, and offers it
// as a small [Client] interface; it reads the store config file; and it
// refuses environments that break the driver's proofs. Package fakesdk
// implements the same Client in memory, with the store's behaviour and
// scripted faults, so a driver can be tested on any machine.
//
// # What it owns
//
//   - [Client]: what a store driver needs of the store (register and
//     unregister a buffer, batch put-from, batch get-into, batch
//     is-exist, health check, destroy), with per-key answers exactly as
//     the store gives them: 0, a byte count, or a negative [Code]. Each
//     batch call takes its keys as strings or as a [KeyList].
//   - [KeyList]: a batch's keys packed as the C ABI takes them (each
//     key's bytes and a NUL, in one buffer), written by the caller in
//     place, so keys cross to C without a Go string or a copy.
//   - [HandleGuard]: the one home of the call lock every Client keeps
//     (calls shared, destroy exclusive, ErrClosed after).
//   - [Open]: config check, environment check, library load and pin
//     check, wait for the master, client setup; the only way to get a
//     real Client.
//   - [StoreConfig], [LoadStoreConfig], [ParseStoreConfig]: the one TOML
//     file with a [blob] and a [mooncake] section.
//   - [CheckEnvironment]: the variables refused at open.
//   - [CheckLibrary]: the library Open would load, its file and SHA-256,
//     checked as Open checks it, without a client (kvshare doctor).
//   - [Remover]: an optional interface of a Client that removes one
//     object; no driver needs it, tools do (doctor's probe).
//   - [Code]: the store's error codes, named.
//
// # What it promises
//
//   - A Client exists only for a handle whose setup succeeded. A failed
//     setup destroys its handle before Open returns, so no call can
//     reach it (the library dereferences a null client in its batch
//     calls).
//   - No library function is called on a destroyed handle, and Destroy
//     never overlaps another call: calls enter a [HandleGuard] shared,
//     Destroy closes it exclusively.
//   - A call with malformed arguments ([ErrInvalidArgument]) reaches
//     nothing. A call with an error writes no per-key result.
//   - Loading never panics: every one of the nineteen symbols is looked
//     up with purego.Dlsym first, and all the missing ones are named.
//   - No C memory is allocated, so none can leak: a call's keys are the
//     KeyList's own Go buffer of NUL-terminated strings, pinned for the
//     call, and a pooled char* array pointing into it.
//   - The per-key behaviour documented on [Client] is the real store's
//     as a real pool answered it: a key given twice in a put answers 0
//     after its first copy whatever happened to it, in a get each copy
//     is checked against its own buffer; a put in flight answers 0 to a
//     second put only until the master's put_start_discard_timeout_sec
//     (30 s); a stuck transfer answers TRANSFER_FAIL after 30 s over
//     TCP (MC_TCP_STATUS_TIMEOUT_SEC), before the 60 s cap.
//   - The create call runs on a goroutine locked to its OS thread that
//     exits without unlocking: the library blocks SIGINT, SIGTERM, SIGHUP
//     and SIGUSR1 on that thread, which is then thrown away (or, should it
//     be the process's main thread, which Go never ends, parked for good
//     by the runtime). No Go code runs on it again.
//
// # What it refuses
//
//   - A config with an unknown section or key (keys are case-sensitive),
//     a value of the wrong TOML type (a float where an integer belongs,
//     1.28e+8 included), a value out of range, an HA master list (an
//     array, or a list separated by commas, semicolons or spaces), a URL
//     for the master, or a malformed or unreadable file; each refusal
//     names the file, section and key ([ConfigError], [ErrConfig]).
//   - MC_STORE_LOCAL_HOT_CACHE_SIZE other than empty or "0",
//     MC_TCP_PROTO=1, MC_USE_TENT or MC_USE_TEV1 set at all
//     ([ErrEnvironment], naming the variable).
//   - A library whose SHA-256 is not in [mooncake] sdk_sha256 when that
//     list is set ([ErrLibraryHash]); one that lacks a symbol
//     ([ErrLibrary]).
//   - A master that does not accept a TCP connection within the wait
//     ([ErrMaster], naming the address).
//
// # Decisions
//
// Where the design was silent, this package decided:
//
//   - Code is an int64: the ABI writes a get's answers as int64_t and a
//     put's and an exists-check's as int, and one type holds all three.
//     BatchPutFrom widens the library's int answers into the caller's
//     []int64; BatchGetInto and BatchIsExist let the library write the
//     caller's slice directly (it writes nothing when it fails).
//   - Setup is not a Client method: Open is setup, which makes "never a
//     batch call on a handle whose setup failed" true by construction.
//     Setup runs on the same locked thread as create, so the threads it
//     starts inherit the blocked signal mask, as the library intends.
//     Open's context cannot interrupt setup: if it ends first, Open
//     returns at once and the handle is destroyed when setup returns.
//   - An empty key is refused with ErrInvalidArgument (the store would
//     answer -600 for it), as is a key holding a NUL byte (it cannot
//     cross as a C string). A batch of no keys returns nil without a
//     call: the library answers -1 to the NULL arrays an empty slice
//     becomes.
//   - Puts pass a NULL replicate config: one replica, the store's
//     defaults.
//   - The KeyList calls are the calls; the string-keyed ones check their
//     keys (as before: [CheckTransfer], [CheckExist]), pack them into a
//     pooled KeyList ([PackKeys]) and make the KeyList call, so both
//     answer alike and existing callers keep working. A KeyList call
//     checks only lengths and buffer addresses ([CheckTransferList],
//     [CheckExistList]): its keys were checked as they were added. A nil
//     *KeyList reads as an empty list.
//   - KeyList.Add checks only that buf is longer than Tail() (the
//     cheapest test that something was appended; it cannot tell a buf
//     that copies the prefix from one that does not, and trusts the
//     caller to have appended to Tail()) and that the new bytes hold no
//     NUL; on error nothing changes, though bytes appended in place may
//     lie past the list's end in its spare capacity. Key(i) is capped at
//     its NUL, so appending to it never overwrites the next key.
//   - The char* array of a call and a put's C int answers come from
//     sync.Pools and go back with their pointers cleared, so a KeyList
//     call's own allocations do not grow with its keys. What remains per
//     call is purego's (its reflect-based call; about 7 to 11 small
//     allocations, whatever the number of keys).
//   - The guard is named HandleGuard (not "lock" or "gate": package
//     fakesdk's Gate is a test's stopping point): it guards the handle's
//     lifetime. Close takes the destroy to run inside the exclusive
//     section, so "destroy runs once, after every call left, before any
//     other call" lives in one place.
//   - Destroy waits for calls in progress; a second Destroy, and any call
//     after the first, returns [ErrClosed].
//   - A library given as a path (with a slash) is hashed before it is
//     loaded, so a refused file never runs. A bare name is left to the
//     loader's search path; the file the loader chose is found in
//     /proc/self/maps and hashed after loading. Libraries are loaded
//     RTLD_NOW|RTLD_LOCAL and never unloaded, not even refused ones:
//     their static constructors may have started threads.
//   - All nineteen symbols must be present; only the ten this package
//     calls are bound. init_all, the legacy setup, is never called.
//   - The master wait dials host:port every 20 ms, backing off to
//     500 ms, until a connection is accepted (then closed) or the wait
//     ends: Open's context, or [DefaultMasterWait] when it has no
//     deadline. It runs before the handle is created.
//   - get_hostname is called once after setup, for the log.
//   - The health check's "not initialised" (1) and "master unreachable"
//     (2) wrap [ErrUnhealthy]; its -1 is a [*CallError].
//   - Config: master, metadata_server and local_hostname are required;
//     protocol is "tcp" (default) or "rdma"; devices is an array of names,
//     passed to the library joined by commas; sdk_sha256 entries are 64
//     hex digits, kept in lower case. Ranges: workers 1–1024 (default
//     4), [mooncake] rows_per_call 1–65536 (default 256), bytes_per_call
//     1 byte–1 TiB (default 128 MiB); the [blob] caps 0 (none) to the
//     same maxima; segment and buffer sizes not negative. Every finding
//     is reported, joined.
//   - Environment: the hot-cache size is accepted only as "" or "0"
//     (stricter than the library, which would read "00" as off too);
//     MC_TCP_PROTO is refused only as exactly "1", the one value the
//     library honours. The check runs at Open: the library reads
//     MC_TCP_PROTO again per transfer, so a process that sets it later
//     is not caught.
package mooncakesdk
