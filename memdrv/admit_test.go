package memdrv_test

import (
	"context"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/memdrv"
	"github.com/kvshare/kvshare/memdrv/internal/testkeys"
	"github.com/kvshare/kvshare/rowbatch"
)

// overlong is a key maker that breaks its contract: its keys are one
// byte shorter than its KeyLen says.
type overlong struct{ testkeys.Plain }

func (o overlong) KeyLen(n int) int { return o.Plain.KeyLen(n) + 1 }

func TestAdmissionRefusals(t *testing.T) {
	type call struct {
		dir  memdrv.Direction
		rows func(f *fixture) []contract.Row
		hint contract.Hint
		// keys is the batch's key maker: plain when nil, unless noKeys.
		keys   contract.KeyMaker
		noKeys bool
	}
	one := func(f *fixture) []contract.Row { return []contract.Row{f.row(0, "a")} }
	tests := []struct {
		name     string
		opts     memdrv.Options
		before   func(f *fixture)
		call     call
		want     string
		badBatch bool
	}{
		{
			name: "no rows", call: call{dir: memdrv.PutDir, rows: func(*fixture) []contract.Row { return nil }},
			want: "no rows", badBatch: true,
		},
		{
			name: "no key maker", call: call{dir: memdrv.PutDir, rows: one, noKeys: true},
			want: "no key maker", badBatch: true,
		},
		{
			name: "empty name", call: call{dir: memdrv.GetDir, rows: func(f *fixture) []contract.Row {
				return []contract.Row{f.row(0, "a"), f.row(1, "")}
			}},
			want: "row 1: empty name", badBatch: true,
		},
		{
			name: "a name the key maker has no key for", call: call{
				dir: memdrv.GetDir, keys: testkeys.Plain{MaxName: 3},
				rows: func(f *fixture) []contract.Row { return []contract.Row{f.row(0, "a"), f.row(1, "long")} },
			},
			want: "row 1: the key maker has no key for a name of 4 bytes", badBatch: true,
		},
		{
			name: "repeated name", call: call{dir: memdrv.PutDir, rows: func(f *fixture) []contract.Row {
				return []contract.Row{f.row(0, "a"), f.row(1, "a")}
			}},
			want: `row 1 (key "a"): name repeats row 0`, badBatch: true,
		},
		{
			name: "a key maker whose KeyLen is not exact", call: call{
				dir: memdrv.PutDir, keys: overlong{},
				rows: func(f *fixture) []contract.Row { return []contract.Row{f.row(0, "a"), f.row(1, "b")} },
			},
			want: "row 0: the key maker (memdrv_test.overlong) made a key of 1 bytes for a name of 1 bytes, its KeyLen says 2", badBatch: true,
		},
		{
			name: "span past the region", call: call{dir: memdrv.GetDir, rows: func(f *fixture) []contract.Row {
				r := f.mem.Region
				return []contract.Row{{Name: []byte("a"), Spans: []contract.Span{{Addr: r.Base + uintptr(r.Len) - 8, Len: 16}}}}
			}},
			want: `row 0 (key "a") span 0`, badBatch: true,
		},
		{
			name: "negative-length span", call: call{dir: memdrv.PutDir, rows: func(f *fixture) []contract.Row {
				return []contract.Row{{Name: []byte("a"), Spans: []contract.Span{{Addr: f.mem.Region.Base, Len: -1}}}}
			}},
			want: "length -1", badBatch: true,
		},
		{
			name: "two spans without MultiSpan", call: call{dir: memdrv.PutDir, rows: func(f *fixture) []contract.Row {
				return []contract.Row{{Name: []byte("a"), Spans: []contract.Span{f.mem.Region.Slot(0), f.mem.Region.Slot(1)}}}
			}},
			want: "2 spans", badBatch: true,
		},
		{
			name: "revoked region", before: func(f *fixture) { require.NoError(f.t, f.d.Unregister(f.reg)) },
			call: call{dir: memdrv.GetDir, rows: one},
			want: "lies in no live registration", badBatch: true,
		},
		{
			name: "put on a get-only driver", opts: memdrv.Options{Get: true},
			call: call{dir: memdrv.PutDir, rows: one}, want: "does not serve puts",
		},
		{
			name: "get on a put-only driver", opts: memdrv.Options{Put: true},
			call: call{dir: memdrv.GetDir, rows: one}, want: "does not serve gets",
		},
		{
			name: "hint without Hints", call: call{dir: memdrv.GetDir, rows: one, hint: "prefetch"},
			want: "does not declare Hints",
		},
		{
			name: "more rows than MaxRowsPerOp", opts: memdrv.Options{MaxRowsPerOp: 1},
			call: call{dir: memdrv.PutDir, rows: func(f *fixture) []contract.Row {
				return []contract.Row{f.row(0, "a"), f.row(1, "b")}
			}},
			want: "2 rows, the driver takes at most 1",
		},
		{
			name: "after Drain", before: func(f *fixture) { require.True(f.t, f.d.Drain(context.Background())) },
			call: call{dir: memdrv.GetDir, rows: one}, want: "drained",
		},
		{
			name: "after Close", before: func(f *fixture) { f.teardown() },
			call: call{dir: memdrv.PutDir, rows: one}, want: "closed",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, tt.opts)
			f.store.Set("a", make([]byte, slotBytes))
			if tt.before != nil {
				tt.before(f)
			}
			called := new(counter)
			b := batch(tt.call.rows(f)...)
			switch {
			case tt.call.noKeys:
				b.Keys = nil
			case tt.call.keys != nil:
				b.Keys = tt.call.keys
			}
			var (
				op  contract.Operation
				err error
			)
			if tt.call.dir == memdrv.PutDir {
				op, err = f.d.Put(b, called.inc)
			} else {
				op, err = f.d.Get(b, tt.call.hint, called.inc)
			}
			require.Error(t, err)
			assert.Nil(t, op)
			assert.ErrorIs(t, err, contract.ErrDriverRejected)
			assert.Contains(t, err.Error(), tt.want)
			if tt.badBatch {
				assert.ErrorIs(t, err, rowbatch.ErrBadBatch)
			}
			// Nothing was recorded or started.
			assert.Zero(t, f.d.Live())
			assert.Zero(t, f.d.Admitted(tt.call.dir))
			assert.True(t, f.d.Drain(context.Background()))
			assert.Zero(t, called.get())
			assert.True(t, untouched(f.mem.Bytes))
			assert.Equal(t, 1, f.store.Len())
		})
	}
}

