// Package pool starts and stops a Mooncake Store pool on loopback — one
// master (with its HTTP metadata server) and one segment provider — from
// a Mooncake folder laid out as bin/mooncake_master, bin/mooncake_client
// and lib/libmooncake_store.so, for the real-pool tests, kvshare doctor
// and the benchmark. It also holds the real-pool tier's switch (Tier,
// EnvDir); package pooltest turns it into a skip or a failure for tests.
//
// # What it owns
//
// Every process it starts, from Start to Stop: the master, the provider,
// and every restart of either (StopProvider/KillProvider/StartProvider,
// StopMaster/KillMaster/StartMaster). Their output goes to one log file
// per launch (master-1.log, provider-2.log, …) in Options.LogDir; errors
// quote the tail of the log concerned and name its path.
//
// # What it promises
//
//   - Ports: every port it hands a process is on 127.0.0.1, between 10000
//     and 32767 (below the kernel's ephemeral range, where a listener can
//     collide with an outgoing connection), outside 12300–14300 and
//     15000–17000 (the transfer engine's own any-address listeners), and
//     free when probed (listen, then close). A process that exits before
//     its sockets accept — how Mooncake reports a port lost between the
//     probe and its bind, logging nothing useful — is launched again on
//     fresh ports, Options.Attempts times in all; the master keeps its
//     ports across StartMaster, since clients know its address.
//   - Ready means ready: Start and the Start* methods return once the
//     process itself holds a listening socket on each of its ports (read
//     from /proc, so another program's listener on a stolen port does not
//     count) and a dial to each is accepted; the wait is bounded by
//     Options.StartTimeout and the context, never a fixed sleep.
//   - Stopping is by PID, never by name: SIGTERM (with SIGCONT, so a frozen
//     provider sees it), then SIGKILL after Options.StopTimeout, providers
//     before the master (a provider unmounts at the master on SIGTERM and
//     hangs when the master is gone). Stop is idempotent and fits
//     t.Cleanup. Children run in their own process group (a terminal's
//     Ctrl-C is not theirs to handle) and are started from one OS thread
//     locked for the pool's life with Pdeathsig SIGKILL, so a test binary
//     that dies without cleanups (a timeout panic, os.Exit) takes its
//     pool's processes with it.
//   - Freeze and Resume (SIGSTOP, SIGCONT) return once the kernel shows the
//     provider stopped or running again; FreezeMaster and ResumeMaster do
//     the same to the master. KillProvider and KillMaster are SIGKILL, as
//     a crash: a killed provider does not unmount its segment.
//   - Before starting anything, Check runs ldd on the library and both
//     binaries and names each runtime library "not found" with the Debian
//     package that provides it.
//   - The pool's own processes get MC_TCP_BIND_ADDRESS=127.0.0.1 (the
//     transfer engine's named listeners stay on loopback); ClientEnv is the
//     same for a client process of the pool.
//
// # What it refuses
//
// A relative folder (ErrNotAbsolute), a missing or non-executable file
// (ErrLayout), a missing runtime library (*MissingLibrariesError), timeouts
// that are not whole seconds (ErrOptions), any call after Stop
// (ErrStopped), and calls that do not fit a process's state (ErrState:
// freezing a frozen or stopped provider or master, starting a running
// master). It does not hide Mooncake's own any-address listeners: run the
// tier inside a private network namespace when you can (the realpool mage
// target does). It runs on Linux only (/proc, Pdeathsig), as Mooncake
// does.
//
// # Decisions
//
//   - Test defaults (ForTests): eviction off (a full pool answers "pool
//     full" instead of dropping objects) and put discard/release timeouts
//     of 2 s / 4 s, as ARCHITECTURE §9 asks of the tier. The zero Options
//     keeps eviction off too; Mooncake's defaults apply to everything else.
//   - One provider per pool, a small segment by default (512 MiB): a test
//     that needs "pool full" starts a pool with a small SegmentSize.
//   - The environment of the test process is inherited by the pool's
//     processes, plus Options.MasterEnv / ProviderEnv.
//   - Tier treats an empty KVSHARE_MOONCAKE_DIR as unset (off).
package pool
