package keys

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func TestParseKey(t *testing.T) {
	tests := []struct {
		key        string
		wantPrefix string
		wantName   []byte
	}{
		{"kv/v1/00", "kv", []byte{0}},
		{"kv/run-1/v1/00ff10ab", "kv/run-1", []byte{0x00, 0xff, 0x10, 0xab}},
		{"kv/v1/v1/01", "kv/v1", []byte{1}},
		{"v1/v1/v1/v1/0a", "v1/v1/v1", []byte{0x0a}},
		{"a.b/c_d/v1/48692f", "a.b/c_d", []byte("Hi/")},
		{"x/v1/" + strings.Repeat("fe", MaxNameBytes), "x", bytes.Repeat([]byte{0xfe}, MaxNameBytes)},
		// the longest key there is: MaxKeyBytes bytes exactly
		{strings.Repeat("p", MaxPrefixBytes) + "/v1/" + strings.Repeat("07", MaxNameBytes),
			strings.Repeat("p", MaxPrefixBytes), bytes.Repeat([]byte{7}, MaxNameBytes)},
	}
	for _, tt := range tests {
		stem, name, err := ParseKey(tt.key)
		if err != nil {
			t.Errorf("ParseKey(%q): %v", tt.key, err)
			continue
		}
		if _, scoped := stem.Scope(); scoped {
			t.Errorf("ParseKey(%q) gave a scoped stem", tt.key)
		}
		if prefix := stem.Prefix(); prefix != tt.wantPrefix || !bytes.Equal(name, tt.wantName) {
			t.Errorf("ParseKey(%q) = %q, %x; want %q, %x", tt.key, prefix, name, tt.wantPrefix, tt.wantName)
		}
	}
}

// digestHex is 32 lowercase hex digits: a scope segment's digest.
const digestHex = "00112233445566778899aabbccddeeff"

func TestParseKeyRejectsBadKeys(t *testing.T) {
	tests := []struct {
		name       string
		key        string
		want       string // the whole error message
		wantPrefix bool   // the error also wraps ErrInvalidPrefix
		wantName   bool   // the error also wraps ErrInvalidName
	}{
		{"empty", "",
			`keys: invalid key "": no "/v1/" separator before the name`, false, false},
		{"no separator", "kv/run",
			`keys: invalid key "kv/run": no "/v1/" separator before the name`, false, false},
		{"other version", "kv/v2/00",
			`keys: invalid key "kv/v2/00": no "/v1/" separator before the name`, false, false},
		{"uppercase version", "kv/V1/00",
			`keys: invalid key "kv/V1/00": no "/v1/" separator before the name`, false, false},
		{"too long", "kv/v1/" + strings.Repeat("0", MaxKeyBytes),
			`keys: invalid key: 1198 bytes, over the limit of 1192`, false, false},
		{"scope segment alone", "s1-" + digestHex + "/v1/00",
			`keys: invalid key "s1-` + digestHex + `/v1/00": keys: invalid prefix: segment "s1-` + digestHex + `" at offset 0 (the form of a scope segment is reserved)`, true, false},
		{"scope without a prefix", "/s1-" + digestHex + "/v1/00",
			`keys: invalid key "/s1-` + digestHex + `/v1/00": keys: invalid prefix: empty`, true, false},
		{"two scope segments", "kv/s1-" + digestHex + "/s1-" + digestHex + "/v1/00",
			`keys: invalid key "kv/s1-` + digestHex + `/s1-` + digestHex + `/v1/00": keys: invalid prefix: segment "s1-` + digestHex + `" at offset 3 (the form of a scope segment is reserved)`, true, false},
		{"scope segment inside the prefix", "kv/s1-" + digestHex + "/run/v1/00",
			`keys: invalid key "kv/s1-` + digestHex + `/run/v1/00": keys: invalid prefix: segment "s1-` + digestHex + `" at offset 3 (the form of a scope segment is reserved)`, true, false},
		{"prefix empty", "/v1/00",
			`keys: invalid key "/v1/00": keys: invalid prefix: empty`, true, false},
		{"prefix too long", strings.Repeat("p", MaxPrefixBytes+1) + "/v1/00",
			`keys: invalid key "` + strings.Repeat("p", MaxPrefixBytes+1) + `/v1/00": keys: invalid prefix: 129 bytes, over the limit of 128`, true, false},
		{"prefix bad byte", "k v/v1/00",
			`keys: invalid key "k v/v1/00": keys: invalid prefix: byte ' ' (0x20) at offset 1 is not allowed (only A-Z a-z 0-9 . _ - /)`, true, false},
		{"prefix leading slash", "/kv/v1/00",
			`keys: invalid key "/kv/v1/00": keys: invalid prefix: leading '/' at offset 0`, true, false},
		{"prefix trailing slash", "kv//v1/00",
			`keys: invalid key "kv//v1/00": keys: invalid prefix: trailing '/' at offset 2`, true, false},
		{"prefix empty segment", "a//b/v1/00",
			`keys: invalid key "a//b/v1/00": keys: invalid prefix: empty segment: '/' at offset 2 follows '/'`, true, false},
		{"prefix dot dot", "kv/../v1/00",
			`keys: invalid key "kv/../v1/00": keys: invalid prefix: segment ".." at offset 3 (dot segments are not allowed)`, true, false},
		{"name empty", "kv/v1/",
			`keys: invalid key "kv/v1/": keys: invalid name: empty`, false, true},
		{"name empty after a v1 segment", "kv/v1/00/v1/",
			`keys: invalid key "kv/v1/00/v1/": keys: invalid name: empty`, false, true},
		{"uppercase hex", "kv/v1/0A",
			`keys: invalid key "kv/v1/0A": byte 'A' (0x41) at offset 7 is not a lowercase hex digit (0-9 a-f)`, false, false},
		{"not hex", "kv/v1/0g",
			`keys: invalid key "kv/v1/0g": byte 'g' (0x67) at offset 7 is not a lowercase hex digit (0-9 a-f)`, false, false},
		{"slash in name", "kv/v1/ab/cd",
			`keys: invalid key "kv/v1/ab/cd": byte '/' (0x2f) at offset 8 is not a lowercase hex digit (0-9 a-f)`, false, false},
		{"control byte in name", "kv/v1/ab\x00",
			`keys: invalid key "kv/v1/ab\x00": byte 0x00 at offset 8 is not a lowercase hex digit (0-9 a-f)`, false, false},
		{"odd digits", "kv/v1/abc",
			`keys: invalid key "kv/v1/abc": odd number of hex digits (3) in the name`, false, false},
		{"name too long", "kv/v1/" + strings.Repeat("00", MaxNameBytes+1),
			`keys: invalid key "kv/v1/` + strings.Repeat("00", MaxNameBytes+1) + `": keys: invalid name: 513 bytes, over the limit of 512`, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stem, name, err := ParseKey(tt.key)
			if err == nil {
				t.Fatalf("ParseKey(%q) = %q, %x, nil; want an error", tt.key, stem.Prefix(), name)
			}
			if !errors.Is(err, ErrInvalidKey) {
				t.Errorf("error %q does not wrap ErrInvalidKey", err)
			}
			if got := errors.Is(err, ErrInvalidPrefix); got != tt.wantPrefix {
				t.Errorf("errors.Is(err, ErrInvalidPrefix) = %v, want %v", got, tt.wantPrefix)
			}
			if got := errors.Is(err, ErrInvalidName); got != tt.wantName {
				t.Errorf("errors.Is(err, ErrInvalidName) = %v, want %v", got, tt.wantName)
			}
			if err.Error() != tt.want {
				t.Errorf("error\n got: %s\nwant: %s", err, tt.want)
			}
			if stem != (Stem{}) || name != nil {
				t.Errorf("ParseKey returned %q, %x with its error", stem.Prefix(), name)
			}
		})
	}
}

