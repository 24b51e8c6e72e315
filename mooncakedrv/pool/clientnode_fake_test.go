package pool

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/patience"
)

// nodeEnv, set to 1, makes this test binary a client node (runNode).
const nodeEnv = "KVSHARE_POOL_TEST_NODE"

// runNode is a client node's main: it prints its network namespace, its
// bind address and its SYN retries, then for each line "host:port" read
// from stdin prints "ok" or "fail <error>" for a dial of it (1 s).
func runNode() int {
	ns, err := os.Readlink("/proc/self/ns/net")
	if err != nil {
		fmt.Println("fail", err)
		return 1
	}
	syn, _ := os.ReadFile(synRetriesPath)
	fmt.Println(ns, os.Getenv("MC_TCP_BIND_ADDRESS"), os.Getenv(EnvNodeHost), strings.TrimSpace(string(syn)))
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		conn, err := net.DialTimeout("tcp", sc.Text(), time.Second) // an input: a cut node's dial gives up
		if err != nil {
			fmt.Println("fail", err)
			continue
		}
		conn.Close()
		fmt.Println("ok")
	}
	return 0
}

func TestAClientNodeNeedsAnIsolatedPool(t *testing.T) {
	p, err := startFake(t, nil)
	require.NoError(t, err)
	cmd := exec.Command("/bin/true")
	_, err = p.StartClientNode("n", cmd)
	require.ErrorIs(t, err, ErrState)
	assert.Nil(t, cmd.Process, "nothing started")
}

func TestAClientNodeIsCutOffAndHealed(t *testing.T) {
	if !IsolationAllowed() {
		t.Skip("pools cannot be isolated here (" + EnvIsolate + " unset: not in a network namespace of the test's own)")
	}
	p, err := startFake(t, func(o *Options) { o.Providers, o.Isolate = 2, true })
	require.NoError(t, err)
	require.True(t, p.Isolated())
	exe, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), nodeEnv+"=1")
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	c, err := p.StartClientNode("n", cmd)
	require.NoError(t, err)
	waited := make(chan error, 1)
	lines := bufio.NewScanner(stdout)
	next := func() string {
		t.Helper()
		require.True(t, lines.Scan(), "the node said nothing: %v", lines.Err())
		return lines.Text()
	}

	ours, err := os.Readlink("/proc/self/ns/net")
	require.NoError(t, err)
	syn, err := os.ReadFile(synRetriesPath)
	require.NoError(t, err)
	first := strings.Fields(next())
	require.Len(t, first, 4)
	assert.NotEqual(t, ours, first[0], "the node runs in a network namespace of its own")
	assert.Equal(t, c.Host(), first[1], "MC_TCP_BIND_ADDRESS is the node's address")
	assert.Equal(t, c.Host(), first[2], EnvNodeHost)
	assert.Equal(t, strings.TrimSpace(string(syn)), first[3], "the node has this namespace's SYN retries")
	assert.NotEqual(t, p.Host(), c.Host())

	dial := func(addr string) string {
		t.Helper()
		_, err := io.WriteString(stdin, addr+"\n")
		require.NoError(t, err)
		return next()
	}
	for _, addr := range []string{p.MasterAddress(), p.ProviderAddress(0), p.ProviderAddress(1)} {
		assert.Equal(t, "ok", dial(addr), "the node reaches %s", addr)
	}
	require.NoError(t, c.Cut())
	assert.True(t, strings.HasPrefix(dial(p.MasterAddress()), "fail"), "a cut node reaches nothing")
	assert.True(t, strings.HasPrefix(dial(p.ProviderAddress(1)), "fail"), "a cut node reaches nothing")
	require.NoError(t, p.Healthy(), "a cut client node leaves the pool alone")
	require.NoError(t, c.Heal())
	assert.Equal(t, "ok", dial(p.MasterAddress()), "a healed node reaches the master again")

	// A second node gets an address of its own; Stop kills a node that
	// still runs.
	other := exec.Command("/bin/sleep", "600")
	c2, err := p.StartClientNode("n2", other)
	require.NoError(t, err)
	assert.NotEqual(t, c.Host(), c2.Host())
	go func() { waited <- other.Wait() }()
	require.NoError(t, p.Stop())
	ctx, cancel := patience.For(t).Context(t.Context())
	defer cancel()
	select {
	case err := <-waited:
		assert.Error(t, err, "killed")
	case <-ctx.Done():
		t.Fatal("Stop left a client node running")
	}
	assert.ErrorIs(t, c.Cut(), ErrStopped)
	_, err = p.StartClientNode("n3", exec.Command("/bin/true"))
	assert.ErrorIs(t, err, ErrStopped)
	stdin.Close()
	_ = cmd.Wait()
}
