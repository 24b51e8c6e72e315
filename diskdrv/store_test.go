package diskdrv

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/drivekit"
)

// names makes a name its own key.
type names struct{}

func (names) AppendKey(dst, name []byte) []byte { return append(dst, name...) }
func (names) KeyLen(n int) int                  { return n }

func lookup(t *testing.T, d *Driver, keys ...string) []contract.Presence {
	var batch contract.LookupBatch
	batch.Keys = names{}
	for _, k := range keys {
		batch.Names = append(batch.Names, []byte(k))
	}
	got, err := d.Lookup(context.Background(), batch, nil)
	require.NoError(t, err)
	return got
}

// Objects persist across a restart: after the store is closed and the
// directory opened again, lookups answer Present and gets read every
// byte.
func TestObjectsPersistAcrossARestart(t *testing.T) {
	const size = 64 << 10
	dir := t.TempDir()
	l := lend(t, size)
	s := open(t, dir, Options{})
	for _, k := range []string{"a", "b", "c"} {
		require.Equal(t, contract.Ready, putRow(s, l, k, pattern(k, size), true))
	}
	require.NoError(t, s.Close())

	s = open(t, dir, Options{})
	d := New(s, DriverOptions{})
	assert.Equal(t, []contract.Presence{contract.Present, contract.Present, contract.Present, contract.Absent}, lookup(t, d, "a", "b", "c", "d"))
	for _, k := range []string{"a", "b", "c"} {
		require.Equal(t, contract.Ready, getRow(s, l, k, size, true))
		assert.True(t, l.holds(pattern(k, size)), k)
	}
	used, n := s.Used()
	assert.Equal(t, 3*onDisk(size), used)
	assert.Equal(t, 3, n)
	require.True(t, d.Drain(context.Background()))
	require.NoError(t, d.Close())
}

// One process per directory: a second store over a held directory is
// refused with ErrLocked, and takes it once the first is closed.
func TestOneStorePerDirectory(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir, Options{})
	_, err := Open(dir, Options{})
	require.ErrorIs(t, err, ErrLocked)
	require.NoError(t, s.Close())
	open(t, dir, Options{})
}

// A put beyond the byte limit is Declined without eviction; with it,
// the least recently used objects make room (a get counts as a use).
func TestCapacity(t *testing.T) {
	const size = 16 << 10
	l := lend(t, size)
	limit := 3 * onDisk(size)

	s := open(t, t.TempDir(), Options{Capacity: limit})
	for _, k := range []string{"a", "b", "c"} {
		require.Equal(t, contract.Ready, putRow(s, l, k, pattern(k, size), false))
	}
	assert.Equal(t, contract.Declined, putRow(s, l, "d", pattern("d", size), false))
	_, ok := s.Object("d")
	assert.False(t, ok)

	s = open(t, t.TempDir(), Options{Capacity: limit, Evict: true})
	for _, k := range []string{"a", "b", "c"} {
		require.Equal(t, contract.Ready, putRow(s, l, k, pattern(k, size), false))
	}
	require.Equal(t, contract.Ready, getRow(s, l, "a", size, false)) // b is now the least recently used
	require.Equal(t, contract.Ready, putRow(s, l, "d", pattern("d", size), false))
	for k, want := range map[string]bool{"a": true, "b": false, "c": true, "d": true} {
		_, ok := s.Object(k)
		assert.Equal(t, want, ok, k)
	}
	_, err := os.Stat(objectPath(s.dir, digest("b")))
	assert.ErrorIs(t, err, os.ErrNotExist, "an evicted object's file is removed")
	used, _ := s.Used()
	assert.LessOrEqual(t, used, limit)
	// An object larger than the whole limit is Declined, evicting nothing.
	big := lend(t, 4*size)
	assert.Equal(t, contract.Declined, putRow(s, big, "e", pattern("e", 4*size), false))
}

