package diskdrv

import (
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
)

// faultAt stages f on the nth (from 1) operation op of a row, and lead
// on the ones before it; every later one runs, unless always.
type faultAt struct {
	op     Op
	nth    int
	f      Fault
	always bool
	lead   Fault
}

func (fa faultAt) seam() Seam {
	var mu sync.Mutex
	seen := 0
	return func(op Op, _ contract.Direction, _ string) Fault {
		if op != fa.op {
			return Fault{}
		}
		mu.Lock()
		defer mu.Unlock()
		seen++
		switch {
		case seen == fa.nth || (fa.always && seen >= fa.nth):
			return fa.f
		case seen < fa.nth:
			return fa.lead
		}
		return Fault{}
	}
}

// Every fault the seam stages on a put ends in the verdict the package
// documentation names, leaves no object (or a whole one) and no
// temporary file, and gives the room back.
func TestPutFaultsMapToVerdicts(t *testing.T) {
	const size = 64 << 10
	for _, c := range []struct {
		name   string
		fault  faultAt
		durab  Durability
		want   contract.RowStatus
		object bool
	}{
		{"ENOSPC on the write", faultAt{op: Write, nth: 1, f: Fault{Err: syscall.ENOSPC}}, Full, contract.Declined, false},
		{"ENOSPC after a short write", faultAt{op: Write, nth: 2, f: Fault{Err: syscall.ENOSPC}, lead: Fault{Short: true}}, Full, contract.Declined, false},
		{"EDQUOT on the sync", faultAt{op: Sync, nth: 1, f: Fault{Err: syscall.EDQUOT}}, Data, contract.Declined, false},
		{"EIO on the write", faultAt{op: Write, nth: 1, f: Fault{Err: syscall.EIO}}, Full, contract.Fault, false},
		{"EIO on the sync", faultAt{op: Sync, nth: 1, f: Fault{Err: syscall.EIO}}, Full, contract.Fault, false},
		{"one short write", faultAt{op: Write, nth: 1, f: Fault{Short: true}}, Full, contract.Ready, true},
		{"short writes to the end", faultAt{op: Write, nth: 1, f: Fault{Short: true}, always: true}, None, contract.Fault, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			s := open(t, dir, Options{Seam: c.fault.seam(), Durability: c.durab})
			l := lend(t, size)
			data := pattern(c.name, size)
			require.Equal(t, c.want, putRow(s, l, "k", data, true))
			got, ok := s.Object("k")
			require.Equal(t, c.object, ok)
			used, n := s.Used()
			if c.object {
				assert.Equal(t, data, got)
				assert.Equal(t, onDisk(size), used)
				assert.Equal(t, 1, n)
			} else {
				assert.Zero(t, used, "the room of a failed put is given back")
				assert.Zero(t, n)
			}
			tmps, _ := filepath.Glob(filepath.Join(dir, objectsDir, "*", "*"+tmpSuffix))
			assert.Empty(t, tmps, "a failed put leaves no temporary file")
			if !c.object {
				// The key is free again: a put without the fault stores it.
				s.o.Seam = nil
				require.Equal(t, contract.Ready, putRow(s, l, "k", data, true))
			}
		})
	}
}

// Every fault the seam stages on a get ends in its verdict; a short
// read goes on to the end, and a file shorter than its header says is
// dropped from the store.
func TestGetFaultsMapToVerdicts(t *testing.T) {
	const size = 64 << 10
	for _, c := range []struct {
		name  string
		fault faultAt
		want  contract.RowStatus
		kept  bool
	}{
		{"EIO on the read", faultAt{op: Read, nth: 1, f: Fault{Err: syscall.EIO}}, contract.Fault, true},
		{"EIO after a short read", faultAt{op: Read, nth: 2, f: Fault{Err: syscall.EIO}, lead: Fault{Short: true}}, contract.Fault, true},
		{"one short read", faultAt{op: Read, nth: 1, f: Fault{Short: true}}, contract.Ready, true},
		{"short reads to the end", faultAt{op: Read, nth: 1, f: Fault{Short: true}, always: true}, contract.Fault, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			var armed bool
			var mu sync.Mutex
			inner := c.fault.seam()
			seam := func(op Op, dir contract.Direction, key string) Fault {
				mu.Lock()
				on := armed
				mu.Unlock()
				if !on {
					return Fault{}
				}
				return inner(op, dir, key)
			}
			s := open(t, t.TempDir(), Options{Seam: seam})
			l := lend(t, size)
			data := pattern(c.name, size)
			require.Equal(t, contract.Ready, putRow(s, l, "k", data, true))
			mu.Lock()
			armed = true
			mu.Unlock()
			require.Equal(t, c.want, getRow(s, l, "k", size, true))
			if c.want == contract.Ready {
				assert.True(t, l.holds(data))
			}
			_, ok := s.Object("k")
			assert.Equal(t, c.kept, ok)
		})
	}
}

// A file cut short under the store (a disk that lost its tail) is a
// Fault on the get that finds it, and the object is dropped: a lookup
// no longer answers Present for it.
func TestATruncatedObjectIsDropped(t *testing.T) {
	const size = 64 << 10
	dir := t.TempDir()
	s := open(t, dir, Options{})
	l := lend(t, size)
	require.Equal(t, contract.Ready, putRow(s, l, "k", pattern("k", size), false))
	require.NoError(t, os.Truncate(objectPath(dir, digest("k")), headerBytes+size/2))
	assert.Equal(t, contract.Fault, getRow(s, l, "k", size, false))
	_, ok := s.Object("k")
	assert.False(t, ok)
	assert.Equal(t, contract.Miss, getRow(s, l, "k", size, false))
}

// The key is checked on read: an object file that holds another key
// under this key's name is a Fault, nothing of it read as this key's.
func TestTheKeyIsCheckedOnRead(t *testing.T) {
	const size = 8 << 10
	dir := t.TempDir()
	s := open(t, dir, Options{})
	l := lend(t, size)
	require.Equal(t, contract.Ready, putRow(s, l, "a", pattern("a", size), false))
	require.Equal(t, contract.Ready, putRow(s, l, "b", pattern("b", size), false))
	other, err := os.ReadFile(objectPath(dir, digest("a")))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(objectPath(dir, digest("b")), other, 0o644))
	assert.Equal(t, contract.Fault, getRow(s, l, "b", size, false), "another key's bytes are never Ready as this key's")
}

// A get of a row of another size than the object is a Fault with
// nothing written.
func TestAGetOfAnotherSizeIsAFault(t *testing.T) {
	s := open(t, t.TempDir(), Options{})
	l := lend(t, 16<<10)
	require.Equal(t, contract.Ready, putRow(s, l, "k", pattern("k", 8<<10), false))
	for _, n := range []int{4 << 10, 12 << 10} {
		assert.Equal(t, contract.Fault, getRow(s, l, "k", n, false))
		assert.Equal(t, make([]byte, n), l.mem[:n], "nothing written")
	}
}
