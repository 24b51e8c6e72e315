package redistest

import "github.com/kvshare/kvshare/redisdrv/internal/keyslot"

// Slot is the hash slot of key, 0 to NumSlots-1, as CLUSTER KEYSLOT
// answers: the CRC-16/XMODEM of its hash tag (the text between the first
// '{' and the next '}', when not empty) or of the whole key, mod
// NumSlots. Keys with the same hash tag share a slot.
func Slot(key string) int { return keyslot.Of(key) }
