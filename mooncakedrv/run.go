package mooncakedrv

import (
	"errors"
	"slices"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/mooncakesdk"
)

// run is the worker pool's function: it makes the SDK calls of a group
// of parts of one direction (one part, or several the pool joined while
// the workers were busy), records every row's verdict and access
// evidence, and calls each part's operation's callback before it returns
// (so the pool's Stop, and with it Drain, cannot return before the
// callback). The rows of a group go into as few calls as their keys
// allow (see apart); a call's answer that leaves a transfer unprovable
// makes every part with a row in that call unprovable.
func (d *Driver) run(group []*part) {
	switch {
	case group[0].refused != nil: // alone: joins keeps it apart
		p := group[0]
		d.log.Error("mooncakedrv: a key the admission had accepted was refused when its part was built; the part's rows end Fault without an SDK call",
			"dir", p.op.dir, "rows", p.len(), "err", p.refused)
		p.failAll()
	case group[0].op.dir == contract.PutDir:
		d.planPut(group)
		for rest := group; len(rest) > 0; {
			var now []*part
			now, rest = d.apart(rest)
			d.runPut(now)
		}
	default:
		for rest := group; len(rest) > 0; {
			var now []*part
			now, rest = d.apart(rest)
			d.runGet(now)
		}
	}
	for _, p := range group {
		op := p.op
		d.finish(p)
		d.callOnChange(op)
	}
}

// callFailure is what an SDK call's whole-call failure proves: an
// argument error or a destroyed client reached nothing; a failing answer
// of the library (-1: a NULL argument or an escaped exception) or a
// panic inside the binding leaves unknown whether a transfer ran, so the
// access is unprovable.
func callFailure(err error, panicked any) (failed, unprovable bool) {
	switch {
	case panicked != nil:
		return true, true
	case err == nil:
		return false, false
	case errors.Is(err, mooncakesdk.ErrInvalidArgument), errors.Is(err, mooncakesdk.ErrClosed):
		return true, false
	}
	return true, true
}

// failAll makes every row of the part Fault (a whole call failed).
func (p *part) failAll() {
	for j := range p.status {
		p.status[j] = contract.Fault
	}
}

// failCall ends a call that failed as a whole: every part with a row in
// it has every row Fault, and its access unprovable unless the failure
// proves the call reached nothing. It reports whether the call failed.
func (d *Driver) failCall(c *batchCall, group []*part, fn string, err error, panicked any) bool {
	failed, unprovable := callFailure(err, panicked)
	if !failed {
		return false
	}
	d.logCallFailure(c, fn, err, panicked)
	for _, p := range group {
		if !p.inCall {
			continue
		}
		p.failAll()
		if unprovable && !p.unprovable {
			p.unprovable, p.unprovableShared = true, c.shared
		}
	}
	return true
}

// taint makes every part with a row in the call unprovable when one of
// its answers left a transfer that may still run (tainted names the
// parts whose own rows did): the store answered the call as one, so
// nothing proves the other rows' transfers ended.
func taint(c *batchCall, group []*part) {
	if !c.tainted {
		return
	}
	for _, p := range group {
		if p.inCall && !p.unprovable {
			p.unprovable, p.unprovableShared = true, !p.tainted
		}
	}
}

// runGet makes the group's get-into call over every row and, for rows
// whose lease expired, one reread per part.
func (d *Driver) runGet(group []*part) {
	c := gather(group, everyRow)
	panicked, err := sdkCall(func() error { return d.client.BatchGetIntoList(c.keys, c.bufs, c.sizes, c.codes) })
	d.count(&c, panicked)
	if d.failCall(&c, group, "batch_get_into", err, panicked) {
		return
	}
	for k, code := range c.codes {
		p, j := c.row(k)
		p.codes[j] = code
		v := getVerdict(mooncakesdk.Code(code), int64(p.sizes[j]))
		p.status[j] = v.status // Pending: read once more
		c.taint(p, v.unprovable)
	}
	taint(&c, group)
	for _, p := range group {
		d.reread(p)
		d.logFaults(p, p.codes)
	}
}

