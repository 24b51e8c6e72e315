package conformance

import (
	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/rowbatch"
)

// badBatch is a batch rowbatch.Check refuses, named by what is wrong
// with it.
type badBatch struct {
	name  string
	batch contract.RowBatch
}

// refuseEach submits, in every direction the driver serves, each batch
// cases builds (k names a row of that direction); each must be refused
// with ErrDriverRejected (rule says why), and together they must leave
// nothing behind (see quietAfterRefusals). A batch over MaxRowsPerOp is
// not sent, since the binding never sends one: the check logs each such
// case and the run's summary lists it; the check skips when that leaves
// no batch.
func (b *bench) refuseEach(rule string, cases func(k func(string) string) []badBatch, regions ...*arena) {
	b.r.Helper()
	var refused []*watch
	for _, dir := range b.dirs() {
		k := func(n string) string { return b.rowName(dir.String() + "/" + n) }
		for _, c := range cases(k) {
			if b.caps.MaxRowsPerOp > 0 && c.batch.Len() > b.caps.MaxRowsPerOp {
				b.note("the %v case %q: its %d rows are over MaxRowsPerOp %d, and the binding never sends such a batch", dir, c.name, c.batch.Len(), b.caps.MaxRowsPerOp)
				continue
			}
			if rowbatch.Check(c.batch, b.live(), b.caps.MultiSpan) == nil {
				b.r.Fatalf("conformance: the case %q passes rowbatch.Check", c.name)
			}
			refused = append(refused, b.refuse(dir, c.batch, nil, c.name+": "+rule))
		}
	}
	if len(refused) == 0 {
		b.skip(skipCapability, "every batch of the check has more rows than MaxRowsPerOp (%d)", b.caps.MaxRowsPerOp)
	}
	quietAfterRefusals(b, refused, regions...)
}

// refuseSpan submits, in every direction the driver serves, a one-row
// batch over s (row tag), which must be refused for the reason why.
func (b *bench) refuseSpan(tag string, s contract.Span, why string) []*watch {
	b.r.Helper()
	var refused []*watch
	for _, dir := range b.dirs() {
		refused = append(refused, b.refuse(dir, b.batch(row(b.rowName(dir.String()+"/"+tag), s)), nil, why))
	}
	return refused
}

// quietAfter checks, once every operation the check admitted settled,
// that Drain answers true and the refused calls left nothing behind (see
// refusedOnly).
func (b *bench) quietAfter(refused []*watch) {
	b.r.Helper()
	if !b.drain(false) {
		b.r.Errorf("Drain returned false with every admitted operation settled: a refusal records nothing, so nothing can be open")
	}
	b.refusedOnly(refused)
}

// quietAfterRefusals checks that refused calls left nothing: Drain finds
// nothing open, no callback came, nothing was stored or written, and the
// regions are idle (Unregister succeeds).
func quietAfterRefusals(b *bench, refused []*watch, regions ...*arena) {
	b.r.Helper()
	b.quietAfter(refused)
	for _, a := range regions {
		if err := b.unregister(b.lendingOf(a)); err != nil {
			b.r.Errorf("Unregister of region %s after refused calls only: %v: a refusal leaves nothing that keeps a region busy", a.label, err)
		}
	}
}

// refusedOnly checks that the calls refused so far left nothing behind:
// no onChange call, no object under a refused put's key (when the
// harness can look), and no byte written into any arena. Call it after a
// Drain returned true, when no callback of anything recorded can still
// come.
func (b *bench) refusedOnly(ws []*watch) {
	b.r.Helper()
	for _, w := range ws {
		if n := w.calls.Load(); n > 0 {
			b.r.Errorf("%s: refused, yet onChange was called %d time(s): a refusal records nothing", w.label, n)
		}
		if w.dir == PutDir && b.sub.Object != nil {
			for i, r := range w.batch.Rows {
				if w.batch.Keys == nil || w.batch.Keys.KeyLen(len(r.Name)) == 0 {
					continue // no key to look under
				}
				if key := w.batch.Key(i); b.hasObject(key) {
					b.r.Errorf("%s: refused, yet the store holds an object under %q: a refusal starts nothing", w.label, key)
				}
			}
		}
	}
	b.untouched("a refused call starts nothing")
}

// untouched reports any arena byte that lost its canary.
func (b *bench) untouched(why string, skip ...contract.Span) {
	b.r.Helper()
	for _, a := range b.lent() {
		if off, bad := a.stray(skip...); bad {
			b.r.Errorf("region %s: the byte at offset %d (of a region of %d bytes; negative or past the end is a guard page) was written: %s",
				a.label, off, a.region.Len, why)
		}
	}
}
