package keys

import (
	"encoding/hex"
	"fmt"
	"strings"
)

// ParseKey splits a key built by [Stem.Key] back into its prefix and name.
// It is the inverse of Key, for tools and tests: the data path never
// decodes names.
//
// The key must match the grammar of the package documentation: at most
// [MaxKeyBytes] bytes; a valid prefix, "/v1/", and a name of 1 to
// [MaxNameBytes] bytes written as an even number of lowercase hex digits.
// The separator is the last "/v1/" of the key (hex has no '/'), so a
// prefix may itself hold a "v1" segment. Every key ParseKey accepts is
// exactly the key that NewStem(prefix) and Key(name) build again.
//
// A string that is not a key gives an error wrapping [ErrInvalidKey] that
// quotes the key (when it is within the length limit) and names what was
// wrong, with the offset of an offending byte. When the fault lies in the
// prefix the error also wraps [ErrInvalidPrefix]; when the name is empty
// or too long, it also wraps [ErrInvalidName]. The name is freshly
// allocated and belongs to the caller.
func ParseKey(key string) (prefix string, name []byte, err error) {
	if len(key) > MaxKeyBytes {
		return "", nil, fmt.Errorf("%w: %d bytes, over the limit of %d", ErrInvalidKey, len(key), MaxKeyBytes)
	}
	cut := strings.LastIndex(key, separator)
	if cut < 0 {
		return "", nil, fmt.Errorf("%w %q: no %q separator before the name", ErrInvalidKey, key, separator)
	}
	prefix, encoded := key[:cut], key[cut+len(separator):]
	if reason := prefixFault(prefix); reason != "" {
		return "", nil, fmt.Errorf("%w %q: %w: %s", ErrInvalidKey, key, ErrInvalidPrefix, reason)
	}
	if encoded == "" {
		return "", nil, fmt.Errorf("%w %q: %w: empty", ErrInvalidKey, key, ErrInvalidName)
	}
	for i := 0; i < len(encoded); i++ {
		if b := encoded[i]; !('0' <= b && b <= '9' || 'a' <= b && b <= 'f') {
			return "", nil, fmt.Errorf("%w %q: %s at offset %d is not a lowercase hex digit (0-9 a-f)",
				ErrInvalidKey, key, describeByte(b), cut+len(separator)+i)
		}
	}
	if len(encoded)%2 != 0 {
		return "", nil, fmt.Errorf("%w %q: odd number of hex digits (%d) in the name", ErrInvalidKey, key, len(encoded))
	}
	if n := len(encoded) / 2; n > MaxNameBytes {
		return "", nil, fmt.Errorf("%w %q: %w: %d bytes, over the limit of %d", ErrInvalidKey, key, ErrInvalidName, n, MaxNameBytes)
	}
	name, err = hex.DecodeString(encoded)
	if err != nil { // unreachable: every byte was checked above
		return "", nil, fmt.Errorf("%w %q: %v", ErrInvalidKey, key, err)
	}
	return prefix, name, nil
}
