package main

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"regexp"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/memdrv"
	"github.com/kvshare/kvshare/node"
	"github.com/kvshare/kvshare/nodewire"
	"github.com/kvshare/kvshare/patience"
	"github.com/kvshare/kvshare/storeconfig"
	"github.com/kvshare/kvshare/tools/internal/storefile"
)

// runningNode is `kvshare node` run in-process until stop.
type runningNode struct {
	t     *testing.T
	lines chan string
	code  chan int
	errs  *syncBuffer
	stop  context.CancelFunc
}

func startNode(t *testing.T, args ...string) *runningNode {
	t.Helper()
	r, w := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	n := &runningNode{t: t, lines: make(chan string, 64), code: make(chan int, 1), errs: &syncBuffer{}, stop: cancel}
	go func() {
		defer w.Close()
		n.code <- nodeCmd(ctx, args, w, n.errs)
	}()
	go func() {
		defer close(n.lines)
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			n.lines <- sc.Text()
		}
	}()
	t.Cleanup(func() {
		cancel()
		for range n.lines {
		}
	})
	return n
}

// line returns the node's next line of output.
func (n *runningNode) line() string {
	n.t.Helper()
	ctx, cancel := patience.For(n.t).Context(context.Background())
	defer cancel()
	select {
	case l, ok := <-n.lines:
		require.True(n.t, ok, "the node's output ended; stderr: %s", n.errs.String())
		return l
	case <-ctx.Done():
		n.t.Fatalf("no line from the node; stderr: %s", n.errs.String())
	}
	return ""
}

// end stops the node and returns its exit status.
func (n *runningNode) end() int {
	n.t.Helper()
	n.stop()
	require.True(n.t, patience.For(n.t).Wait(closedWhen(n.code)), "the node did not shut down")
	return <-n.code
}

// welcome attaches to the node at socket and returns its welcome.
func welcome(t *testing.T, socket string) *nodewire.Welcome {
	t.Helper()
	c, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: socket, Net: "unix"})
	require.NoError(t, err)
	defer c.Close()
	require.NoError(t, c.SetDeadline(time.Now().Add(patience.Wait())))
	e := &nodeEngine{t: t, w: nodewire.NewConn(c)}
	return e.reply(e.send(&nodewire.Hello{Version: nodewire.Version, Engine: "welcome"}, -1), nodewire.TypeWelcome).(*nodewire.Welcome)
}

// TestNodeCommandReadsNodeSection: the store file's [node] section
// shapes the node (its socket, the socket's mode, who may attach, the
// limits in the welcome); a flag given overrides its key, a key the
// file gives overrides the flag's default.
func TestNodeCommandReadsNodeSection(t *testing.T) {
	socket := nodeSocket(t)
	store := writeStore(t, fmt.Sprintf(`[memory]
capacity = 4194304
[node]
socket = %q
mode = "0640"
allow_uids = [%d]
max_rows = 16
max_attempts = 3
max_lend_bytes = 8388608
shutdown_wait = "30s"
reclaim_above = 1048576
`, socket, os.Getuid()))

	n := startNode(t, "--store", store)
	line := n.line()
	assert.Contains(t, line, "at "+socket+" (mode 0640, uids "+fmt.Sprint(os.Getuid())+"); [node] of "+store+", flags over it")
	fi, err := os.Stat(socket)
	require.NoError(t, err)
	assert.Equal(t, os.ModeSocket|0o640, fi.Mode(), "the file's mode")
	w := welcome(t, socket)
	assert.EqualValues(t, 16, w.MaxRows)
	assert.EqualValues(t, 3, w.MaxAttempts)
	assert.EqualValues(t, 8<<20, w.MaxLendBytes)
	assert.EqualValues(t, node.DefaultMaxFrame, w.MaxFrame, "a key left out: the node's default")
	roundTripThroughNode(t, socket)
	require.Equal(t, 0, n.end(), "stderr: %s", n.errs.String())

	// Flags given override the file's keys; the rest stay the file's.
	n = startNode(t, "--store", store, "--mode", "0600", "--max-rows", "32")
	assert.Contains(t, n.line(), "at "+socket+" (mode 0600")
	fi, err = os.Stat(socket)
	require.NoError(t, err)
	assert.Equal(t, os.ModeSocket|0o600, fi.Mode(), "--mode over the file's")
	w = welcome(t, socket)
	assert.EqualValues(t, 32, w.MaxRows, "--max-rows over the file's")
	assert.EqualValues(t, 3, w.MaxAttempts, "the file's, no flag given")
	require.Equal(t, 0, n.end(), "stderr: %s", n.errs.String())

	// A socket given as a flag is used over the file's.
	other := nodeSocket(t)
	n = startNode(t, "--store", store, "--socket", other)
	assert.Contains(t, n.line(), "at "+other+" (mode 0640")
	require.Equal(t, 0, n.end(), "stderr: %s", n.errs.String())
}

