package conformance

import (
	"errors"
	"fmt"
	"strings"

	"github.com/kvshare/kvshare/contract"
)

func checkCapabilitiesStable(b *bench) {
	first := b.caps
	if !first.Put && !first.Get {
		b.r.Errorf("Capabilities declares neither Put nor Get: a driver serves at least one direction")
	}
	if first.MaxRowsPerOp < 0 {
		b.r.Errorf("Capabilities declares MaxRowsPerOp %d: want 0 (no cap) or more", first.MaxRowsPerOp)
	}
	a := b.region(1)
	b.moveRow(a, 0)
	b.drain(false)
	for _, when := range []string{"after a row moved and a Drain", "asked again"} {
		var now contract.Capabilities
		b.call("Capabilities", func() { now = b.d.Capabilities() })
		if now != first {
			b.r.Errorf("Capabilities %s returned %+v, first %+v: it must return the same value every time", when, now, first)
		}
	}
}

func checkBadRegion(b *bench) {
	a := b.lend(2, b.kind())
	good := a.region
	cases := []struct {
		name string
		edit func(r *contract.SlotRegion)
	}{
		{"Base 0", func(r *contract.SlotRegion) { r.Base = 0 }},
		{"Kind unset", func(r *contract.SlotRegion) { r.Kind = 0 }},
		{"SlotBytes 0", func(r *contract.SlotRegion) { r.SlotBytes = 0 }},
		{"SlotBytes negative", func(r *contract.SlotRegion) { r.SlotBytes = -r.SlotBytes }},
		{"SlotCount 0", func(r *contract.SlotRegion) { r.SlotCount = 0 }},
		{"Len short of SlotBytes*SlotCount", func(r *contract.SlotRegion) { r.Len-- }},
	}
	for _, c := range cases {
		bad := good
		c.edit(&bad)
		if bad.Validate() == nil {
			b.r.Fatalf("conformance: bad-region case %q is valid geometry", c.name)
		}
		var reg contract.Registration
		var err error
		b.call("Register", func() { reg, err = b.d.Register(bad) })
		if _, rerr := b.recordRegistration(reg, err, false, a); rerr == nil {
			b.r.Errorf("Register of a region with %s (%+v) succeeded: bad geometry is refused with ErrDriverRejected", c.name, bad)
			continue
		}
		if re := (*contract.RegistrationError)(nil); errors.As(err, &re) && !errors.Is(err, contract.ErrDriverRejected) {
			b.r.Errorf("Register of a region with %s failed with a *RegistrationError (%v): bad geometry is refused with ErrDriverRejected, registering nothing", c.name, err)
		}
	}
	// Nothing of the bad registrations may be live: a's spans lie in none.
	var refused []*watch
	if len(b.lendings) == 0 {
		refused = b.refuseSpan("unregistered", a.span(0), "every registration of the region was refused, so its spans lie in no registration")
	}
	// The same memory with good geometry registers and is live.
	if _, err := b.register(a); err != nil {
		b.r.Fatalf("Register of region %s with good geometry after the refusals: %v", a.label, err)
	}
	b.moveRow(a, 1)
	b.quietAfter(refused)
}

func checkDeviceMemory(b *bench) {
	if b.caps.DeviceMemory {
		b.deviceMemoryServed()
		return
	}
	d := b.lend(1, contract.Device)
	_, err := b.register(d)
	switch {
	case err == nil:
		b.r.Errorf("Register of a Device region succeeded though the driver does not declare DeviceMemory")
	case !errors.Is(err, contract.ErrDriverRejected) && errors.As(err, new(*contract.RegistrationError)):
		b.r.Errorf("Register of a Device region failed with a *RegistrationError (%v): a region the driver cannot reach is refused with ErrDriverRejected, registering nothing", err)
	}
	var refused []*watch
	if err != nil {
		refused = b.refuseSpan("device", d.span(0), "the Device region was refused, so its spans lie in no registration")
	}
	h := b.region(1)
	b.moveRow(h, 0)
	b.quietAfter(refused)
}

// deviceMemoryServed checks a driver that declares DeviceMemory: a
// Device region registers and a row moves through it, and so does a
// Host region. The suite lends host memory labelled Device, so only a
// harness that says the driver moves such memory (LendDevice) runs it.
func (b *bench) deviceMemoryServed() {
	b.r.Helper()
	if !b.h.LendDevice {
		b.skip(skipHarness, "the driver declares DeviceMemory; the suite lends host memory, labelled Device only with Harness.LendDevice")
	}
	for _, kind := range []contract.MemoryKind{contract.Device, contract.Host} {
		a := b.lend(2, kind)
		if _, err := b.register(a); err != nil {
			b.r.Errorf("Register of a %v region (%d slots of %d bytes) failed though the driver declares DeviceMemory, which serves Device and Host regions alike: %v",
				kind, a.region.SlotCount, a.region.SlotBytes, err)
			continue
		}
		b.moveRow(a, 1)
	}
}

