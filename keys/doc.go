// Package keys turns row names into store keys. It owns kvshare's key
// format: the rules a key prefix must follow, the way a name is written
// after it, and the inverse for tools. It imports only the standard
// library.
//
// A [Stem] is a prefix checked once by [NewStem]. [Stem.AppendKey] writes
// a key into a caller's buffer, allocating nothing beyond growing it: a
// Stem is the key maker the backend hands every driver call.
// [Stem.Key] and [Stem.Keys] build key strings, and [ParseKey] takes a
// key apart again (the only place a name is decoded). The zero Stem
// makes no keys.
//
// # Key grammar
//
// In ABNF (RFC 5234; quoted strings are case-sensitive here):
//
//	key      = prefix "/v1/" name-hex         ; at most MaxKeyBytes (1156) bytes
//	prefix   = segment *( "/" segment )       ; 1 to MaxPrefixBytes (128) bytes
//	segment  = 1*( ALPHA / DIGIT / "." / "_" / "-" )
//	                                          ; but not "." and not ".."
//	name-hex = 1*512( 2hexdig )               ; the name, two digits a byte
//	hexdig   = DIGIT / %x61-66                ; 0-9 a-f, lowercase only
//
// The name is 1 to [MaxNameBytes] (512) bytes, each byte written as two
// lowercase hex digits, high nibble first (what [encoding/hex] writes),
// so a key is len(prefix) + 4 + 2*len(name) bytes long ([Stem.KeyLen]).
// Equal names give byte-equal keys and distinct names distinct keys.
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
//   - has a segment that is "." or "..".
//
// Its error wraps [ErrInvalidPrefix] and names the first rule broken: the
// length rules first, then the first offending byte from the left, with
// its offset (counted in bytes from 0). [ParseKey] checks a key's prefix
// by the same rules and refuses uppercase hex digits. A prefix is
// case-sensitive and never normalized.
//
// Why the format is what it is, and what each function allocates:
// docs/design.md (section "Keys"). Examples and a table of the limits:
// the module's README.md.
package keys
