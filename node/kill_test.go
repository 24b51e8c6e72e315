package node

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/kvshare/kvshare/memdrv"
	"github.com/kvshare/kvshare/patience"
)

// TestEngineKilledWithTransfersHeld: an engine process is SIGKILLed
// while its publish and its fetch are held inside the store. The node
// keeps its lend mapped, counted held, for as long as the store holds
// them, while another engine process's round trips run and succeed
// before, during and after; once the store lets the rows go, the held
// fetch lands its bytes in the memory the node still maps, the held
// publish stores the bytes the dead engine wrote, and the node unmaps
// the lend: its lent bytes come back to the baseline.
func TestEngineKilledWithTransfersHeld(t *testing.T) {
	f := newFixture(t, giveUpAtOnce)
	base := f.node.Stats()
	lend := engineLendBytes(t)
	stride := lend / int64(engineGeometry.Regions)

	survivor := f.startEngine("survivor")
	survivor.do("lend")
	survivor.do("round 0")

	// The row the victim fetches is in the store already; the store will
	// hold the victim's publish and fetch half way.
	fetched := rowBytes("victim-get/0", engineGeometry.SlotBytes)
	f.store.Set(f.key([]byte("victim-get/0")), fetched)
	putGate := f.store.HoldTransfers(memdrv.PutDir, f.key([]byte("victim-put/0")))
	defer putGate.Release()
	getGate := f.store.HoldTransfers(memdrv.GetDir, f.key([]byte("victim-get/0")))
	defer getGate.Release()

	victim := f.startEngine("victim")
	victim.do("lend")
	victim.do("submit publish victim-put 0 5")
	victim.do("submit fetch victim-get 1 2")
	ctx, cancel := patience.For(t).Context(context.Background())
	defer cancel()
	require.NoError(t, putGate.Held(ctx))
	require.NoError(t, getGate.Held(ctx))
	s := f.node.Stats()
	require.Equal(t, base.LentBytes+2*lend, s.LentBytes)

	// The test's own way into the victim's memory, to see what the store
	// writes there after the victim is gone; and the file's inode, to
	// count the node's mappings of it.
	file := lendFile(t, victim.cmd.Process.Pid)
	var st unix.Stat_t
	require.NoError(t, unix.Fstat(int(file.Fd()), &st))
	require.Equal(t, lend, st.Size)
	require.Equal(t, 1, inodeMappings(t, st.Ino), "the node maps the victim's lend (the victim's own mapping is in its process)")

	require.NoError(t, victim.cmd.Process.Signal(syscall.SIGKILL))
	require.Error(t, victim.wait())
	require.Equal(t, syscall.SIGKILL, victim.cmd.ProcessState.Sys().(syscall.WaitStatus).Signal(), "the victim was killed")

	s = f.waitNode("the victim's lend kept", func(s Stats) bool { return s.Engines == 1 && s.HeldLends == 1 })
	require.Equal(t, lend, s.HeldBytes)
	require.Equal(t, base.LentBytes+2*lend, s.LentBytes, "the kept lend is still lent")
	require.EqualValues(t, 2, s.AttemptsOpen, "the held publish and fetch have not quiesced")
	require.Contains(t, f.node.Held(), fmt.Sprintf("engine victim (session 2) lend 1: %d bytes held", lend), "the node names what it keeps")
	require.Equal(t, 1, inodeMappings(t, st.Ino), "the node keeps its mapping while the store holds the rows")

	for i := 1; i <= 3; i++ {
		survivor.do(fmt.Sprintf("round %d", i))
	}
	s = f.node.Stats()
	require.EqualValues(t, 1, s.HeldLends, "still held after the survivor's rounds")
	require.Equal(t, 1, inodeMappings(t, st.Ino))

	putGate.Release()
	getGate.Release()
	s = f.waitNode("the kept lend unmapped", func(s Stats) bool { return s.LentBytes == base.LentBytes+lend })
	require.Zero(t, s.HeldLends)
	require.Zero(t, s.HeldBytes)
	require.Zero(t, s.AttemptsOpen)
	require.Zero(t, inodeMappings(t, st.Ino), "the node unmapped the lend once the store let the rows go")

	got := make([]byte, engineGeometry.SlotBytes)
	_, err := file.ReadAt(got, stride+2*engineGeometry.SlotBytes)
	require.NoError(t, err)
	require.True(t, bytes.Equal(fetched, got), "the held fetch landed its row in the victim's slot 2 of region 1")
	stored, ok := f.store.Object(f.key([]byte("victim-put/0")))
	require.True(t, ok, "the held publish finished")
	require.Equal(t, rowBytes("victim-put/0", engineGeometry.SlotBytes), stored, "the bytes the victim wrote before it died")

	survivor.do("round 4")
	// With the node giving up on a lend's access at once, even an honest
	// return may be answered Held; the node then unmaps it on its own.
	require.Contains(t, []string{"return returned", "return held"}, survivor.do("return"))
	survivor.do("close")
	require.NoError(t, survivor.wait())
	s = f.waitNode("the survivor gone", func(s Stats) bool { return s.Engines == 0 })
	require.Equal(t, base.LentBytes, s.LentBytes, "the node's lent bytes are back to the baseline")
	require.Zero(t, s.Lends)
}

// lendFile opens the memfd of the lend of the engine process pid, found
// among its open files.
func lendFile(t *testing.T, pid int) *os.File {
	t.Helper()
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	fds, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, fd := range fds {
		target, err := os.Readlink(filepath.Join(dir, fd.Name()))
		if err != nil || !strings.HasPrefix(target, "/memfd:kvshare-lend") {
			continue
		}
		file, err := os.OpenFile(filepath.Join(dir, fd.Name()), os.O_RDWR, 0)
		require.NoError(t, err)
		t.Cleanup(func() { file.Close() })
		return file
	}
	t.Fatalf("engine %d has no lend's memfd open", pid)
	return nil
}

// inodeMappings counts this process's mappings of the file of inode ino.
func inodeMappings(t *testing.T, ino uint64) int {
	t.Helper()
	maps, err := os.ReadFile("/proc/self/maps")
	require.NoError(t, err)
	n := 0
	for _, line := range strings.Split(string(maps), "\n") {
		f := strings.Fields(line)
		if len(f) >= 6 && strings.HasPrefix(f[5], "/memfd:kvshare-lend") && f[4] == strconv.FormatUint(ino, 10) {
			n++
		}
	}
	return n
}
