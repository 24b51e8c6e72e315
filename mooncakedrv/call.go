package mooncakedrv

import "github.com/kvshare/kvshare/mooncakesdk"

// batchCall is the arguments of one SDK batch call over rows of one or
// more parts, and which part row each argument is. A call over every row
// of a single part takes that part's own arguments (lone is the part,
// from is nil); otherwise the arguments are copies gathered into the
// group head's scratch, from naming each one's part row.
type batchCall struct {
	keys  *mooncakesdk.KeyList
	bufs  []uintptr
	sizes []uint64
	codes []int64
	exist []int32
	lone  *part
	from  []rowRef
	// shared: the call carries rows of more than one part. tainted: an
	// answer in it left a transfer that may still run.
	shared, tainted bool
}

// rowRef is one argument's part and part row.
type rowRef struct {
	p *part
	j int
}

// gatheredArgs is a group head's scratch for the calls that gather rows.
type gatheredArgs struct {
	keys  mooncakesdk.KeyList
	bufs  []uintptr
	sizes []uint64
	codes []int64
	exist []int32
	from  []rowRef
}

// len returns the number of rows in the call.
func (c *batchCall) len() int { return c.keys.Len() }

// row returns argument k's part and part row.
func (c *batchCall) row(k int) (*part, int) {
	if c.from == nil {
		return c.lone, k
	}
	r := c.from[k]
	return r.p, r.j
}

// taint records whether the answer for one of p's rows left its
// transfer unprovable.
func (c *batchCall) taint(p *part, unprovable bool) {
	if unprovable {
		c.tainted, p.tainted = true, true
	}
}

// gather makes the call over the rows of group that keep accepts, and
// sets each part's inCall to whether it has a row in it. A group of one
// part whose every row is kept calls with the part's own arguments; the
// rest copy into the head's scratch (keys crossed into a part's list at
// admission, so they copy without fault). A part with a row in a shared
// call is marked shared.
func gather(group []*part, keep func(p *part, j int) bool) batchCall {
	if len(group) == 1 && keepsAll(group[0], keep) {
		p := group[0]
		p.inCall, p.tainted = p.len() > 0, false
		return batchCall{keys: &p.keys, bufs: p.bufs, sizes: p.sizes, codes: p.codes, exist: p.exists, lone: p}
	}
	s := &group[0].gathered
	s.keys.Reset()
	s.bufs, s.sizes, s.from = s.bufs[:0], s.sizes[:0], s.from[:0]
	parts := 0
	for _, p := range group {
		p.inCall, p.tainted = false, false
		for j := range p.len() {
			if !keep(p, j) {
				continue
			}
			_ = s.keys.Add(append(s.keys.Tail(), p.keys.Key(j)...))
			s.bufs = append(s.bufs, p.bufs[j])
			s.sizes = append(s.sizes, p.sizes[j])
			s.from = append(s.from, rowRef{p, j})
			if !p.inCall {
				p.inCall = true
				parts++
			}
		}
	}
	if parts > 1 {
		for _, p := range group {
			p.shared = p.shared || p.inCall
		}
	}
	n := len(s.from)
	s.codes, s.exist = resize(s.codes, n), resize(s.exist, n)
	return batchCall{keys: &s.keys, bufs: s.bufs, sizes: s.sizes, codes: s.codes, exist: s.exist, from: s.from, shared: parts > 1}
}

// keepsAll reports whether keep accepts every row of p.
func keepsAll(p *part, keep func(p *part, j int) bool) bool {
	for j := range p.len() {
		if !keep(p, j) {
			return false
		}
	}
	return true
}

// everyRow keeps every row.
func everyRow(*part, int) bool { return true }
