package memdrv

import (
	"slices"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/drivekit"
)

// scene is the state of the scenario hooks, guarded by the driver's lock.
type scene struct {
	gates          [3]*Gate   // by Direction
	keyGates       [3][]*Gate // by Direction: the gates of HoldKeys not yet released
	atGates        int        // workers blocked at a gate now
	crash          [3]bool    // by Direction
	failReads      map[string]struct{}
	unprovableGets map[string]struct{}
	cancelHeld     bool  // CompleteAfterCancel(false)
	failRegister   error // staged by FailNextRegister
	failBatch      *bool // staged by FailNextRegistration: whether live
	rowEnd         func(RowEnd) contract.RowStatus
	recycle        recycleBend // the deviation hooks of Recycle
}

// sceneRow is what the hooks say about one store call.
type sceneRow struct {
	crash, failRead, unprovable bool
}

// sceneFor reads the hooks that apply to a store call in dir of key.
func (d *Driver) sceneFor(dir Direction, key string) sceneRow {
	d.mu.Lock()
	defer d.mu.Unlock()
	sc := sceneRow{crash: d.scene.crash[dir]}
	if dir == GetDir {
		_, sc.failRead = d.scene.failReads[key]
		_, sc.unprovable = d.scene.unprovableGets[key]
	}
	return sc
}

// Hold makes every row in dir that a worker takes from now on block at
// the store call, before the store sees it, until the gate is released.
// A blocked row counts as started: it was taken, Cancel does not end it
// (see [Driver.CompleteAfterCancel]), its operation's access stays Open,
// and it keeps its worker busy. A later Hold of the same direction
// replaces the gate for rows taken after it. It panics if dir is not
// PutDir or GetDir.
func (d *Driver) Hold(dir Direction) *Gate {
	mustBeValid(dir)
	g := newGate(d, dir, nil)
	d.mu.Lock()
	d.scene.gates[dir] = g
	d.mu.Unlock()
	return g
}

// HoldKeys makes every row in dir of one of keys (store keys, as the
// batch's key maker builds them from the rows' names) that a worker takes
// from now on block at the store call, as [Driver.Hold] does, until the
// gate is released; rows of other keys run on. A row of one of its keys
// blocks at this gate, not at a gate of Hold; of two HoldKeys gates
// naming its key, at the older. [Gate.Holding] says which rows the gate
// keeps from ending: the rows blocked at it, and, while every worker is
// blocked at a gate, the rows that wait for one. It panics if dir is not
// PutDir or GetDir.
func (d *Driver) HoldKeys(dir Direction, keys ...string) *Gate {
	mustBeValid(dir)
	g := newGate(d, dir, keys)
	d.mu.Lock()
	d.scene.keyGates[dir] = append(d.scene.keyGates[dir], g)
	d.mu.Unlock()
	return g
}

// gateForLocked returns the gate a row of key in dir taken now blocks
// at, or nil: the oldest gate of HoldKeys naming key, else the gate of
// Hold. The caller holds d.mu.
func (d *Driver) gateForLocked(dir Direction, key string) *Gate {
	for _, g := range d.scene.keyGates[dir] {
		if _, ok := g.keys[key]; ok {
			return g
		}
	}
	return d.scene.gates[dir]
}

// dropGateLocked stops g from holding rows taken from now on. The caller
// holds the driver's lock.
func (sc *scene) dropGateLocked(g *Gate) {
	if sc.gates[g.dir] == g {
		sc.gates[g.dir] = nil
	}
	if i := slices.Index(sc.keyGates[g.dir], g); i >= 0 {
		sc.keyGates[g.dir] = slices.Delete(sc.keyGates[g.dir], i, i+1)
	}
}

// Crash makes every store call in dir from now on panic inside the
// worker. The driver recovers it: the row ends Fault, and so does every
// row of its operation no worker took yet; access ends as usual once the
// rows other workers run are final. It panics if dir is not PutDir or
// GetDir.
func (d *Driver) Crash(dir Direction) {
	mustBeValid(dir)
	d.mu.Lock()
	defer d.mu.Unlock()
	d.scene.crash[dir] = true
}

// FailReads makes every later get of these keys (store keys, as the
// batch's key maker builds them from the rows' names) fail while
// reading: the row ends Fault and, when the object would fit, the first
// half of it lands in the head of the slot (a Fault's slot is
// undefined). Gets of keys absent or being written still end Miss or
// NotReady.
func (d *Driver) FailReads(keys ...string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.scene.failReads = addKeys(d.scene.failReads, keys)
}

// UnprovableGets makes every later get of these keys end Fault with its
// operation's access Unprovable: the driver acts as if the transfer might
// still be running, and it does: nothing is written until FinishStrays,
// which lands the object (if the key holds one) in the row's spans, as
// a slow network would. The operation then pins every region it has
// spans in until a Recycle: Unregister of them fails, Drain returns
// false and Close is refused, as the driver rules require.
func (d *Driver) UnprovableGets(keys ...string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.scene.unprovableGets = addKeys(d.scene.unprovableGets, keys)
}

func addKeys(set map[string]struct{}, keys []string) map[string]struct{} {
	if set == nil {
		set = make(map[string]struct{}, len(keys))
	}
	for _, k := range keys {
		set[k] = struct{}{}
	}
	return set
}

// CompleteAfterCancel says what happens to a row blocked at a gate when
// its operation is cancelled. On (the default), the row stays blocked
// and, once released, completes with its real verdict: a completion that
// arrives after the cancel. Off, the row leaves the gate at once and ends
// Cancelled, which is true, since nothing reached the store or touched
// its memory.
func (d *Driver) CompleteAfterCancel(on bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.scene.cancelHeld = !on
}

// RegionRows counts the rows whose spans overlap one region, by where
// their operation stands (see [drivekit.Driver.RowsIn]).
type RegionRows = drivekit.RegionRows

// FailNextRegister makes the next Register that passes validation fail
// with err instead of registering. A [*contract.RegistrationError] with
// a non-zero Registration stages a registration that may be live: the
// region is registered for real and the error returned carries its real
// handle (the staged value only says "non-zero"). Any other error is
// returned as it is and nothing is registered. nil clears a staged
// failure.
func (d *Driver) FailNextRegister(err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.scene.failRegister = err
}

// RowEnd is what a worker knows about a row when its store call ended,
// before its verdict is recorded (see [Driver.OnRowEnd]).
type RowEnd struct {
	Dir Direction
	// Key is the row's store key, built at admission by the batch's key
	// maker; it is the driver's, immutable, and may be kept.
	Key   string
	Spans []contract.Span
	// Object is, for a get, the complete object the store held under
	// Key (read-only); nil otherwise.
	Object []byte
	// Status is memdrv's verdict.
	Status contract.RowStatus
	// OwnWrite says, for a put, that another put of this driver was
	// writing Key when a worker took the row, so the store was not asked
	// and Status is NotReady.
	OwnWrite bool
	// Absent says, for a get, that the store held no object under Key
	// (Status is Miss, or Fault without AbsentIsMiss).
	Absent bool
	// Crashed says the store call panicked (see [Driver.Crash]): Status
	// is Fault.
	Crashed bool
}

// OnRowEnd installs f, called on the worker after every later row's store
// call and before its verdict is recorded, while access is still Open;
// the final status f returns is recorded instead of RowEnd.Status (a
// status that is not final is ignored). It exists so that package broken
// can bend one rule, and tests can watch the order rows run in; nil
// removes it. f runs outside the driver's lock and may call its methods.
func (d *Driver) OnRowEnd(f func(RowEnd) contract.RowStatus) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.scene.rowEnd = f
}
