package mooncakedrv

import (
	"errors"
	"fmt"
	"strings"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/drivekit"
	"github.com/kvshare/kvshare/mooncakesdk"
)

// Transfer moves one store call's rows with the SDK's batch calls: a
// put is put-from and an exists-check confirming every 0, a get is
// get-into and one reread of the rows whose lease expired. Every row's
// verdict comes from verdict.go; an answer that leaves a transfer
// unprovable, or a call that fails as a whole without proof that it
// reached nothing, ends its rows Unprovable (the kit then keeps every
// operation with a row in the call Unprovable until a Recycle).
func (s *store) Transfer(c *drivekit.Call) {
	a := s.takeArgs()
	defer s.keepArgs(a)
	a.split(c)
	if c.Dir == contract.PutDir {
		s.put(c, a)
	} else {
		s.get(c, a)
	}
	s.settle(c, a)
	s.logFaults(c, a)
}

// partState is what the SDK calls of a store call proved of one of its
// parts (the kit's, see drivekit.Call.Parts).
type partState struct {
	inCall  bool // the part has a row in the SDK call being made
	tainted bool // an answer for one of its rows in that call left a transfer unprovable
	// shared: the part had rows in an SDK call with another part's;
	// unprovable: an SDK call it had rows in leaves its access
	// unprovable; unprovableShared: a shared call did, though no answer
	// for its own rows did.
	shared, unprovable, unprovableShared bool
}

// split records which part each row of c belongs to.
func (a *args) split(c *drivekit.Call) {
	a.partOf = resize(a.partOf, len(c.Rows))
	a.parts = resize(a.parts, len(c.Parts))
	clear(a.parts)
	for p, lo := range c.Parts {
		hi := len(c.Rows)
		if p+1 < len(c.Parts) {
			hi = c.Parts[p+1]
		}
		for i := lo; i < hi; i++ {
			a.partOf[i] = p
		}
	}
}

// taint makes every part with a row in the SDK call just made
// unprovable when one of its answers left a transfer that may still run:
// the store answered the call as one, so nothing proves the other rows'
// transfers ended.
func (a *args) taint() {
	if !a.tainted {
		return
	}
	for p := range a.parts {
		ps := &a.parts[p]
		if ps.inCall && !ps.unprovable {
			ps.unprovable, ps.unprovableShared = true, !ps.tainted
		}
	}
}

// mark records that the answer for row i left its transfer unprovable.
func (a *args) mark(i int, unprovable bool) {
	if unprovable {
		a.tainted = true
		a.parts[a.partOf[i]].tainted = true
	}
}

// settle ends Unprovable every row of a part an SDK call left
// unprovable, and counts the parts that shared calls.
func (s *store) settle(c *drivekit.Call, a *args) {
	shared, unprovableShared := 0, 0
	for _, ps := range a.parts {
		if ps.shared {
			shared++
		}
		if ps.unprovableShared {
			unprovableShared++
		}
	}
	for i := range c.Ends {
		if a.parts[a.partOf[i]].unprovable {
			c.Ends[i].Unprovable = true
		}
	}
	if shared > 0 {
		s.mu.Lock()
		s.counts.partsShared += int64(shared)
		s.counts.partsUnprovableShared += int64(unprovableShared)
		s.mu.Unlock()
	}
}

// args is one SDK batch call's arguments over some rows of a store call
// (row[k] is argument k's row), with the answers; pooled.
type args struct {
	keys   mooncakesdk.KeyList
	bufs   []uintptr
	sizes  []uint64
	codes  []int64
	exist  []int32
	row    []int
	plan   []putRow // put: what the call does with each row
	answer []int64  // each row's last answer, for the log
	partOf []int    // each row's part
	parts  []partState
	// shared: the SDK call carries rows of more than one part; tainted:
	// an answer in it left a transfer that may still run.
	shared, tainted bool
}

// spareArgs bounds the args a store keeps for reuse, and spareArgsRows
// the rows one of them may have served.
const (
	spareArgs     = 8
	spareArgsRows = 1 << 12
)

