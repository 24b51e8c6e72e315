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
	subnet int // N
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
		s := &isolation{subnet: n}
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

func bridgeName(n int) string { return fmt.Sprintf("kvbr%d", n) }

// host is the bridge's address: the master's and the clients'.
func (s *isolation) host() string { return fmt.Sprintf("10.88.%d.1", s.subnet) }

// providerHost is provider i's address in its own namespace.
func (s *isolation) providerHost(i int) string { return fmt.Sprintf("10.88.%d.%d", s.subnet, 10+i) }

// veth names provider i's pair: the end on the bridge, the end in the
// provider's namespace (at most 15 bytes each).
func (s *isolation) veth(i int) (near, far string) {
	return fmt.Sprintf("kv%dh%d", s.subnet, i), fmt.Sprintf("kv%dp%d", s.subnet, i)
}

// wrap is the command that runs path with args in provider i's new
// namespace once its interface has its address: a shell that waits for
// it, then execs the provider (so the PID stays the provider's).
func (s *isolation) wrap(i int, path string, args []string) (string, []string) {
	_, far := s.veth(i)
	script := fmt.Sprintf(`until ip -4 addr show dev %s 2>/dev/null | grep -q inet; do sleep 0.01; done; exec "$0" "$@"`, far)
	return "/bin/sh", append([]string{"-c", script, path}, args...)
}

// attach joins provider i's namespace (that of pid) to the bridge: the
// pair made, its far end moved into the namespace and given the
// provider's address, both ends up.
func (s *isolation) attach(i, pid int) error {
	near, far := s.veth(i)
	_ = run("ip", "link", "del", near) // a pair left from the provider's last life
	ns := fmt.Sprint(pid)
	err := errors.Join(
		run("ip", "link", "add", near, "type", "veth", "peer", "name", far),
		run("ip", "link", "set", far, "netns", ns),
		run("ip", "link", "set", near, "master", bridgeName(s.subnet)),
		run("ip", "link", "set", near, "up"),
		run("nsenter", "-t", ns, "-n", "ip", "link", "set", "lo", "up"),
		run("nsenter", "-t", ns, "-n", "ip", "addr", "add", s.providerHost(i)+"/24", "dev", far),
		run("nsenter", "-t", ns, "-n", "ip", "link", "set", far, "up"),
	)
	return err
}

// cut takes provider i's link down: nothing reaches it, nor leaves it,
// until heal.
func (s *isolation) cut(i int) error {
	near, _ := s.veth(i)
	return run("ip", "link", "set", near, "down")
}

// heal brings provider i's link up again.
func (s *isolation) heal(i int) error {
	near, _ := s.veth(i)
	return run("ip", "link", "set", near, "up")
}

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