// TestNodeCommandRefusesBadNodeSection: a [node] section that does not
// make a node is refused with exit status 2 before anything is served,
// the line naming the file, the section and the key.
func TestNodeCommandRefusesBadNodeSection(t *testing.T) {
	for _, c := range []struct {
		name, section, key, want string
	}{
		{"a mode not in octal", "mode = \"0999\"\n", "mode", "wants permission bits in octal"},
		{"a relative socket", "socket = \"node.sock\"\n", "socket", "must be an absolute path"},
		{"a limit of 0", "max_rows = 0\n", "max_rows", "is 0: leave it out"},
		{"a frame below the hello", "max_frame = 1024\n", "max_frame", "must be between 65605"},
		{"a uid that is a name", "allow_uids = [\"bob\"]\n", "allow_uids", "item 0 is string"},
		{"a wait without a unit", "engine_wait = \"5\"\n", "engine_wait", "wants a positive Go duration"},
		{"an unknown key", "sockets = \"/run/x\"\n", "sockets", "unknown key"},
		{"a reclaim threshold that is a size string", "reclaim_above = \"8GiB\"\n", "reclaim_above", "wants an integer, got a string"},
	} {
		t.Run(c.name, func(t *testing.T) {
			store := writeStore(t, "[memory]\ncapacity = 1048576\n[node]\n"+c.section)
			var out, errs bytes.Buffer
			require.Equal(t, 2, run([]string{"node", "--socket", nodeSocket(t), "--store", store}, &out, &errs))
			assert.Contains(t, errs.String(), store)
			assert.Contains(t, errs.String(), "[node] "+c.key+": ")
			assert.Contains(t, errs.String(), c.want)
			assert.NotContains(t, out.String(), "serving")
		})
	}
}

// Every store-file reader refuses a bad [node], naming the key: the
// other commands' (roundtrip over an embedded store's file, doctor)
// as kvshare node does.
func TestEveryCommandRefusesBadNodeSection(t *testing.T) {
	store := writeStore(t, "[memory]\ncapacity = 1048576\n[node]\nout_queue = -2\n")
	var out, errs bytes.Buffer
	assert.NotEqual(t, 0, run([]string{"roundtrip", "--store", store, "--rows", "4"}, &out, &errs))
	assert.Contains(t, errs.String(), "[node] out_queue: must be between 1 and 1048576, got -2")
	out.Reset()
	errs.Reset()
	assert.Equal(t, 1, run([]string{"doctor", "--store", store}, &out, &errs))
	assert.Contains(t, out.String(), "[node] out_queue: must be between 1 and 1048576, got -2")
}

// The least frame [node] max_frame takes is the node's own least.
func TestMinNodeFrameIsTheNodes(t *testing.T) {
	drv := memdrv.New(memdrv.NewStore(), memdrv.Options{})
	defer drv.Close()
	_, err := node.New(node.Config{Driver: drv, MaxFrame: storeconfig.MinNodeFrame - 1})
	require.ErrorIs(t, err, node.ErrConfig)
	_, err = node.New(node.Config{Driver: drv, MaxFrame: storeconfig.MinNodeFrame})
	require.NoError(t, err)
}

