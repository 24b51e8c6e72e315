package pool

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// ErrIsolation is wrapped by an error setting up or changing the network
// namespaces of an isolated pool (Options.Isolate).
var ErrIsolation = errors.New("pool: network isolation")

// isolation is an isolated pool's network: a bridge in the caller's
// network namespace (the master and the clients reach the providers
// through it, on 10.88.N.1) and, for provider i, a veth pair whose far
// end lives in the provider's own namespace (10.88.N.(10+i)). Nothing is
// made with `ip netns add`: the namespaces are the providers' own,
// gone with them, and the bridge goes with Stop or with the namespace
// the caller runs in.
type isolation struct {
	subnet     int    // N
	synRetries string // the caller's net.ipv4.tcp_syn_retries, copied into each namespace
	clients    int    // client nodes attached so far (StartClientNode)
}

// isolationUnavailable says why this process cannot isolate providers,
// or "" when it can: root, and ip and nsenter on the PATH.
func isolationUnavailable() string {
	if os.Geteuid() != 0 {
		return "not root"
	}
	for _, tool := range []string{"ip", "nsenter"} {
		if _, err := exec.LookPath(tool); err != nil {
			return tool + " not found"
		}
	}
	return ""
}

// newIsolation makes the bridge of a free subnet.
func newIsolation() (*isolation, error) {
	for n := 1; n < 255; n++ {
		if _, err := os.Stat("/sys/class/net/" + bridgeName(n)); err == nil {
			continue
		}
		s := &isolation{subnet: n, synRetries: "6"} // the kernel's default
		if b, err := os.ReadFile(synRetriesPath); err == nil {
			s.synRetries = strings.TrimSpace(string(b))
		}
		// A fixed address: a bridge without one takes the lowest of its
		// ports', so a provider's pair leaving (a kill) would change it
		// under every neighbour's ARP cache, cutting the others off from
		// the master until their entries expire.
		if err := run("ip", "link", "add", bridgeName(n), "address", fmt.Sprintf("02:6b:76:00:00:%02x", n), "type", "bridge"); err != nil {
			if _, statErr := os.Stat("/sys/class/net/" + bridgeName(n)); statErr == nil {
				continue // another pool took it meanwhile
			}
			return nil, err
		}
		if err := errors.Join(
			run("ip", "addr", "add", s.host()+"/24", "dev", bridgeName(n)),
			run("ip", "link", "set", bridgeName(n), "up"),
		); err != nil {
			return nil, errors.Join(err, s.remove())
		}
		return s, nil
	}
	return nil, fmt.Errorf("%w: no free bridge kvbr1 to kvbr254", ErrIsolation)
}

// synRetriesPath is how many times a connect resends its SYN: each
// network namespace has its own copy, made with the kernel's default (6,
// about 2 min 7 s), so the pool copies the caller's into every namespace
// it makes. A node cut off then fails a connect as fast there as here.
const synRetriesPath = "/proc/sys/net/ipv4/tcp_syn_retries"

func bridgeName(n int) string { return fmt.Sprintf("kvbr%d", n) }

// host is the bridge's address: the master's and the clients'.
func (s *isolation) host() string { return fmt.Sprintf("10.88.%d.1", s.subnet) }

// providerHost is provider i's address in its own namespace.
func (s *isolation) providerHost(i int) string { return fmt.Sprintf("10.88.%d.%d", s.subnet, 10+i) }

// clientHost is client node j's address in its own namespace.
func (s *isolation) clientHost(j int) string { return fmt.Sprintf("10.88.%d.%d", s.subnet, 100+j) }

// A node is a provider's or a client node's place on the bridge.
type node struct {
	near, far string // the pair's end on the bridge, the end in the namespace (at most 15 bytes each)
	host      string // its address in its namespace
}

// provider is provider i's node.
func (s *isolation) provider(i int) node {
	return node{fmt.Sprintf("kv%dh%d", s.subnet, i), fmt.Sprintf("kv%dp%d", s.subnet, i), s.providerHost(i)}
}

// client is client node j's node.
func (s *isolation) client(j int) node {
	return node{fmt.Sprintf("kv%dn%d", s.subnet, j), fmt.Sprintf("kv%dc%d", s.subnet, j), s.clientHost(j)}
}

// wrap is the command that runs path with args in n's new namespace once
// its interface has its address: a shell that gives the namespace the
// caller's SYN retries, waits for the address, then execs path (so the
// PID stays the program's).
func (s *isolation) wrap(n node, path string, args []string) (string, []string) {
	script := fmt.Sprintf(`echo %s > %s; until ip -4 addr show dev %s 2>/dev/null | grep -q inet; do sleep 0.01; done; exec "$0" "$@"`, s.synRetries, synRetriesPath, n.far)
	return "/bin/sh", append([]string{"-c", script, path}, args...)
}

// attach joins n's namespace (that of pid) to the bridge: the pair made,
// its far end moved into the namespace and given n's address, both ends
// up.
func (s *isolation) attach(n node, pid int) error {
	_ = run("ip", "link", "del", n.near) // a pair left from the node's last life
	ns := fmt.Sprint(pid)
	err := errors.Join(
		run("ip", "link", "add", n.near, "type", "veth", "peer", "name", n.far),
		run("ip", "link", "set", n.far, "netns", ns),
		run("ip", "link", "set", n.near, "master", bridgeName(s.subnet)),
		run("ip", "link", "set", n.near, "up"),
		run("nsenter", "-t", ns, "-n", "ip", "link", "set", "lo", "up"),
		run("nsenter", "-t", ns, "-n", "ip", "addr", "add", n.host+"/24", "dev", n.far),
		run("nsenter", "-t", ns, "-n", "ip", "link", "set", n.far, "up"),
	)
	return err
}

// cut takes n's link down: nothing reaches it, nor leaves it, until
// heal.
func (s *isolation) cut(n node) error { return run("ip", "link", "set", n.near, "down") }

// heal brings n's link up again.
func (s *isolation) heal(n node) error { return run("ip", "link", "set", n.near, "up") }

// remove deletes the bridge (a provider's pair goes with its namespace).
func (s *isolation) remove() error {
	return run("ip", "link", "del", bridgeName(s.subnet))
}

// run runs one command, its output in the error.
func run(name string, args ...string) error {
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%w: %s %s: %v: %s", ErrIsolation, name, strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}
