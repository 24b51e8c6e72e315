package keys

import (
	"encoding/hex"
	"fmt"
	"unsafe"
)

const (
	// MaxPrefixBytes is the longest prefix [NewStem] accepts, in bytes.
	MaxPrefixBytes = 128

	// MaxNameBytes is the longest name a key can carry, in bytes.
	MaxNameBytes = 512

	// MaxKeyBytes is the length of the longest key: a prefix of
	// MaxPrefixBytes, a scope segment ("/s1-" and 32 hex digits), the
	// separator "/v1/", and a name of MaxNameBytes written as hex.
	MaxKeyBytes = MaxPrefixBytes + scopeSegmentBytes + len(separator) + 2*MaxNameBytes
)

// scopeMark opens the segment of a scoped key that holds the scope's
// digest; scopeSegmentBytes is the whole segment's length, its '/'
// included.
const (
	scopeMark         = "/s1-"
	scopeSegmentBytes = len(scopeMark) + 2*ScopeDigestBytes
)

// separator stands between a key's prefix and its hex-encoded name. Its
// middle segment is the version of the key format.
const separator = "/v1/"

// Stem is a validated key prefix, with or without a scope: the part
// every key of one store namespace starts with. Build one with [NewStem]
// or [NewScopedStem]; a Stem is then an immutable value, safe to copy
// and to use from many goroutines at once. Two Stems are equal (==)
// exactly when their prefixes and scope digests are.
//
// The zero Stem has no prefix. It makes no keys: [Stem.Key] and
// [Stem.Keys] return an error wrapping [ErrInvalidPrefix], [Stem.Prefix]
// returns "" and [Stem.KeyLen] returns 0.
type Stem struct {
	stem   string // prefix [+ scope segment] + separator; "" for the zero Stem
	scoped bool   // stem holds a scope segment
}

// NewStem validates prefix once against the prefix rules of the package
// documentation and returns the Stem that builds keys under it. A prefix
// that breaks a rule gives an error wrapping [ErrInvalidPrefix] that names
// the rule and, for a rule about one byte, the byte and its offset.
func NewStem(prefix string) (Stem, error) {
	if reason := prefixFault(prefix); reason != "" {
		if len(prefix) == 0 || len(prefix) > MaxPrefixBytes {
			return Stem{}, fmt.Errorf("%w: %s", ErrInvalidPrefix, reason)
		}
		return Stem{}, fmt.Errorf("%w %q: %s", ErrInvalidPrefix, prefix, reason)
	}
	return Stem{stem: prefix + separator}, nil
}

// NewScopedStem is [NewStem] under a scope: its keys are
// prefix "/s1-" digest "/v1/" hex(name), where digest is the 32 hex
// digits of scope's [Scope.Digest]. A bad prefix gives an error wrapping
// [ErrInvalidPrefix], an invalid scope (the zero Scope among them) one
// matching [ErrInvalidScope] that names the field.
func NewScopedStem(prefix string, scope Scope) (Stem, error) {
	if _, err := NewStem(prefix); err != nil {
		return Stem{}, err
	}
	digest, err := scope.Digest()
	if err != nil {
		return Stem{}, err
	}
	return scopedStem(prefix, digest), nil
}

// scopedStem is the Stem of a valid prefix under a digest.
func scopedStem(prefix string, digest ScopeDigest) Stem {
	return Stem{stem: prefix + scopeMark + digest.String() + separator, scoped: true}
}

// Prefix returns the prefix the Stem was built from (without its scope
// segment), or "" for the zero Stem.
func (s Stem) Prefix() string {
	switch {
	case s.stem == "":
		return ""
	case s.scoped:
		return s.stem[:len(s.stem)-scopeSegmentBytes-len(separator)]
	}
	return s.stem[:len(s.stem)-len(separator)]
}

// Scope returns the digest of the scope the Stem's keys are under, and
// whether they are under one: false for a Stem of [NewStem], and for the
// zero Stem.
func (s Stem) Scope() (ScopeDigest, bool) {
	if !s.scoped {
		return ScopeDigest{}, false
	}
	var d ScopeDigest
	seg := s.stem[len(s.stem)-len(separator)-2*ScopeDigestBytes : len(s.stem)-len(separator)]
	_, _ = hex.Decode(d[:], []byte(seg)) // written by scopedStem
	return d, true
}

// KeyLen returns the length in bytes of the key [Stem.Key] builds for a
// name of nameLen bytes: len(prefix) + 4 + 2*nameLen. It returns 0, which
// is never a key's length, when no name of that length has a key: on the
// zero Stem, or when nameLen is below 1 or above [MaxNameBytes].
func (s Stem) KeyLen(nameLen int) int {
	if s.stem == "" || nameLen < 1 || nameLen > MaxNameBytes {
		return 0
	}
	return len(s.stem) + 2*nameLen
}

