package mooncakedrv

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/mooncakedrv/pool"
)

// The client node: this test binary run again, by the client-cut fault,
// as a client of an isolated pool in a network namespace of its own
// (pool.StartClientNode), running only TestRealClientNode with nodeEnv
// set to the store config and nodePrefixEnv to the key prefix. It talks
// to the fault in lines on stdin and stdout that start with nodeSays.
const (
	nodeEnv       = "KVSHARE_REALPOOL_NODE"
	nodePrefixEnv = "KVSHARE_REALPOOL_NODE_PREFIX"
	nodeSays      = "node: "
)

// nodeReport is what the client node says once its operations settled
// and its backend shut down: the matrix's cells for it, and which of the
// rows it published ended Ready.
type nodeReport struct {
	Answers, Verdicts, Access, Held, Written string
	Published                                []string
	Ready                                    map[string]bool
}

// TestRealClientNode is the client node's body. It opens a lender,
// says "ready", and on "go" publishes faultRows rows and fetches the
// rows seed-A-… (which the fault seeded); it says "inside" once a put and
// a get call are inside the SDK, and on "cut <unix ns>" (the fault cut
// its link then) cancels what was not handed to the store yet, as every
// fault does. Then every operation is checked by the rule, every slot
// whose access ended fenced, the backend shut down (what it holds
// checked), and the report said. Any broken promise fails the node's
// test, so its process exits 1.
func TestRealClientNode(t *testing.T) {
	config := os.Getenv(nodeEnv)
	if config == "" {
		t.Skip("the body of a client node: run only in a child process, by TestRealFaultMatrix/client-cut")
	}
	in := bufio.NewScanner(os.Stdin)
	await := func(want string) string {
		t.Helper()
		require.True(t, in.Scan(), "waiting for %q: %v", want, in.Err())
		require.True(t, strings.HasPrefix(in.Text(), want), "want %q, got %q", want, in.Text())
		return in.Text()
	}
	say := func(line string) { fmt.Println(nodeSays + line) }

	// The node's clients name themselves by its own address, not
	// loopback's.
	cfg, err := os.ReadFile(config)
	require.NoError(t, err)
	host := os.Getenv(pool.EnvNodeHost)
	require.NotEmpty(t, host, pool.EnvNodeHost)
	own := strings.Replace(string(cfg), `local_hostname = "127.0.0.1"`, fmt.Sprintf("local_hostname = %q", host), 1)
	require.NotEqual(t, string(cfg), own, "the store config names no loopback local_hostname")
	r := &faultRun{s: &realStore{config: filepath.Join(t.TempDir(), "store.toml")}, prefix: os.Getenv(nodePrefixEnv)}
	require.NoError(t, os.WriteFile(r.s.config, []byte(own), 0o644))
	l := openFaultLender(t, r.s, "N", 2*faultRows, r.prefix)
	r.lenders = []*faultLender{l}
	pub, got := rowNames("pub-N", faultRows), rowNames("seed-A", faultRows)
	l.load(pub, span(0, faultRows))
	say("ready")
	await("go")
	r.names = []map[contract.Direction][]string{{contract.PutDir: pub, contract.GetDir: got}}
	r.attempts = []map[contract.Direction]contract.Attempt{{}}
	for d, v := range map[contract.Direction]contract.View{contract.PutDir: namedView(pub, span(0, faultRows)), contract.GetDir: namedView(got, span(faultRows, 2*faultRows))} {
		var a contract.Attempt
		var err error
		if d == contract.PutDir {
			a, err = l.be.Publish(v, nil)
		} else {
			a, err = l.be.Fetch(v, nil)
		}
		require.NoError(t, err)
		r.attempts[0][d] = a
	}
	r.waitInside(t, true, true)
	say("inside")
	var ns int64
	ns, err = strconv.ParseInt(strings.TrimPrefix(await("cut "), "cut "), 10, 64)
	require.NoError(t, err)
	r.strikeAt = time.Unix(0, ns)
	for _, a := range r.attempts[0] {
		a.Cancel()
	}
	r.settle(t, faultCase{midPut: true, midGet: true})
	kept := l.observe(&r.ob)
	rep := nodeReport{Answers: r.ob.answers.String(), Verdicts: r.ob.verdicts.String(), Access: r.ob.access.String(), Published: pub, Ready: map[string]bool{}}
	for d, a := range r.attempts[0] {
		l.delivered(a, r.names[0][d])
	}
	if o, ok := r.attempts[0][contract.PutDir].Outcome(); ok {
		for i, n := range pub {
			rep.Ready[n] = o.Delivered[i]
		}
	}
	held := l.shutdown()
	l.checkHeld(held, kept, r.attempts[0])
	rep.Held = heldCell("N", held, int(l.be.Stats().RowsLent))
	rep.Written = fenceCell(t, l)
	b, err := json.Marshal(rep)
	require.NoError(t, err)
	say("report " + string(b))
}