// kvshare node --metrics serves the node's figures: engines attached,
// per engine by the name it declared.
func TestNodeMetricsFlag(t *testing.T) {
	socket := nodeSocket(t)
	n := startNode(t, "--socket", socket, "--capacity", "4MiB", "--metrics", "127.0.0.1:0")
	require.Contains(t, n.line(), "kvshare node: serving")
	m := regexp.MustCompile(`^kvshare node: metrics at (http://127\.0\.0\.1:\d+/metrics) `).FindStringSubmatch(n.line())
	require.NotNil(t, m)
	e := attachNode(t, socket, "prefill-7")
	lend, _ := e.lend(4096, 4)
	sc := scrapeNode(t, m[1])
	assert.Contains(t, sc, `kvshare_node_engines{node="kvshare",otel_scope_name="github.com/kvshare/kvshare/telemetry",otel_scope_schema_url="",otel_scope_version=""} 1`)
	assert.Regexp(t, `kvshare_node_engine_lent_bytes\{engine="prefill-7",node="kvshare",[^}]*\} 16384`, sc)
	assert.Regexp(t, `kvshare_node_attach_refused_total\{node="kvshare",[^}]*\} 0`, sc)
	assert.Regexp(t, `kvshare_memory_capacity_bytes\{[^}]*store="embedded"\} 4\.194304e\+06`, sc)
	e.reply(e.send(&nodewire.Return{Lend: lend}, -1), nodewire.TypeReturned)
	require.Equal(t, 0, n.end(), "stderr: %s", n.errs.String())

	var out, errs bytes.Buffer
	assert.Equal(t, 2, run([]string{"node", "--socket", nodeSocket(t), "--capacity", "1MiB", "--metrics", "127.0.0.1:no-port"}, &out, &errs))
	assert.Contains(t, errs.String(), "--metrics")
}

// scrapeNode reads the endpoint once, checking it is Prometheus text.
func scrapeNode(t *testing.T, url string) string {
	t.Helper()
	ctx, cancel := patience.For(t).Context(context.Background())
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	p := expfmt.NewTextParser(model.UTF8Validation)
	_, err = p.TextToMetricFamilies(bytes.NewReader(body))
	require.NoError(t, err, "Prometheus text:\n%s", body)
	return string(body)
}

// kvshare doctor --node checks a running kvshare node (every check
// passes, exit 0); a socket with no node fails (exit 1), saying so.
func TestDoctorNode(t *testing.T) {
	socket := nodeSocket(t)
	n := startNode(t, "--socket", socket, "--capacity", "1MiB", "--max-rows", "64")
	require.Contains(t, n.line(), "kvshare node: serving")
	var out, errs bytes.Buffer
	require.Equal(t, 0, run([]string{"doctor", "--node", socket}, &out, &errs), "stdout: %s\nstderr: %s", out.String(), errs.String())
	s := out.String()
	assert.Contains(t, s, "kvshare doctor: the node at "+socket)
	assert.Regexp(t, `(?m)^socket +ok +`+regexp.QuoteMeta(socket)+`: mode 0600, owner uid `, s)
	assert.Regexp(t, `(?m)^attach +ok +welcomed as engine "kvshare-doctor"`, s)
	assert.Regexp(t, fmt.Sprintf(`(?m)^welcome +ok +protocol version %d, node pid %d; .*64 rows per request`, nodewire.Version, os.Getpid()), s)
	assert.Regexp(t, `(?m)^stats +ok +1 engines attached`, s)
	assert.Regexp(t, `(?m)^lookup +ok +".*/node-probe": absent`, s)
	assert.Contains(t, s, "doctor: every check passed for "+socket)
	require.Equal(t, 0, n.end(), "stderr: %s", n.errs.String())

	out.Reset()
	require.Equal(t, 1, run([]string{"doctor", "--node", socket}, &out, &errs))
	assert.Regexp(t, `(?m)^socket +FAIL +.*no such file: is the node running`, out.String())
}

// The store file shipped beside the systemd unit is one every reader
// takes, and its socket is the one the unit's runtime directory fences.
func TestShippedNodeFile(t *testing.T) {
	const file = "../../../docs/systemd/node.toml"
	kind, err := storefile.Read(file)
	require.NoError(t, err)
	assert.Equal(t, storefile.Memory, kind)
	n, err := storefile.Node(file)
	require.NoError(t, err)
	assert.Equal(t, "/run/kvshare/node.sock", n.Socket)
	assert.Equal(t, os.FileMode(0o660), n.Mode)
	unit, err := os.ReadFile("../../../docs/systemd/kvshare-node.service")
	require.NoError(t, err)
	assert.Contains(t, string(unit), "RuntimeDirectory=kvshare\n")
	assert.Contains(t, string(unit), "LimitMEMLOCK=")
	assert.Contains(t, string(unit), "--store /etc/kvshare/node.toml")
}

