package nodeclient_test

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/kvshare/kvshare/nodewire"
)

// The evidence tests need the node in a process of its own: the test
// binary run again with -test.run=^TestHelperNodeProcess$, serving a
// fake node at node.sock in the folder KVSHARE_TEST_FAKENODE_DIR, its
// behaviour chosen by KVSHARE_TEST_FAKENODE_MODE. It says "fakenode:
// ready" once it listens, a line for each event a test waits for, and
// serves until its stdin ends (or it is killed).
const (
	envFakeNodeDir  = "KVSHARE_TEST_FAKENODE_DIR"
	envFakeNodeMode = "KVSHARE_TEST_FAKENODE_MODE"
)

// The modes of the node process:
//
//	writer  a fetch is accepted, then the session's connection closed
//	        while the process keeps the lend mapped and keeps writing
//	        the fetch's slot (a store still moving bytes)
//	hold    a fetch is accepted and never answered; a second lend is
//	        never answered
const (
	modeWriter = "writer"
	modeHold   = "hold"
)

// TestHelperNodeProcess is not a test: it is the node process of the
// evidence tests; without their environment it skips.
func TestHelperNodeProcess(t *testing.T) {
	dir := os.Getenv(envFakeNodeDir)
	if dir == "" {
		t.Skip("the node process of the evidence tests, started by them")
	}
	n, err := listenFakeNode(dir, nil)
	if err != nil {
		fmt.Printf("fakenode: fail %v\n", err)
		os.Exit(1)
	}
	say := func(format string, args ...any) { fmt.Printf("fakenode: "+format+"\n", args...) }
	lends := 0
	n.setHook(func(s *fakeSession, f got) bool {
		switch m := f.m.(type) {
		case *nodewire.Lend:
			lends++
			if lends == 1 {
				return false // mapped honestly
			}
			say("lend held")
			return true // never answered; the memfd stays open here
		case *nodewire.Transfer:
			l := s.lends[m.Lend]
			s.reply(f.h.Request, &nodewire.Accepted{})
			if os.Getenv(envFakeNodeMode) == modeWriter {
				delete(s.lends, m.Lend) // the session's end must not unmap it
				g := m.Groups[0]
				off := int64(g.Region)*l.stride + int64(g.Slots[0])*int64(l.g.SlotBytes)
				slot := l.mem[off : off+int64(l.g.SlotBytes)]
				_ = s.conn.Close()
				say("closed the connection, writing on")
				go func() {
					for i := uint64(1); ; i++ {
						for j := range slot {
							slot[j] = byte(i >> (8 * (j % 8)))
						}
						runtime.Gosched() // a pass at a time: the process's other goroutines and its collector run
					}
				}()
			} else {
				say("accepted %v", m.Dir)
			}
			return true
		}
		return false
	})
	say("ready")
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n') // until stdin ends
	os.Exit(0)
}

// nodeProc is a running node process.
type nodeProc struct {
	t     *testing.T
	cmd   *exec.Cmd
	path  string
	lines chan string
}

// startNodeProcess starts the node process in mode and waits for it to
// listen.
func startNodeProcess(t *testing.T, mode string) *nodeProc {
	t.Helper()
	dir, err := os.MkdirTemp("", "kvfake") // short: a socket path has a 108-byte cap
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperNodeProcess$", "-test.v=false")
	cmd.Env = append(os.Environ(), envFakeNodeDir+"="+dir, envFakeNodeMode+"="+mode)
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Start())
	p := &nodeProc{t: t, cmd: cmd, path: filepath.Join(dir, "node.sock"), lines: make(chan string, 16)}
	go func() {
		defer close(p.lines)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if line, ok := strings.CutPrefix(sc.Text(), "fakenode: "); ok {
				p.lines <- line
			}
		}
	}()
	t.Cleanup(func() {
		_ = stdin.Close()
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	p.expect("ready")
	return p
}

// expect waits, within the tests' patience, for the node's next line,
// which must be want.
func (p *nodeProc) expect(want string) {
	p.t.Helper()
	ctx := bounded(p.t)
	select {
	case line, ok := <-p.lines:
		require.True(p.t, ok, "the node process ended before saying %q", want)
		require.Equal(p.t, want, line)
	case <-ctx.Done():
		p.t.Fatalf("the node process did not say %q: %v", want, ctx.Err())
	}
}

func (p *nodeProc) pid() int { return p.cmd.Process.Pid }

// gone reports whether the node process has exited, every thread of
// it: the kernel reports its exit (it is a zombie, not yet reaped), and
// it maps nothing any more.
func (p *nodeProc) gone() bool {
	p.t.Helper()
	var info unix.Siginfo
	err := unix.Waitid(unix.P_PID, p.pid(), &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil)
	require.NoError(p.t, err)
	if info.Signo != int32(unix.SIGCHLD) {
		return false
	}
	maps, err := os.ReadFile("/proc/" + strconv.Itoa(p.pid()) + "/maps")
	require.NoError(p.t, err, "a zombie's maps are readable (and empty)")
	return len(maps) == 0
}