// clientNode is a running client node, as the fault sees it.
type clientNode struct {
	node  *pool.ClientNode
	cmd   *exec.Cmd
	stdin io.WriteCloser
	lines chan string // what it says, without nodeSays
	mu    sync.Mutex
	out   strings.Builder // everything else it printed
	done  chan struct{}
	err   error // of Wait, once done is closed
}

// startClientNode starts the client node of s (an isolated pool) and
// waits (bounded) for it to say it is ready; it is killed when the test
// ends if it still runs, and its output is logged if the test failed.
func startClientNode(t *testing.T, s *realStore, prefix string) *clientNode {
	t.Helper()
	exe, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.Command(exe, "-test.run=^TestRealClientNode$", "-test.count=1", "-test.v", "-test.timeout=5m")
	cmd.Env = append(os.Environ(), nodeEnv+"="+s.config, nodePrefixEnv+"="+prefix)
	c := &clientNode{cmd: cmd, lines: make(chan string, 8), done: make(chan struct{})}
	c.stdin, err = cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = cmd.Stdout
	c.node, err = s.pool.StartClientNode("N", cmd)
	require.NoError(t, err)
	go c.read(stdout)
	t.Cleanup(func() {
		select {
		case <-c.done:
		default:
			_ = cmd.Process.Kill()
			<-c.done
		}
		if t.Failed() || os.Getenv("KVSHARE_FAULT_VERBOSE") != "" {
			t.Logf("client node: %v; its output:\n%s", c.err, c.output())
		}
	})
	c.expect(t, "ready")
	return c
}

// read sorts its output into lines said and the rest, and waits for its
// exit.
func (c *clientNode) read(stdout io.Reader) {
	sc := bufio.NewScanner(stdout)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if said, ok := strings.CutPrefix(sc.Text(), nodeSays); ok {
			c.lines <- said
			continue
		}
		c.mu.Lock()
		c.out.WriteString(sc.Text() + "\n")
		c.mu.Unlock()
	}
	close(c.lines)
	c.err = c.cmd.Wait()
	close(c.done)
}

func (c *clientNode) output() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.out.String()
}

// tell sends it a line.
func (c *clientNode) tell(t *testing.T, line string) {
	t.Helper()
	_, err := io.WriteString(c.stdin, line+"\n")
	require.NoError(t, err)
}

// expect waits (bounded) for it to say a line starting with want, and
// returns the rest of the line.
func (c *clientNode) expect(t *testing.T, want string) string {
	t.Helper()
	ctx, cancel := bound(t, 2*realWait, "the client node saying "+want).Context(context.Background())
	defer cancel()
	select {
	case line, ok := <-c.lines:
		if !ok {
			<-c.done
			t.Fatalf("the client node ended (%v) before saying %q; its output:\n%s", c.err, want, c.output())
		}
		rest, ok := strings.CutPrefix(line, want)
		require.True(t, ok, "the client node: want %q, got %q", want, line)
		return strings.TrimSpace(rest)
	case <-ctx.Done():
		t.Fatalf("the client node said nothing within its bound (%v, extended only while the process was starved); its output:\n%s", 2*realWait, c.output())
	}
	return ""
}

