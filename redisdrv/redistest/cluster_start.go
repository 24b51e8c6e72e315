package redistest

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/kvshare/kvshare/loopback"
)

// cliName is redis-cli's file name, looked for next to redis-server.
const cliName = "redis-cli"

// findCLI returns the redis-cli next to binary: an executable file.
func findCLI(binary string) (string, error) {
	cli := filepath.Join(filepath.Dir(binary), cliName)
	info, err := os.Stat(cli)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", fmt.Errorf("%w: %s does not exist", ErrNoCLI, cli)
	case err != nil:
		return "", fmt.Errorf("%w: %s: %v", ErrNoCLI, cli, err)
	case info.IsDir():
		return "", fmt.Errorf("%w: %s is a folder", ErrNoCLI, cli)
	case info.Mode().Perm()&0o111 == 0:
		return "", fmt.Errorf("%w: %s has mode %v", ErrNoCLI, cli, info.Mode().Perm())
	}
	return cli, nil
}

// startNodes starts every node (and its proxy), one after another, on
// ports picked with their bus ports.
func (c *Cluster) startNodes(ctx context.Context, binary string) error {
	n := c.opts.Nodes
	ports, err := loopback.Pick(loopback.Ports{N: n, Companion: BusPortOffset})
	if err != nil {
		return err
	}
	c.nodes = make([]*Server, 0, n)
	if c.opts.Proxied {
		c.proxies = make([]*Proxy, 0, n)
	}
	for i := range n {
		if err := c.startNode(ctx, binary, i, ports); err != nil {
			return err
		}
	}
	return nil
}

// startNode starts node i on ports[i], and on a fresh port (written back
// to ports) when it exits at start, three times in all. A proxied node's
// proxy is made first, so the node can announce its port.
func (c *Cluster) startNode(ctx context.Context, binary string, i int, ports []int) error {
	dir := nodeDir(c.dir, i)
	var errs []error
	for attempt := 1; attempt <= startAttempts; attempt++ {
		if attempt > 1 {
			avoid := make([]int, 0, 2*len(ports))
			for _, p := range ports {
				avoid = append(avoid, p, p+BusPortOffset)
			}
			fresh, err := loopback.Pick(loopback.Ports{N: 1, Companion: BusPortOffset, Avoid: avoid})
			if err != nil {
				return err
			}
			ports[i] = fresh[0]
		}
		// A start that failed on its bus port may have written a lone
		// node's nodes.conf, and a reused Dir may hold an old cluster's.
		if err := os.Remove(filepath.Join(dir, "nodes.conf")); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("redistest: cluster node %d: %w", i, err)
		}
		err := c.launchNode(ctx, binary, i, ports[i], dir)
		if err == nil {
			return nil
		}
		if !errors.Is(err, ErrEarlyExit) {
			return err
		}
		errs = append(errs, err)
	}
	return fmt.Errorf("redistest: cluster node %d did not start in %d attempts: %w", i, startAttempts, errors.Join(errs...))
}

// launchNode starts node i, and its proxy first when proxied, and
// appends them to the cluster's; on error neither is left running.
func (c *Cluster) launchNode(ctx context.Context, binary string, i, port int, dir string) error {
	var p *Proxy
	announce := 0
	if c.opts.Proxied {
		var err error
		if p, err = NewProxy(loopback.HostPort(port)); err != nil {
			return err
		}
		announce = p.ln.Addr().(*net.TCPAddr).Port
	}
	s, err := Start(ctx, binary, c.opts.nodeOptions(i, port, announce, dir))
	if err != nil {
		if p != nil {
			err = errors.Join(err, p.Close())
		}
		return err
	}
	c.nodes = append(c.nodes, s)
	if p != nil {
		c.proxies = append(c.proxies, p)
	}
	return nil
}

// create runs redis-cli --cluster create on the nodes' own addresses,
// within StartTimeout: it assigns the slots, gives each node its config
// epoch, sends CLUSTER MEET (whose bus port is the given port plus
// BusPortOffset, so the real ports, not the proxies', are given), waits
// for every node to see the same configuration, then checks the cluster
// through the addresses the nodes announce.
func (c *Cluster) create(ctx context.Context, cli string) error {
	args := []string{"--cluster", "create"}
	for _, s := range c.nodes {
		args = append(args, s.Addr())
	}
	args = append(args, "--cluster-replicas", "0", "--cluster-yes")
	ctx, cancel := context.WithTimeout(ctx, c.opts.StartTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, cli, args...)
	cmd.Env = append(os.Environ(), "TERM=dumb") // no colour codes in the output an error quotes
	out, err := cmd.CombinedOutput()
	if err != nil {
		if cerr := context.Cause(ctx); cerr != nil {
			err = fmt.Errorf("%v (%w)", err, cerr)
		}
		return fmt.Errorf("%w: %s %s: %w; its output:\n%s", ErrCluster, cli, strings.Join(args, " "), err, indent(out))
	}
	c.log.Debug("redistest: cluster created", "cli", cli, "nodes", len(c.nodes))
	return nil
}

// indent prefixes each line of a command's output with "  | ", as
// loopback.LogTail does a log's.
func indent(out []byte) string {
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	return "  | " + strings.Join(lines, "\n  | ")
}
