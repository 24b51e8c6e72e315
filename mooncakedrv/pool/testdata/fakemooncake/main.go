// Command fakemooncake stands in for mooncake_master and mooncake_client
// in the pool's tests: built once under both names, it listens where the
// real one would and misbehaves on request.
//
//	FAKEMC_EXIT=1         exit 3 at once, as a process that cannot start
//	FAKEMC_NO_LISTEN=1    never listen, as a process that hangs
//	FAKEMC_IGNORE_TERM=1  ignore SIGTERM, so only SIGKILL ends it
//	FAKEMC_DELAY=<dur>    wait before listening, as the master's ~1.2 s
//
// A port it cannot listen on makes it exit 1, as the real ones do.
package main

import (
	"fmt"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

func main() {
	flags := map[string]string{}
	for _, a := range os.Args[1:] {
		name, value, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		flags[name] = value
	}
	role := filepath.Base(os.Args[0])
	if _, ok := flags["version"]; ok {
		fmt.Printf("%s version 0.0.0-fake\n", role)
		return
	}
	fmt.Printf("fakemooncake: %s args %s\n", role, strings.Join(os.Args[1:], " "))
	fmt.Printf("fakemooncake: MC_TCP_BIND_ADDRESS=%s\n", os.Getenv("MC_TCP_BIND_ADDRESS"))
	if os.Getenv("FAKEMC_IGNORE_TERM") == "1" {
		signal.Ignore(syscall.SIGTERM)
	}
	if os.Getenv("FAKEMC_EXIT") == "1" {
		fmt.Println("fakemooncake: scripted failure")
		os.Exit(3)
	}
	if d, err := time.ParseDuration(os.Getenv("FAKEMC_DELAY")); err == nil {
		time.Sleep(d)
	}
	if os.Getenv("FAKEMC_NO_LISTEN") == "1" {
		forever()
	}
	var addrs []string
	switch role {
	case "mooncake_master":
		addrs = []string{
			net.JoinHostPort(flags["http_metadata_server_host"], flags["http_metadata_server_port"]),
			net.JoinHostPort(flags["metrics_host"], flags["metrics_port"]),
			net.JoinHostPort(flags["rpc_address"], flags["rpc_port"]),
		}
	default:
		conn, err := net.Dial("tcp", flags["master_server_address"])
		if err != nil {
			fmt.Println("fakemooncake: cannot reach the master:", err)
			os.Exit(1)
		}
		conn.Close()
		addrs = []string{net.JoinHostPort(flags["host"], flags["port"])}
	}
	for _, a := range addrs {
		l, err := net.Listen("tcp", a)
		if err != nil {
			fmt.Println("fakemooncake:", err)
			os.Exit(1)
		}
		go serve(l)
	}
	fmt.Println("fakemooncake: listening on", strings.Join(addrs, " "))
	forever()
}

// forever blocks until a signal ends the process.
func forever() {
	for {
		time.Sleep(time.Hour)
	}
}

func serve(l net.Listener) {
	for {
		c, err := l.Accept()
		if err != nil {
			return
		}
		c.Close()
	}
}
