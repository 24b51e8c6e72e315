package nodewire

import (
	"encoding/binary"
	"math"
	"strings"
	"unicode/utf8"
)

// The encoders of the body's field kinds. They never fail: a str is made
// valid UTF-8 (invalid bytes become U+FFFD) and cut at a rune boundary to
// fit its u16 length.

func appendU8(b []byte, v uint8) []byte   { return append(b, v) }
func appendU16(b []byte, v uint16) []byte { return binary.LittleEndian.AppendUint16(b, v) }
func appendU32(b []byte, v uint32) []byte { return binary.LittleEndian.AppendUint32(b, v) }
func appendU64(b []byte, v uint64) []byte { return binary.LittleEndian.AppendUint64(b, v) }

func appendStr(b []byte, s string) []byte {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	if len(s) > math.MaxUint16 {
		n := math.MaxUint16
		for n > 0 && !utf8.RuneStart(s[n]) {
			n--
		}
		s = s[:n]
	}
	b = appendU16(b, uint16(len(s)))
	return append(b, s...)
}

// appendNames appends names as the names kind: the count, each name's end
// offset in the blob, then the blob.
func appendNames(b []byte, names [][]byte) []byte {
	b = appendU32(b, uint32(len(names)))
	end := uint32(0)
	for _, n := range names {
		end += uint32(len(n))
		b = appendU32(b, end)
	}
	for _, n := range names {
		b = append(b, n...)
	}
	return b
}

func appendU32s(b []byte, vs []uint32) []byte {
	b = appendU32(b, uint32(len(vs)))
	for _, v := range vs {
		b = appendU32(b, v)
	}
	return b
}

func appendU8s[T ~uint8](b []byte, vs []T) []byte {
	b = appendU32(b, uint32(len(vs)))
	for _, v := range vs {
		b = append(b, uint8(v))
	}
	return b
}
