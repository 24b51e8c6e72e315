package memdrv_test

import (
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/memdrv"
)

// RowEnd.Crashed tells a store call that panicked from a row that failed
// otherwise: a read the store failed is a Fault too, and not a crash.
func TestRowEndSaysWhichCallCrashed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, memdrv.Options{Workers: 1})
		f.store.Set("failing", pattern(slotBytes, 1))
		f.store.Set("crashing", pattern(slotBytes, 2))
		crashed := map[string]bool{}
		f.d.OnRowEnd(func(e memdrv.RowEnd) contract.RowStatus {
			crashed[e.Dir.String()+":"+e.Key] = e.Crashed
			return e.Status
		})
		f.d.FailReads("failing")
		f.get(f.row(0, "failing"))
		synctest.Wait()
		f.d.Crash(memdrv.GetDir)
		op := f.get(f.row(1, "crashing"))
		synctest.Wait()
		assert.Equal(t, statuses(contract.Fault), op.Poll(nil).Rows)
		f.write(2, 3)
		f.put(f.row(2, "stored"))
		synctest.Wait()
		assert.Equal(t, map[string]bool{"get:failing": false, "get:crashing": true, "put:stored": false}, crashed)
		f.teardown()
	})
}
