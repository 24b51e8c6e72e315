package keys

import (
	"encoding/hex"
	"fmt"
	"strings"
)

// ParseKey splits a key built by [Stem.Key] back into the Stem that
// built it and the name. It is the inverse of Key, for tools and tests:
// the data path never decodes names. The Stem's [Stem.Prefix] is the
// key's prefix and its [Stem.Scope] the scope digest when the key has a
// scope segment; a key of the unscoped format parses as it always did.
//
// The key must match the grammar of the package documentation: at most
// [MaxKeyBytes] bytes; a valid prefix, optionally "/s1-" and 32
// lowercase hex digits, "/v1/", and a name of 1 to [MaxNameBytes] bytes
// written as an even number of lowercase hex digits. The separator is
// the last "/v1/" of the key (hex has no '/'), so a prefix may itself
// hold a "v1" segment; a prefix never holds a segment of the scope
// segment's form, so a key is scoped exactly when the segment before
// "/v1/" has it. Every key ParseKey accepts is exactly the key that
// the returned Stem's Key(name) builds again.
//
// A string that is not a key gives an error wrapping [ErrInvalidKey] that
// quotes the key (when it is within the length limit) and names what was
// wrong, with the offset of an offending byte. When the fault lies in the
// prefix the error also wraps [ErrInvalidPrefix]; when the name is empty
// or too long, it also wraps [ErrInvalidName]. The name is freshly
// allocated and belongs to the caller.
func ParseKey(key string) (stem Stem, name []byte, err error) {
	if len(key) > MaxKeyBytes {
		return Stem{}, nil, fmt.Errorf("%w: %d bytes, over the limit of %d", ErrInvalidKey, len(key), MaxKeyBytes)
	}
	cut := strings.LastIndex(key, separator)
	if cut < 0 {
		return Stem{}, nil, fmt.Errorf("%w %q: no %q separator before the name", ErrInvalidKey, key, separator)
	}
	prefix, encoded := key[:cut], key[cut+len(separator):]
	digest, scoped := scopeSuffix(prefix)
	if scoped {
		prefix = prefix[:len(prefix)-scopeSegmentBytes]
	}
	if reason := prefixFault(prefix); reason != "" {
		return Stem{}, nil, fmt.Errorf("%w %q: %w: %s", ErrInvalidKey, key, ErrInvalidPrefix, reason)
	}
	if encoded == "" {
		return Stem{}, nil, fmt.Errorf("%w %q: %w: empty", ErrInvalidKey, key, ErrInvalidName)
	}
	for i := 0; i < len(encoded); i++ {
		if b := encoded[i]; !('0' <= b && b <= '9' || 'a' <= b && b <= 'f') {
			return Stem{}, nil, fmt.Errorf("%w %q: %s at offset %d is not a lowercase hex digit (0-9 a-f)",
				ErrInvalidKey, key, describeByte(b), cut+len(separator)+i)
		}
	}
	if len(encoded)%2 != 0 {
		return Stem{}, nil, fmt.Errorf("%w %q: odd number of hex digits (%d) in the name", ErrInvalidKey, key, len(encoded))
	}
	if n := len(encoded) / 2; n > MaxNameBytes {
		return Stem{}, nil, fmt.Errorf("%w %q: %w: %d bytes, over the limit of %d", ErrInvalidKey, key, ErrInvalidName, n, MaxNameBytes)
	}
	name, err = hex.DecodeString(encoded)
	if err != nil { // unreachable: every byte was checked above
		return Stem{}, nil, fmt.Errorf("%w %q: %v", ErrInvalidKey, key, err)
	}
	if scoped {
		return scopedStem(prefix, digest), name, nil
	}
	return Stem{stem: prefix + separator}, name, nil
}

// scopeSuffix returns the digest of the scope segment that ends s
// ("/s1-" and 32 lowercase hex digits), and whether s ends with one.
func scopeSuffix(s string) (ScopeDigest, bool) {
	if len(s) < scopeSegmentBytes {
		return ScopeDigest{}, false
	}
	seg := s[len(s)-scopeSegmentBytes:]
	if seg[0] != '/' || !isScopeSegment(seg[1:]) {
		return ScopeDigest{}, false
	}
	var d ScopeDigest
	_, _ = hex.Decode(d[:], []byte(seg[len(scopeMark):])) // isScopeSegment checked every digit
	return d, true
}
