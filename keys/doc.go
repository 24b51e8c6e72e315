// Package keys turns row names into store keys. It owns kvshare's key
// format: the rules a key prefix must follow, the way a name is written
// after it, and the inverse for tools. It imports only the standard
// library.
//
// A [Stem] is a prefix checked once by [NewStem], or a prefix under a
// [Scope] (the facts that make KV blocks interchangeable: model,
// revision, dtype, layout, hashing, tenant) by [NewScopedStem], which
// folds the scope's [Scope.Digest] into every key. [Stem.AppendKey]
// writes a key into a caller's buffer, allocating nothing beyond growing
// it: a Stem is the key maker the backend hands every driver call.
// [Stem.Key] and [Stem.Keys] build key strings, and [ParseKey] takes a
// key apart again. The zero Stem makes no keys.
//
// # Key grammar
//
// In ABNF (RFC 5234; quoted strings are case-sensitive here):
//
//	key      = prefix [ scope ] "/v1/" name-hex ; at most MaxKeyBytes (1192)
//	scope    = "/s1-" 32hexdig                ; the scope's digest
//	prefix   = segment *( "/" segment )       ; 1 to MaxPrefixBytes (128) bytes
//	segment  = 1*( ALPHA / DIGIT / "." / "_" / "-" )
//	                       ; but not ".", "..", nor "s1-" 32hexdig
//	name-hex = 1*512( 2hexdig )               ; the name, two digits a byte
//	hexdig   = DIGIT / %x61-66                ; 0-9 a-f, lowercase only
//
// The name is 1 to [MaxNameBytes] (512) bytes, each byte written as two
// lowercase hex digits, high nibble first (what [encoding/hex] writes),
// so a key is len(prefix) + 4 + 2*len(name) bytes long, 36 more under a
// scope ([Stem.KeyLen]). Equal names give byte-equal keys and distinct
// names distinct keys. A scope's canonical encoding ([Scope.MarshalText],
// [ParseScope]) is versioned and pinned by testdata/scope-vectors.json.
//
// # Prefix rules
//
// [NewStem] refuses a prefix that
//
//   - is empty;
//   - is longer than [MaxPrefixBytes] bytes;
//   - holds a byte other than A-Z, a-z, 0-9, '.', '_', '-' and '/';
//   - starts with '/' or ends with '/';
//   - has an empty segment (two '/' in a row);
//   - has a segment that is "." or "..", or of a scope's form.
//
// Its error wraps [ErrInvalidPrefix] and names the first rule broken: the
// length rules first, then the first offending byte from the left, with
// its offset (counted in bytes from 0). [ParseKey] checks a key's prefix
// by the same rules and refuses uppercase hex digits. A prefix is
// case-sensitive and never normalized.
//
// Why: docs/design/keys.md. Examples, limits and allocations: the
// module's README.md.
package keys
