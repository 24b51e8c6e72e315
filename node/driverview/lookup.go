package driverview

import (
	"context"
	"fmt"

	"github.com/kvshare/kvshare/contract"
)

// lookup is Looker's Lookup through the view. It is refused, asking
// nothing of the store, after Drain or Close and while the view's
// Recycle runs.
//
// A lookup counts as the view's until the shared driver's Lookup
// returns: Drain waits for it and Close is refused meanwhile. A shared
// driver may abandon a lookup at its context's end and leave the store
// call running, which the view could not see; so a lookup whose context
// can end is asked on a goroutine of the view's, with the context's
// values but not its end, over the view's own copy of the names, and the
// view answers Unknown for every name when the context ends first. The
// call then stays inside the store, and the view's, until the store
// answers.
func (v *View) lookup(ctx context.Context, b contract.LookupBatch, dst []contract.Presence) ([]contract.Presence, error) {
	dst = dst[:0]
	v.mu.Lock()
	if err := v.usableLocked("lookup"); err != nil {
		v.mu.Unlock()
		return dst, err
	}
	v.lookups++
	v.mu.Unlock()

	if ctx.Done() == nil { // a context that never ends: nothing to abandon
		defer v.lookupReturned()
		return v.looker.Lookup(ctx, b, dst)
	}
	if err := checkLookup(b); err != nil {
		v.lookupReturned()
		return dst, err
	}
	answer := make(chan lookupAnswer, 1)
	go v.lookupAside(context.WithoutCancel(ctx), copyLookup(b), answer)
	select {
	case a := <-answer:
		return a.use(dst)
	case <-ctx.Done():
		select {
		case a := <-answer: // answered as the context ended: the answer wins
			return a.use(dst)
		default:
		}
		for range b.Names {
			dst = append(dst, contract.Unknown)
		}
		return dst, nil
	}
}

// lookupAnswer is what the shared driver's Lookup came to.
type lookupAnswer struct {
	got      []contract.Presence
	err      error
	panicked any
}

// use appends the answer to dst, or panics again on the caller's
// goroutine with what the shared driver panicked with.
func (a lookupAnswer) use(dst []contract.Presence) ([]contract.Presence, error) {
	if a.panicked != nil {
		panic(a.panicked)
	}
	if a.err != nil {
		return dst, a.err
	}
	return append(dst, a.got...), nil
}

// lookupAside asks the shared driver on the view's goroutine, and counts
// the lookup as the view's until it returns.
func (v *View) lookupAside(ctx context.Context, b contract.LookupBatch, answer chan<- lookupAnswer) {
	defer v.lookupReturned()
	var a lookupAnswer
	func() {
		defer func() { a.panicked = recover() }()
		a.got, a.err = v.looker.Lookup(ctx, b, nil)
	}()
	answer <- a
}

func (v *View) lookupReturned() {
	v.mu.Lock()
	v.lookups--
	v.broadcastLocked()
	v.mu.Unlock()
}

// checkLookup refuses what every Looker refuses: a batch the caller
// learns of only from its error, which the view must give even when the
// context ends before the shared driver answers.
func checkLookup(b contract.LookupBatch) error {
	if b.Keys == nil {
		return fmt.Errorf("%w: driverview: lookup: no key maker", contract.ErrDriverRejected)
	}
	seen := make(map[string]int, len(b.Names))
	for i, n := range b.Names {
		switch {
		case len(n) == 0:
			return fmt.Errorf("%w: driverview: lookup: name %d is empty", contract.ErrDriverRejected, i)
		case b.Keys.KeyLen(len(n)) == 0:
			return fmt.Errorf("%w: driverview: lookup: name %d (%q) has no key", contract.ErrDriverRejected, i, n)
		}
		if j, ok := seen[string(n)]; ok {
			return fmt.Errorf("%w: driverview: lookup: names %d and %d are the same (%q)", contract.ErrDriverRejected, j, i, n)
		}
		seen[string(n)] = i
	}
	return nil
}

// copyLookup returns b over a copy of its names, in one buffer: the
// caller's are borrowed only until the view's Lookup returns.
func copyLookup(b contract.LookupBatch) contract.LookupBatch {
	total := 0
	for _, n := range b.Names {
		total += len(n)
	}
	buf := make([]byte, 0, total)
	names := make([][]byte, len(b.Names))
	for i, n := range b.Names {
		start := len(buf)
		buf = append(buf, n...)
		names[i] = buf[start:len(buf):len(buf)]
	}
	return contract.LookupBatch{Keys: b.Keys, Names: names}
}