// reread reads the part's rows whose lease expired once more (their
// status is still Pending), in a call of its own.
func (d *Driver) reread(p *part) {
	if !slices.Contains(p.status, contract.Pending) {
		return
	}
	one := []*part{p}
	c := gather(one, func(p *part, j int) bool { return p.status[j] == contract.Pending })
	panicked, err := sdkCall(func() error { return d.client.BatchGetIntoList(c.keys, c.bufs, c.sizes, c.codes) })
	d.count(&c, panicked)
	if d.failCall(&c, one, "batch_get_into (reread)", err, panicked) {
		return
	}
	for k, code := range c.codes {
		_, j := c.row(k)
		v := rereadVerdict(mooncakesdk.Code(code), int64(p.sizes[j]))
		p.status[j] = v.status
		p.unprovable = p.unprovable || v.unprovable
		p.codes[j] = code // what the row ended on, for the log
	}
}

// putRow is what a put part does with one row.
type putRow uint8

const (
	putStore    putRow = iota // put it, then confirm a 0
	putWriting                // a put of this driver is writing the key: NotReady
	putLeftOpen               // left open: never put again; the exists-check decides
)

// runPut makes the group's put-from call for the rows it may put, then
// one exists-check confirming every 0 and deciding every key left open.
func (d *Driver) runPut(group []*part) {
	for _, p := range group {
		for j, r := range p.plan {
			switch r {
			case putWriting:
				p.status[j] = contract.NotReady
			case putLeftOpen:
				p.status[j] = contract.Pending // the exists-check decides
			}
		}
	}
	c := gather(group, func(p *part, j int) bool { return p.plan[j] == putStore })
	if c.len() > 0 {
		panicked, err := sdkCall(func() error { return d.client.BatchPutFromList(c.keys, c.bufs, c.sizes, c.codes) })
		d.count(&c, panicked)
		// A put-from that failed as a whole ends its parts' rows Fault;
		// the keys left open of the group's other parts are still
		// decided by the exists-check.
		if !d.failCall(&c, group, "batch_put_from", err, panicked) {
			for k, code := range c.codes {
				p, j := c.row(k)
				v := putVerdict(mooncakesdk.Code(code))
				p.status[j] = v.status // Pending: a 0 to confirm
				p.codes[j] = code
				p.open[j] = v.leftOpen
				c.taint(p, v.unprovable)
			}
			taint(&c, group)
		}
	}
	d.confirm(group)
	for _, p := range group {
		d.logFaults(p, p.codes)
	}
}

// planPut reads, under the lock, what each part of the group does with
// each row into p.plan: the writing flags admission set, and the ledger
// as it stands now (a key may have been left open since admission).
func (d *Driver) planPut(group []*part) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, p := range group {
		for j := range p.len() {
			r := putStore
			switch {
			case p.op.flags[p.lo+j]&rowWriting != 0:
				r = putWriting
			case d.ledger.has(p.keys.Key(j)): // a lookup in an empty map hashes nothing
				r = putLeftOpen
			}
			p.plan[j] = r
		}
	}
}

// confirm makes the group's one exists-check, over every row still
// Pending: a put's 0 becomes Ready only when a complete object stands
// behind the key (NotReady when none does yet), and a key left open is
// Ready if it exists, else Declined. A check that fails as a whole ends
// the rows of every part in it Fault.
func (d *Driver) confirm(group []*part) {
	c := gather(group, func(p *part, j int) bool { return p.status[j] == contract.Pending })
	if c.len() == 0 {
		return
	}
	panicked, err := sdkCall(func() error { return d.client.BatchIsExistList(c.keys, c.exist) })
	d.count(&c, panicked)
	if d.failCall(&c, group, "batch_is_exist", err, panicked) {
		return
	}
	for k, e := range c.exist {
		p, j := c.row(k)
		if p.plan[j] == putLeftOpen {
			p.status[j] = leftOpenVerdict(e)
			continue
		}
		p.status[j] = confirmVerdict(e)
		p.codes[j] = int64(e) // the check's answer, which the log names for a Fault
	}
}
