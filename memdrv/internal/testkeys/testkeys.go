// Package testkeys is the key maker memdrv's own tests and examples of
// package broken give their batches: a fixed prefix and the name's bytes
// as they are, so that a test that names a row "k" (and no prefix) finds
// its object under the store key "k". Only tests import it.
//
// Unlike a production key maker (keys.Stem writes the name as hex), Plain
// copies the name verbatim, so it makes NUL-free keys only of NUL-free
// names: tests use short ASCII names.
package testkeys

// Plain makes the key Prefix + name. It has no key for an empty name,
// nor, when MaxName is positive, for a name longer than MaxName bytes:
// KeyLen is then 0 and AppendKey appends nothing. A Plain is a value,
// safe for concurrent use; it is injective (a fixed prefix before the
// name) and exact, and AppendKey allocates only to grow dst.
type Plain struct {
	Prefix  string
	MaxName int // 0 means no limit
}

// AppendKey appends Prefix + name to dst and returns the extended slice,
// or dst unchanged when the name has no key.
func (p Plain) AppendKey(dst, name []byte) []byte {
	if p.KeyLen(len(name)) == 0 {
		return dst
	}
	dst = append(dst, p.Prefix...)
	return append(dst, name...)
}

// KeyLen returns len(Prefix) + nameLen, or 0 for a name that has no key.
func (p Plain) KeyLen(nameLen int) int {
	if nameLen < 1 || p.MaxName > 0 && nameLen > p.MaxName {
		return 0
	}
	return len(p.Prefix) + nameLen
}
