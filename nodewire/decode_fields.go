package nodewire

import (
	"encoding/binary"
	"fmt"
	"unicode/utf8"
)

// fields reads a body's fields in order. The first error sticks: every
// later read returns zero values, and done reports it. Field names are
// given as the path to report ("publish: group 2: slots").
type fields struct {
	b   []byte
	off int
	err *FrameError
}

func (r *fields) fail(c Code, field, format string, args ...any) {
	if r.err == nil {
		r.err = frameErr(c, field, fmt.Sprintf(format, args...))
	}
}

// take returns the next n bytes, or nil after a failure (a body too
// short for them).
func (r *fields) take(field string, n int) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || n > len(r.b)-r.off {
		r.fail(CodeProtocol, field, "truncated: %d bytes wanted at offset %d, %d left", n, r.off, len(r.b)-r.off)
		return nil
	}
	p := r.b[r.off : r.off+n : r.off+n]
	r.off += n
	return p
}

func (r *fields) u8(field string) uint8 {
	if p := r.take(field, 1); p != nil {
		return p[0]
	}
	return 0
}

func (r *fields) u16(field string) uint16 {
	if p := r.take(field, 2); p != nil {
		return binary.LittleEndian.Uint16(p)
	}
	return 0
}

func (r *fields) u32(field string) uint32 {
	if p := r.take(field, 4); p != nil {
		return binary.LittleEndian.Uint32(p)
	}
	return 0
}

func (r *fields) u64(field string) uint64 {
	if p := r.take(field, 8); p != nil {
		return binary.LittleEndian.Uint64(p)
	}
	return 0
}

// str reads a str: a u16 length, then that many bytes of UTF-8.
func (r *fields) str(field string) string {
	n := r.u16(field)
	p := r.take(field, int(n))
	if p == nil {
		return ""
	}
	if !utf8.Valid(p) {
		r.fail(CodeProtocol, field, "not valid UTF-8")
		return ""
	}
	return string(p)
}

// count reads an array's u32 count and checks that count elements of
// width bytes fit in what is left of the body, so that no count makes a
// decoder allocate more than the body's size.
func (r *fields) count(field string, width int) int {
	n := r.u32(field)
	if r.err != nil {
		return 0
	}
	if left := len(r.b) - r.off; uint64(n)*uint64(width) > uint64(left) {
		r.fail(CodeProtocol, field, "truncated: count %d of %d-byte elements, %d bytes left", n, width, left)
		return 0
	}
	return int(n)
}

func (r *fields) u32s(field string) []uint32 {
	n := r.count(field, 4)
	if r.err != nil || n == 0 {
		return nil
	}
	vs := make([]uint32, n)
	for i := range vs {
		vs[i] = binary.LittleEndian.Uint32(r.b[r.off:])
		r.off += 4
	}
	return vs
}

// u8s reads an array of u8 values, each at most max.
func (r *fields) u8s(field string, max uint8) []uint8 {
	n := r.count(field, 1)
	p := r.take(field, n)
	if len(p) == 0 {
		return nil
	}
	for i, v := range p {
		if v > max {
			r.fail(CodeProtocol, field, "value %d of row %d over %d", v, i, max)
			return nil
		}
	}
	return p
}

// names reads the names kind: a u32 count, count u32 end offsets, each
// greater than the one before (the first greater than 0: no name is
// empty), then the blob of ends[count-1] bytes. The names returned alias
// the body.
func (r *fields) names(field string) [][]byte {
	n := r.count(field, 4)
	if r.err != nil || n == 0 {
		return nil
	}
	ends := r.b[r.off : r.off+4*n]
	r.off += 4 * n
	names := make([][]byte, n)
	prev := uint32(0)
	for i := range n {
		end := binary.LittleEndian.Uint32(ends[4*i:])
		if end <= prev {
			if end == prev {
				r.fail(CodeBadNames, field, "name %d empty (end %d)", i, end)
			} else {
				r.fail(CodeBadNames, field, "end %d < previous %d", end, prev)
			}
			return nil
		}
		prev = end
	}
	blob := r.take(field, int(prev))
	if blob == nil && prev > 0 {
		return nil
	}
	start := uint32(0)
	for i := range n {
		end := binary.LittleEndian.Uint32(ends[4*i:])
		names[i] = blob[start:end:end]
		start = end
	}
	return names
}

// done reports the first failure, or bytes left over after the last
// field.
func (r *fields) done(msg string) error {
	if r.err != nil {
		return r.err
	}
	if r.off != len(r.b) {
		return frameErr(CodeProtocol, msg, fmt.Sprintf("%d bytes left over after the last field", len(r.b)-r.off))
	}
	return nil
}
