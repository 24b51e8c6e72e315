package mooncakedrv

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/patience"
)

// exitBound is the span of the bound on how long an exiting client may
// take from the moment it is told to end (its own Shutdown and exit, or
// SIGTERM) to being reaped: patience.Wait(), extended only while the
// process is starved, so a client that hangs is caught.
var exitBound = patience.Wait()

// crashSigns are what a crashed or aborted process leaves on stderr.
var crashSigns = regexp.MustCompile(`panic: |fatal error: |SIGSEGV|SIGABRT|SIGBUS|terminate called|(?m)^Aborted|core dumped|DATA RACE|Check failed`)

// exiterProcess is a running exiting client (see runExiter).
type exiterProcess struct {
	mode   string
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stderr *bytes.Buffer // read once exited is closed
	lines  chan string
	exited chan struct{}
	err    error // of Wait, once exited is closed
}

// startExiter starts an exiting client of s in mode and waits (bounded)
// for it to say it is ready. It is killed when the test ends if it still
// runs.
func startExiter(t *testing.T, s *realStore, prefix, mode string) *exiterProcess {
	t.Helper()
	exe, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), exiterEnv+"="+s.config, exiterPrefixEnv+"="+prefix, exiterModeEnv+"="+mode)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	e := &exiterProcess{mode: mode, cmd: cmd, stderr: new(bytes.Buffer), lines: make(chan string, 8), exited: make(chan struct{})}
	cmd.Stderr = e.stderr
	e.stdin, err = cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	go e.read(stdout)
	t.Cleanup(func() {
		select {
		case <-e.exited:
		default:
			_ = cmd.Process.Kill()
			<-e.exited
		}
		if t.Failed() || os.Getenv("KVSHARE_FAULT_VERBOSE") != "" {
			t.Logf("exiting client (%s): %v; stderr:\n%s", mode, e.err, e.stderr)
		}
	})
	e.expect(t, "ready")
	return e
}

// read turns its stdout into lines and waits for its exit.
func (e *exiterProcess) read(stdout io.Reader) {
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		e.lines <- sc.Text()
	}
	close(e.lines)
	e.err = e.cmd.Wait()
	close(e.exited)
}

// next returns its next line of output (bounded).
func (e *exiterProcess) next(t *testing.T) string {
	t.Helper()
	ctx, cancel := bound(t, realWait, "the exiting client's next line").Context(context.Background())
	defer cancel()
	select {
	case line, ok := <-e.lines:
		if !ok {
			<-e.exited
			t.Fatalf("exiting client (%s) exited (%v) without a line; stderr:\n%s", e.mode, e.err, e.stderr)
		}
		return line
	case <-ctx.Done():
		t.Fatalf("exiting client (%s) said nothing within its bound (%v)", e.mode, realWait)
	}
	return ""
}

// expect requires its next line to start with want, and returns it.
func (e *exiterProcess) expect(t *testing.T, want string) string {
	t.Helper()
	line := e.next(t)
	require.True(t, strings.HasPrefix(line, want), "exiting client (%s): want %q, got %q", e.mode, want, line)
	return line
}

// waitExit waits up to exitBound for the process to be reaped and
// returns how long it took.
func (e *exiterProcess) waitExit(t *testing.T) time.Duration {
	t.Helper()
	start := time.Now()
	if !bound(t, exitBound, "the exiting client's exit").Wait(e.exited) {
		t.Fatalf("exiting client (%s) did not exit within its bound (%v, extended only while the process was starved): it hangs", e.mode, exitBound)
	}
	return time.Since(start)
}

