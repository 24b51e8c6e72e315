// Command go stands in for the go command in front of gremlins: it runs
// the real one ($KVSHARE_MUTATE_GO) with the same arguments, and after a
// coverage run (go test -coverprofile) it counts (-covermode=count) and
// adds to the profile a block for every case list of an expression switch
// that the counts prove was evaluated, which Go's profile leaves out.
package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

func main() {
	args := os.Args[1:]
	profile := ""
	if len(args) > 0 && args[0] == "test" {
		for i, a := range args {
			if a == "-coverprofile" && i+1 < len(args) {
				profile = args[i+1]
			} else if v, ok := strings.CutPrefix(a, "-coverprofile="); ok {
				profile = v
			}
		}
		if profile != "" {
			args = append([]string{"test", "-covermode=count"}, args[1:]...)
		}
	}
	cmd := exec.Command(os.Getenv("KVSHARE_MUTATE_GO"), args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) && exit.ExitCode() > 0 {
			os.Exit(exit.ExitCode())
		}
		fmt.Fprintln(os.Stderr, "goshim:", err)
		os.Exit(1)
	}
	if profile != "" {
		if err := addCaseBlocks(profile, "."); err != nil {
			fmt.Fprintln(os.Stderr, "goshim:", err)
			os.Exit(1)
		}
	}
}
