// Package doctor checks that a store file reaches a working Mooncake
// pool or Redis server, or shapes a usable embedded store ([memory]:
// [CheckMemory] maps its capacity as the store would):
// `kvshare doctor --store store.toml`. It runs each step the store's
// driver takes on its way to a first object, one check each, and
// reports every one with a verdict and what it saw, so that a user sees
// what to change, not only that something is wrong. A file that holds
// no store section, or two (package storefile), fails the config alone.
// [RunNode] checks a running node (--node SOCKET): socket, attach as a
// lookup-only engine, welcome, counters, a lookup answered.
//
// [Run] takes [Options] and returns a [Report]: one [Finding] a check,
// in the order they ran, each with a [Verdict] ([OK], [Warn], [Fail],
// [Skip]) and a detail. [Report.Write] prints it; [Report.Failed] says
// whether any check failed. A Mooncake file's checks ([CheckConfig] to
// [CheckClose], in the order of the constants) follow the driver from
// its config through the library, the environment, the master, the
// metadata server, the client's setup and its listening sockets to a
// probe object put, read back, compared and removed. A Redis file's
// follow it from the config and the password variable ([CheckPassword])
// through the server ([CheckServer], [CheckVersion] 7.0 or later,
// [CheckMaxMemory], [CheckEviction], [CheckPersistence]) to one row's
// round trip through a backend: put, lookup ([CheckLookup]), get, the
// key deleted. Over a Redis Cluster the slot map ([CheckSlotMap]), every
// node ([CheckNodes]) and the cluster's state ([CheckClusterState]) are
// checked too, and the server checks judge every node. It promises:
//
//   - Every check is reported, passed, failed or skipped (saying why);
//     the report fails when any check failed, never on a warning. The
//     checks a failure leaves unrun share one [CheckRest] line, and
//     [Report.Find] finds each of them as skipped, with its detail.
//   - A refused config stops everything; key prefix, library,
//     environment, master and metadata are checked independently, so one
//     run names every problem among them; the client is opened only when
//     all of them passed, and the probe only on a client that set up.
//     Over Redis the server is asked only once the password variable is
//     set, and the probe runs only when no check failed.
//   - Over Redis, maxmemory and the eviction policy are judged against
//     the file's expectations (a difference fails, naming both values);
//     left unchecked, maxmemory 0 and an allkeys policy warn. A server
//     that refuses CONFIG skips those checks, saying so; persistence is
//     printed, never failed.
//   - The master is ok only once a Mooncake master answered: the
//     client's setup asks it for its version. A refused dial fails it; an
//     accepted one alone leaves it skipped, not proven.
//   - Each listening socket the client opened is printed with its
//     address; one on an address other than loopback or [mooncake]
//     local_hostname (0.0.0.0 and :: are every address) is a warning:
//     Mooncake's transfer engine serves its registered memory to whoever
//     connects.
//   - The probe lives under a key of this run's own prefix (package
//     runprefix), from a buffer outside the Go heap; one a transfer may
//     still touch is kept with its client. Over Redis the probe's key is
//     deleted whatever the put answered.
//   - It never panics on a bad store. Network waits are bounded by
//     [Options.Wait]; the Mooncake probe's SDK calls have no deadline.
//
// What each check prints: the tools module's README.md; why:
// docs/design/tools.md ("The doctor").
package doctor
