package bench

import (
	"context"
	"fmt"
	"time"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/mooncakesdk"
	"github.com/kvshare/kvshare/scheduler"
	"github.com/kvshare/kvshare/tools/internal/poolfloor"
)

// ruleFloor makes the same SDK calls as [poolfloor.Loop], part by part, in the
// order the Mooncake driver's parts take: it hands them to a
// scheduler.Pool of as many workers, the pool the driver runs its parts
// on, so puts run on at most max(1, workers−1) workers at once and a
// queued put is taken once four gets have passed it. Nothing else of
// the driver is in it: no admission, no verdicts, no callbacks. It is
// the floor of measurement 1's goal beside publishes; its ratio to
// [poolfloor.Loop] is what the rules themselves cost.
type ruleFloor struct {
	client mooncakesdk.Client
	pool   *scheduler.Pool[*poolfloor.Part]
}

// ruleFloorStop bounds the wait for the pool's workers at stop: every
// part has returned by then (each tick waits for its own), so it only
// ends a run whose SDK has hung.
const ruleFloorStop = 10 * time.Second

// newRuleFloor starts a pool of workers goroutines making calls on
// client.
func newRuleFloor(client mooncakesdk.Client, workers int) (*ruleFloor, error) {
	f := &ruleFloor{client: client}
	pool, err := scheduler.New(workers, func(p *poolfloor.Part) { poolfloor.RunPart(f.client, p) })
	if err != nil {
		return nil, err
	}
	f.pool = pool
	return f, nil
}

// submit queues every part of s, gets as scheduler.Get and puts as
// scheduler.Put; s.Done closes when the last is done. It fails only
// once the floor is stopped.
func (f *ruleFloor) submit(s *poolfloor.Submission) error {
	s.Reset()
	kind := scheduler.Put
	if s.Dir() == contract.GetDir {
		kind = scheduler.Get
	}
	for _, p := range s.Parts() {
		if err := f.pool.Submit(kind, p); err != nil {
			return err
		}
	}
	return nil
}

// stop ends the workers once they finish the part in hand.
func (f *ruleFloor) stop() error {
	ctx, cancel := context.WithTimeout(context.Background(), ruleFloorStop)
	defer cancel()
	if !f.pool.Stop(ctx) {
		return fmt.Errorf("bench: the rule-following floor's workers did not stop within %v (an SDK call never returned)", ruleFloorStop)
	}
	return nil
}
