package keyslot

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// crc16Bitwise is CRC-16/XMODEM bit by bit, the reference crc16's table
// is checked against.
func crc16Bitwise(data []byte) uint16 {
	var crc uint16
	for _, b := range data {
		crc ^= uint16(b) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc
}

// slotReference is Redis's keyHashSlot written out plainly: look for '{',
// then for '}' after it; hash what lies between unless it is empty.
func slotReference(key []byte) int {
	s := -1
	for i, b := range key {
		if b == '{' {
			s = i
			break
		}
	}
	if s >= 0 {
		for e := s + 1; e < len(key); e++ {
			if key[e] == '}' {
				if e > s+1 {
					return int(crc16Bitwise(key[s+1:e]) & (Count - 1))
				}
				break
			}
		}
	}
	return int(crc16Bitwise(key) & (Count - 1))
}

func TestCRC16(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want uint16
	}{
		{"", 0},
		{"123456789", 0x31c3}, // the CRC-16/XMODEM check value
		{"A", 0x58e5},
		{"foo", 0xaf96},
		{"\x00", 0},
		{"\xff", 0x1ef0},
	} {
		assert.Equal(t, tc.want, crc16(tc.in), "crc16(%q)", tc.in)
		assert.Equal(t, tc.want, crc16Bitwise([]byte(tc.in)), "crc16Bitwise(%q)", tc.in)
	}
	for b := range 256 {
		require.Equal(t, crc16Bitwise([]byte{byte(b)}), crc16(string([]byte{byte(b)})), "byte %#x", b)
	}
}

// Slots Redis's documentation and CLUSTER KEYSLOT give, and the hash
// tag rules.
func TestOf(t *testing.T) {
	for _, tc := range []struct {
		key, hashed string
	}{
		{"foo", "foo"},
		{"{user1000}.following", "user1000"},
		{"{user1000}.followers", "user1000"},
		{"foo{}{bar}", "foo{}{bar}"}, // an empty tag: the whole key
		{"foo{{bar}}zap", "{bar"},    // from the first '{' to the next '}'
		{"foo{bar}{zap}", "bar"},     // the first tag only
		{"{", "{"},
		{"}{", "}{"},
		{"{a", "{a"},
		{"a{b}", "b"},
		{"{}", "{}"},
		{"{}x}", "{}x}"},
		{"close}then{x}", "x"},
		{"kv/{tenant7}/b", "tenant7"},
	} {
		assert.Equal(t, tc.hashed, Tag(tc.key), "Tag(%q)", tc.key)
		assert.Equal(t, int(crc16(tc.hashed))%Count, Of(tc.key), "Of(%q)", tc.key)
		assert.Equal(t, slotReference([]byte(tc.key)), Of(tc.key), "Of(%q)", tc.key)
	}
	for key, slot := range map[string]int{"": 0, "foo": 12182, "bar": 5061, "somekey": 11058, "user1000": 3443} {
		assert.Equal(t, slot, Of(key), "CLUSTER KEYSLOT %q", key)
	}
	long := strings.Repeat("x", 10000) + "{t}"
	assert.Equal(t, Of("t"), Of(long))
}

// FuzzOf compares Of with the bit-by-bit reference on arbitrary keys.
func FuzzOf(f *testing.F) {
	for _, seed := range []string{"", "foo", "{user1000}.following", "foo{}{bar}", "foo{{bar}}zap", "{", "}{}", "\xff{\x00}"} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, key []byte) {
		got, want := Of(string(key)), slotReference(key)
		if got != want {
			t.Fatalf("Of(%q) = %d, the reference %d", key, got, want)
		}
		if got < 0 || got >= Count {
			t.Fatalf("Of(%q) = %d, out of range", key, got)
		}
	})
}