// Lookups answer Present for an object, InFlight for a key another
// writer writes, Absent for the rest; a put or get of a key being
// written is NotReady, and the finished object reads whole.
func TestLookupsAndWritesUnderWay(t *testing.T) {
	const size = 8 << 10
	s := open(t, t.TempDir(), Options{})
	d := New(s, DriverOptions{})
	l := lend(t, size)
	require.Equal(t, contract.Ready, putRow(s, l, "here", pattern("here", size), false))
	finish, err := s.BeginWrite("coming")
	require.NoError(t, err)
	assert.Equal(t, []contract.Presence{contract.Present, contract.InFlight, contract.Absent}, lookup(t, d, "here", "coming", "gone"))
	assert.Equal(t, contract.NotReady, putRow(s, l, "coming", pattern("x", size), false))
	assert.Equal(t, contract.NotReady, getRow(s, l, "coming", size, false))
	finish(pattern("coming", size))
	require.Equal(t, contract.Ready, getRow(s, l, "coming", size, false))
	assert.True(t, l.holds(pattern("coming", size)))
	require.True(t, d.Drain(context.Background()))
	require.NoError(t, d.Close())
}

// The open removes what is no whole object — a temporary file a killed
// put left, a file shorter than its header says, a file whose key is
// not its name's — and keeps the rest.
func TestOpenDropsWhatIsNoWholeObject(t *testing.T) {
	const size = 8 << 10
	dir := t.TempDir()
	l := lend(t, size)
	s := open(t, dir, Options{})
	for _, k := range []string{"whole", "torn", "moved"} {
		require.Equal(t, contract.Ready, putRow(s, l, k, pattern(k, size), false))
	}
	require.NoError(t, s.Close())
	torn := objectPath(dir, digest("torn"))
	require.NoError(t, os.Truncate(torn, headerBytes+size-1))
	require.NoError(t, os.WriteFile(objectPath(dir, digest("x"))+tmpSuffix, []byte("half"), 0o644))
	moved := objectPath(dir, digest("moved"))
	elsewhere := objectPath(dir, digest("elsewhere"))
	require.NoError(t, os.MkdirAll(filepath.Dir(elsewhere), 0o755))
	require.NoError(t, os.Rename(moved, elsewhere))

	s = open(t, dir, Options{})
	assert.Equal(t, 3, s.Dropped())
	_, n := s.Used()
	assert.Equal(t, 1, n)
	_, ok := s.Object("whole")
	assert.True(t, ok)
	for _, p := range []string{torn, elsewhere, objectPath(dir, digest("x")) + tmpSuffix} {
		_, err := os.Stat(p)
		assert.ErrorIs(t, err, os.ErrNotExist, p)
	}
}

// Rows whose memory and size are page-aligned move with direct I/O
// when the file system takes it; the rest through the page cache.
func TestDirectIOWhenAligned(t *testing.T) {
	dir := t.TempDir()
	if err := DirectIOWorks(dir); err != nil {
		t.Skipf("the test directory's file system takes no direct I/O: %v", err)
	}
	s := open(t, dir, Options{})
	require.True(t, s.DirectIO())
	l := lend(t, 16<<10)
	c := client{s}
	for i, sp := range [][]contract.Span{l.span(0, 8<<10), l.span(0, 5000), l.span(100, 4096)} {
		call := &drivekit.Call{Dir: contract.PutDir, Keys: []string{string(rune('a' + i))},
			Rows: []contract.Row{{Spans: sp}}, OwnWrite: []bool{false}, Ends: make([]drivekit.End, 1)}
		c.Transfer(call)
		require.Equal(t, contract.Ready, call.Ends[0].Status)
	}
	direct, cached := s.Rows()
	assert.Equal(t, int64(1), direct)
	assert.Equal(t, int64(2), cached)
	assert.False(t, open(t, t.TempDir(), Options{NoDirectIO: true}).DirectIO())
}
