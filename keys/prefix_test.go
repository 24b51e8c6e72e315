package keys

import (
	"errors"
	"strings"
	"testing"
)

func TestNewStemRejectsBadPrefixes(t *testing.T) {
	long := strings.Repeat("a", MaxPrefixBytes+1)
	tests := []struct {
		name   string
		prefix string
		want   string // the whole error message
	}{
		// rule: not empty
		{"empty", "", `keys: invalid prefix: empty`},
		// rule: at most 128 bytes (checked before any byte)
		{"one byte over", long, `keys: invalid prefix: 129 bytes, over the limit of 128`},
		{"over, with a bad byte", " " + long, `keys: invalid prefix: 130 bytes, over the limit of 128`},
		// a prefix at the limit is quoted: only inputs over it are not echoed
		{"at the limit, with a bad byte", long[:MaxPrefixBytes-1] + " ",
			`keys: invalid prefix "` + long[:MaxPrefixBytes-1] + ` ": byte ' ' (0x20) at offset 127 is not allowed (only A-Z a-z 0-9 . _ - /)`},
		// rule: only A-Z a-z 0-9 . _ - /
		{"space", "run 1", `keys: invalid prefix "run 1": byte ' ' (0x20) at offset 3 is not allowed (only A-Z a-z 0-9 . _ - /)`},
		{"colon", "kv:run", `keys: invalid prefix "kv:run": byte ':' (0x3a) at offset 2 is not allowed (only A-Z a-z 0-9 . _ - /)`},
		{"backslash", `kv\run`, `keys: invalid prefix "kv\\run": byte '\\' (0x5c) at offset 2 is not allowed (only A-Z a-z 0-9 . _ - /)`},
		{"quote", `kv'`, `keys: invalid prefix "kv'": byte '\'' (0x27) at offset 2 is not allowed (only A-Z a-z 0-9 . _ - /)`},
		{"plus", "a+b", `keys: invalid prefix "a+b": byte '+' (0x2b) at offset 1 is not allowed (only A-Z a-z 0-9 . _ - /)`},
		{"tilde", "~a", `keys: invalid prefix "~a": byte '~' (0x7e) at offset 0 is not allowed (only A-Z a-z 0-9 . _ - /)`},
		{"NUL", "kv\x00", `keys: invalid prefix "kv\x00": byte 0x00 at offset 2 is not allowed (only A-Z a-z 0-9 . _ - /)`},
		{"DEL", "kv\x7f", `keys: invalid prefix "kv\x7f": byte 0x7f at offset 2 is not allowed (only A-Z a-z 0-9 . _ - /)`},
		{"newline", "kv\n", `keys: invalid prefix "kv\n": byte 0x0a at offset 2 is not allowed (only A-Z a-z 0-9 . _ - /)`},
		{"UTF-8", "kv/é", `keys: invalid prefix "kv/é": byte 0xc3 at offset 3 is not allowed (only A-Z a-z 0-9 . _ - /)`},
		{"invalid UTF-8", "kv\xff", `keys: invalid prefix "kv\xff": byte 0xff at offset 2 is not allowed (only A-Z a-z 0-9 . _ - /)`},
		// rule: no leading '/'
		{"leading slash", "/kv", `keys: invalid prefix "/kv": leading '/' at offset 0`},
		{"only a slash", "/", `keys: invalid prefix "/": leading '/' at offset 0`},
		{"leading slash before a bad byte", "/a b", `keys: invalid prefix "/a b": leading '/' at offset 0`},
		// rule: no trailing '/'
		{"trailing slash", "kv/run/", `keys: invalid prefix "kv/run/": trailing '/' at offset 6`},
		// rule: no empty segment
		{"double slash", "kv//run", `keys: invalid prefix "kv//run": empty segment: '/' at offset 3 follows '/'`},
		{"triple slash", "kv///run", `keys: invalid prefix "kv///run": empty segment: '/' at offset 3 follows '/'`},
		// rule: no "." or ".." segment
		{"dot", ".", `keys: invalid prefix ".": segment "." at offset 0 (dot segments are not allowed)`},
		{"dot dot", "..", `keys: invalid prefix "..": segment ".." at offset 0 (dot segments are not allowed)`},
		{"dot inside", "kv/./run", `keys: invalid prefix "kv/./run": segment "." at offset 3 (dot segments are not allowed)`},
		{"dot dot inside", "kv/../run", `keys: invalid prefix "kv/../run": segment ".." at offset 3 (dot segments are not allowed)`},
		{"dot dot first", "../run", `keys: invalid prefix "../run": segment ".." at offset 0 (dot segments are not allowed)`},
		{"dot last", "kv/.", `keys: invalid prefix "kv/.": segment "." at offset 3 (dot segments are not allowed)`},
		// the first fault from the left wins
		{"dot segment before bad byte", "./a b", `keys: invalid prefix "./a b": segment "." at offset 0 (dot segments are not allowed)`},
		{"bad byte before dot segment", "a b/.", `keys: invalid prefix "a b/.": byte ' ' (0x20) at offset 1 is not allowed (only A-Z a-z 0-9 . _ - /)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stem, err := NewStem(tt.prefix)
			if err == nil {
				t.Fatalf("NewStem(%q) = %q, nil; want an error", tt.prefix, stem.Prefix())
			}
			if !errors.Is(err, ErrInvalidPrefix) {
				t.Errorf("NewStem(%q) error %q does not wrap ErrInvalidPrefix", tt.prefix, err)
			}
			if got := err.Error(); got != tt.want {
				t.Errorf("NewStem(%q) error\n got: %s\nwant: %s", tt.prefix, got, tt.want)
			}
			if stem != (Stem{}) {
				t.Errorf("NewStem(%q) returned a non-zero Stem %q with its error", tt.prefix, stem.Prefix())
			}
		})
	}
}

func TestNewStemAcceptsGoodPrefixes(t *testing.T) {
	for _, prefix := range []string{
		"a",
		"-",
		"_",
		"...",
		".hidden",
		"trailing.",
		"a..b",
		"kvshare/llama-3.1-8b/tp2_rank0",
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-",
		"v1",
		"kv/v1/run",
		strings.Repeat("a", MaxPrefixBytes),
		strings.Repeat("a/", MaxPrefixBytes/2-1) + "ab",
	} {
		stem, err := NewStem(prefix)
		if err != nil {
			t.Errorf("NewStem(%q): %v", prefix, err)
			continue
		}
		if got := stem.Prefix(); got != prefix {
			t.Errorf("NewStem(%q).Prefix() = %q", prefix, got)
		}
	}
}

// TestNewStemEveryByte tries each byte value as a one-byte prefix and as
// the middle of a three-byte one: only the allowed characters pass ('/'
// and '.' fail alone for their segment rules, and pass in the middle as
// "a/b" and "a.b").
func TestNewStemEveryByte(t *testing.T) {
	const allowed = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-/"
	for b := range 256 {
		c := byte(b)
		inSet := strings.IndexByte(allowed, c) >= 0

		_, err := NewStem(string([]byte{'a', c, 'b'}))
		if (err == nil) != inSet {
			t.Errorf("NewStem(%q): err = %v, want accepted = %v", []byte{'a', c, 'b'}, err, inSet)
		}
		if !inSet && err != nil && !strings.Contains(err.Error(), "at offset 1 is not allowed") {
			t.Errorf("NewStem(%q): error %q does not name offset 1", []byte{'a', c, 'b'}, err)
		}

		_, err = NewStem(string([]byte{c}))
		wantAlone := inSet && c != '/' && c != '.'
		if (err == nil) != wantAlone {
			t.Errorf("NewStem(%q): err = %v, want accepted = %v", []byte{c}, err, wantAlone)
		}
	}
}
