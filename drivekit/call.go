package drivekit

import "github.com/kvshare/kvshare/contract"

// fill makes c the store call over the rows of parts (taken, of one
// direction): their keys, spans and own writes in order, every End
// zero. A call over one part carries its operation's hint and cancel
// channel; a shared call neither.
func (c *Call) fill(parts []part) {
	op := parts[0].op
	c.Dir, c.Hint, c.cancelled = op.dir, nil, nil
	if len(parts) == 1 {
		c.Hint, c.cancelled = op.hint, op.cancelled
	}
	c.Keys, c.Rows, c.OwnWrite, c.Parts = c.Keys[:0], c.Rows[:0], c.OwnWrite[:0], c.Parts[:0]
	for _, p := range parts {
		c.Parts = append(c.Parts, len(c.Keys))
		c.Keys = append(c.Keys, p.op.keys[p.lo:p.hi]...)
		c.Rows = append(c.Rows, p.op.batch.Rows[p.lo:p.hi]...)
		for i := p.lo; i < p.hi; i++ {
			c.OwnWrite = append(c.OwnWrite, p.op.ownWrite(i))
		}
	}
	c.Ends = grow(c.Ends, len(c.Keys))
	c.settled = grow(c.settled, len(c.Keys))
	c.filled = append(c.filled[:0], parts...)
}

// Settle records the ends of rows of the call now, before Transfer
// returns: the store is done with those rows' memory and their Ends in
// c.Ends are final (they must not change after). Their operations'
// callbacks run before Settle returns; access still ends only once
// Transfer returned. A store whose answers for one call come at
// different times (a cluster's nodes) settles each row as its answer
// comes, so a slow node holds up no other's verdicts; Transfer's return
// settles the rest. Call it only while Transfer runs. Safe for
// concurrent use within the call; a row
// settled twice is recorded once.
func (c *Call) Settle(rows ...int) {
	d := c.d
	var told [4]*operation
	n := 0
	d.mu.Lock()
	for _, i := range rows {
		if c.settled[i] {
			continue
		}
		c.settled[i] = true
		p, row := c.rowOf(i)
		d.recordLocked(p.op, row, c.Ends[i], c.OwnWrite[i])
		if n < len(told) && (n == 0 || told[n-1] != p.op) {
			told[n] = p.op
			n++
		}
	}
	d.mu.Unlock()
	for _, op := range told[:n] {
		d.callOnChange(op)
	}
}

// rowOf returns the part of row i of the call, and its row in the
// part's operation.
func (c *Call) rowOf(i int) (part, int) {
	j := len(c.Parts) - 1
	for c.Parts[j] > i {
		j--
	}
	p := c.filled[j]
	return p, p.lo + i - c.Parts[j]
}

// clear drops what c refers to of callers' batches once the call is
// recorded, keeping its slices' arrays.
func (c *Call) clear() {
	clear(c.Keys)
	clear(c.Rows)
	clear(c.filled)
	c.Keys, c.Rows, c.Hint, c.cancelled, c.filled = c.Keys[:0], c.Rows[:0], nil, nil, c.filled[:0]
}

// apart reorders group, in place, into the parts that may share one
// store call and the rest: no key goes twice into one call (a store
// maps a call's buffers by key, so answers for a repeated key prove
// nothing for its copies). The keys compared are those that reach the
// store: a get's every key, a put's keys but its own writes. The first
// part always goes.
func (c *Call) apart(group []part) (now, later []part) {
	if len(group) == 1 {
		return group, nil
	}
	if c.seen == nil {
		c.seen = make(map[string]struct{})
	}
	clear(c.seen)
	n := 0
	for i, p := range group {
		if c.clashes(p) {
			continue
		}
		for row := p.lo; row < p.hi; row++ {
			if p.sends(row) {
				c.seen[p.op.keys[row]] = struct{}{}
			}
		}
		group[n], group[i] = group[i], group[n]
		n++
	}
	clear(c.seen) // it holds operations' keys, which may be reused
	return group[:n], group[n:]
}

// clashes reports whether a key p sends is in c.seen.
func (c *Call) clashes(p part) bool {
	for row := p.lo; row < p.hi; row++ {
		if _, dup := c.seen[p.op.keys[row]]; dup && p.sends(row) {
			return true
		}
	}
	return false
}

// sends reports whether row reaches the store: every get row, and a
// put row unless another put of this driver writes its key now.
func (p part) sends(row int) bool {
	return p.op.dir != contract.PutDir || !p.op.ownWrite(row)
}

// grow returns s resliced to n zero elements, reallocated if too short.
func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	s = s[:n]
	clear(s)
	return s
}
