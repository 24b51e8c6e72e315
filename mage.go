//go:build ignore

// mage.go runs the project's mage targets with nothing installed:
//
//	go run mage.go <target>
//	go run mage.go -l
//
// Options that mage cannot pass to a target (release's --dry-run,
// dist's VERSION) are carried to it in environment variables first
// (package build/targetargs).
package main

import (
	"os"

	"github.com/magefile/mage/mage"

	"github.com/kvshare/kvshare/build/targetargs"
)

func main() {
	args := targetargs.Carry(os.Args[1:], func(k, v string) { os.Setenv(k, v) })
	os.Args = append(os.Args[:1], args...)
	os.Exit(mage.Main())
}