// runExitingClient is the matrix's row for a client process that exits
// while its calls are blocked inside the SDK. Lender A in the test
// process seeds rows, then has publish and fetch traffic in flight when
// the provider is frozen; two exiting clients (child processes) then
// submit a publish and a fetch each, whose calls block inside the SDK on
// the frozen provider. One shuts its backend down and exits by itself;
// the other is sent SIGTERM. Each must exit within exitBound with no
// sign of a crash: the first with status 0 after Shutdown named its
// attempts and region as held, the second killed by the signal it was
// sent. The provider is then resumed; A's operations are checked as in
// every row, the pool must still be healthy (a client dying mid-transfer
// takes neither the master nor the provider down), the keys the exited
// clients were putting must never read back Ready, and a new backend
// round-trips rows.
func runExitingClient(t *testing.T, row *matrixRow) {
	r := &faultRun{s: startRealStore(t, nil), prefix: "kvshare-realpool/fault/client-exits"}
	r.lenders = []*faultLender{openFaultLender(t, r.s, "A", 2*faultRows, r.prefix)}
	a := r.lenders[0]
	phase := phases(t)
	r.seed(t)
	exiters := []*exiterProcess{startExiter(t, r.s, r.prefix, "exit"), startExiter(t, r.s, r.prefix, "sigterm")}
	phase("seeded, exiting clients ready")

	r.names = []map[contract.Direction][]string{{contract.PutDir: rowNames("pub-A", faultRows), contract.GetDir: rowNames("seed-A", faultRows)}}
	r.attempts = []map[contract.Direction]contract.Attempt{{}}
	a.load(r.names[0][contract.PutDir], span(0, faultRows))
	pa, err := a.be.Publish(namedView(r.names[0][contract.PutDir], span(0, faultRows)), nil)
	require.NoError(t, err)
	ga, err := a.be.Fetch(namedView(r.names[0][contract.GetDir], span(faultRows, 2*faultRows)), nil)
	require.NoError(t, err)
	r.attempts[0][contract.PutDir], r.attempts[0][contract.GetDir] = pa, ga
	r.waitInside(t, true, true)
	frozen := time.Now()
	r.strikeAt = frozen
	require.NoError(t, r.s.pool.Freeze())
	for _, at := range r.attempts[0] {
		at.Cancel()
	}
	for _, e := range exiters {
		_, err := io.WriteString(e.stdin, "go\n")
		require.NoError(t, err)
	}
	var cells []string
	var exited exiterReport
	for _, e := range exiters {
		blocked := e.expect(t, "blocked ")
		if e.mode == "sigterm" {
			require.NoError(t, e.cmd.Process.Signal(syscall.SIGTERM))
			took := e.waitExit(t)
			status, _ := e.err.(*exec.ExitError)
			require.NotNil(t, status, "the client sent SIGTERM exited 0: %v", e.err)
			ws := status.Sys().(syscall.WaitStatus)
			assert.True(t, ws.Signaled() && ws.Signal() == syscall.SIGTERM, "the client sent SIGTERM ended %v", e.err)
			cells = append(cells, fmt.Sprintf("the client sent SIGTERM with %s: ended by it (%v) in %v", callsBlocked(blocked), e.err, took.Round(time.Millisecond)))
		} else {
			var rep exiterReport
			require.NoError(t, json.Unmarshal([]byte(e.next(t)), &rep))
			took := e.waitExit(t)
			require.NoError(t, e.err, "the client that exited by itself")
			assert.Positive(t, rep.PutsInside+rep.GetsInside, "the client's calls were no longer inside the SDK when it exited")
			assert.Contains(t, rep.Held, "region 0", "its Shutdown keeps the region of calls blocked inside the SDK")
			assert.Positive(t, rep.RowsLent, "its blocked calls' rows stay lent")
			assert.Empty(t, rep.Broken, "the client that exited: operations against the rule")
			exited = rep
			cells = append(cells, heldCell("the client that exited: Shutdown within "+exiterShutdown.String(), rep.Held, int(rep.RowsLent))+
				fmt.Sprintf(", then exit 0 in %v with %d put and %d get calls inside the SDK", took.Round(time.Millisecond), rep.PutsInside, rep.GetsInside))
		}
		assert.NotRegexp(t, crashSigns, e.stderr.String(), "exiting client (%s): signs of a crash", e.mode)
	}
	phase("clients exited")
	// Resumed once the transfers waiting on a status frame timed out;
	// the rest end when the provider answers.
	time.Sleep(time.Until(frozen.Add(statusTimeout + patience.Scaled(time.Second))))
	require.NoError(t, r.s.pool.Resume())
	r.settle(t, faultCase{midPut: true, midGet: true})
	r.kept = append(r.kept, a.observe(&r.ob))
	for d, at := range r.attempts[0] {
		a.delivered(at, r.names[0][d])
	}
	require.NoError(t, r.s.pool.Healthy(), "the pool after its clients died mid-transfer")
	phase("settled")

	row.answers = "A: " + r.ob.answers.String() + "; the exiting clients: none (they exited first)"
	row.verdicts = "A: " + r.ob.verdicts.String() + "; the client that exited, as it exited: " + exited.Verdicts
	row.access = "A: " + r.ob.access.String() + "; the client that exited: " + exited.Access
	r.orphans = append(rowNames("pub-exit", 2*faultCallRows), rowNames("pub-sigterm", 2*faultCallRows)...)
	row.recovered = "provider resumed; master and provider still up; " + r.newBackend(t, contract.Ready)
	held := a.shutdown()
	a.checkHeld(held, r.kept[0], r.attempts[0])
	row.held = heldCell("A", held, int(a.be.Stats().RowsLent)) + "; " + strings.Join(cells, "; ")
	row.written = fenceCell(t, a)
	phase("shut down")
}

// callsBlocked reads a "blocked <puts> <gets>" line.
func callsBlocked(line string) string {
	var p, g int
	_, _ = fmt.Sscanf(line, "blocked %d %d", &p, &g)
	return fmt.Sprintf("%d put and %d get calls inside the SDK", p, g)
}