func TestParseKeyNameIsFresh(t *testing.T) {
	key := "kv/v1/0102"
	_, name, err := ParseKey(key)
	if err != nil {
		t.Fatal(err)
	}
	name[0] = 0xff
	_, again, err := ParseKey(key)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again, []byte{1, 2}) {
		t.Errorf("second parse gave %x", again)
	}
}

// Only a segment of exactly the scope segment's form is reserved: near
// misses are ordinary prefix segments, and their keys parse unscoped.
func TestScopeSegmentForm(t *testing.T) {
	for _, seg := range []string{
		"s1-" + digestHex[:31], "s1-" + digestHex + "0", "s1-g" + digestHex[1:], "s1-" + digestHex[:1] + "g" + digestHex[2:],
		"s1-" + digestHex[:31] + "g", "s1-" + strings.ToUpper(digestHex), "s2-" + digestHex, "S1-" + digestHex,
		"s1_" + digestHex, "x1-" + digestHex, "s1-" + digestHex[:30] + "/x",
	} {
		prefix := "kv/" + seg
		if _, err := NewStem(prefix); err != nil {
			t.Errorf("NewStem(%q): %v", prefix, err)
		}
		stem, _, err := ParseKey(prefix + "/v1/00")
		if _, scoped := stem.Scope(); err != nil || scoped || stem.Prefix() != prefix {
			t.Errorf("ParseKey(%q) = %q scoped %v, %v; want the unscoped prefix", prefix+"/v1/00", stem.Prefix(), scoped, err)
		}
	}
	if _, err := NewStem("kv/s1-" + digestHex); !errors.Is(err, ErrInvalidPrefix) {
		t.Errorf("NewStem accepted a scope segment in a prefix: %v", err)
	}
}

// The longest key there is, MaxKeyBytes exactly, is a scoped one, and
// parses.
func TestParseTheLongestKey(t *testing.T) {
	key := strings.Repeat("p", MaxPrefixBytes) + "/s1-" + digestHex + "/v1/" + strings.Repeat("07", MaxNameBytes)
	if len(key) != MaxKeyBytes {
		t.Fatalf("the longest key is %d bytes, MaxKeyBytes %d", len(key), MaxKeyBytes)
	}
	stem, name, err := ParseKey(key)
	digest, scoped := stem.Scope()
	if err != nil || !scoped || digest.String() != digestHex || len(name) != MaxNameBytes || stem.Prefix() != strings.Repeat("p", MaxPrefixBytes) {
		t.Fatalf("ParseKey(the longest key) = %q %v %v, %d bytes, %v", stem.Prefix(), digest, scoped, len(name), err)
	}
	if _, _, err := ParseKey(key + "07"); !errors.Is(err, ErrInvalidKey) {
		t.Fatalf("ParseKey of a key one byte over: %v", err)
	}
}
