package mooncakedrv

import (
	"errors"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/mooncakesdk"
)

// run is the worker pool's function: it makes a part's SDK calls, one
// at a time, records the rows' verdicts and access evidence, and calls
// the operation's callback before it returns (so the pool's Stop, and
// with it Drain, cannot return before the callback).
func (d *Driver) run(p *part) {
	var unprovable bool
	switch {
	case p.refused != nil:
		d.log.Error("mooncakedrv: a key the admission had accepted was refused when its part was built; the part's rows end Fault without an SDK call",
			"dir", p.op.dir, "rows", p.len(), "err", p.refused)
		p.failAll()
	case p.op.dir == contract.PutDir:
		unprovable = d.runPut(p)
	default:
		unprovable = d.runGet(p)
	}
	op := p.op
	d.finish(p, unprovable)
	d.callOnChange(op)
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

// runGet makes the part's get-into call and, for rows whose lease
// expired, one reread. It reports whether the access is unprovable.
func (d *Driver) runGet(p *part) (unprovable bool) {
	panicked, err := sdkCall(func() error { return d.client.BatchGetIntoList(&p.keys, p.bufs, p.sizes, p.codes) })
	d.count(1, panicked)
	if failed, unprov := callFailure(err, panicked); failed {
		d.logCallFailure(p, "batch_get_into", err, panicked)
		p.failAll()
		return unprov
	}
	reread := false
	for j := range p.len() {
		v := getVerdict(mooncakesdk.Code(p.codes[j]), int64(p.sizes[j]))
		p.status[j] = v.status
		unprovable = unprovable || v.unprovable
		reread = reread || v.reread
	}
	if reread && d.reread(p) {
		unprovable = true
	}
	d.logFaults(p, p.codes)
	return unprovable
}

// reread reads the rows whose lease expired once more (their status is
// still Pending). It reports whether the access became unprovable.
func (d *Driver) reread(p *part) (unprovable bool) {
	if p.selectRows(func(j int) bool { return p.status[j] == contract.Pending }) == 0 {
		return false
	}
	panicked, err := sdkCall(func() error { return d.client.BatchGetIntoList(&p.sub, p.subBufs, p.subSizes, p.subCodes) })
	d.count(1, panicked)
	if failed, unprov := callFailure(err, panicked); failed {
		d.logCallFailure(p, "batch_get_into (reread)", err, panicked)
		p.failAll()
		return unprov
	}
	for k, j := range p.subRows {
		v := rereadVerdict(mooncakesdk.Code(p.subCodes[k]), int64(p.sizes[j]))
		p.status[j] = v.status
		unprovable = unprovable || v.unprovable
		p.codes[j] = p.subCodes[k] // what the row ended on, for the log
	}
	return unprovable
}

// putRow is what a put part does with one row.
type putRow uint8

const (
	putStore    putRow = iota // put it, then confirm a 0
	putWriting                // a put of this driver is writing the key: NotReady
	putLeftOpen               // left open: never put again; the exists-check decides
)

// runPut makes the part's put-from call for the rows it may put, then one
// exists-check confirming every 0 and deciding every key left open. It
// reports whether the access is unprovable.
func (d *Driver) runPut(p *part) (unprovable bool) {
	storeAll := d.planPut(p)
	for j, r := range p.plan {
		switch r {
		case putWriting:
			p.status[j] = contract.NotReady
		case putLeftOpen:
			p.status[j] = contract.Pending // the exists-check decides
		}
	}
	// The put-from call: over every row, or over the rows to store.
	keys, bufs, sizes, codes, rows := &p.keys, p.bufs, p.sizes, p.codes, []int(nil)
	if !storeAll {
		n := p.selectRows(func(j int) bool { return p.plan[j] == putStore })
		keys, bufs, sizes, codes, rows = &p.sub, p.subBufs, p.subSizes, p.subCodes, p.subRows
		if n == 0 {
			keys = nil
		}
	}
	if keys != nil {
		panicked, err := sdkCall(func() error { return d.client.BatchPutFromList(keys, bufs, sizes, codes) })
		d.count(1, panicked)
		if failed, unprov := callFailure(err, panicked); failed {
			d.logCallFailure(p, "batch_put_from", err, panicked)
			p.failAll()
			return unprov
		}
		for k, code := range codes {
			j := k
			if rows != nil {
				j = rows[k]
			}
			v := putVerdict(mooncakesdk.Code(code))
			p.status[j] = v.status // Pending: a 0 to confirm
			p.codes[j] = code
			p.open[j] = v.leftOpen
			unprovable = unprovable || v.unprovable
		}
	}
	if d.confirm(p) {
		unprovable = true
	}
	d.logFaults(p, p.codes)
	return unprovable
}

// planPut reads, under the lock, what the part does with each row into
// p.plan: the writing flags admission set, and the ledger as it stands
// now (a key may have been left open since admission). It reports
// whether every row is to be stored.
func (d *Driver) planPut(p *part) (storeAll bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	storeAll = true
	for j := range p.len() {
		r := putStore
		switch {
		case p.op.flags[p.lo+j]&rowWriting != 0:
			r = putWriting
		case d.ledger.has(p.keys.Key(j)): // a lookup in an empty map hashes nothing
			r = putLeftOpen
		}
		p.plan[j] = r
		storeAll = storeAll && r == putStore
	}
	return storeAll
}

// confirm makes the part's one exists-check, over every row still
// Pending: a put's 0 becomes Ready only when a complete object stands
// behind the key (NotReady when none does yet), and a key left open is
// Ready if it exists, else Declined. It reports whether the access
// became unprovable (the check failed as a whole in a way that proves
// nothing).
func (d *Driver) confirm(p *part) (unprovable bool) {
	all := true
	for _, st := range p.status {
		all = all && st == contract.Pending
	}
	keys, exist, rows := &p.keys, p.exists, []int(nil)
	if !all {
		n := p.selectRows(func(j int) bool { return p.status[j] == contract.Pending })
		if n == 0 {
			return false
		}
		keys, exist, rows = &p.sub, p.subExist, p.subRows
	}
	panicked, err := sdkCall(func() error { return d.client.BatchIsExistList(keys, exist) })
	d.count(1, panicked)
	if failed, unprov := callFailure(err, panicked); failed {
		d.logCallFailure(p, "batch_is_exist", err, panicked)
		p.failAll()
		return unprov
	}
	for k, e := range exist {
		j := k
		if rows != nil {
			j = rows[k]
		}
		if p.plan[j] == putLeftOpen {
			p.status[j] = leftOpenVerdict(e)
			continue
		}
		p.status[j] = confirmVerdict(e)
		p.codes[j] = int64(e) // the check's answer, which the log names for a Fault
	}
	return false
}
