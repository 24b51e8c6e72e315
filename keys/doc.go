// Package keys turns row names into store keys. It owns the key format of
// kvshare: the rules a key prefix must follow, the way a name is written
// after it, and the inverse for tools. It imports only the standard
// library.
//
// A lease holder names each row with opaque bytes (a hash of the tokens
// the row holds, say). The backend needs one store key per row. A [Stem]
// is a prefix checked once by [NewStem]; [Stem.AppendKey] writes a key
// into a caller's buffer (the data path: a Stem is the key maker the
// backend hands every driver call), [Stem.Key] and its batch form
// [Stem.Keys] build key strings, and [ParseKey] takes a key apart again.
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
// The name is 1 to [MaxNameBytes] (512) bytes, written in order, each byte
// as two lowercase hex digits, high nibble first (what [encoding/hex]
// writes). So a key is len(prefix) + 4 + 2*len(name) bytes long
// ([Stem.KeyLen]).
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
// its offset (counted in bytes from 0). [ParseKey] checks the prefix of a
// key by the same rules.
//
// # Decisions
//
// The design gave "stem + hex(name)" and a versioned format; the rest was
// decided here.
//
//   - The version is a path segment, "v1", between the prefix and the
//     name. A later format gets another segment, and the prefix rules stay
//     the same. Hex has no '/', so the separator of a key is its last
//     "/v1/"; a prefix may itself contain a "v1" segment.
//   - Lowercase hex only. Each name has exactly one encoding, so equal
//     names give byte-equal keys, distinct names distinct keys, and a key
//     [ParseKey] accepts is rebuilt byte for byte by [NewStem] and
//     [Stem.Key]. ParseKey refuses uppercase digits rather than accept a
//     second spelling of the same name.
//   - Prefix bytes are the ones every store, file system, URL and shell
//     carries unescaped, and C strings carry (no NUL). No dot segments, no
//     empty segments, no '/' at either end: a tool that mirrors keys into
//     paths, or cleans them as paths, would otherwise merge distinct keys.
//     A prefix is case-sensitive and never normalized: "Run" and "run" are
//     two prefixes. '.' is special in regular expressions; quote a prefix
//     (regexp.QuoteMeta) before handing it to a store's remove-by-regex.
//   - Names are never decoded on the data path; only [ParseKey] decodes,
//     for tools and tests.
//   - The zero [Stem] makes no keys: [Stem.Key] and [Stem.Keys] return an
//     error wrapping [ErrInvalidPrefix] (Keys even for no names), so a
//     Stem field someone forgot to set fails loudly instead of writing
//     keys with no prefix.
//   - [Stem.KeyLen] returns 0, never a key's length, where Key would fail
//     for every name of that length.
//   - [Stem.Keys] checks every name before it builds anything, so a bad
//     name leaves dst as it was. It writes all the key bytes of a call into
//     one exactly sized buffer (one allocation) and returns strings that
//     share it (made with [unsafe.String]; the buffer is never written
//     after). Holding one key keeps the whole buffer alive.
//   - [Stem.Key] makes one allocation, the key itself. [Stem.AppendKey]
//     makes none beyond growing dst, and appends nothing where Key would
//     fail, so that [Stem.KeyLen] stays exact for it (0 for those names):
//     it is the form drivers call, and a driver cannot take an error
//     back from deep inside its data path.
//   - Hex is written with a table of digit pairs, four name bytes per
//     64-bit store, instead of encoding/hex: the same bytes (a test and a
//     fuzz target compare the two) in about half the time, and key
//     building is the largest part of a backend's cost per row
//     (go test -bench AppendHex compares them in the same run).
//   - Errors never echo an input over its length limit; they give its
//     length instead.
//   - The tests use only the standard library's testing package (not
//     testify, the project's usual choice) so that go.mod requires nothing,
//     tests included: `go mod graph` shows no module edge (only the go and
//     toolchain lines every module has).
//
// # Equivalent mutants
//
// go run mage.go mutate (mutation testing) counts these mutants as
// equivalent, not lived: no test can tell them from the code, because
// nothing observable differs.
//
//   - `hexcode.go` in `appendHex`: `len(src) >= 4` (CONDITIONALS_BOUNDARY):
//     with > a name's last four bytes go through the byte-at-a-time loop
//     instead of the word loop, which writes the same eight digits.
//   - `hexcode.go` in `grow`: `cap(dst)-len(dst) >= n` (CONDITIONALS_BOUNDARY):
//     with > a dst with room for exactly n bytes takes the append branch,
//     and append of n bytes into exactly n bytes of room neither allocates
//     nor moves dst: the same array, the same length.
package keys
