package conformance

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/kvshare/kvshare/contract"
)

// The suite's lookups: a driver that implements contract.Looker is held
// to its rules by the lookup checks, and every lookup the suite makes is
// held to the answer's shape (one Presence per name, appended to
// dst[:0]). A lookup lends no memory, so the suite's seals and its watch
// of every operation's memory see a lookup that touched some as they see
// any other driver call. It lends its names, until it returns: every
// lookup carries them in a buffer of the suite's own, written over and
// watched from the moment Lookup returned (see nameBook).

// looker returns the driver's contract.Looker, or skips the check.
func (b *bench) looker() contract.Looker {
	b.r.Helper()
	l, ok := b.d.(contract.Looker)
	if !ok {
		b.skip(skipCapability, "the driver does not implement contract.Looker")
	}
	return l
}

// probe is one lookup the suite makes: the batch, the suite's own copy of
// its names, and a label for findings.
type probe struct {
	batch contract.LookupBatch
	names []string
	label string
	check string // the check's common part of every name, left out in findings
}

// probe builds a lookup of names (the rows' full names) with the suite's
// key maker.
func (b *bench) probe(names ...string) probe {
	p := probe{batch: contract.LookupBatch{Keys: b.keys}, names: names, check: b.rowName("")}
	shown := make([]string, 0, len(names))
	for _, n := range names {
		p.batch.Names = append(p.batch.Names, []byte(n))
		shown = append(shown, fmt.Sprintf("%q", strings.TrimPrefix(n, p.check)))
	}
	if len(shown) > 4 {
		shown = append(shown[:3], "…")
	}
	p.label = fmt.Sprintf("lookup of %d names (%s)", len(names), strings.Join(shown, ", "))
	if len(names) == 1 {
		p.label = fmt.Sprintf("lookup of 1 name (%s)", shown[0])
	}
	return p
}

// probeOf describes a batch the check built itself (a refusal's, say)
// as a probe labelled label, for the findings about its names.
func (b *bench) probeOf(batch contract.LookupBatch, label string) probe {
	p := probe{batch: batch, label: label, check: b.rowName("")}
	for _, n := range batch.Names {
		p.names = append(p.names, string(n))
	}
	return p
}

// name names name i of the probe for messages: `name "absent-0"`.
func (p probe) name(i int) string {
	return fmt.Sprintf("name %q", strings.TrimPrefix(p.names[i], p.check))
}

// keys returns the store keys of the probe's names.
func (b *bench) keysOf(p probe) []string {
	out := make([]string, len(p.names))
	for i, n := range p.names {
		out[i] = b.keyOf(n)
	}
	return out
}

// errLookupPanicked stands for a Lookup that panicked (reported).
var errLookupPanicked = errors.New("conformance: Lookup panicked")

// staleDst returns a dst for a lookup of n names: room for every name,
// and one entry already in it that is no presence, so that an answer not
// appended to dst[:0] shows.
func staleDst(n int) []contract.Presence {
	dst := make([]contract.Presence, 1, n+1)
	dst[0] = 0xEE
	return dst
}

// lookup asks l about p, with a context bounded by Wait, into a dst of
// the suite's own (see staleDst), bounded like a driver call. The answer
// is held to its shape (see answerRules); an error is returned as it is,
// a panic reported.
func (b *bench) lookup(l contract.Looker, p probe) ([]contract.Presence, error) {
	b.r.Helper()
	ctx, cancel := b.bound()
	defer cancel()
	return b.lookupInto(ctx, l, p, staleDst(len(p.names)))
}

// lookupInto is lookup with a context and a dst of the check's choosing.
func (b *bench) lookupInto(ctx context.Context, l contract.Looker, p probe, dst []contract.Presence) ([]contract.Presence, error) {
	b.r.Helper()
	var got []contract.Presence
	var err error
	if _, pan := b.call(p.label+": Lookup", func() { got, err = b.lendLookup(ctx, l, p, p.batch, dst) }); pan != nil {
		b.r.Errorf("%s: Lookup panicked: %v: a lookup answers or refuses, never panics", p.label, pan)
		return nil, errLookupPanicked
	}
	if err == nil {
		b.answerRules(p, dst, got)
	}
	return got, err
}

// answered is lookup of a batch the driver must answer: a refusal, or a
// panic, is reported and ends the check.
func (b *bench) answered(l contract.Looker, p probe) []contract.Presence {
	b.r.Helper()
	got, err := b.lookup(l, p)
	switch {
	case errors.Is(err, errLookupPanicked):
		b.r.Fatalf("%s: the check cannot go on without an answer", p.label)
	case err != nil:
		b.r.Fatalf("%s: refused (%v): a lookup of distinct names, each with a key, before any Drain is answered", p.label, err)
	case len(got) != len(p.names):
		b.r.Fatalf("%s: the check cannot judge an answer of %d presences", p.label, len(got))
	}
	return got
}

// answerRules holds one answer to what Lookup does with dst: one
// Presence per name, each a presence, appended to dst[:0] (which, when
// it had room for every name, is where the answer starts). The caller
// kept dst's length, so that a driver that appends to dst itself shows
// as a count too long.
func (b *bench) answerRules(p probe, dst, got []contract.Presence) {
	b.r.Helper()
	n := len(p.names)
	if len(got) != n {
		b.r.Errorf("%s: Lookup returned %d presences: Lookup appends exactly one Presence per name, in batch order, to dst[:0]", p.label, len(got))
	}
	if n > 0 && len(got) > 0 && cap(dst) >= n && &got[0] != &dst[:1][0] {
		b.r.Errorf("%s: Lookup returned its presences in a slice other than the dst it was given, which had room for every name: Lookup appends to dst[:0]", p.label)
	}
	for i, x := range got {
		if x > contract.InFlight && i < n {
			b.r.Errorf("%s: %s reads %v, which is no presence", p.label, p.name(i), x)
		}
	}
}

