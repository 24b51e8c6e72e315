package conformance

import (
	"errors"

	"github.com/kvshare/kvshare/contract"
)

// checkCapabilitiesAfterFaults asks Capabilities again after each thing
// a store can do to a row: fail a read, decline a put, crash a store
// call in each direction; and after a Recycle. A driver that reads its
// capabilities from the store's connection, and reconnects after a
// crash or a Recycle, may come back with other answers: the binding read
// them once, when it was built, and holds the driver to those.
//
// The hooks apply until the check ends, so the stages come in the order
// that lets each happen: the failed read (its object staged through a
// put), the crashed get, the declined put, the crashed put.
func checkCapabilitiesAfterFaults(b *bench) {
	_, recycles := b.d.(contract.Recycler)
	failRead := b.caps.Get && b.sub.FailReads != nil && b.canStage()
	crashGet := b.caps.Get && b.sub.Crash != nil
	decline := b.caps.Put && b.sub.Full != nil
	crashPut := b.caps.Put && b.sub.Crash != nil
	if !failRead && !crashGet && !decline && !crashPut && !recycles {
		b.skip(skipHook, "the harness can make the store fail no row of a direction the driver serves (no FailReads, Crash or Full hook), and the driver is no contract.Recycler")
	}
	first := b.caps
	same := func(after string) {
		b.r.Helper()
		var now contract.Capabilities
		b.call("Capabilities", func() { now = b.d.Capabilities() })
		if now != first {
			b.r.Errorf("Capabilities %s returned %+v, first %+v: it returns the same value every time, whatever the store did", after, now, first)
		}
	}
	a := b.region(4)
	if failRead {
		name := b.rowName("failed-read")
		b.stage(name, payload(name, int(b.h.SlotBytes)), false)
		get := b.batch(row(name, a.span(0)))
		b.hook("FailReads", func() { b.sub.FailReads(get.Key(0)) })
		b.admit(GetDir, get, nil, nil).settle()
		same("after a read the store failed")
	}
	if crashGet {
		b.hook("Crash", func() { b.sub.Crash(GetDir) })
		b.admit(GetDir, b.batch(row(b.rowName("crashed-get"), a.span(1))), nil, nil).settle()
		same("after a get's store call crashed")
	}
	if decline {
		m := b.rows(PutDir, a, []int{2}, "declined", false)
		b.hook("Full", b.sub.Full)
		b.admit(PutDir, m.batch, nil, nil).settle()
		same("after a put the store declined")
	}
	if crashPut {
		m := b.rows(PutDir, a, []int{3}, "crashed-put", false)
		b.hook("Crash", func() { b.sub.Crash(PutDir) })
		b.admit(PutDir, m.batch, nil, nil).settle()
		same("after a put's store call crashed")
	}
	if recycles {
		ctx, cancel := b.bound()
		err := b.recycle(ctx)
		cancel()
		switch {
		case err == nil, errors.Is(err, contract.ErrRecycledClosed):
			same("after a Recycle")
		default:
			b.r.Errorf("Recycle with every row settled failed: %v", err)
		}
	}
}
