package diskdrv

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/patience"
)

// crashChildEnv names the directory the re-executed test binary writes
// into until it is killed.
const crashChildEnv = "DISKDRV_CRASH_CHILD"

// crashKey names object i of round r and says its size: sizes that are
// whole pages (direct I/O) and sizes that are not (the page cache).
func crashKey(round, i int) (string, int) {
	sizes := []int{4 << 10, 64 << 10, 256<<10 + 100, 1 << 20, 12345}
	n := sizes[(round+i)%len(sizes)]
	return fmt.Sprintf("crash/%d/%d/%d", round, i, n), n
}

// sizeOf reads the size a crash key names.
func sizeOf(key string) (int, bool) {
	parts := strings.Split(key, "/")
	if len(parts) != 4 || parts[0] != "crash" {
		return 0, false
	}
	n, err := strconv.Atoi(parts[3])
	return n, err == nil
}

// TestCrashChild is the child of TestKilledPutsLeaveWholeOrAbsent: it
// puts objects into the directory the environment names, one after
// another, saying each Ready on stdout, until it is killed. Run alone
// it does nothing.
func TestCrashChild(t *testing.T) {
	dir := os.Getenv(crashChildEnv)
	if dir == "" {
		t.Skip("the child of the crash test; it runs only re-executed by it")
	}
	round, err := strconv.Atoi(os.Getenv(crashChildEnv + "_ROUND"))
	require.NoError(t, err)
	// The first write of every put is short: each put takes at least
	// two pwritev calls, so a kill can fall between them and leave a
	// part of the object written (one pwritev of a regular file is not
	// cut by SIGKILL).
	var mu sync.Mutex
	written := map[string]bool{}
	seam := func(op Op, _ contract.Direction, key string) Fault {
		if op != Write {
			return Fault{}
		}
		mu.Lock()
		defer mu.Unlock()
		if written[key] {
			return Fault{}
		}
		written[key] = true
		return Fault{Short: true}
	}
	s := open(t, dir, Options{Durability: None, Seam: seam})
	l := lend(t, 2<<20)
	for i := 0; ; i++ {
		key, n := crashKey(round, i)
		if putRow(s, l, key, pattern(key, n), true) != contract.Ready {
			t.Fatalf("put %s failed", key)
		}
		fmt.Printf("ready %s\n", key)
	}
}

// A process killed (SIGKILL) at random moments of its puts leaves every
// object whole or absent at the next open — never torn, never of
// another length — and every put it saw Ready is there: the open
// removes the temporary files of the puts it cut.
func TestKilledPutsLeaveWholeOrAbsent(t *testing.T) {
	if os.Getenv(crashChildEnv) != "" {
		t.Skip("in the child")
	}
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(uint64(os.Getpid()), 51))
	var ready []string
	for round := range 6 {
		ready = append(ready, killDuringPuts(t, dir, round, 1+rng.IntN(40))...)
		s := open(t, dir, Options{})
		used, n := s.Used()
		checked := 0
		for b := range 256 {
			files, err := os.ReadDir(filepath.Join(dir, objectsDir, fmt.Sprintf("%02x", b)))
			require.NoError(t, err)
			for _, f := range files {
				assert.False(t, strings.HasSuffix(f.Name(), tmpSuffix), "a temporary file outlived the open: %s", f.Name())
			}
		}
		s.mu.Lock()
		var keys []string
		for k := range s.index {
			keys = append(keys, k)
		}
		s.mu.Unlock()
		var total int64
		for _, k := range keys {
			size, ok := sizeOf(k)
			require.True(t, ok, k)
			obj, ok := s.Object(k)
			require.True(t, ok, k)
			require.Len(t, obj, size, "object %s has another length", k)
			require.Equal(t, pattern(k, size), obj, "object %s is torn", k)
			total += onDisk(int64(size))
			checked++
		}
		assert.Equal(t, total, used)
		assert.Equal(t, checked, n)
		for _, k := range ready {
			_, ok := s.Object(k)
			assert.True(t, ok, "a put seen Ready is absent after the kill: %s", k)
		}
		t.Logf("round %d: %d objects whole, %d files dropped at open", round, checked, s.Dropped())
		require.NoError(t, s.Close())
	}
}

// killDuringPuts runs the child over dir until it said after Ready
// puts, kills it with SIGKILL while it writes the next one, and returns
// the keys it said Ready.
func killDuringPuts(t *testing.T, dir string, round, after int) []string {
	var lines atomic.Int64
	ctx, cancel := patience.Bound{Span: patience.Wait(), What: "the child's puts", Logf: t.Logf,
		Moved: func() bool { return lines.Load() > 0 }}.Context(context.Background())
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), crashChildEnv+"="+dir, crashChildEnv+"_ROUND="+strconv.Itoa(round))
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	var ready []string
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if key, ok := strings.CutPrefix(sc.Text(), "ready "); ok {
			ready = append(ready, key)
			lines.Add(1)
		} else {
			t.Logf("child: %s", sc.Text())
		}
		if len(ready) == after {
			require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
			break
		}
	}
	_, _ = cmd.Process.Wait()
	require.Len(t, ready, after, "the child ended before it was killed (or the bound ran out): %v", ctx.Err())
	return ready
}
