package broken

import (
	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/memdrv"
	"github.com/kvshare/kvshare/memdrv/internal/rawmem"
)

// rowEndFor returns the hook that bends a row's end for rule, or nil
// when the rule does not act there. The hooks run on memdrv's worker
// while the row's access is still Open.
func rowEndFor(rule Rule, inner *memdrv.Driver) func(memdrv.RowEnd) contract.RowStatus {
	switch rule {
	case WritesOutsideSpan:
		return func(e memdrv.RowEnd) contract.RowStatus {
			if e.Dir == memdrv.GetDir && e.Status == contract.Ready {
				past := e.Spans[len(e.Spans)-1].End()
				if n := room(inner.Regions(), past); n > 0 {
					b := rawmem.At(past, 1)
					b[0] = ^b[0]
				}
			}
			return e.Status
		}
	case LongObjectSpills:
		return func(e memdrv.RowEnd) contract.RowStatus {
			if e.Dir == memdrv.GetDir && int64(len(e.Object)) > rowBytes(e) {
				start := e.Spans[0].Addr
				n := min(int64(len(e.Object)), room(inner.Regions(), start))
				copy(rawmem.At(start, n), e.Object)
			}
			return e.Status
		}
	case ShortObjectReady:
		return func(e memdrv.RowEnd) contract.RowStatus {
			if e.Dir == memdrv.GetDir && e.Status == contract.Fault && e.Object != nil && int64(len(e.Object)) < rowBytes(e) {
				return contract.Ready
			}
			return e.Status
		}
	case ReadyForAbsent:
		return func(e memdrv.RowEnd) contract.RowStatus {
			if e.Dir == memdrv.GetDir && e.Absent {
				return contract.Ready
			}
			return e.Status
		}
	case SecondPutReady:
		return func(e memdrv.RowEnd) contract.RowStatus {
			if e.Dir == memdrv.PutDir && e.OwnWrite {
				return contract.Ready
			}
			return e.Status
		}
	}
	return nil
}

// room returns how many bytes from addr on lie inside one of the live
// regions: how far a stray write may go without leaving lent memory.
func room(live []contract.SlotRegion, addr uintptr) int64 {
	var best int64
	for _, r := range live {
		if addr >= r.Base && addr < r.Base+uintptr(r.Len) {
			best = max(best, int64(r.Base+uintptr(r.Len)-addr))
		}
	}
	return best
}

// rowBytes returns the length of the row e ended.
func rowBytes(e memdrv.RowEnd) int64 { return contract.Row{Spans: e.Spans}.Bytes() }
