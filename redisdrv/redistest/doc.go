// Package redistest runs a real redis-server on loopback for tests and
// tools, a Redis Cluster of them, and a RESP-aware proxy in front of a
// server that holds, stalls, fails and crashes chosen commands. It also
// holds the redis tier's switch (EnvServer, Tier, Require).
//
// It owns every process it starts, from Start to Stop, and every
// restart. It promises:
//
//   - Start runs the binary on 127.0.0.1 with persistence off (save "",
//     appendonly no), protected-mode no and daemonize no, from a
//     redis.conf in the working folder, as a child of this process that
//     dies with it (Pdeathsig). It returns once a dial is accepted by the
//     child itself and a PING is answered PONG, within
//     Options.StartTimeout and the context. A server that exits first is
//     ErrEarlyExit, with the tail of its log.
//   - Stopping is by PID, never by name: Stop sends SIGTERM, then SIGKILL
//     after Options.StopTimeout, and is idempotent; Kill is SIGKILL at
//     once. Freeze and Resume return once the kernel shows the process
//     stopped or running again. Restart keeps the port; the new server
//     is empty.
//   - Check refuses a relative path, a missing or non-executable file,
//     and a binary whose --version fails or is below MinMajor.
//   - The proxy keeps every client connection's replies in order; only
//     its rules change what a client sees. Each client connection has its
//     own server connection. Close ends every goroutine it started,
//     within ProxyCloseTimeout.
//   - StartCluster runs a Redis Cluster of such servers (three masters,
//     no replicas), created with the redis-cli next to the binary, each
//     node's bus on its port plus BusPortOffset, and returns once every
//     node says cluster_state:ok and all agree on every slot's owner
//     (Settle). Proxied, every node announces the port of a Proxy in
//     front of it, so clients that follow the cluster reach the nodes
//     through the proxies only. Kill, Restart (empty, same ID and slots),
//     Freeze and moving a slot by the migration protocol (BeginMove,
//     MigrateKeys, Finish) are its faults; Slot is CLUSTER KEYSLOT.
//
// It refuses options out of range (ErrOptions) and any start after Stop
// (ErrStopped). The proxy does not speak RESP3 streamed strings or
// aggregates ("$?", "*?"), which Redis does not send, and matches commands
// on their names, keys, and the first MatchValueBytes bytes of other
// arguments. It runs on Linux only (/proc, Pdeathsig).
package redistest
