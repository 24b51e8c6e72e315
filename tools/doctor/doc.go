// Package doctor checks that a store config reaches a working Mooncake
// pool: `kvshare doctor --store store.toml`. It runs each step the
// Mooncake driver takes on its way to a first object, one check each,
// and reports every one with a verdict (ok, warn, FAIL, skip) and what
// it saw, so that a user sees what to change, not only that something
// is wrong.
//
// # The checks, in order
//
//   - config: the file as the driver reads it (mooncakesdk.LoadStoreConfig);
//     each refusal names the file, the section and the key.
//   - key prefix: [blob] key_prefix under the key rules (package keys),
//     with this run's probe prefix, base/doctor/run (package runprefix).
//   - library: which library the client will load and why (the config, or
//     $KVSHARE_MOONCAKE_LIB, or the loader's search path), its path and
//     SHA-256, the [mooncake] sdk_sha256 pin (checked before a file given
//     by path is loaded), and every one of store_c.h's nineteen functions.
//     No pin passes with a warning that prints the line to add.
//   - environment: the variables the driver refuses
//     (mooncakesdk.CheckEnvironment), each named; whether
//     MC_TCP_BIND_ADDRESS is set.
//   - master: one TCP dial of [mooncake] master; a port in Linux's
//     ephemeral range passes with a warning.
//   - metadata: an HTTP metadata server must answer a key nobody wrote
//     as the master's does (404 "metadata not found"); P2PHANDSHAKE needs
//     none; other kinds are skipped.
//   - client: mooncakesdk.Open, exactly as the driver opens its client,
//     and a health check.
//   - probe put, probe get: one object of random bytes (4 KiB) under a
//     key of this run's own prefix — a put never overwrites, so a fixed
//     key would prove nothing from the second run on — put from a
//     buffer outside the Go heap, confirmed by an exists-check, read back
//     into another buffer and compared byte for byte.
//   - probe remove: the probe removed (mooncakesdk.Remover, forced: the
//     exists-check and the get hold a read lease on it) and an
//     exists-check that it is gone. A client without Remover skips it,
//     leaving the small probe in the pool.
//   - client close: the buffer unregistered and unmapped, the client
//     destroyed — unless a transfer may still touch the buffer
//     (TRANSFER_FAIL, or a call that failed as a whole), when both are
//     kept, as the driver keeps them.
//
// # What it promises
//
// Every check is reported, passed, failed or skipped (with why); the
// report fails when any check failed, never on a warning. A refused
// config stops everything; key prefix, library, environment, master and
// metadata are checked independently of each other, so one run names
// every problem among them; the client is opened only when all of them
// passed, and the probe only on a client that set up.
//
// # Decisions
//
//   - The library check loads the library itself (purego) rather than
//     through mooncakesdk.Open, which stops at its first refusal and
//     checks the environment first: the doctor names the library's state
//     even when the environment or the master is wrong. Its list of the
//     nineteen functions repeats mooncakesdk's (unexported); the client
//     check then opens through mooncakesdk.Open, which checks them all
//     again, so the two cannot disagree silently.
//   - The master is dialled once, not waited for: a doctor answers now.
//     The client's own wait (mooncakesdk.Open) is bounded by
//     [Options.Wait].
//   - The probe calls the SDK client directly, not through the driver:
//     it checks the pool, not kvshare's own code, and it makes the
//     smallest footprint (one object). The main job over the pool is
//     `kvshare roundtrip --store`.
//   - The SDK calls take no deadline: a probe against a segment provider
//     that stopped answering returns after the transfer timeout (30 s
//     over TCP).
package doctor
