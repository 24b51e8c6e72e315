package broken

import (
	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/memdrv"
	"github.com/kvshare/kvshare/memdrv/internal/rawmem"
)

// afterEnd is one row's memory access that GetWritesAfterEnd or
// PutRereadsAfterEnd owes for the driver's next call, after its
// operation reported access Ended.
type afterEnd struct {
	dir   memdrv.Direction
	spans []contract.Span
	data  []byte // get: the bytes the row's spans held when access ended
	key   string // put: the row's store key
}

// afterEnd returns what the operation owes once its access ended: one
// entry per Ready row. For a get it copies the spans' bytes now (the
// object the row landed), to write them again later.
func (o *operation) afterEnd(rows []contract.RowStatus) []afterEnd {
	var out []afterEnd
	for i, r := range rows {
		if r != contract.Ready || i >= len(o.spans) {
			continue
		}
		e := afterEnd{dir: o.dir, spans: o.spans[i]}
		if o.dir == memdrv.GetDir {
			for _, s := range e.spans {
				e.data = append(e.data, rawmem.At(s.Addr, s.Len)...)
			}
		} else {
			e.key = o.keys[i]
		}
		out = append(out, e)
	}
	return out
}

// owe records effects for the driver's next call.
func (d *Driver) owe(effects []afterEnd) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.due = append(d.due, effects...)
}

// enter runs at the start of every call of the driver and of its
// operations: it carries out what GetWritesAfterEnd and
// PutRereadsAfterEnd owe, and logs what LookupNamesAfterReturn kept.
// Memory is touched only inside regions the wrapped driver still has
// registered, so the deviation never reaches memory its lender let go
// of.
func (d *Driver) enter() {
	if d.rule == LookupNamesAfterReturn {
		d.logLookups()
		return
	}
	if d.rule != GetWritesAfterEnd && d.rule != PutRereadsAfterEnd {
		return
	}
	d.mu.Lock()
	due := d.due
	d.due = nil
	d.mu.Unlock()
	if len(due) == 0 {
		return
	}
	live := d.inner.Regions()
	for _, e := range due {
		if !inside(live, e.spans) {
			continue
		}
		if e.dir == memdrv.GetDir {
			data := e.data
			for _, s := range e.spans {
				data = data[copy(rawmem.At(s.Addr, s.Len), data):]
			}
			continue
		}
		var data []byte
		for _, s := range e.spans {
			data = append(data, rawmem.At(s.Addr, s.Len)...)
		}
		d.store.Set(e.key, data)
	}
}

// inside reports whether every span lies wholly in one of the live
// regions.
func inside(live []contract.SlotRegion, spans []contract.Span) bool {
	for _, s := range spans {
		if room(live, s.Addr) < s.Len {
			return false
		}
	}
	return true
}

// dir returns the direction GetWritesAfterEnd and PutRereadsAfterEnd act
// on.
func (r Rule) dir() memdrv.Direction {
	if r == PutRereadsAfterEnd {
		return memdrv.PutDir
	}
	return memdrv.GetDir
}
