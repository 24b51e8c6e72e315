package mooncakedrv

import (
	"fmt"
	"os"
)

// realRPCTimeout is MC_RPC_TIMEOUT_MS and MC_RPC_CONNECT_TIMEOUT_MS for
// every Mooncake client of this test binary: a master RPC that gets no
// answer (a frozen master) ends RPC_TIMEOUT after 3 s instead of
// coro_rpc's 30, so the fault matrix freezes a master past it in
// seconds. The library reads both when a client is created, with getenv.
const realRPCTimeout = "3000"

// init sets them before TestMain and before any client exists, for the
// reason TestMain sets its own (no test changes the environment while a
// library thread may read it). Master RPCs on loopback answer in
// milliseconds, so no other test comes near the bound.
func init() {
	for _, name := range []string{"MC_RPC_TIMEOUT_MS", "MC_RPC_CONNECT_TIMEOUT_MS"} {
		if err := os.Setenv(name, realRPCTimeout); err != nil {
			fmt.Fprintf(os.Stderr, "setting %s: %v\n", name, err)
			os.Exit(1)
		}
	}
}
