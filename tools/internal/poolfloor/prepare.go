package poolfloor

import (
	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/keys"
)

// Cut is how a driver cuts rows into parts: the rows of one part, at
// most rowsPerCall rows and bytesPerCall bytes (one larger row alone).
func Cut(rowBytes int64, rowsPerCall int, bytesPerCall int64) int {
	per := min(rowsPerCall, int(max(1, bytesPerCall/rowBytes)))
	return max(per, 1)
}

// Prepare builds a submission moving rows named names (keys built with
// stem, as the backend builds them) between the store and the slots at
// addrs, cut as kvshare cuts them: into views of viewRows rows (0: one
// view), each cut into parts as a driver with rowsPerCall and
// bytesPerCall cuts a call.
func Prepare(dir contract.Direction, stem keys.Stem, names [][]byte, addrs []uintptr, rowBytes int64, viewRows, rowsPerCall int, bytesPerCall int64) *Submission {
	s := &Submission{rows: len(names)}
	if viewRows <= 0 {
		viewRows = len(names)
	}
	per := Cut(rowBytes, rowsPerCall, bytesPerCall)
	for vlo := 0; vlo < len(names); vlo += viewRows {
		vhi := min(vlo+viewRows, len(names))
		s.parts = append(s.parts, parts(dir, s, stem, names, addrs, rowBytes, vlo, vhi, per)...)
	}
	return s
}

// parts cuts rows [vlo, vhi) into parts of per rows.
func parts(dir contract.Direction, s *Submission, stem keys.Stem, names [][]byte, addrs []uintptr, rowBytes int64, vlo, vhi, per int) []*Part {
	var out []*Part
	for lo := vlo; lo < vhi; lo += per {
		hi := min(lo+per, vhi)
		p := &Part{dir: dir, sub: s, codes: make([]int64, hi-lo), exist: make([]int32, hi-lo)}
		for i := lo; i < hi; i++ {
			if err := p.keys.Add(stem.AppendKey(p.keys.Tail(), names[i])); err != nil {
				panic(err) // the stem's keys never hold a NUL and names are never empty
			}
			p.bufs = append(p.bufs, addrs[i])
			p.sizes = append(p.sizes, uint64(rowBytes))
		}
		out = append(out, p)
	}
	return out
}
