// Package keyslot computes the Redis Cluster hash slot of a key: CRC16
// (XMODEM: polynomial 0x1021, initial value 0, no reflection) of the
// key, or of its hash tag, modulo 16384. The hash tag is the text
// between the first "{" and the first "}" after it, when that text is
// not empty; otherwise the whole key is hashed.
package keyslot

// Count is the number of hash slots of a Redis Cluster.
const Count = 16384

// table is CRC16/XMODEM's byte table.
var table = func() (t [256]uint16) {
	for i := range t {
		c := uint16(i) << 8
		for range 8 {
			if c&0x8000 != 0 {
				c = c<<1 ^ 0x1021
			} else {
				c <<= 1
			}
		}
		t[i] = c
	}
	return t
}()

// Of returns key's slot, in [0, Count).
func Of(key string) int {
	return int(crc16(Tag(key)) % Count)
}

// Tag returns the part of key the slot is computed from: its hash tag
// when it has a non-empty one, else the whole key.
func Tag(key string) string {
	for i := 0; i < len(key); i++ {
		if key[i] != '{' {
			continue
		}
		for j := i + 1; j < len(key); j++ {
			if key[j] == '}' {
				if j == i+1 {
					return key // "{}": no tag
				}
				return key[i+1 : j]
			}
		}
		return key // a "{" never closed: no tag
	}
	return key
}

func crc16(s string) uint16 {
	var c uint16
	for i := 0; i < len(s); i++ {
		c = c<<8 ^ table[byte(c>>8)^s[i]]
	}
	return c
}
