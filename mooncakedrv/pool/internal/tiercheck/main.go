// Command tiercheck is the realpool mage target's first step: it reads
// KVSHARE_MOONCAKE_DIR as the tests will (pool.Tier), prints the
// library's SHA-256 and `mooncake_master --version`, and exits 1 saying
// why when the folder cannot be used, 2 when the variable is not set.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/kvshare/kvshare/mooncakedrv/pool"
)

func main() {
	dir, on, err := pool.Tier()
	switch {
	case !on:
		fmt.Fprintln(os.Stderr, "realpool:", pool.TierOff)
		os.Exit(2)
	case err != nil:
		fmt.Fprintf(os.Stderr, "realpool: %s=%q cannot be used: %v\n", pool.EnvDir, dir, err)
		os.Exit(1)
	}
	sum, err := pool.LibrarySHA256(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "realpool:", err)
		os.Exit(1)
	}
	version, err := pool.Version(context.Background(), dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "realpool:", err)
		os.Exit(1)
	}
	fmt.Printf("realpool: Mooncake folder %s\n", dir)
	fmt.Printf("realpool: %s sha256 %s\n", pool.Library, sum)
	fmt.Printf("realpool: mooncake_master --version: %s\n", version)
}
