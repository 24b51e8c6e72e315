package mooncakedrv

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/keys"
	"github.com/kvshare/kvshare/mooncakedrv/pool"
	"github.com/kvshare/kvshare/mooncakedrv/pool/pooltest"
	"github.com/kvshare/kvshare/patience"
)

// realWait is the span of every wait of the real-pool tests for
// something the store answers in well under a second (a part, a Drain,
// an attempt): 30 s at KVSHARE_WAIT_SCALE 1, and extended, where a test
// waits through bound, while the process is starved.
var realWait = patience.Scaled(30 * time.Second)

// realStore is a real pool started for one test (pooltest.Start: stopped
// when the test ends) and the store config of a client of it, written to
// the test's temporary folder: the pinned library, the pool's master and
// metadata server, TCP on loopback, and no segment of the client's own
// (global_segment_size 0), so every byte crosses TCP to the pool's
// provider.
type realStore struct {
	dir    string
	pool   *pool.Pool
	config string // the store config's path
}

// realFolderLogged makes the first real-pool test of the binary log the
// library's SHA-256 and the master's version.
var realFolderLogged sync.Once

// startRealStore starts a pool from the tier's Mooncake folder with
// pool.ForTests (eviction off, put discard/release 2 s / 4 s), changed by
// tune when not nil, and writes the store config of its clients. Off,
// the test skips with one line; on but unusable, it fails.
func startRealStore(t *testing.T, tune func(*pool.Options)) *realStore {
	t.Helper()
	dir := pooltest.Dir(t)
	sum, err := pool.LibrarySHA256(dir)
	require.NoError(t, err)
	realFolderLogged.Do(func() {
		version, err := pool.Version(t.Context(), dir)
		require.NoError(t, err)
		t.Logf("real pool from %s: %s sha256 %s; %s", dir, pool.Library, sum, version)
	})
	opts := pool.ForTests(dir)
	if tune != nil {
		tune(&opts)
	}
	p := pooltest.Start(t, opts)
	s := &realStore{dir: dir, pool: p, config: filepath.Join(t.TempDir(), "store.toml")}
	toml := fmt.Sprintf(`[blob]
key_prefix = "kvshare-realpool"

[mooncake]
library = %s
sdk_sha256 = [%s]
master = %s
metadata_server = %s
protocol = "tcp"
local_hostname = "127.0.0.1"
global_segment_size = 0
local_buffer_size = %d
`, strconv.Quote(filepath.Join(dir, pool.Library)), strconv.Quote(sum),
		strconv.Quote(p.MasterAddress()), strconv.Quote(p.MetadataURL()), 64<<20)
	require.NoError(t, os.WriteFile(s.config, []byte(toml), 0o644))
	return s
}

// testLogger is the logger of a driver or client under test: warnings
// and errors (faulted rows and the codes the store answered) in the
// test's output.
func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))
}

// realRig is a driver opened over a real pool through its store config
// (mooncakedrv.Open), with one region of host memory registered, and the
// key stem of its rows. At the end of the test it drains, unregisters
// and closes the driver, failing the test if Drain cannot prove every
// access ended (the memory is then kept: newMemory unmaps only when the
// test passed).
type realRig struct {
	t    *testing.T
	drv  *Driver
	mem  *memory
	reg  contract.Registration
	stem keys.Stem
	kept bool // keep: an access was left unprovable on purpose
}

// keep leaves the driver and its client alive at the end of the test,
// for a test that left an access unprovable on purpose; the rig's
// memory must then be keptMemory's.
func (r *realRig) keep() { r.kept = true }

// openRealRig opens a driver over s with a region of slots slots of
// slotBytes, its rows' keys under prefix.
func openRealRig(t *testing.T, s *realStore, slots int, slotBytes int64, prefix string) *realRig {
	t.Helper()
	return openRealRigOver(t, s, newMemory(t, slots, slotBytes), prefix) // the memory's cleanup runs after the driver's
}

// openRealRigOver is openRealRig over memory the caller mapped.
func openRealRigOver(t *testing.T, s *realStore, mem *memory, prefix string) *realRig {
	t.Helper()
	drv, _, err := Open(t.Context(), s.config, testLogger(t))
	require.NoError(t, err)
	reg, err := drv.Register(mem.region)
	require.NoError(t, err)
	stem, err := keys.NewStem(prefix)
	require.NoError(t, err)
	r := &realRig{t: t, drv: drv, mem: mem, reg: reg, stem: stem}
	t.Cleanup(r.close)
	return r
}

// close drains the driver, unregisters its region and closes it.
func (r *realRig) close() {
	if r.kept {
		return
	}
	ctx, cancel := bound(r.t, realWait, "the closing Drain").Context(context.Background())
	defer cancel()
	if !r.drv.Drain(ctx) {
		clientsKept.Add(1)
		r.t.Errorf("Drain answered false at the end of the test: an access was not proven ended (stats %+v); the driver and its memory are kept", r.drv.Stats())
		return
	}
	if err := r.drv.Unregister(r.reg); err != nil {
		clientsKept.Add(1)
		r.t.Errorf("Unregister at the end of the test: %v", err)
		return
	}
	if err := r.drv.Close(); err != nil {
		clientsKept.Add(1)
		r.t.Errorf("Close at the end of the test: %v", err)
	}
}

// batch is a batch of rows named names, row i in slot slots[i].
func (r *realRig) batch(names []string, slots ...int) contract.RowBatch {
	b := contract.RowBatch{Keys: r.stem}
	for i, n := range names {
		b.Rows = append(b.Rows, contract.Row{Name: []byte(n), Spans: []contract.Span{r.mem.region.Slot(slots[i])}})
	}
	return b
}

// key is the store key of the row named name.
func (r *realRig) key(name string) string {
	k, err := r.stem.Key([]byte(name))
	require.NoError(r.t, err)
	return k
}

// put admits a put of names from slots and waits (bounded) for its
// access to leave Open.
func (r *realRig) put(names []string, slots ...int) contract.OpState {
	r.t.Helper()
	f, ch := notify()
	op, err := r.drv.Put(r.batch(names, slots...), f)
	require.NoError(r.t, err)
	return settleWithin(r.t, op, ch, realWait)
}

// get admits a get of names into slots and waits (bounded) for its
// access to leave Open.
func (r *realRig) get(names []string, slots ...int) contract.OpState {
	r.t.Helper()
	f, ch := notify()
	op, err := r.drv.Get(r.batch(names, slots...), nil, f)
	require.NoError(r.t, err)
	return settleWithin(r.t, op, ch, realWait)
}

// settleWithin waits, within a patient bound of span, for op's access to
// leave Open (through onChange) and returns its state.
func settleWithin(t testing.TB, op contract.Operation, changed <-chan struct{}, span time.Duration) contract.OpState {
	t.Helper()
	ctx, cancel := bound(t, span, "an operation settling").Context(context.Background())
	defer cancel()
	for {
		st := op.Poll(nil)
		if st.Access != contract.Open {
			return st
		}
		select {
		case <-changed:
		case <-ctx.Done():
			if st = op.Poll(nil); st.Access != contract.Open {
				return st
			}
			t.Fatalf("the operation did not end within its bound (%v, extended only while the process was starved): %v", span, st)
		}
	}
}

// statuses is n copies of s.
func statuses(s contract.RowStatus, n int) []contract.RowStatus {
	out := make([]contract.RowStatus, n)
	for i := range out {
		out[i] = s
	}
	return out
}
