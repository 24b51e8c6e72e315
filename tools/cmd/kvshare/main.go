// Command kvshare runs kvshare's jobs from a shell.
//
//	kvshare roundtrip [flags]          publish KV blocks from one lender, fetch them into another
//	kvshare doctor --store store.toml  check a store file and the Mooncake pool, Redis server or Redis Cluster it names
//	kvshare bench [flags]              the benchmark: kvshare against floors measured in the same run
//	kvshare soak [flags]               random traffic for a while, every promise checked
//	kvshare node [flags]               serve the node: engines in other processes attach over a Unix socket
//	kvshare key [flags] NAME...        print the store key of each name under a scope
//
// Run `kvshare <command> -h` for a command's flags.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run dispatches a subcommand and returns the exit status: 0 success, 1
// the job ran and found something wrong or failed, 2 bad usage.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	switch args[0] {
	case "roundtrip":
		return roundtripCmd(ctx, args[1:], stdout, stderr)
	case "doctor":
		return doctorCmd(ctx, args[1:], stdout, stderr)
	case "bench":
		return benchCmd(ctx, args[1:], stdout, stderr)
	case "soak":
		return soakCmd(ctx, args[1:], stdout, stderr)
	case "node":
		return nodeCmd(ctx, args[1:], stdout, stderr)
	case "key":
		return keyCmd(args[1:], stdout, stderr)
	case engineCommand: // an engine process of `roundtrip --node`, not listed
		return engineCmd(ctx, args[1:], stdout, stderr)
	case diskWriterCommand: // the writer of `soak --store disk.toml --kill-every`, not listed
		return diskWriterCmd(ctx, args[1:], stdout, stderr)
	case "-h", "-help", "--help", "help":
		usage(stdout)
		return 0
	}
	fmt.Fprintf(stderr, "kvshare: unknown command %q\n", args[0])
	usage(stderr)
	return 2
}

func usage(w io.Writer) {
	fmt.Fprintln(w, `usage: kvshare <command> [flags]

commands:
  roundtrip   publish KV blocks from one lender through a store, fetch them
              into another lender, check every byte (--node: between two
              engine processes, through a node started for the run)
  doctor      check a store file and the Mooncake pool, Redis server or
              Redis Cluster it names, one line per check
  bench       measure kvshare against floors measured in the same run: settle
              latency, an engine loop beside the traffic, CPU a row, bandwidth,
              a real pool (5), lookup (6), a Redis server (7), the node (8)
              and the disk tier (9); --plot out.svg
  soak        random publishes, fetches, cancels and rebinds on four backends
              over one store for ten minutes (--short: one), every fetched
              byte and every promise at shutdown checked
  node        serve the kvshare node until SIGINT or SIGTERM: engines in other
              processes attach over a Unix socket (--socket), lend memory and
              move rows through the embedded store (--capacity) or a store file
  key         print the store key of each name under a scope (its fields as
              flags, or a store file's [scope]); --unscoped: without one

the store (roundtrip, bench, soak; doctor takes --store or --redis-server):
  (none)                     the embedded in-memory store
  --store store.toml         the Mooncake pool ([mooncake]), Redis server
                             ([redis]) or disk tier ([disk]) the store file names
  --mooncake-dir DIR         start a loopback Mooncake pool from DIR (bin/, lib/)
  --redis-server PATH        start a loopback Redis server from that redis-server
                             binary (a path, or a name in PATH); bench starts a
                             three-node Redis Cluster beside it too
  --redis-server PATH --redis-cluster
                             start a loopback three-node Redis Cluster instead
                             (redis-cli beside the binary)
Give one of them (bench takes a pool and a Redis server together).

Run 'kvshare <command> -h' for a command's flags.`)
}
