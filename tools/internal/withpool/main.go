// Command withpool runs a command beside a loopback Mooncake pool: it
// starts the pool from the Mooncake folder --mooncake-dir names, writes
// the store file a user would write for it, runs the command with
// KVSHARE_NODE_STORE naming that file (and the pool's client
// environment), stops the pool and exits with the command's status.
// The real-pool tier runs the Python client's suite so: its kvshare
// nodes serve the pool.
//
//	withpool --mooncake-dir DIR -- COMMAND [ARG...]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/exec"

	"github.com/kvshare/kvshare/mooncakedrv/pool"
	"github.com/kvshare/kvshare/tools/internal/poolconfig"
)

// EnvNodeStore is the variable that names the store file to the command.
const EnvNodeStore = "KVSHARE_NODE_STORE"

func main() { os.Exit(run(os.Args[1:])) }

func run(args []string) int {
	fs := flag.NewFlagSet("withpool", flag.ContinueOnError)
	dir := fs.String("mooncake-dir", "", "Mooncake folder (bin/, lib/) to start the pool from")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *dir == "" || fs.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "withpool: --mooncake-dir DIR and a command are required")
		return 2
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	store, _, stop, err := poolconfig.Start(context.Background(), *dir, pool.ForTests(*dir), logger)
	if err != nil {
		fmt.Fprintln(os.Stderr, "withpool:", err)
		return 1
	}
	cmd := exec.Command(fs.Arg(0), fs.Args()[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Env = append(os.Environ(), EnvNodeStore+"="+store)
	fmt.Printf("withpool: a loopback pool from %s, its store file %s\n", *dir, store)
	code := 0
	if err := cmd.Run(); err != nil {
		var exit *exec.ExitError
		if !errors.As(err, &exit) {
			fmt.Fprintln(os.Stderr, "withpool:", err)
			code = 1
		} else {
			code = exit.ExitCode()
		}
	}
	if err := stop(); err != nil {
		fmt.Fprintln(os.Stderr, "withpool: stopping the pool:", err)
		if code == 0 {
			code = 1
		}
	}
	return code
}
