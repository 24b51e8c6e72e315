package conformance

import (
	"slices"

	"github.com/kvshare/kvshare/contract"
)

// suiteKeys is the key maker of every batch the suite builds. It is not
// the project's keys.Stem, and its grammar is not hex, so that a driver
// that builds keys any way but through [contract.RowBatch.AppendKey]
// (hex of the name, the name alone, a grammar of its own) stores and
// reads under keys the suite's hooks never find.
//
// The key of a name is the prefix (Harness.KeyPrefix), then the name
// with every byte outside [A-Za-z0-9._/-] written as '%' and two
// uppercase hex digits, then '~' repeated until the name's part is
// three bytes a name byte: "a b" makes prefix+"a%20b~~~~".
// The fill keeps KeyLen exact, since an escape is three bytes, and makes
// a key never a plain prefix+name. Names longer than maxSuiteName bytes,
// and the empty name, have no key (KeyLen 0).
//
// It has every property [contract.KeyMaker] asks: deterministic;
// injective (the fill is '~', which the name's part never holds, so
// stripping it and undoing the escapes gives the name back); safe for
// concurrent use (the prefix is only read, the book is locked); no
// allocation beyond growing dst; no NUL byte as long as the prefix has
// none, which Run checks; and an exact KeyLen.
//
// With a book, AppendKey also reports a name the check lent an operation
// whose access it saw end (see nameBook), and reads the name under the
// book's lock.
type suiteKeys struct {
	prefix string
	book   *nameBook // the names the check lent, or nil
}

var _ contract.KeyMaker = suiteKeys{}

// maxSuiteName is the longest name suiteKeys has a key for.
const maxSuiteName = 256

// keyFill pads a key's name part to three bytes a name byte.
const keyFill = '~'

// KeyLen returns len(prefix) + 3*nameLen, or 0 when a name of nameLen
// bytes has no key.
func (k suiteKeys) KeyLen(nameLen int) int {
	if nameLen < 1 || nameLen > maxSuiteName {
		return 0
	}
	return len(k.prefix) + 3*nameLen
}

// AppendKey appends the key of name to dst, or nothing when name has no
// key.
func (k suiteKeys) AppendKey(dst, name []byte) []byte {
	if k.book != nil {
		k.book.mu.Lock()
		defer k.book.mu.Unlock()
		k.book.lookLocked(name)
	}
	n := k.KeyLen(len(name))
	if n == 0 {
		return dst
	}
	dst = slices.Grow(dst, n)
	start := len(dst)
	dst = append(dst, k.prefix...)
	for _, c := range name {
		if keySafe(c) {
			dst = append(dst, c)
		} else {
			dst = append(dst, '%', upperHex[c>>4], upperHex[c&0xf])
		}
	}
	for len(dst)-start < n {
		dst = append(dst, keyFill)
	}
	return dst
}

// key returns the key of name as a string: the key the hooks take.
func (k suiteKeys) key(name string) string {
	return string(k.AppendKey(nil, []byte(name)))
}

const upperHex = "0123456789ABCDEF"

// keySafe reports whether c stands for itself in a key.
func keySafe(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return c == '.' || c == '_' || c == '/' || c == '-'
}