// Flags and [node] combine key by key: a flag given wins, else the
// file's key, else the flag's default (a zero limit: the node's own).
func TestNodeFlagsOverFile(t *testing.T) {
	file := storeconfig.Node{
		Socket: "/run/kvshare/node.sock", Mode: 0o640, AllowUIDs: []uint32{1001},
		MaxFrame: 1 << 20, MaxAttempts: 3, MaxRows: 16, MaxLendBytes: 1 << 30, MaxRegions: 4, OutQueue: 32,
		EngineWait: time.Second, ShutdownWait: 2 * time.Second, ReclaimAbove: 1 << 20, ReclaimWait: 3 * time.Second,
		RequireScope: true, Tenants: []storeconfig.NodeTenant{{Name: "acme", UIDs: []uint32{1001}, MaxLentBytes: 1 << 20}},
	}
	parse := func(args ...string) *nodeFlags {
		fs := flag.NewFlagSet("node", flag.ContinueOnError)
		nf := addNodeFlags(fs)
		require.NoError(t, fs.Parse(args))
		return nf
	}
	cfg, shutdown, line := parse().config(file)
	require.Empty(t, line)
	assert.Equal(t, node.Config{
		Socket: file.Socket, Mode: 0o640, AllowUIDs: []uint32{1001}, MaxFrame: 1 << 20, MaxAttempts: 3, MaxRows: 16,
		MaxLendBytes: 1 << 30, MaxRegions: 4, OutQueue: 32, EngineWait: time.Second, ReclaimAbove: 1 << 20, ReclaimWait: 3 * time.Second,
		RequireScope: true, Tenants: []node.Tenant{{Name: "acme", UIDs: []uint32{1001}, MaxLentBytes: 1 << 20}},
	}, cfg, "no flag given: the file's every key")
	assert.Equal(t, 2*time.Second, shutdown)

	cfg, shutdown, line = parse("--socket", "/tmp/n.sock", "--mode", "0600", "--allow-uid", "7,8", "--max-lend-bytes", "2GiB",
		"--max-attempts", "5", "--max-rows", "64", "--engine-wait", "4s", "--shutdown-wait", "5s",
		"--reclaim-above", "4MiB", "--reclaim-wait", "6s", "--require-scope=false",
		"--tenant", "gids=9 max_attempts_in_flight=2 tenant=big corp", "--tenant", "max_bytes_in_flight=4096 tenant=").config(file)
	require.Empty(t, line)
	assert.Equal(t, node.Config{
		Socket: "/tmp/n.sock", Mode: 0o600, AllowUIDs: []uint32{7, 8}, MaxFrame: 1 << 20, MaxAttempts: 5, MaxRows: 64,
		MaxLendBytes: 2 << 30, MaxRegions: 4, OutQueue: 32, EngineWait: 4 * time.Second, ReclaimAbove: 4 << 20, ReclaimWait: 6 * time.Second,
		Tenants: []node.Tenant{{Name: "big corp", GIDs: []uint32{9}, MaxAttemptsInFlight: 2}, {Name: "", MaxBytesInFlight: 4096}},
	}, cfg, "every flag given over the file's key; keys without a flag stay the file's")
	assert.Equal(t, 5*time.Second, shutdown)

	cfg, shutdown, line = parse("--socket", "/tmp/n.sock").config(storeconfig.Node{})
	require.Empty(t, line)
	assert.Equal(t, node.Config{Socket: "/tmp/n.sock", Mode: 0o600}, cfg, "no file: the flags' defaults")
	assert.Equal(t, time.Minute, shutdown)

	_, _, line = parse("--reclaim-above", "0").config(file)
	assert.Contains(t, line, `--reclaim-above "0"`)
	_, _, line = parse("--tenant", "uids=1").config(file)
	assert.Contains(t, line, `--tenant: "uids=1": no tenant=NAME`)
	_, _, line = parse("--tenant", "uids=1 tenant=a", "--tenant", "gids=1 tenant=a").config(file)
	assert.Contains(t, line, `tenant "a" is listed twice`)
}
