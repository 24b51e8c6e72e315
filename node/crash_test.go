package node

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/nodeclient"
	"github.com/kvshare/kvshare/patience"
)

// crashStore is what a crash test runs its node over: the store
// argument of the node process and its environment, and how the test
// keeps a fetch inside the store: hold is called before the fetch is
// submitted and returns held (it waits until the fetch is inside the
// store) and release (it lets the store go on, after the node died).
type crashStore struct {
	name  string
	store string
	env   []string
	hold  func(t *testing.T, p *nodeProc, row string) (held, release func())
}

// crashGeometry is the geometry of the crash tests' lends.
var crashGeometry = engineGeometry

// crashKills are the times node killed → engine's evidence the crash
// tests measured, by store, logged at the end of each.
type crashTimes []time.Duration

func (c crashTimes) String() string {
	s := slices.Clone(c)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return "median " + s[len(s)/2].String() + ", max " + s[len(s)-1].String() + " of " + strconv.Itoa(len(s))
}

// crashRounds is how many times each crash test kills a node.
const crashRounds = 3

// crashMidFetch is the node-crash test over one store. An engine (this
// process, through nodeclient) lends a node process its memory and
// publishes a row; the row's fetch into a fenced slot is kept inside the
// store, and the node is SIGKILLed. The fetch's outcome is forced with
// a *nodeclient.NodeLostError; the evidence becomes NodeExited only
// with the node process gone (the kernel reports its exit; it maps
// nothing any more); the fetch then quiesces. The store is let go on;
// a node started again (the restart) serves the engine, which dials it
// and lends a fresh memfd, and round-trips a row through it. The old
// lend's memory is mapped or held by no process but the engine's, its
// slots are untouched (the fence, and the published row, as they were),
// and its return frees it. crashRounds rounds; the times node killed →
// evidence are logged.
func crashMidFetch(t *testing.T, cs crashStore) {
	var times crashTimes
	p := startNode(t, cs.store, cs.env...)
	for round := range crashRounds {
		p, times = crashRound(t, cs, p, round, times)
	}
	p.stop()
	t.Logf("%s: node killed → engine's evidence: %v (%v)", cs.name, times, []time.Duration(times))
}

func crashRound(t *testing.T, cs crashStore, p *nodeProc, round int, times crashTimes) (*nodeProc, crashTimes) {
	ctx, cancel := patience.For(t).Context(context.Background())
	defer cancel()
	c, err := nodeclient.Dial(ctx, p.socket, nodeclient.Options{Engine: "engine", Logger: quiet(t)})
	require.NoError(t, err)
	w := c.Watch()
	require.Truef(t, w.Proves, "no pidfd of the node: %s", w.Via)
	require.Equal(t, p.cmd.Process.Pid, w.PID)
	l, err := c.Lend(ctx, crashGeometry)
	require.NoError(t, err)
	ino := lendInode(t, l)

	tag := cs.name + "-crash-" + strconv.Itoa(round)
	_, err = publishRows(ctx, l, tag, 0, 1)
	require.NoError(t, err)
	row := rowNames(tag, 1)[0]
	fence := bytes.Repeat([]byte{0xA5}, int(crashGeometry.SlotBytes))
	const fetchSlot = 5
	copy(l.Slot(1, fetchSlot), fence)
	published := bytes.Clone(l.Slot(0, 0))

	held, release := cs.hold(t, p, string(row))
	a, err := l.Fetch(ctx, contract.View{Groups: []contract.Group{{Region: 1, Slots: []int32{fetchSlot}, Names: [][]byte{row}}}}, nodeclient.TransferOptions{})
	require.NoError(t, err)
	held()

	killed := time.Now()
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGKILL))
	o, err := a.Wait(ctx)
	require.NoError(t, err)
	var lost *nodeclient.NodeLostError
	require.Truef(t, errors.As(o.Fault, &lost), "the forced outcome's fault: %v", o.Fault)
	if lost.Evidence != nodeclient.NodeExited {
		require.NoError(t, c.WaitNodeExit(ctx))
	}
	took := time.Since(killed)
	require.True(t, nodeGone(t, p.cmd.Process.Pid), "the engine had the node's exit as evidence before the node process was gone")
	times = append(times, took)
	assert.Equal(t, []contract.RowStatus{contract.Pending}, o.Rows, "the outcome forced when the node died")
	require.True(t, patience.For(t).Wait(a.Done()), "the fetch quiesces once the node's exit is proven")
	assert.Equal(t, fence, l.Slot(1, fetchSlot), "the fetch's slot changed")

	// The store goes on; the node starts again; the engine dials it and
	// lends a fresh memfd.
	release()
	var exit *exec.ExitError
	require.ErrorAs(t, p.cmd.Wait(), &exit) // reaped only now
	require.Equal(t, syscall.SIGKILL, exit.Sys().(syscall.WaitStatus).Signal())
	p = startNode(t, cs.store, cs.env...)
	c2, err := nodeclient.Dial(ctx, p.socket, nodeclient.Options{Engine: "engine", Logger: quiet(t)})
	require.NoError(t, err)
	l2, err := c2.Lend(ctx, crashGeometry)
	require.NoError(t, err)
	require.NotEqual(t, ino, lendInode(t, l2), "a fresh memfd")
	_, err = publishRows(ctx, l2, tag+"-restart", 0, 2)
	require.NoError(t, err)
	_, err = fetchRows(ctx, c2, l2, tag+"-restart", 1, 2)
	require.NoError(t, err)

	// Nothing but the engine can reach the old lend's memory; its slots
	// are as the node left them when it died.
	require.Equal(t, []int{os.Getpid()}, memfdHolders(t, ino), "processes mapping or holding the old lend's memfd")
	assert.Equal(t, fence, l.Slot(1, fetchSlot), "the fetch's slot changed after the node died and the store went on")
	assert.Equal(t, published, l.Slot(0, 0), "the published slot changed")
	require.NoError(t, l.Return(ctx), "the old lend is freed once the node's exit is proven")
	assert.Empty(t, memfdHolders(t, ino), "the old lend's memory is gone")

	require.NoError(t, l2.Return(ctx))
	require.NoError(t, c2.Close(ctx))
	lends, _ := c.Lent()
	assert.Zero(t, lends)
	return p, times
}

