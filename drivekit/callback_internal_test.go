package drivekit

import (
	"context"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
)

// Every path that calls onChange calls it with the driver's lock free:
// the callback finds the lock free while nothing else in the bubble can
// hold it (every other goroutine is durably blocked or gone), so a lock
// it cannot take is held by its own caller. A breach fails here instead
// of deadlocking a callback that polls.
func TestOnChangeRunsOutsideTheDriversLock(t *testing.T) {
	tests := []struct {
		name string
		// start makes one callback come, through op's changes.
		start func(t *testing.T, d *Driver, v *verdicts, slot contract.Span, onChange func())
	}{
		{"a worker settling a row", func(t *testing.T, d *Driver, v *verdicts, slot contract.Span, onChange func()) {
			_, err := d.Put(oneRow(slot), onChange)
			require.NoError(t, err)
		}},
		{"Cancel ending queued rows", func(t *testing.T, d *Driver, v *verdicts, slot contract.Span, onChange func()) {
			resume := d.Pause()
			t.Cleanup(resume)
			op, err := d.Put(oneRow(slot), onChange)
			require.NoError(t, err)
			op.Cancel()
		}},
		{"Drain ending queued rows", func(t *testing.T, d *Driver, v *verdicts, slot contract.Span, onChange func()) {
			resume := d.Pause()
			t.Cleanup(resume)
			_, err := d.Put(oneRow(slot), onChange)
			require.NoError(t, err)
			go d.Drain(context.Background())
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				v := &verdicts{}
				d, reg, err := newRig(v)
				require.NoError(t, err)

				entered, proceed := make(chan struct{}), make(chan struct{})
				var lockFree []bool
				onChange := func() {
					entered <- struct{}{}
					<-proceed
					free := d.mu.TryLock()
					if free {
						d.mu.Unlock()
					}
					lockFree = append(lockFree, free)
				}
				tt.start(t, d, v, rigRegion.Slot(0), onChange)
				synctest.Wait() // whoever else could hold the lock has let it go
				select {
				case <-entered:
				default:
					require.FailNow(t, "no onChange came")
				}
				close(proceed)
				synctest.Wait()
				assert.Equal(t, []bool{true}, lockFree, "onChange ran with the driver's lock free")

				require.True(t, d.Drain(context.Background()))
				require.NoError(t, d.Unregister(reg))
			})
		})
	}
}
