package events

import (
	"encoding/binary"
	"math"
)

// The msgpack kinds a batch needs, appended by hand (the msgpack
// specification's formats; each picks the shortest form, as msgpack
// encoders do): arrays, byte strings (bin), text (str), integers, a
// float64 and nil.

func appendArrayLen(b []byte, n int) []byte {
	switch {
	case n < 16:
		return append(b, 0x90|byte(n))
	case n <= math.MaxUint16:
		return binary.BigEndian.AppendUint16(append(b, 0xdc), uint16(n))
	default:
		return binary.BigEndian.AppendUint32(append(b, 0xdd), uint32(n))
	}
}

func appendBin(b, v []byte) []byte {
	return append(appendHead(b, len(v), binHeads), v...)
}

func appendStr(b []byte, v string) []byte {
	return append(appendHead(b, len(v), strHeads), v...)
}

// heads are the first bytes of a kind of length n: fix (or'ed with n)
// below fixBelow (0: no such form), else 8, 16 or 32 bits of length.
type heads struct {
	fix          byte
	fixBelow     int
	h8, h16, h32 byte
}

var (
	binHeads = heads{h8: 0xc4, h16: 0xc5, h32: 0xc6}
	strHeads = heads{fix: 0xa0, fixBelow: 32, h8: 0xd9, h16: 0xda, h32: 0xdb}
)

func appendHead(b []byte, n int, h heads) []byte {
	switch {
	case n < h.fixBelow:
		return append(b, h.fix|byte(n))
	case n <= math.MaxUint8:
		return append(b, h.h8, byte(n))
	case n <= math.MaxUint16:
		return binary.BigEndian.AppendUint16(append(b, h.h16), uint16(n))
	default:
		return binary.BigEndian.AppendUint32(append(b, h.h32), uint32(n))
	}
}

// appendUint appends a non-negative integer.
func appendUint(b []byte, v uint64) []byte {
	switch {
	case v < 128:
		return append(b, byte(v))
	case v <= math.MaxUint8:
		return append(b, 0xcc, byte(v))
	case v <= math.MaxUint16:
		return binary.BigEndian.AppendUint16(append(b, 0xcd), uint16(v))
	case v <= math.MaxUint32:
		return binary.BigEndian.AppendUint32(append(b, 0xce), uint32(v))
	default:
		return binary.BigEndian.AppendUint64(append(b, 0xcf), v)
	}
}

func appendFloat64(b []byte, v float64) []byte {
	return binary.BigEndian.AppendUint64(append(b, 0xcb), math.Float64bits(v))
}

func appendNil(b []byte) []byte { return append(b, 0xc0) }
