package rowbatch_test

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/rowbatch"
)

// fuzzKey turns one fuzz byte into the key of row i. Half the bytes give
// a key no other row has (so calls grow long); the rest draw from sixteen
// keys, half of them behind a long stem, and the empty key, so repeats
// are frequent.
func fuzzKey(b byte, i int) string {
	switch {
	case b == 0:
		return ""
	case b&0x80 != 0:
		return "row/" + strconv.Itoa(i)
	case b&0x40 != 0:
		return "kvshare/v1/0123456789abcdef" + string(rune('a'+b&7))
	}
	return string(rune('a' + b&7))
}

// FuzzCut checks every cut against the rules: every row in exactly one
// call, in order, calls contiguous; no call repeats a key; no call passes
// a cap unless it is a single row; every call ends only because its next
// row would break a rule. It also breaks out of a range after stop calls
// and checks that the calls seen are the cut's first ones.
func FuzzCut(f *testing.F) {
	f.Add(0, int64(0), int64(0), uint8(0), []byte{})
	f.Add(2, int64(0), int64(100), uint8(0), []byte("abcde"))
	f.Add(0, int64(250), int64(100), uint8(1), []byte("abcdefg"))
	f.Add(0, int64(50), int64(100), uint8(2), []byte("abc"))
	f.Add(3, int64(0), int64(1), uint8(0), []byte("abca\x00\x00d"))
	f.Add(-1, int64(-1), int64(-7), uint8(3), []byte("aaaa"))
	f.Add(0, int64(0), int64(1<<20), uint8(0), []byte("\x80\x81\x82\x83\x84\x85\x86\x87\x88\x89\x8a\x8b\x01\x8c\x8d\x01\x8e"))
	f.Add(12, int64(math.MaxInt64), int64(1<<40), uint8(1), []byte("\xc1\x80\x80\x80\x80\x80\x80\x80\x80\x80\x80\xc1\x80\x80"))
	f.Fuzz(func(t *testing.T, maxRows int, maxBytes, rowBytes int64, stop uint8, data []byte) {
		keys := make([]string, len(data))
		for i, b := range data {
			keys[i] = fuzzKey(b, i)
		}
		caps := rowbatch.Caps{MaxRows: maxRows, MaxBytes: maxBytes}
		all := slices.Collect(rowbatch.Cut(names(keys), rowBytes, caps))
		checkCut(t, keys, rowBytes, caps, all)

		if stop == 0 {
			return
		}
		var seen []rowbatch.Call
		for c := range rowbatch.Cut(names(keys), rowBytes, caps) {
			seen = append(seen, c)
			if len(seen) == int(stop) {
				break
			}
		}
		assert.Equal(t, all[:min(len(all), int(stop))], seen)
	})
}

// fuzzReader hands out a fuzz input a byte at a time, then zeros.
type fuzzReader []byte

func (r *fuzzReader) next() byte {
	if len(*r) == 0 {
		return 0
	}
	b := (*r)[0]
	*r = (*r)[1:]
	return b
}

// fuzzRegions decodes up to eight valid regions, four bytes each: bases
// on a 0x40 grid from 0x1000 (so regions meet, overlap and stand apart)
// or, for 0xff, near the top of the address space.
func fuzzRegions(data []byte) []contract.SlotRegion {
	r := fuzzReader(data)
	var live []contract.SlotRegion
	for len(r) > 0 && len(live) < 8 {
		b0, b1, b2, b3 := r.next(), r.next(), r.next(), r.next()
		reg := contract.SlotRegion{
			Base:      0x1000 + uintptr(b0)*0x40,
			SlotBytes: 1 + int64(b1%64),
			SlotCount: 1 + int(b2%4),
			Kind:      contract.Host,
		}
		if b0 == 0xff {
			reg.Base = ^uintptr(0) - 0x1000
		}
		reg.Len = reg.SlotBytes*int64(reg.SlotCount) + int64(b3%16)
		if reg.Validate() == nil { // live registrations are always valid
			live = append(live, reg)
		}
	}
	return live
}