// Key returns the key of name under the Stem: the prefix, "/v1/", and the
// name in lowercase hex. The name is only read; Key does not keep it. A
// name that is empty or longer than [MaxNameBytes] gives an error wrapping
// [ErrInvalidName] that says which, with the name's length. The zero Stem
// gives an error wrapping [ErrInvalidPrefix]. Key makes one allocation.
func (s Stem) Key(name []byte) (string, error) {
	if s.stem == "" {
		return "", zeroStemError()
	}
	if reason := nameFault(len(name)); reason != "" {
		return "", fmt.Errorf("%w: %s", ErrInvalidName, reason)
	}
	buf := make([]byte, 0, s.KeyLen(len(name)))
	buf = append(buf, s.stem...)
	buf = appendHex(buf, name)
	return unsafe.String(unsafe.SliceData(buf), len(buf)), nil
}

// AppendKey appends the key of name under the Stem to dst and returns
// the extended slice: the same bytes [Stem.Key] returns, with no
// allocation beyond growing dst (none when dst has room for
// [Stem.KeyLen] more bytes). It never fails: where Key would refuse the
// name (empty, over [MaxNameBytes]) or the Stem (the zero Stem),
// AppendKey appends nothing, and KeyLen of that name's length is 0.
//
// With KeyLen, AppendKey makes a Stem a key maker in the sense of
// kvshare's contract module (contract.KeyMaker): deterministic,
// injective, safe for concurrent use, never a NUL byte, exact length.
// The binding passes its Stem with every driver call, and the driver
// writes each key straight into its own buffer.
func (s Stem) AppendKey(dst, name []byte) []byte {
	if s.KeyLen(len(name)) == 0 {
		return dst
	}
	dst = append(dst, s.stem...)
	return appendHex(dst, name)
}

// Keys is the batch form of [Stem.Key]: it appends the key of each name,
// in order, to dst and returns the extended slice. dst may be nil, or a
// slice reused from an earlier call (usually with length 0); keys already
// in dst are kept.
//
// Every name is checked before anything is built. On a bad name Keys
// returns dst as it was given (same length, same contents) and an error
// wrapping [ErrInvalidName] that names the index of the first bad name
// ("name 3: empty"). The zero Stem gives an error wrapping
// [ErrInvalidPrefix], even for no names. With no names and a valid Stem,
// Keys returns dst unchanged and allocates nothing.
//
// Allocation: all the key bytes of one call are written into one buffer
// sized exactly, made with one allocation, and the returned keys are
// strings over consecutive pieces of it. Keys therefore makes exactly one
// allocation when dst has room for len(names) more keys, and one more
// when it has not (a new dst with room for exactly those keys, holding
// a copy of what dst held). Because the keys share the buffer, any one
// key kept alive keeps the whole call's buffer alive; copy a key
// (strings.Clone) before holding it long while dropping the others.
func (s Stem) Keys(dst []string, names [][]byte) ([]string, error) {
	if s.stem == "" {
		return dst, zeroStemError()
	}
	total := 0
	for i, name := range names {
		if reason := nameFault(len(name)); reason != "" {
			return dst, fmt.Errorf("%w: name %d: %s", ErrInvalidName, i, reason)
		}
		total += len(s.stem) + 2*len(name)
	}
	if len(names) == 0 {
		return dst, nil
	}
	buf := make([]byte, 0, total)
	for _, name := range names {
		buf = append(buf, s.stem...)
		buf = appendHex(buf, name)
	}
	// buf is never written again, and nothing else refers to it: the
	// string over it is immutable from here on.
	all := unsafe.String(unsafe.SliceData(buf), len(buf))
	if cap(dst)-len(dst) < len(names) {
		grown := make([]string, len(dst), len(dst)+len(names))
		copy(grown, dst)
		dst = grown
	}
	off := 0
	for _, name := range names {
		end := off + len(s.stem) + 2*len(name)
		dst = append(dst, all[off:end])
		off = end
	}
	return dst, nil
}

// nameFault returns "" when a name of n bytes may be encoded in a key, or
// else why not.
func nameFault(n int) string {
	switch {
	case n == 0:
		return "empty"
	case n > MaxNameBytes:
		return fmt.Sprintf("%d bytes, over the limit of %d", n, MaxNameBytes)
	}
	return ""
}

// zeroStemError is the error of the zero Stem's Key and Keys.
func zeroStemError() error {
	return fmt.Errorf("%w: zero Stem (build one with NewStem)", ErrInvalidPrefix)
}