func checkAdmission(b *bench) {
	a := b.region(3)
	b.refuseEach("a bad batch is refused", func(k func(string) string) []badBatch {
		cases := []badBatch{
			{"no rows", b.batch()},
			{"no key maker (Keys nil)", contract.RowBatch{Rows: []contract.Row{row(k("no-keys"), a.span(0))}}},
			{"an empty name", b.batch(row("", a.span(0)))},
			{"a name the key maker has no key for", b.batch(row(k("no-key-"+strings.Repeat("x", maxSuiteName)), a.span(0)))},
			{"a row with no span", b.batch(row(k("no-span")))},
			{"a span of length 0", b.batch(row(k("zero"), contract.Span{Addr: a.span(0).Addr}))},
			{"a span of negative length", b.batch(row(k("negative"), contract.Span{Addr: a.span(0).Addr, Len: -1}))},
			{"a good row, then a row with no span", b.batch(row(k("good"), a.span(0)), row(k("bad")))},
		}
		if !b.caps.MultiSpan {
			cases = append(cases, badBatch{"a row of two spans, without MultiSpan", b.batch(row(k("two-spans"), a.span(0), a.span(1)))})
		}
		return cases
	}, a)
}

func checkExtents(b *bench) {
	a := b.region(3)
	u := b.lend(1, b.kind()) // never registered
	b.refuseEach("a span outside every registration is refused", func(k func(string) string) []badBatch {
		return []badBatch{
			{"a span in memory never registered", b.batch(row(k("unregistered"), u.span(0)))},
			{"a span straddling the region's end", b.batch(row(k("past-end"), a.spanAt(a.region.Len-16, 32)))},
			{"a span one byte past the region's end", b.batch(row(k("one-past"), a.spanAt(a.region.Len, 1)))},
			{"a span straddling the region's base", b.batch(row(k("before-base"), a.spanAt(-16, 32)))},
			{"a good row, then a row outside every registration", b.batch(row(k("good"), a.span(1)), row(k("outside"), u.span(0)))},
		}
	}, a)
}

// checkDuplicateKey submits batches that repeat a name, so a key: in a
// short batch, and in one longer than a linear scan covers (rowbatch
// checks those with a table).
func checkDuplicateKey(b *bench) {
	const long = 10
	a := b.region(long)
	b.refuseEach("a batch never carries a name twice", func(k func(string) string) []badBatch {
		var again []contract.Row
		for i := range long - 1 {
			again = append(again, row(k(fmt.Sprintf("n%d", i)), a.span(i)))
		}
		again = append(again, row(k("n4"), a.span(long-1)))
		return []badBatch{
			{"a name twice", b.batch(row(k("twice"), a.span(0)), row(k("twice"), a.span(1)))},
			{"a name again after another", b.batch(row(k("x"), a.span(0)), row(k("y"), a.span(1)), row(k("x"), a.span(2)))},
			{fmt.Sprintf("a name again in a batch of %d rows", long), b.batch(again...)},
		}
	}, a)
}

func checkNilOperation(b *bench) {
	a := b.region(1)
	name := b.rowName("row")
	if b.dir == GetDir && b.canStage() {
		b.stage(name, payload(name, int(b.h.SlotBytes)), false)
	}
	w := b.admit(b.dir, b.batch(row(name, a.span(0))), nil, nil)
	w.settle()
}

func checkNeverPanics(b *bench) {
	a := b.region(3)
	u := b.lend(1, b.kind())
	good := b.rowName("good")
	if b.dir == GetDir && b.canStage() {
		b.stage(good, payload(good, int(b.h.SlotBytes)), false)
	}
	cases := []struct {
		name  string
		batch contract.RowBatch
	}{
		{"a good batch", b.batch(row(good, a.span(0)))},
		{"a nil batch", contract.RowBatch{}},
		{"no key maker (Keys nil)", contract.RowBatch{Rows: []contract.Row{row(b.rowName("no-keys"), a.span(0))}}},
		{"a nil name", b.batch(contract.Row{Spans: []contract.Span{a.span(0)}})},
		{"a row with nil spans", b.batch(row(b.rowName("nil-spans")))},
		{"a span outside every registration", b.batch(row(b.rowName("outside"), u.span(0)))},
		{"a name twice", b.batch(row(b.rowName("twice"), a.span(1)), row(b.rowName("twice"), a.span(2)))},
	}
	for _, c := range cases {
		w, err := b.submit(b.dir, c.batch, nil, nil)
		if err == nil {
			w.settle()
		}
	}
}

func checkHints(b *bench) {
	b.needDir(GetDir)
	a := b.region(1)
	name := b.rowName("hinted")
	data := payload(name, int(b.h.SlotBytes))
	hint := contract.Hint("kvshare-conformance-hint")
	if !b.caps.Hints {
		w := b.refuse(GetDir, b.batch(row(name, a.span(0))), hint, "the driver does not declare Hints, so a get with a hint is refused")
		quietAfterRefusals(b, []*watch{w}, a)
		return
	}
	b.stage(name, data, false)
	w := b.admit(GetDir, b.batch(row(name, a.span(0))), hint, nil)
	st := w.settle()
	if w.expect(st, "the object is stored and the driver declares Hints", contract.Ready) {
		if off, bad := firstDiff(a.slot(0), data); bad {
			b.r.Errorf("%s: ended ready but the slot differs from the object at byte %d", w.label, off)
		}
	}
}