// fuzzRows decodes rows: a key byte, a span count (0 to 3), and three
// bytes per span giving an address near the regions' grid (or near the
// top of the address space) and a length from -8 to 119 (or near
// MaxInt64).
func fuzzRows(data []byte) []contract.Row {
	r := fuzzReader(data)
	var rows []contract.Row
	for len(r) > 0 {
		row := contract.Row{Name: []byte(fuzzKey(r.next(), len(rows)))}
		for range r.next() % 4 {
			ab, ob, lb := r.next(), r.next(), r.next()
			s := contract.Span{Addr: 0x1000 + uintptr(ab)*0x40 + uintptr(ob%0x80) - 0x10}
			if ab == 0xff {
				s.Addr = ^uintptr(0) - uintptr(ob)*0x10
			}
			s.Len = int64(lb&0x7f) - 8
			if lb&0x80 != 0 {
				s.Len = math.MaxInt64 - int64(lb&0x7f)
			}
			row.Spans = append(row.Spans, s)
		}
		rows = append(rows, row)
	}
	return rows
}

// refFirstBad is the admission rule written plainly: the first row that
// breaks it, -1 for a batch without rows, and ok when none does.
func refFirstBad(rows []contract.Row, live []contract.SlotRegion, multiSpan bool) (bad int, ok bool) {
	if len(rows) == 0 {
		return -1, false
	}
	for i, row := range rows {
		if len(row.Name) == 0 || len(row.Spans) == 0 || (len(row.Spans) > 1 && !multiSpan) {
			return i, false
		}
		for _, earlier := range rows[:i] {
			if string(earlier.Name) == string(row.Name) {
				return i, false
			}
		}
		for _, s := range row.Spans {
			if !refInside(s, live) {
				return i, false
			}
		}
	}
	return 0, true
}

// refInside reports whether s has a positive length and lies in one
// region, with every end computed in 65 bits.
func refInside(s contract.Span, live []contract.SlotRegion) bool {
	if s.Len <= 0 {
		return false
	}
	end, carry := bits.Add64(uint64(s.Addr), uint64(s.Len), 0)
	for _, r := range live {
		rEnd, rCarry := bits.Add64(uint64(r.Base), uint64(r.Len), 0)
		if carry == 0 && rCarry == 0 && uint64(s.Addr) >= uint64(r.Base) && end <= rEnd {
			return true
		}
	}
	return false
}

// FuzzCheck checks that Check accepts exactly the batches refFirstBad
// accepts, and that a refusal wraps ErrBadBatch and names the first bad
// row and its key.
func FuzzCheck(f *testing.F) {
	f.Add(false, []byte{0, 63, 3, 0}, []byte{})
	f.Add(false, []byte{0, 63, 3, 0}, []byte{1, 1, 0, 0x10, 64})
	f.Add(false, []byte{0, 63, 3, 0}, []byte{1, 1, 0, 0x10, 64, 1, 1, 1, 0x10, 64})
	f.Add(true, []byte{0, 63, 3, 0, 1, 63, 0, 0}, []byte{0x81, 2, 0, 0x10, 72, 1, 0x10, 72})
	f.Add(false, []byte{0, 63, 3, 0, 0xff, 63, 3, 15}, []byte{0x82, 1, 0xff, 0x10, 0x7f, 0x83, 1, 0, 0x10, 0x81})
	f.Add(false, []byte{0, 63, 3, 0}, []byte(strings.Repeat("\x81\x01\x00\x10\x10", 34)+"\x01\x01\x00\x10\x10"))
	f.Fuzz(func(t *testing.T, multiSpan bool, regionData, rowData []byte) {
		live := fuzzRegions(regionData)
		rows := fuzzRows(rowData)
		err := rowbatch.Check(batchOf(rows), live, multiSpan)

		bad, ok := refFirstBad(rows, live, multiSpan)
		if ok {
			assert.NoError(t, err)
			return
		}
		require.Error(t, err, "the reference refuses row %d", bad)
		assert.True(t, errors.Is(err, rowbatch.ErrBadBatch), "%v does not wrap ErrBadBatch", err)
		msg := err.Error()
		if bad < 0 {
			assert.Equal(t, "rowbatch: bad batch: no rows", msg)
			return
		}
		head := fmt.Sprintf("rowbatch: bad batch: row %d", bad)
		if assert.True(t, strings.HasPrefix(msg, head), "%q does not name row %d first", msg, bad) &&
			assert.Greater(t, len(msg), len(head)) {
			assert.Contains(t, ": (", string(msg[len(head)]), "%q names another row than %d", msg, bad)
		}
		if name := rows[bad].Name; len(name) > 0 {
			assert.Contains(t, msg, strconv.Quote("kv/"+string(name)))
		}
	})
}
