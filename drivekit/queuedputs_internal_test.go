package drivekit

import (
	"context"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
)

// The count of puts no worker took yet goes back to nothing whichever
// way their rows end: taken by a worker, cancelled while queued, ended
// by Drain, or faulted with the rest of an operation whose store call
// crashed.
func TestQueuedPutsAreCountedOutOnEveryPath(t *testing.T) {
	for name, end := range map[string]func(t *testing.T, d *Driver, v *verdicts, slot contract.Span){
		"taken": func(t *testing.T, d *Driver, v *verdicts, slot contract.Span) {
			_, err := d.Put(oneRow(slot), nil)
			require.NoError(t, err)
		},
		"cancelled": func(t *testing.T, d *Driver, v *verdicts, slot contract.Span) {
			resume := d.Pause()
			defer resume()
			op, err := d.Put(oneRow(slot), nil)
			require.NoError(t, err)
			op.Cancel()
		},
		"drained": func(t *testing.T, d *Driver, v *verdicts, slot contract.Span) {
			resume := d.Pause()
			defer resume()
			_, err := d.Put(oneRow(slot), nil)
			require.NoError(t, err)
			require.True(t, d.Drain(context.Background()))
		},
		"crashed": func(t *testing.T, d *Driver, v *verdicts, slot contract.Span) {
			v.crash = true
			two := oneRow(slot)
			two.Rows = append(two.Rows, contract.Row{Name: []byte("k2"), Spans: []contract.Span{slot}})
			_, err := d.Put(two, nil)
			require.NoError(t, err)
		},
	} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				v := &verdicts{}
				d, reg, err := newRig(v)
				require.NoError(t, err)
				end(t, d, v, rigRegion.Slot(0))
				synctest.Wait()
				d.mu.Lock()
				assert.True(t, d.puts.empty())
				d.mu.Unlock()
				require.True(t, d.Drain(context.Background()))
				require.NoError(t, d.Unregister(reg))
			})
		})
	}
}
