package fakesdk

import "sync"

// Gate is where a scripted fault stops: a call held ([Fault.Hold]) waits
// at it, and a transfer that outlives its call ([Fault.Running]) touches
// its buffer only after it opens. A Gate lets a test order events without
// sleeping: wait on Reached, look, then Open, then Wait.
type Gate struct {
	open     chan struct{}
	openOnce sync.Once

	reached   chan struct{}
	reachOnce sync.Once

	transfers sync.WaitGroup
}

// NewGate returns a closed gate.
func NewGate() *Gate {
	return &Gate{open: make(chan struct{}), reached: make(chan struct{})}
}

// Open lets everything waiting at the gate go on, and everything that
// reaches it later pass at once. Opening twice does nothing.
func (g *Gate) Open() { g.openOnce.Do(func() { close(g.open) }) }

// Reached is closed once the first call or transfer has arrived at the
// gate: a held call after it claimed its keys, a running transfer once
// its call answered.
func (g *Gate) Reached() <-chan struct{} { return g.reached }

// Wait returns once every transfer that ran past its call at this gate
// has touched its buffer and ended. Call it after Open.
func (g *Gate) Wait() { g.transfers.Wait() }

func (g *Gate) arrive() { g.reachOnce.Do(func() { close(g.reached) }) }

// pass blocks until the gate opens.
func (g *Gate) pass() {
	g.arrive()
	<-g.open
}
