package fakesdk

import "sync"

// Gate is where a scripted fault stops: a call held ([Fault.Hold], or a
// call carrying a key [Store.HoldKeys] named) waits at it, and a transfer
// that outlives its call ([Fault.Running]) touches its buffer only after
// it opens. A Gate lets a test order events without sleeping: wait on
// Reached, look, then Open, then Wait.
type Gate struct {
	open     chan struct{}
	openOnce sync.Once

	reached   chan struct{}
	reachOnce sync.Once

	transfers sync.WaitGroup

	mu      sync.Mutex
	holding map[string]int // the keys of the calls waiting at the gate now
}

// NewGate returns a closed gate.
func NewGate() *Gate {
	return &Gate{open: make(chan struct{}), reached: make(chan struct{}), holding: map[string]int{}}
}

// Open lets everything waiting at the gate go on, and everything that
// reaches it later pass at once. Opening twice does nothing.
func (g *Gate) Open() { g.openOnce.Do(func() { close(g.open) }) }

// Reached is closed once the first call or transfer has arrived at the
// gate: a held call after it claimed its keys (one [Store.HoldKeys]
// holds, before the store looked at it), a running transfer once its call
// answered.
func (g *Gate) Reached() <-chan struct{} { return g.reached }

// Wait returns once every transfer that ran past its call at this gate
// has touched its buffer and ended. Call it after Open.
func (g *Gate) Wait() { g.transfers.Wait() }

// Holding reports whether a call waiting at the gate now carries key:
// one of the call's keys is key, whichever key the gate was set for, as
// one call carries every key of its batch.
func (g *Gate) Holding(key string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.holding[key] > 0
}

func (g *Gate) arrive() { g.reachOnce.Do(func() { close(g.reached) }) }

// pass blocks a call carrying keys until the gate opens.
func (g *Gate) pass(keys []string) {
	g.wait(keys)
	<-g.open
	g.leave(keys)
}

// wait counts a call carrying keys as waiting at the gate and marks the
// gate reached.
func (g *Gate) wait(keys []string) {
	g.mu.Lock()
	for _, k := range keys {
		g.holding[k]++
	}
	g.mu.Unlock()
	g.arrive()
}

// leave counts the call carrying keys off the gate.
func (g *Gate) leave(keys []string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, k := range keys {
		if g.holding[k]--; g.holding[k] == 0 {
			delete(g.holding, k)
		}
	}
}