// runClientCut is the matrix's row for a client cut off from the pool:
// three isolated providers with replicas 2, lender A in the test process
// and the client node N in a namespace of its own, each with publish and
// fetch traffic in flight when N's link goes down; it comes up again
// two status-frame timeouts later. N checks its own operations by the
// rule (its test fails otherwise) and reports; A must be untouched (every
// row Ready, every access Ended); a new backend then reads N's published
// rows back whole (every row N ended Ready, and any other row whole or
// absent) and round-trips rows.
func runClientCut(t *testing.T, row *matrixRow) {
	r := &faultRun{s: startRealStore(t, func(o *pool.Options) { o.Providers, o.Isolate = 3, true }), prefix: "kvshare-realpool/fault/client-cut"}
	require.True(t, r.s.pool.Isolated(), "the pool is not isolated")
	r.s.setReplicas(t, 2)
	a := openFaultLender(t, r.s, "A", 2*faultRows, r.prefix)
	r.lenders = []*faultLender{a}
	phase := phases(t)
	r.seed(t)
	n := startClientNode(t, r.s, r.prefix)
	phase("seeded, client node ready")

	r.names = []map[contract.Direction][]string{{contract.PutDir: rowNames("pub-A", faultRows), contract.GetDir: rowNames("seed-A", faultRows)}}
	r.attempts = []map[contract.Direction]contract.Attempt{{}}
	a.load(r.names[0][contract.PutDir], span(0, faultRows))
	n.tell(t, "go")
	pa, err := a.be.Publish(namedView(r.names[0][contract.PutDir], span(0, faultRows)), nil)
	require.NoError(t, err)
	ga, err := a.be.Fetch(namedView(r.names[0][contract.GetDir], span(faultRows, 2*faultRows)), nil)
	require.NoError(t, err)
	r.attempts[0][contract.PutDir], r.attempts[0][contract.GetDir] = pa, ga
	n.expect(t, "inside")
	require.NoError(t, n.node.Cut())
	r.strikeAt = time.Now()
	n.tell(t, fmt.Sprint("cut ", r.strikeAt.UnixNano()))
	time.Sleep(time.Until(r.strikeAt.Add(2 * statusTimeout)))
	require.NoError(t, n.node.Heal())
	phase("cut and healed")

	for _, at := range r.attempts[0] {
		a.outcome(at)
	}
	a.settled()
	r.kept = append(r.kept, a.observe(&r.ob))
	for d, at := range r.attempts[0] {
		a.delivered(at, r.names[0][d])
	}
	assert.Zero(t, r.ob.opsUnprovable, "lender A, not cut off: an operation's access unprovable")
	assert.Equal(t, 2*faultRows, r.ob.verdicts.count("publish", contract.Ready.String())+r.ob.verdicts.count("fetch", contract.Ready.String()),
		"lender A, not cut off: every row Ready (%s)", r.ob.verdicts.String())
	var rep nodeReport
	require.NoError(t, json.Unmarshal([]byte(n.expect(t, "report")), &rep))
	t.Logf("client node N: the store answered %s; verdicts %s; access %s; %s", rep.Answers, rep.Verdicts, rep.Access, rep.Held)
	if !bound(t, realWait, "the client node exiting").Wait(n.done) {
		t.Fatalf("the client node did not exit within its bound (%v) of its report", realWait)
	}
	require.NoError(t, n.err, "the client node's own checks (its output is logged)")
	assert.NotRegexp(t, crashSigns, n.output(), "the client node: signs of a crash")
	require.NoError(t, r.s.pool.Healthy(), "the pool after a client was cut off")
	phase("settled")

	row.answers = "A: " + r.ob.answers.String() + "; N: " + rep.Answers
	row.verdicts = "A: " + r.ob.verdicts.String() + "; N: " + rep.Verdicts
	row.access = "A: " + r.ob.access.String() + "; N: " + rep.Access
	row.recovered = fmt.Sprintf("none (N's link came up again %v after the cut); ", 2*statusTimeout) + r.nodeRowsBack(t, rep) + "; " + r.newBackend(t, contract.Ready)
	held := a.shutdown()
	a.checkHeld(held, r.kept[0], r.attempts[0])
	row.held = heldCell("A", held, int(a.be.Stats().RowsLent)) + "; " + rep.Held
	row.written = "A: " + fenceCell(t, a) + "; N: " + rep.Written
	phase("shut down")
}

// nodeRowsBack has a new lender fetch the rows the client node
// published: each row it ended Ready must read back Ready (its bytes are
// checked as every fetch's), and every other row Ready (whole) or Miss.
func (r *faultRun) nodeRowsBack(t *testing.T, rep nodeReport) string {
	t.Helper()
	c := openFaultLender(t, r.s, "R", len(rep.Published), r.prefix)
	a, err := c.be.Fetch(namedView(rep.Published, span(0, len(rep.Published))), nil)
	require.NoError(t, err)
	c.outcome(a)
	c.quiescedWithin(a)
	var seen observation
	c.observe(&seen)
	ready, readyBack := 0, 0
	for _, op := range c.drv.recorded() {
		st := op.op.Poll(nil)
		for i, name := range op.names {
			s := st.Rows[i]
			assert.Contains(t, []contract.RowStatus{contract.Ready, contract.Miss}, s, "N's row %s read back %v: neither whole nor absent", name, s)
			if rep.Ready[name] {
				ready++
				if assert.Equal(t, contract.Ready, s, "N's row %s, Ready at N, read back", name) {
					readyBack++
				}
			}
		}
	}
	assert.Nil(t, c.shutdown(), "the lender reading N's rows back released everything")
	return fmt.Sprintf("N's published rows read back: %s (%d of the %d N ended Ready)", seen.verdicts.String(), readyBack, ready)
}