// nodeGone reports whether the node process pid has exited, every
// thread of it: the kernel reports its exit (a zombie not yet reaped),
// and it maps nothing.
func nodeGone(t *testing.T, pid int) bool {
	t.Helper()
	var info unix.Siginfo
	require.NoError(t, unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil))
	if info.Signo != int32(unix.SIGCHLD) {
		return false
	}
	maps, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/maps")
	require.NoError(t, err)
	return len(maps) == 0
}

// lendInode is the inode of the memfd of l, found among this process's
// mappings of kvshare lends by the address of its first slot.
func lendInode(t *testing.T, l *nodeclient.Lend) uint64 {
	t.Helper()
	addr := uint64(uintptr(unsafe.Pointer(&l.Slot(0, 0)[0])))
	maps, err := os.ReadFile("/proc/self/maps")
	require.NoError(t, err)
	for _, line := range strings.Split(string(maps), "\n") {
		f := strings.Fields(line)
		if len(f) < 6 || !strings.HasPrefix(f[5], "/memfd:kvshare-lend") {
			continue
		}
		lo, hi, _ := strings.Cut(f[0], "-")
		from, _ := strconv.ParseUint(lo, 16, 64)
		to, _ := strconv.ParseUint(hi, 16, 64)
		if addr >= from && addr < to {
			ino, err := strconv.ParseUint(f[4], 10, 64)
			require.NoError(t, err)
			return ino
		}
	}
	t.Fatalf("no mapping of a kvshare lend at %#x", addr)
	return 0
}

// memfdHolders are the processes that map the kvshare lend memfd of
// inode ino, or hold a descriptor of it, sorted.
func memfdHolders(t *testing.T, ino uint64) []int {
	t.Helper()
	procs, err := filepath.Glob("/proc/[0-9]*")
	require.NoError(t, err)
	var pids []int
	for _, dir := range procs {
		pid, _ := strconv.Atoi(filepath.Base(dir))
		if mapsInode(dir, ino) || fdsInode(dir, ino) {
			pids = append(pids, pid)
		}
	}
	sort.Ints(pids)
	return pids
}

func mapsInode(dir string, ino uint64) bool {
	maps, err := os.ReadFile(dir + "/maps")
	if err != nil {
		return false // gone meanwhile, or not ours to read
	}
	for _, line := range strings.Split(string(maps), "\n") {
		f := strings.Fields(line)
		if len(f) >= 6 && strings.HasPrefix(f[5], "/memfd:kvshare-lend") && f[4] == strconv.FormatUint(ino, 10) {
			return true
		}
	}
	return false
}

func fdsInode(dir string, ino uint64) bool {
	fds, err := os.ReadDir(dir + "/fd")
	if err != nil {
		return false
	}
	for _, fd := range fds {
		target, err := os.Readlink(dir + "/fd/" + fd.Name())
		if err != nil || !strings.HasPrefix(target, "/memfd:kvshare-lend") {
			continue
		}
		var st unix.Stat_t
		if unix.Stat(dir+"/fd/"+fd.Name(), &st) == nil && st.Ino == ino {
			return true
		}
	}
	return false
}

// TestNodeCrashMidFetch runs the node-crash test over memdrv's bounded
// store: the fetch is held inside the store by the node process's own
// HoldTransfers gate.
func TestNodeCrashMidFetch(t *testing.T) {
	crashMidFetch(t, crashStore{name: "memdrv", store: "memdrv",
		hold: func(t *testing.T, p *nodeProc, row string) (func(), func()) {
			p.do("hold-get " + row)
			return func() { p.do("held") }, func() {}
		}})
}
