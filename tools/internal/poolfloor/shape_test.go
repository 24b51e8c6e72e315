package poolfloor

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/keys"
	"github.com/kvshare/kvshare/mooncakesdk"
	"github.com/kvshare/kvshare/storeconfig"
)

// The round trip's default shape over a store file that sets nothing
// but what the decoder fills in: 1024 rows of 256 KiB in views of 64,
// the SDK's call caps, and one goroutine (calls_in_flight 1); the
// [blob] caps lower the call caps; calls_in_flight 0 leaves the workers.
func TestShapeOfIsTheDriversShape(t *testing.T) {
	file := mooncakesdk.MooncakeConfig{Workers: 4, RowsPerCall: 256, BytesPerCall: 128 << 20, CallsInFlight: 1}
	for _, c := range []struct {
		name   string
		m      mooncakesdk.MooncakeConfig
		b      storeconfig.Blob
		rows   int
		bytes  int64
		goroes int
	}{
		{"the decoder's defaults", file, storeconfig.Blob{}, 256, 128 << 20, 1},
		{"a zero section", mooncakesdk.MooncakeConfig{}, storeconfig.Blob{}, mooncakesdk.DefaultRowsPerCall, mooncakesdk.DefaultBytesPerCall, mooncakesdk.DefaultWorkers},
		{"no bound on calls in flight", mooncakesdk.MooncakeConfig{Workers: 3}, storeconfig.Blob{}, 256, 128 << 20, 3},
		{"the backend's caps where tighter", file, storeconfig.Blob{RowsPerCall: 32, BytesPerCall: 4 << 20}, 32, 4 << 20, 1},
		{"the driver's caps where tighter", mooncakesdk.MooncakeConfig{RowsPerCall: 8, BytesPerCall: 1 << 20, CallsInFlight: 2}, storeconfig.Blob{RowsPerCall: 32, BytesPerCall: 4 << 20}, 8, 1 << 20, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := ShapeOf(1024, 256<<10, 64, c.m, c.b)
			require.NoError(t, s.Validate())
			assert.Equal(t, Shape{Rows: 1024, RowBytes: 256 << 10, ViewRows: 64, RowsPerCall: c.rows, BytesPerCall: c.bytes, Workers: c.goroes}, s)
			assert.Equal(t, int64(256<<20), s.Bytes())
		})
	}
}

// Rows are cut as kvshare cuts them: into views first, then into calls
// of at most the caps' rows and bytes (one larger row alone).
func TestPrepareCutsViewsThenCalls(t *testing.T) {
	stem, err := keys.NewStem("floor/test")
	require.NoError(t, err)
	for _, c := range []struct {
		name  string
		shape Shape
		parts []int
	}{
		{"the round trip's views, one call each", Shape{Rows: 256, RowBytes: 1 << 10, ViewRows: 64, RowsPerCall: 256, BytesPerCall: 1 << 30, Workers: 1}, []int{64, 64, 64, 64}},
		{"a last view short", Shape{Rows: 150, RowBytes: 1 << 10, ViewRows: 64, RowsPerCall: 256, BytesPerCall: 1 << 30, Workers: 1}, []int{64, 64, 22}},
		{"rows per call within a view", Shape{Rows: 20, RowBytes: 1 << 10, ViewRows: 10, RowsPerCall: 4, BytesPerCall: 1 << 30, Workers: 1}, []int{4, 4, 2, 4, 4, 2}},
		{"bytes per call within a view", Shape{Rows: 8, RowBytes: 1 << 20, ViewRows: 8, RowsPerCall: 256, BytesPerCall: 3 << 20, Workers: 1}, []int{3, 3, 2}},
		{"a row over the bytes cap goes alone", Shape{Rows: 3, RowBytes: 4 << 20, ViewRows: 3, RowsPerCall: 256, BytesPerCall: 1 << 20, Workers: 1}, []int{1, 1, 1}},
	} {
		t.Run(c.name, func(t *testing.T) {
			names, addrs := testRows(c.shape.Rows, c.shape.RowBytes)
			for _, dir := range []contract.Direction{contract.PutDir, contract.GetDir} {
				s, err := c.shape.Prepare(dir, stem, names, addrs)
				require.NoError(t, err)
				assert.Equal(t, dir, s.Dir())
				assert.Equal(t, c.shape.Rows, s.Rows())
				var got []int
				next := 0
				for _, p := range s.Parts() {
					got = append(got, p.Rows())
					assert.Equal(t, addrs[next], p.bufs[0], "a part starts at its first row's slot")
					next += p.Rows()
				}
				assert.Equal(t, c.parts, got)
			}
		})
	}
}

func TestShapeRefusesBadInput(t *testing.T) {
	good := Shape{Rows: 4, RowBytes: 64, ViewRows: 2, RowsPerCall: 2, BytesPerCall: 1 << 20, Workers: 1}
	for _, c := range []struct {
		name string
		edit func(*Shape)
		msg  string
	}{
		{"no rows", func(s *Shape) { s.Rows = 0 }, "rows is 0, want > 0"},
		{"no row bytes", func(s *Shape) { s.RowBytes = -1 }, "row bytes is -1, want > 0"},
		{"over 1 TiB", func(s *Shape) { s.RowBytes = 1 << 39 }, "rows*row bytes is over 1 TiB"},
		{"no view rows", func(s *Shape) { s.ViewRows = 0 }, "view rows is 0, want > 0"},
		{"no rows per call", func(s *Shape) { s.RowsPerCall = 0 }, "rows per call is 0, want > 0"},
		{"no bytes per call", func(s *Shape) { s.BytesPerCall = 0 }, "bytes per call is 0, want > 0"},
		{"no workers", func(s *Shape) { s.Workers = -2 }, "workers is -2, want > 0"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := good
			c.edit(&s)
			err := s.Validate()
			require.ErrorIs(t, err, ErrShape)
			assert.ErrorContains(t, err, c.msg)
			names, addrs := testRows(4, 64)
			_, err = s.Prepare(contract.PutDir, keys.Stem{}, names, addrs)
			require.ErrorIs(t, err, ErrShape, "Prepare refuses what Validate refuses")
		})
	}
	stem, err := keys.NewStem("floor/test")
	require.NoError(t, err)
	names, addrs := testRows(4, 64)
	for _, c := range []struct {
		name  string
		names [][]byte
		addrs []uintptr
		msg   string
	}{
		{"fewer names", names[:3], addrs, "3 names and 4 addresses for 4 rows"},
		{"more addresses", names, append(addrs, 0), "4 names and 5 addresses for 4 rows"},
		{"an empty name", [][]byte{names[0], {}, names[2], names[3]}, addrs, "name 1 is empty"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := good.Prepare(contract.GetDir, stem, c.names, c.addrs)
			require.ErrorIs(t, err, ErrShape)
			assert.ErrorContains(t, err, c.msg)
		})
	}
}

// testRows are n distinct names and the addresses of n slots of
// rowBytes from 4096 on (never touched: the tests make no call).
func testRows(n int, rowBytes int64) ([][]byte, []uintptr) {
	names := make([][]byte, n)
	addrs := make([]uintptr, n)
	for i := range n {
		names[i] = []byte{'r', byte(i >> 8), byte(i)}
		addrs[i] = 4096 + uintptr(int64(i)*rowBytes)
	}
	return names, addrs
}
