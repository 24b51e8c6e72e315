package keys

import (
	"crypto/sha256"
	"encoding/hex"
)

// ScopeDigestBytes is the length of a [ScopeDigest]: 128 bits.
const ScopeDigestBytes = 16

// ScopeDigest names a [Scope] in its keys: the first [ScopeDigestBytes]
// bytes of the SHA-256 of the scope's canonical encoding. The zero
// ScopeDigest is no scope's (finding a scope with it is as hard as
// inverting SHA-256).
type ScopeDigest [ScopeDigestBytes]byte

// String is the digest in lowercase hex: 32 digits.
func (d ScopeDigest) String() string { return hex.EncodeToString(d[:]) }

// Digest returns the digest of s: SHA-256 of [Scope.MarshalText]'s
// bytes, truncated to its first 16 bytes. Two different scopes share a
// digest with probability 2⁻¹²⁸; among n scopes, some two do with
// probability at most n²/2¹²⁹. An invalid scope gives
// [Scope.Validate]'s error and the zero digest.
func (s Scope) Digest() (ScopeDigest, error) {
	text, err := s.MarshalText()
	if err != nil {
		return ScopeDigest{}, err
	}
	sum := sha256.Sum256(text)
	return ScopeDigest(sum[:ScopeDigestBytes]), nil
}