// takeArgs returns args for a store call: one the store kept, or new.
// The store's own list, under its lock, rather than a sync.Pool: a
// pool's item given back on one processor is seldom found by a worker
// on another, and each miss grows a call's key list and slices again.
func (s *store) takeArgs() (a *args) {
	s.mu.Lock()
	if n := len(s.spare); n > 0 {
		a, s.spare = s.spare[n-1], s.spare[:n-1]
	}
	s.mu.Unlock()
	if a == nil {
		a = new(args)
	}
	return a
}

// keepArgs keeps a, done with, for a later store call.
func (s *store) keepArgs(a *args) {
	if cap(a.row) > spareArgsRows {
		return
	}
	s.mu.Lock()
	if len(s.spare) < spareArgs {
		s.spare = append(s.spare, a)
	}
	s.mu.Unlock()
}

// gather makes a the arguments over the rows of c that keep accepts.
// The kit admitted only keys CheckKey passed, so none is refused here;
// should one be (a key maker whose keys change between calls), its row
// ends Fault without reaching the store.
func (a *args) gather(c *drivekit.Call, keep func(i int) bool) {
	a.keys.Reset()
	a.bufs, a.sizes, a.row = a.bufs[:0], a.sizes[:0], a.row[:0]
	for i, r := range c.Rows {
		if !keep(i) {
			continue
		}
		if err := a.keys.Append(c.Keys[i]); err != nil {
			c.Ends[i] = drivekit.End{Status: contract.Fault}
			continue
		}
		s := r.Spans[0]
		a.bufs = append(a.bufs, s.Addr)
		a.sizes = append(a.sizes, uint64(s.Len))
		a.row = append(a.row, i)
	}
	in := 0
	for p := range a.parts {
		a.parts[p].inCall, a.parts[p].tainted = false, false
	}
	for _, i := range a.row {
		if ps := &a.parts[a.partOf[i]]; !ps.inCall {
			ps.inCall = true
			in++
		}
	}
	a.shared, a.tainted = in > 1, false
	for p := range a.parts {
		a.parts[p].shared = a.parts[p].shared || (a.shared && a.parts[p].inCall)
	}
	n := len(a.row)
	a.codes, a.exist = resize(a.codes, n), resize(a.exist, n)
}

