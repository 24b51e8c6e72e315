package conformance

import (
	"bytes"
	"fmt"

	"github.com/kvshare/kvshare/contract"
)

// seal watches one span of an operation from the moment the suite first
// saw the operation's access Ended: the suite writes a fresh pattern
// (mark) over the span, as a lender reusing the slot would, and from
// then on the span must hold exactly that pattern. A get that writes
// into its slot again, or a transfer still running after Cancel ended
// the row, shows as a changed mark; the suite looks after every later
// driver call, at teardown and at the end of the run.
//
// What the span held when the access ended (left) is the suite's view
// of it from then on: checks that read the slot, or look for stray
// writes, read that.
type seal struct {
	a     *arena
	off   int    // offset of the span in a.mem
	mark  []byte // the pattern the suite wrote when it saw the access end
	left  []byte // what the span held then
	w     *watch
	where string // names the span: "slot 3 of region r2"
	// changed is set once the change was reported.
	changed bool
	// retired is set when the suite took the span back (see retire):
	// the seal watches nothing from then on.
	retired bool
}

// putSeal watches the object of one put row from the moment the suite
// first saw the put's access Ended: its spans then got a mark (see
// seal), so a driver that reads them again and stores what it read
// leaves the mark under the row's key. For a Ready row the object found
// then (before) must also stay as it was. Watched with the Object hook,
// at teardown.
type putSeal struct {
	w       *watch
	row     int
	key     string
	mark    []byte // the marks over the row's spans, in order
	ready   bool   // the row ended Ready
	snapped bool   // before and had were read (see snapshotPuts)
	before  []byte // the object under key soon after the access ended, for a Ready row
	had     bool   // there was one
	// changed is set once a change was reported.
	changed bool
}

// sealOp seals every span of an operation whose access was just first
// seen Ended, records each put row whose object to watch, and writes a
// fresh pattern over the names the operation was lent (see nameBook). It
// may run on any goroutine (an onChange call polls too); the objects a
// put row's key held then are read later, on the check's goroutine (see
// snapshotPuts).
func (b *bench) sealOp(w *watch, st contract.OpState) {
	b.run.event()
	b.mem.Lock()
	defer b.mem.Unlock()
	for i, row := range w.batch.Rows {
		var marks []byte
		for _, s := range row.Spans {
			a := b.arenaOfLocked(s)
			if a == nil || a.freed {
				continue // memory the suite does not own (a refusal case), or let go of
			}
			sl := a.sealSpanLocked(s, b.run.nextMark(), w)
			b.seals = append(b.seals, sl)
			marks = append(marks, sl.mark...)
		}
		if w.dir != PutDir || len(marks) == 0 || w.batch.Keys == nil {
			continue
		}
		if b.sub.Object == nil {
			b.run.noteOnce("puts' objects are not read back after their access ended (a driver reading a put's memory again and storing it goes unseen): the harness has no Object hook")
			continue
		}
		ready := i < len(st.Rows) && st.Rows[i] == contract.Ready
		b.puts = append(b.puts, &putSeal{w: w, row: i, key: b.keyOf(w.names[i]), mark: marks, ready: ready})
	}
	b.names.retire(w.lent, b.run.nextMark())
}

// snapshotPuts reads, with the Object hook, what the key of each put row
// sealed since the last time held, for a Ready row: the object that must
// stay. It runs on the check's goroutine before each driver call, so
// usually before the driver could change it.
func (b *bench) snapshotPuts() {
	b.r.Helper()
	if b.snapping || b.hung {
		return
	}
	b.mem.Lock()
	var due []*putSeal
	for _, ps := range b.puts {
		if ps.ready && !ps.snapped {
			ps.snapped = true
			due = append(due, ps)
		}
	}
	b.mem.Unlock()
	if len(due) == 0 {
		return
	}
	b.snapping = true
	defer func() { b.snapping = false }()
	for _, ps := range due {
		before, had := b.object(ps.key)
		b.mem.Lock()
		ps.before, ps.had = before, had
		b.mem.Unlock()
	}
}

// arenaOfLocked returns the arena whose mapping holds all of s, or nil.
// The caller holds b.mem.
func (b *bench) arenaOfLocked(s contract.Span) *arena {
	for _, a := range b.arenas {
		if a.holds(s) {
			return a
		}
	}
	return nil
}

// sealSpanLocked writes a fresh mark over s (which a holds wholly),
// keeping what it held as the suite's view of it. A seal it overlaps is
// given up first: the suite reuses memory only through write and
// submit, which retire seals, so an overlap here is a second operation
// over the same span, already reported if it touched the memory. The
// caller holds a.mu.
func (a *arena) sealSpanLocked(s contract.Span, n int, w *watch) *seal {
	a.retireLocked(s)
	off := a.offsetOf(s)
	sl := &seal{a: a, off: off, w: w, where: a.describeSpan(s)}
	sl.left = bytes.Clone(a.mem[off : off+int(s.Len)])
	sl.mark = payload(fmt.Sprintf("seal/%d", n), int(s.Len))
	copy(a.mem[off:], sl.mark)
	a.seals = append(a.seals, sl)
	return sl
}

