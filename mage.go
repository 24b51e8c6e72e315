//go:build ignore

// mage.go runs the project's mage targets with nothing installed:
//
//	go run mage.go <target>
//	go run mage.go -l
//
// Options that mage cannot pass to a target (release's --dry-run,
// dist's VERSION) are carried to it in environment variables first
// (package build/targetargs). With KVSHARE_BUSY=N, N busy processes
// run beside the whole run (package build/busy), to see the tests pass
// on a loaded machine: KVSHARE_BUSY=8 go run mage.go test.
package main

import (
	"fmt"
	"os"

	"github.com/magefile/mage/mage"

	"github.com/kvshare/kvshare/build/busy"
	"github.com/kvshare/kvshare/build/targetargs"
)

func main() {
	args := targetargs.Carry(os.Args[1:], func(k, v string) { os.Setenv(k, v) })
	os.Args = append(os.Args[:1], args...)
	n, err := busy.Parse(os.Getenv(busy.Env))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	load, err := busy.Start(n)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if n > 0 {
		fmt.Printf("busy: %d busy processes run beside this run (%s)\n", n, busy.Env)
	}
	code := mage.Main()
	load.Stop()
	os.Exit(code)
}
