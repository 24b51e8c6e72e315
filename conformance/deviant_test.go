package conformance

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/memdrv"
)

// Two deviations memdrv/broken does not stage, built here over memdrv:
// each must fail its own check, within the harness's Wait, without the
// suite hanging or freeing memory it cannot account for.

// accessOnlyDrain answers Drain from the access states of the
// operations it handed out alone: true once every one reads Ended, even
// while a worker is still inside its last onChange.
type accessOnlyDrain struct {
	*memdrv.Driver
	mu  *sync.Mutex
	ops *[]contract.Operation
}

func (d accessOnlyDrain) keep(op contract.Operation, err error) (contract.Operation, error) {
	if err == nil {
		d.mu.Lock()
		*d.ops = append(*d.ops, op)
		d.mu.Unlock()
	}
	return op, err
}

func (d accessOnlyDrain) Put(b contract.RowBatch, onChange func()) (contract.Operation, error) {
	return d.keep(d.Driver.Put(b, onChange))
}

func (d accessOnlyDrain) Get(b contract.RowBatch, h contract.Hint, onChange func()) (contract.Operation, error) {
	return d.keep(d.Driver.Get(b, h, onChange))
}

func (d accessOnlyDrain) Drain(ctx context.Context) bool {
	d.mu.Lock()
	ops := slices.Clone(*d.ops)
	d.mu.Unlock()
	for _, op := range ops {
		if op.Poll().Access != contract.Ended {
			return d.Driver.Drain(ctx)
		}
	}
	stop, cancel := context.WithCancel(ctx)
	cancel()
	d.Driver.Drain(stop) // stops taking work; its answer would wait for the callback
	return true
}

// lockedCallbacks calls onChange under a lock that Poll takes too.
type lockedCallbacks struct {
	*memdrv.Driver
	mu *sync.Mutex
}

func (d lockedCallbacks) locked(onChange func()) func() {
	return func() {
		d.mu.Lock()
		defer d.mu.Unlock()
		onChange()
	}
}

func (d lockedCallbacks) Put(b contract.RowBatch, onChange func()) (contract.Operation, error) {
	op, err := d.Driver.Put(b, d.locked(onChange))
	if err != nil {
		return nil, err
	}
	return lockedPoll{op, d.mu}, nil
}

func (d lockedCallbacks) Get(b contract.RowBatch, h contract.Hint, onChange func()) (contract.Operation, error) {
	op, err := d.Driver.Get(b, h, d.locked(onChange))
	if err != nil {
		return nil, err
	}
	return lockedPoll{op, d.mu}, nil
}

type lockedPoll struct {
	contract.Operation
	mu *sync.Mutex
}

func (o lockedPoll) Poll() contract.OpState {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.Operation.Poll()
}

func deviantHarness(wrap func(*memdrv.Driver) contract.Driver) Harness {
	return Harness{New: func() (*Subject, error) {
		s := memdrv.NewStore()
		d := memdrv.New(s, quiet(memdrv.Options{Put: true}))
		return memSubject(wrap(d), d, s), nil
	}}
}

func TestDrainBeforeLastCallbackFails(t *testing.T) {
	h := deviantHarness(func(d *memdrv.Driver) contract.Driver {
		return accessOnlyDrain{d, new(sync.Mutex), new([]contract.Operation)}
	})
	h.Only = []string{"drain-waits-for-callback"}
	root := &record{}
	run(root, h)
	r := root.find("drain-waits-for-callback/put")
	require.NotNil(t, r)
	assert.True(t, anyContains(r.findings(), "Drain returned true while the onChange for the operation's last change was still running"),
		"findings:\n%s", strings.Join(r.findings(), "\n"))
}

func TestCallbackUnderPollLockFails(t *testing.T) {
	h := deviantHarness(func(d *memdrv.Driver) contract.Driver { return lockedCallbacks{d, new(sync.Mutex)} })
	h.Only = []string{"poll-in-callback"}
	h.Wait = 200 * time.Millisecond
	root := &record{}
	run(root, h)
	r := root.find("poll-in-callback/put")
	require.NotNil(t, r)
	assert.True(t, anyContains(r.findings(), "Poll called from inside onChange did not return"),
		"findings:\n%s", strings.Join(r.findings(), "\n"))
	assert.True(t, anyContains(r.logged(), "the driver stopped answering"), "logs: %q", r.logged())
}
