//go:build ignore

// mage.go runs the project's mage targets with nothing installed:
//
//	go run mage.go <target>
//	go run mage.go -l
package main

import (
	"os"

	"github.com/magefile/mage/mage"
)

func main() { os.Exit(mage.Main()) }