// retireLocked gives up the seals overlapping s, putting back in memory
// what each span held when its access ended, and returns them. The
// caller looks at them first when they may have changed, and holds a.mu.
func (a *arena) retireLocked(s contract.Span) []*seal {
	lo := a.offsetOf(s)
	hi := lo + int(s.Len)
	var out []*seal
	kept := a.seals[:0]
	for _, sl := range a.seals {
		if sl.off < hi && sl.off+len(sl.mark) > lo {
			out = append(out, sl)
			continue
		}
		kept = append(kept, sl)
	}
	a.seals = kept
	for _, sl := range out {
		copy(a.mem[sl.off:], sl.left)
		sl.retired = true
	}
	return out
}

// changeLocked returns a finding when the sealed span no longer holds
// its mark, and marks the seal reported; "" otherwise, or when it was
// reported before. The caller holds the arena's lock.
func (sl *seal) changeLocked() string {
	if sl.changed || sl.retired || sl.a.freed {
		return ""
	}
	got := sl.a.mem[sl.off : sl.off+len(sl.mark)]
	at, differs := firstDiff(got, sl.mark)
	if !differs {
		return ""
	}
	sl.changed = true
	sl.a.keep = "the driver wrote to it after an operation's access ended, so it may again"
	return fmt.Sprintf("%s: %s changed after the operation's access ended (at byte %d of it: %#02x, where the suite wrote %#02x when it first saw access Ended): the store never touches memory after the operation said its access ended",
		sl.w.label, sl.where, at, got[at], sl.mark[at])
}

// memoryFindings returns a finding for every sealed span that changed
// since its seal, each reported once.
func (b *bench) memoryFindings() []string {
	b.mem.Lock()
	defer b.mem.Unlock()
	var out []string
	kept := b.seals[:0]
	for _, sl := range b.seals {
		if f := sl.changeLocked(); f != "" {
			out = append(out, f)
		}
		if !sl.retired {
			kept = append(kept, sl)
		}
	}
	b.seals = kept
	return out
}

// retireSpans gives up the seals over every span of batch before the
// suite hands the spans to another operation, reporting a seal whose
// span changed.
func (b *bench) retireSpans(batch contract.RowBatch) {
	b.r.Helper()
	for _, r := range batch.Rows {
		for _, s := range r.Spans {
			b.retireSpan(s)
		}
	}
}

// retireSpan gives up the seals over s, reporting one whose span
// changed.
func (b *bench) retireSpan(s contract.Span) {
	b.r.Helper()
	b.mem.Lock()
	var found []string
	if a := b.arenaOfLocked(s); a != nil {
		found = a.retireLockedFirst(s)
	}
	b.mem.Unlock()
	for _, f := range found {
		b.r.Errorf("%s", f)
	}
}

// retireLockedFirst looks one last time at the seals overlapping s and
// gives them up, returning a finding for each that changed. The caller
// holds a.mu.
func (a *arena) retireLockedFirst(s contract.Span) []string {
	var found []string
	lo, hi := a.offsetOf(s), a.offsetOf(s)+int(s.Len)
	for _, sl := range a.seals {
		if sl.off < hi && sl.off+len(sl.mark) > lo {
			if f := sl.changeLocked(); f != "" {
				found = append(found, f)
			}
		}
	}
	a.retireLocked(s)
	return found
}

// putFindings reads back, with the Object hook, the object of every
// watched put row and returns a finding for each that changed since the
// put's access ended: the row's marks stored under its key (the driver
// read the slot again), or a Ready row's object replaced.
func (b *bench) putFindings() []string {
	b.r.Helper()
	b.snapshotPuts()
	b.mem.Lock()
	puts := append([]*putSeal(nil), b.puts...)
	b.mem.Unlock()
	var out []string
	for _, ps := range puts {
		if ps.changed {
			continue
		}
		obj, ok := b.object(ps.key)
		switch {
		case !ok:
		case bytes.Equal(obj, ps.mark):
			ps.changed = true
			out = append(out, fmt.Sprintf("%s: row %d (%s): the store holds under its key %q the bytes the suite wrote over the row's memory after the put's access ended: the driver read that memory after it said its access ended",
				ps.w.label, ps.row, ps.w.row(ps.row), ps.key))
		case ps.had && !bytes.Equal(obj, ps.before):
			ps.changed = true
			at, _ := firstDiff(obj, ps.before)
			out = append(out, fmt.Sprintf("%s: row %d (%s) ended ready, and the object under its key %q changed after the put's access ended (at byte %d; %d bytes now, %d then): a put's object is what the put wrote when its access ended",
				ps.w.label, ps.row, ps.w.row(ps.row), ps.key, at, len(obj), len(ps.before)))
		}
	}
	return out
}