// lendLookup makes one lookup of batch (p's, or a batch p describes),
// its names lent in a buffer of the suite's own, which is written over
// and watched the moment Lookup returned, or panicked (see nameBook).
func (b *bench) lendLookup(ctx context.Context, l contract.Looker, p probe, batch contract.LookupBatch, dst []contract.Presence) ([]contract.Presence, error) {
	shown := p
	shown.batch = batch
	names, ln := lendLookupNames(&shown)
	batch.Names = names
	defer b.names.retire(ln, b.run.nextMark())
	return l.Lookup(ctx, batch, dst)
}

// lookupResult is what a lookup on a goroutine of the suite's came to.
type lookupResult struct {
	got      []contract.Presence
	err      error
	panicked any
}

// lookupAsync starts a lookup of p with ctx on a goroutine of the
// suite's own (a lookup that must block inside the store), into a dst of
// the suite's own; the result comes on the channel.
func (b *bench) lookupAsync(ctx context.Context, l contract.Looker, p probe) (<-chan lookupResult, []contract.Presence) {
	dst := staleDst(len(p.names))
	ch := make(chan lookupResult, 1)
	go func() {
		var r lookupResult
		func() {
			defer func() { r.panicked = recover() }()
			suiteCall(func() { r.got, r.err = b.lendLookup(ctx, l, p, p.batch, dst) })
		}()
		ch <- r
	}()
	return ch, dst
}

// lookupReturned waits, within Wait, for a lookup started by
// lookupAsync, and reports whether it returned.
func (b *bench) lookupReturned(ch <-chan lookupResult) (lookupResult, bool) {
	ctx, cancel := b.bound()
	defer cancel()
	select {
	case r := <-ch:
		return r, true
	case <-ctx.Done():
		select {
		case r := <-ch:
			return r, true
		default:
			return lookupResult{}, false
		}
	}
}

// holdLookups asks the harness to hold the lookups of p's names inside
// the store, and releases them at teardown if the check does not.
func (b *bench) holdLookups(p probe) Gate {
	b.r.Helper()
	var g Gate
	keys := b.keysOf(p)
	b.hook("HoldLookups", func() { g = b.sub.HoldLookups(keys...) })
	if g == nil {
		b.r.Fatalf("the HoldLookups hook returned no Gate")
	}
	b.undo = append(b.undo, g.Release)
	return g
}

// presentMeans says what Present promises the driver's callers, for
// findings: with PresenceFromIndex, what the store's index holds.
func (b *bench) presentMeans() string {
	if b.caps.PresenceFromIndex {
		return "with PresenceFromIndex, Present means the store's index holds the whole object, which a get made then reads whole or fails (Fault)"
	}
	return "Present means a get now would read the object whole"
}

// readsWhole reports, for a name a lookup answered Present, whether a get
// made right after reads its object whole (the bytes data): through a
// get of the driver's when it has one, else through the Object hook. A
// driver that declares PresenceFromIndex may see that get end Fault
// (logged): its Present is the index's. It reports the finding itself,
// saying why (what staged the name), and returns false; it returns true
// when the suite cannot look.
func (b *bench) readsWhole(p probe, i int, data []byte, why string) bool {
	b.r.Helper()
	name := p.names[i]
	if b.caps.Get {
		a := b.region(int((int64(len(data)) + b.h.SlotBytes - 1) / b.h.SlotBytes))
		s := a.spanAt(0, int64(len(data)))
		w := b.admit(GetDir, b.batch(row(name, s)), nil, nil)
		st := w.settle()
		b.provable(w, st, "reading back an object a lookup answered present")
		if len(st.Rows) > 0 && st.Rows[0] == contract.Fault && b.caps.PresenceFromIndex {
			b.r.Logf("%s: %s read present, and a get made right after ended fault: the driver declares PresenceFromIndex, so its Present is the store's index, and a fetch may still fault", p.label, p.name(i))
			return true
		}
		if len(st.Rows) == 0 || st.Rows[0] != contract.Ready {
			b.r.Errorf("%s: %s read present, but a get made right after ended %v: %s (%s)", p.label, p.name(i), st.Rows, b.presentMeans(), why)
			return false
		}
		if off, bad := firstDiff(a.bytesOf(s), data); bad {
			b.r.Errorf("%s: %s read present, but a get made right after read an object that differs from the whole one at byte %d: %s (%s)", p.label, p.name(i), off, b.presentMeans(), why)
			return false
		}
		a.repaint(s)
		return true
	}
	if b.sub.Object == nil {
		return true
	}
	key := b.keyOf(name)
	got, ok := b.object(key)
	switch {
	case !ok:
		b.r.Errorf("%s: %s read present, but the store holds no complete object under its key %q (the Object hook): %s (%s)", p.label, p.name(i), key, b.presentMeans(), why)
		return false
	case len(got) != len(data):
		b.r.Errorf("%s: %s read present, but the object under its key %q is %d bytes, not the whole %d: %s (%s)", p.label, p.name(i), key, len(got), len(data), b.presentMeans(), why)
		return false
	}
	if off, bad := firstDiff(got, data); bad {
		b.r.Errorf("%s: %s read present, but the object under its key %q differs from the whole one at byte %d: %s (%s)", p.label, p.name(i), key, off, b.presentMeans(), why)
		return false
	}
	return true
}
