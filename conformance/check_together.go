package conformance

import (
	"errors"

	"github.com/kvshare/kvshare/contract"
)

// together returns the driver's RegionsTogether, or skips.
func (b *bench) together() contract.RegionsTogether {
	b.r.Helper()
	rt, ok := b.d.(contract.RegionsTogether)
	if !ok {
		b.skip(skipCapability, "the driver does not implement RegionsTogether")
	}
	return rt
}

// registerTogether registers arenas as one batch; specs, when given,
// replace the arenas' own regions.
func (b *bench) registerTogether(rt contract.RegionsTogether, as []*arena, specs []contract.RegionSpec) (*lending, error) {
	b.r.Helper()
	if specs == nil {
		for _, a := range as {
			specs = append(specs, contract.RegionSpec{Label: a.label, Region: a.region})
		}
	}
	var reg contract.Registration
	var err error
	if _, p := b.call("RegisterRegions", func() { reg, err = rt.RegisterRegions(specs) }); p != nil {
		for _, a := range as {
			a.keep = "RegisterRegions panicked"
		}
		b.r.Fatalf("RegisterRegions panicked: %v", p)
	}
	return b.recordRegistration(reg, err, true, as...)
}

func checkTogetherValidates(b *bench) {
	rt := b.together()
	good := b.lend(2, b.kind())
	other := b.lend(2, b.kind())
	bad := other.region
	bad.Len = bad.SlotBytes*int64(bad.SlotCount) - 1
	specs := []contract.RegionSpec{
		{Label: "good-" + good.label, Region: good.region},
		{Label: "short-" + other.label, Region: bad},
	}
	_, err := b.registerTogether(rt, []*arena{good, other}, specs)
	var re *contract.RegistrationError
	switch {
	case err == nil:
		b.r.Fatalf("RegisterRegions of a batch with a region of short Len succeeded: the whole batch is validated before the store is asked")
	case errors.As(err, &re) && re.MayBeLive():
		b.r.Errorf("RegisterRegions of a batch with a region of short Len failed with a live-maybe registration (%v): bad geometry is found before anything is registered", err)
	case !errors.Is(err, contract.ErrDriverRejected) || !errors.Is(err, contract.ErrInvalidRegion):
		b.r.Errorf("RegisterRegions of a batch with a region of short Len failed with %v: want an error wrapping ErrDriverRejected and ErrInvalidRegion", err)
	}
	var refused []*watch
	if len(b.lendings) == 0 {
		refused = b.refuseSpan("refused-batch", good.span(0), "its region came in a batch that was refused whole, so the span lies in no registration")
	}
	b.quietAfter(refused)
}

func checkTogetherRevokes(b *bench) {
	rt := b.together()
	as := []*arena{b.lend(2, b.kind()), b.lend(2, b.kind())}
	l, err := b.registerTogether(rt, as, nil)
	if err != nil {
		b.r.Fatalf("RegisterRegions of two good regions: %v", err)
	}
	for _, a := range as {
		b.moveRow(a, 0)
	}
	if err := b.unregister(l); err != nil {
		b.r.Fatalf("UnregisterRegions of an idle batch: %v", err)
	}
	var refused []*watch
	for _, a := range as {
		refused = append(refused, b.refuseSpan("revoked-"+a.label, a.span(1), "its region's batch was unregistered, so the span lies in no registration")...)
	}
	b.quietAfter(refused)
}

// checkTogetherBusy makes each region of a batch of three busy in turn
// (the first, the middle, the last), one held row at a time: a driver
// that asks about only one region of a batch (its first, its last)
// answers UnregisterRegions nil for a batch another region keeps busy.
func checkTogetherBusy(b *bench) {
	rt := b.together()
	positions := []string{"first", "middle", "last"}
	as := make([]*arena, len(positions))
	for i := range as {
		as[i] = b.lend(2, b.kind())
	}
	l, err := b.registerTogether(rt, as, nil)
	if err != nil {
		b.r.Fatalf("RegisterRegions of three good regions: %v", err)
	}
	busy := make([]moving, len(as))
	for i, a := range as {
		busy[i] = b.rows(b.dir, a, []int{0}, "busy-"+positions[i], b.canStage())
	}
	for i, a := range as {
		g, w := b.admitHeld(busy[i])
		err = b.unregister(l)
		switch {
		case err == nil:
			b.r.Errorf("%s: UnregisterRegions succeeded while an operation covering region %s (the %s of the batch's %d) has access open: a busy region keeps the whole batch registered, whichever region it is",
				w.label, a.label, positions[i], len(as))
		case !isRejected(err):
			b.r.Errorf("%s: UnregisterRegions of a batch whose %s region is busy failed with %v, which does not wrap ErrDriverRejected", w.label, positions[i], err)
		}
		b.hook("Gate.Release", g.Release)
		w.settle()
		if err == nil {
			return // the batch is counted revoked: no batch can be built over it
		}
	}
	live := true
	for _, a := range as {
		live = b.moveRow(a, 1) && live
	}
	if live {
		if err := b.unregister(l); err != nil {
			b.r.Errorf("UnregisterRegions of the batch once idle: %v", err)
		}
	}
}
