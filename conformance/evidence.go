package conformance

import "github.com/kvshare/kvshare/contract"

// quietAfterRefusals checks that refused calls left nothing: Drain finds
// nothing open, no callback came, nothing was stored or written, and the
// region is idle.
func quietAfterRefusals(b *bench, refused []*watch, regions ...*arena) {
	b.r.Helper()
	if !b.drain(false) {
		b.r.Errorf("Drain returned false after refused calls only: a refusal records nothing, so nothing can be open")
	}
	b.refusedOnly(refused)
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
			for _, r := range w.batch.Rows {
				if r.Key == "" {
					continue
				}
				if _, ok := b.sub.Object(r.Key); ok {
					b.r.Errorf("%s: refused, yet the store holds an object under %q: a refusal starts nothing", w.label, r.Key)
				}
			}
		}
	}
	b.untouched("a refused call starts nothing")
}

// untouched reports any arena byte that lost its canary.
func (b *bench) untouched(why string, skip ...contract.Span) {
	b.r.Helper()
	for _, a := range b.arenas {
		if a.freed {
			continue
		}
		if off, bad := a.stray(skip...); bad {
			b.r.Errorf("region %s: the byte at offset %d (of a region of %d bytes; negative or past the end is a guard page) was written: %s",
				a.label, off, a.region.Len, why)
		}
	}
}