// resize returns s with length n, reusing its array when it can.
func resize[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
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

// call makes one SDK call over a's rows, counts it, and, when it failed
// as a whole, ends every row in it Fault (Unprovable unless the failure
// proves the call reached nothing) and reports false.
func (s *store) call(c *drivekit.Call, a *args, fn string, f func(mooncakesdk.Client) error) bool {
	client := s.current()
	panicked, err := sdkCall(func() error { return f(client) })
	s.count(a.shared, panicked)
	failed, unprovable := callFailure(err, panicked)
	if !failed {
		return true
	}
	what := fmt.Sprint(err)
	if panicked != nil {
		what = fmt.Sprintf("panic: %v", panicked)
	}
	s.log.Warn("mooncakedrv: an SDK call failed as a whole; every row in it ends Fault",
		"call", fn, "dir", c.Dir, "rows", len(a.row), "shared", a.shared, "failure", what, "access unprovable", unprovable)
	for _, i := range a.row {
		c.Ends[i] = drivekit.End{Status: contract.Fault}
	}
	for p := range a.parts {
		if ps := &a.parts[p]; unprovable && ps.inCall && !ps.unprovable {
			ps.unprovable, ps.unprovableShared = true, a.shared
		}
	}
	return false
}

// get makes the get-into call over every row and, for rows whose lease
// expired, one reread.
func (s *store) get(c *drivekit.Call, a *args) {
	a.answer = resize(a.answer, len(c.Rows))
	clear(a.answer)
	a.gather(c, func(int) bool { return true })
	if !s.call(c, a, "batch_get_into", func(cl mooncakesdk.Client) error { return cl.BatchGetIntoList(&a.keys, a.bufs, a.sizes, a.codes) }) {
		return
	}
	reread := false
	for k, code := range a.codes {
		i := a.row[k]
		v := getVerdict(mooncakesdk.Code(code), int64(a.sizes[k]))
		c.Ends[i].Status = v.status // Pending: read once more
		a.answer[i] = code
		a.mark(i, v.unprovable)
		reread = reread || v.status == contract.Pending
	}
	a.taint()
	if !reread {
		return
	}
	a.gather(c, func(i int) bool { return c.Ends[i].Status == contract.Pending })
	if !s.call(c, a, "batch_get_into (reread)", func(cl mooncakesdk.Client) error { return cl.BatchGetIntoList(&a.keys, a.bufs, a.sizes, a.codes) }) {
		return
	}
	for k, code := range a.codes {
		i := a.row[k]
		v := rereadVerdict(mooncakesdk.Code(code), int64(a.sizes[k]))
		c.Ends[i].Status = v.status
		a.answer[i] = code // what the row ended on, for the log
		a.mark(i, v.unprovable)
	}
	a.taint()
}

// putRow is what a put call does with one row.
type putRow uint8

const (
	putStore    putRow = iota // put it, then confirm a 0
	putWriting                // a put of this driver is writing the key: NotReady
	putLeftOpen               // left open: never put again; the exists-check decides
)

// put makes the put-from call for the rows it may put, then one
// exists-check confirming every 0 and deciding every key left open.
func (s *store) put(c *drivekit.Call, a *args) {
	n := len(c.Rows)
	a.answer, a.plan = resize(a.answer, n), resize(a.plan, n)
	clear(a.answer)
	s.mu.Lock()
	for i := range n {
		switch {
		case c.OwnWrite[i]:
			a.plan[i] = putWriting
			c.Ends[i].Status = contract.NotReady
		case s.ledger.has(c.Keys[i]):
			a.plan[i] = putLeftOpen
			c.Ends[i].Status = contract.Pending // the exists-check decides
		default:
			a.plan[i] = putStore
		}
	}
	s.mu.Unlock()
	a.gather(c, func(i int) bool { return a.plan[i] == putStore })
	if len(a.row) > 0 && s.call(c, a, "batch_put_from", func(cl mooncakesdk.Client) error { return cl.BatchPutFromList(&a.keys, a.bufs, a.sizes, a.codes) }) {
		// A put-from that failed as a whole ended its rows Fault; the
		// keys left open are still decided by the exists-check.
		s.mu.Lock()
		for k, code := range a.codes {
			i := a.row[k]
			v := putVerdict(mooncakesdk.Code(code))
			c.Ends[i].Status = v.status // Pending: a 0 to confirm
			a.answer[i] = code
			a.mark(i, v.unprovable)
			if v.leftOpen {
				s.ledger.add(c.Keys[i])
			}
		}
		s.mu.Unlock()
		a.taint()
	}
	s.confirm(c, a)
}

// confirm makes the call's one exists-check, over every row still
// Pending: a put's 0 becomes Ready only when a complete object stands
// behind the key (NotReady when none does yet), and a key left open is
// Ready if it exists, else Declined. A check that fails as a whole ends
// its rows Fault.
func (s *store) confirm(c *drivekit.Call, a *args) {
	a.gather(c, func(i int) bool { return c.Ends[i].Status == contract.Pending })
	if len(a.row) == 0 || !s.call(c, a, "batch_is_exist", func(cl mooncakesdk.Client) error { return cl.BatchIsExistList(&a.keys, a.exist) }) {
		return
	}
	declined := 0
	for k, e := range a.exist {
		i := a.row[k]
		if a.plan[i] == putLeftOpen {
			c.Ends[i].Status = leftOpenVerdict(e)
			if c.Ends[i].Status == contract.Declined {
				declined++
			}
			continue
		}
		c.Ends[i].Status = confirmVerdict(e)
		a.answer[i] = int64(e) // the check's answer, which the log names for a Fault
	}
	if declined > 0 {
		s.mu.Lock()
		s.counts.rowsDeclinedLeftOpen += int64(declined)
		s.mu.Unlock()
	}
}

// logFaults logs, once per call, how many rows ended Fault and the
// store's answer for the first of them.
func (s *store) logFaults(c *drivekit.Call, a *args) {
	first, n := -1, 0
	for i, e := range c.Ends {
		if e.Status == contract.Fault {
			if first < 0 {
				first = i
			}
			n++
		}
	}
	if n == 0 {
		return
	}
	s.log.Warn("mooncakedrv: rows ended Fault", "dir", c.Dir, "rows", n, "of", len(c.Rows),
		"first key", strings.Clone(c.Keys[first]), "answer", mooncakesdk.Code(a.answer[first]).String())
}