// MaxRowsPerOp is the most rows one call may carry: a batch that long is
// admitted, one row more is refused.
func TestMaxRowsPerOpIsInclusive(t *testing.T) {
	for _, dir := range []memdrv.Direction{memdrv.PutDir, memdrv.GetDir} {
		t.Run(dir.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := newFixture(t, memdrv.Options{MaxRowsPerOp: 3})
				rows := []contract.Row{f.row(0, "a"), f.row(1, "b"), f.row(2, "c"), f.row(3, "d")}
				call := func(rows []contract.Row) (contract.Operation, error) {
					if dir == memdrv.PutDir {
						return f.d.Put(batch(rows...), nil)
					}
					return f.d.Get(batch(rows...), nil, nil)
				}
				_, err := call(rows)
				require.ErrorIs(t, err, contract.ErrDriverRejected)
				assert.Contains(t, err.Error(), "4 rows, the driver takes at most 3")
				op, err := call(rows[:3])
				require.NoError(t, err)
				synctest.Wait()
				assert.Equal(t, contract.Ended, op.Poll(nil).Access)
				f.teardown()
			})
		})
	}
}

func TestCapabilities(t *testing.T) {
	tests := []struct {
		name string
		opts memdrv.Options
		want contract.Capabilities
	}{
		{"defaults", memdrv.Options{}, contract.Capabilities{Put: true, Get: true, Cancel: true, AbsentIsMiss: true, LookupInFlight: true}},
		{"put only", memdrv.Options{Put: true}, contract.Capabilities{Put: true, Cancel: true, AbsentIsMiss: true, LookupInFlight: true}},
		{"get only, no cancel", memdrv.Options{Get: true, NoCancel: true}, contract.Capabilities{Get: true, AbsentIsMiss: true, LookupInFlight: true}},
		{
			"everything",
			memdrv.Options{DeviceMemory: true, Hints: true, MultiSpan: true, MaxRowsPerOp: 7},
			contract.Capabilities{Put: true, Get: true, Cancel: true, AbsentIsMiss: true, DeviceMemory: true, MultiSpan: true, Hints: true, MaxRowsPerOp: 7, LookupInFlight: true},
		},
		{"negative cap", memdrv.Options{MaxRowsPerOp: -1}, contract.Capabilities{Put: true, Get: true, Cancel: true, AbsentIsMiss: true, LookupInFlight: true}},
		{"no AbsentIsMiss", memdrv.Options{NoAbsentIsMiss: true}, contract.Capabilities{Put: true, Get: true, Cancel: true, LookupInFlight: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := memdrv.New(memdrv.NewStore(), tt.opts)
			assert.Equal(t, tt.want, d.Capabilities())
			assert.Equal(t, tt.want, d.Capabilities(), "the same every time")
			assert.Equal(t, tt.want, memdrv.NewTogether(memdrv.NewStore(), tt.opts).Capabilities())
		})
	}
}
