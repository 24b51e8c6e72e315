// Package pool starts and stops a Mooncake Store pool on loopback — one
// master (with its HTTP metadata server) and its segment providers
// (Options.Providers, one by default) — from a Mooncake folder laid out
// as bin/mooncake_master, bin/mooncake_client and
// lib/libmooncake_store.so, for the real-pool tests, kvshare doctor and
// the benchmark. It also holds the real-pool tier's switch (Tier,
// EnvDir); package pooltest turns it into a skip or a failure for tests.
//
// An isolated pool (Options.Isolate) runs each provider, and each client
// node (StartClientNode), in a network namespace of its own on a bridge
// in the caller's namespace, so that a node can be cut off as well as
// killed or frozen; the namespaces are the processes' own and go with
// them, and Stop removes the bridge.
//
// It owns every process it starts, from Start to Stop: the master, the
// provider, and every restart of either (StopProvider, KillProvider,
// StartProvider; StopMaster, KillMaster, StartMaster). Their output goes
// to one log file per launch (master-1.log, provider-2.log, …) in
// Options.LogDir; errors quote the tail of the log concerned and name
// its path.
//
// It promises:
//
//   - Every port it hands a process is on 127.0.0.1, between 10000 and
//     32767, outside 12300–14300 and 15000–17000, and free when probed; a
//     process that exits before its sockets accept is launched again on
//     fresh ports, Options.Attempts times in all. The master keeps its
//     ports across StartMaster.
//   - Start and the Start* methods return once the process itself holds a
//     listening socket on each of its ports and a dial to each is
//     accepted, within Options.StartTimeout and the context.
//   - Stopping is by PID, never by name: SIGTERM (with SIGCONT), then
//     SIGKILL after Options.StopTimeout, providers before the master. Stop
//     is idempotent and fits t.Cleanup. A test binary that dies without
//     cleanups takes its pool's processes with it (Pdeathsig).
//   - Freeze and Resume (SIGSTOP, SIGCONT), FreezeMaster and ResumeMaster
//     return once the kernel shows the process stopped or running again.
//     KillProvider and KillMaster are SIGKILL, as a crash.
//   - Before starting anything, Check runs ldd on the library and both
//     binaries and names each runtime library "not found" with the Debian
//     package that provides it.
//   - The pool's processes get MC_TCP_BIND_ADDRESS=127.0.0.1; ClientEnv is
//     the same for a client process of the pool.
//
// It refuses a relative folder (ErrNotAbsolute), a missing or
// non-executable file (ErrLayout), a missing runtime library
// (*MissingLibrariesError), timeouts that are not whole seconds
// (ErrOptions), any call after Stop (ErrStopped), and calls that do not
// fit a process's state (ErrState). It does not hide Mooncake's own
// any-address listeners: run the tier inside a private network namespace
// when you can. It runs on Linux only (/proc, Pdeathsig).
//
// ForTests gives the tier's master settings: eviction off, put discard
// and release timeouts of 2 s and 4 s. How to run the tier: the module's
// README.md. Why the ports, settings and stop order are what they are:
// docs/design/mooncakedrv.md (section "The pool and the real-pool tier").
package pool
