package memdrv_test

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/memdrv"
)

// names is a lookup batch of names under the key maker plain.
func names(ns ...string) contract.LookupBatch {
	b := contract.LookupBatch{Keys: plain}
	for _, n := range ns {
		b.Names = append(b.Names, []byte(n))
	}
	return b
}

func TestLookupIsExact(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, memdrv.Options{Workers: 1})
		assert.True(t, f.d.Capabilities().LookupInFlight)
		f.store.Set("stored", []byte("object"))
		finish := f.store.BeginWrite("writing")
		gate := f.d.Hold(memdrv.PutDir)
		f.write(0, 1)
		op := f.put(f.row(0, "mine"))
		require.NoError(t, gate.Held(t.Context()))

		got, err := f.d.Lookup(t.Context(), names("stored", "absent", "writing", "mine"), nil)
		require.NoError(t, err)
		assert.Equal(t, []contract.Presence{contract.Present, contract.Absent, contract.InFlight, contract.InFlight}, got)

		gate.Release()
		synctest.Wait()
		assert.Equal(t, contract.Ended, op.Poll(nil).Access)
		finish([]byte("whole"))
		got, err = f.d.Lookup(t.Context(), names("writing", "mine"), nil)
		require.NoError(t, err)
		assert.Equal(t, []contract.Presence{contract.Present, contract.Present}, got)
		inside, asked, abandoned := f.d.Lookups()
		assert.Zero(t, inside)
		assert.EqualValues(t, 6, asked)
		assert.Zero(t, abandoned)
		f.teardown()
	})
}

// A lookup held inside the store answers Unknown when its context ends;
// Drain answers false until the gate opens; a failing key is Unknown.
func TestLookupHeldAndFailing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, memdrv.Options{})
		f.store.Set("a", []byte("x"))
		f.d.FailLookups("b")
		got, err := f.d.Lookup(t.Context(), names("a", "b"), nil)
		require.NoError(t, err)
		assert.Equal(t, []contract.Presence{contract.Present, contract.Unknown}, got)

		gate := f.d.HoldLookups()
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		got, err = f.d.Lookup(ctx, names("a"), nil)
		require.NoError(t, err)
		assert.Equal(t, []contract.Presence{contract.Unknown}, got)
		require.NoError(t, gate.Held(t.Context()))
		inside, _, abandoned := f.d.Lookups()
		assert.Equal(t, 1, inside)
		assert.EqualValues(t, 1, abandoned)

		short, cancel2 := context.WithTimeout(t.Context(), time.Second)
		defer cancel2()
		require.NoError(t, f.d.Unregister(f.reg))
		assert.False(t, f.d.Drain(short), "a lookup is inside the store")
		assert.ErrorIs(t, f.d.Close(), contract.ErrDriverRejected)
		_, err = f.d.Lookup(t.Context(), names("a"), nil)
		assert.ErrorIs(t, err, contract.ErrDriverRejected, "refused after Drain")
		gate.Release()
		assert.True(t, f.d.Drain(t.Context()))
		require.NoError(t, f.d.Close())
	})
}

func TestLookupRefusals(t *testing.T) {
	f := newFixture(t, memdrv.Options{})
	for name, b := range map[string]contract.LookupBatch{
		"no key maker":  {Names: [][]byte{[]byte("a")}},
		"an empty name": names("a", ""),
		"a name twice":  names("a", "b", "a"),
	} {
		_, err := f.d.Lookup(t.Context(), b, nil)
		assert.ErrorIs(t, err, contract.ErrDriverRejected, name)
	}
	f.teardown()
}

// BenchmarkLookup: the in-memory store's lookup, per name.
func BenchmarkLookup(b *testing.B) {
	for _, n := range []int{1, 256, 4096} {
		b.Run(fmt.Sprintf("names=%d", n), func(b *testing.B) {
			s := memdrv.NewStore()
			d := memdrv.New(s, memdrv.Options{})
			batch := contract.LookupBatch{Keys: plain}
			for i := range n {
				name := fmt.Appendf(nil, "block-%06d", i)
				batch.Names = append(batch.Names, name)
				s.Set(string(name), []byte{1})
			}
			dst := make([]contract.Presence, 0, n)
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				got, err := d.Lookup(ctx, batch, dst)
				if err != nil || len(got) != n {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/name")
		})
	}
}

// A put admitted but not yet taken by a worker is one the driver is
// putting: its key reads InFlight, whether the workers are paused or
// busy with earlier rows; once the put is Ready the key is Present, and
// a put cancelled before a worker took it leaves its key Absent.
func TestLookupOfAPutNotYetTaken(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, memdrv.Options{Workers: 1})
		resume := f.d.Pause()
		f.write(0, 1)
		queued := f.put(f.row(0, "queued"))
		cancelled := f.put(f.row(1, "cancelled"))
		got, err := f.d.Lookup(t.Context(), names("queued", "cancelled"), nil)
		require.NoError(t, err)
		assert.Equal(t, []contract.Presence{contract.InFlight, contract.InFlight}, got, "admitted, workers paused")

		cancelled.Cancel()
		synctest.Wait()
		got, err = f.d.Lookup(t.Context(), names("queued", "cancelled"), nil)
		require.NoError(t, err)
		assert.Equal(t, []contract.Presence{contract.InFlight, contract.Absent}, got, "the cancelled put no longer puts")

		gate := f.d.HoldKeys(memdrv.PutDir, "first")
		resume()
		first := f.put(f.row(2, "first"))
		behind := f.put(f.row(3, "behind"))
		require.NoError(t, gate.Held(t.Context()))
		got, err = f.d.Lookup(t.Context(), names("first", "behind"), nil)
		require.NoError(t, err)
		assert.Equal(t, []contract.Presence{contract.InFlight, contract.InFlight}, got, "the one worker is busy with the first")

		gate.Release()
		synctest.Wait()
		for _, op := range []contract.Operation{queued, first, behind} {
			assert.Equal(t, contract.Ended, op.Poll(nil).Access)
		}
		got, err = f.d.Lookup(t.Context(), names("queued", "cancelled", "first", "behind"), nil)
		require.NoError(t, err)
		assert.Equal(t, []contract.Presence{contract.Present, contract.Absent, contract.Present, contract.Present}, got)
		f.teardown()
	})
}
