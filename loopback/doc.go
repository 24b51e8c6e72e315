// Package loopback starts the servers kvshare's real-store tests run
// against — a Mooncake pool, a Redis server — as children of the test
// binary, on loopback ports, and stops them by PID.
//
// It promises:
//
//   - PickPorts hands out ports on 127.0.0.1 between 10000 and 32767,
//     outside 12300–14300 and 15000–17000 (where Mooncake's transfer
//     engine listens on every address by itself), distinct, none of those
//     asked to avoid, each free when probed. With a Companion offset, p+offset
//     obeys the same rules (a Redis Cluster node's bus port).
//   - A Launcher forks every child from one goroutine locked to its OS
//     thread until Close, with Pdeathsig: a test binary that dies without
//     running its cleanups (a timeout panic, os.Exit) takes its children
//     with it, and no Go runtime thread retiring early kills one.
//   - Process.WaitReady returns once the child itself holds a listening
//     socket on each port (read from /proc where it has socket tables) and
//     a dial to each is accepted; ErrEarlyExit when the child exits first,
//     ErrNotReady when the time or the context runs out. Errors quote the
//     tail of the child's log and name its path.
//   - Stopping is by PID, never by name: Stop sends SIGTERM (with SIGCONT,
//     so a frozen child sees it), then SIGKILL after the bound; Kill is
//     SIGKILL at once. Freeze and Resume (SIGSTOP, SIGCONT) return once
//     the kernel shows the child stopped or running again.
//
// Every error wraps one of the package's sentinels. It runs on Linux only
// (/proc, Pdeathsig).
package loopback
