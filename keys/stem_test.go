package keys

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"
	"unsafe"
)

// mustStem builds a Stem for a test or stops it.
func mustStem(t testing.TB, prefix string) Stem {
	t.Helper()
	s, err := NewStem(prefix)
	if err != nil {
		t.Fatalf("NewStem(%q): %v", prefix, err)
	}
	return s
}

func TestKey(t *testing.T) {
	tests := []struct {
		prefix string
		name   []byte
		want   string
	}{
		{"kv", []byte{0x00}, "kv/v1/00"},
		{"kv/run-1", []byte{0x00, 0xff, 0x10, 0xab}, "kv/run-1/v1/00ff10ab"},
		{"a.b/c_d", []byte("Hi/"), "a.b/c_d/v1/48692f"},
		{"kv/v1", []byte{0x01}, "kv/v1/v1/01"},
		{"x", bytes.Repeat([]byte{0xfe}, MaxNameBytes), "x/v1/" + strings.Repeat("fe", MaxNameBytes)},
	}
	for _, tt := range tests {
		s := mustStem(t, tt.prefix)
		got, err := s.Key(tt.name)
		if err != nil {
			t.Errorf("Stem(%q).Key(%x): %v", tt.prefix, tt.name, err)
			continue
		}
		if got != tt.want {
			t.Errorf("Stem(%q).Key(%x) = %q, want %q", tt.prefix, tt.name, got, tt.want)
		}
		if n := s.KeyLen(len(tt.name)); n != len(got) {
			t.Errorf("Stem(%q).KeyLen(%d) = %d, want %d", tt.prefix, len(tt.name), n, len(got))
		}
	}
}

func TestKeyDoesNotKeepTheName(t *testing.T) {
	s := mustStem(t, "kv")
	name := []byte{0x12, 0x34}
	key, err := s.Key(name)
	if err != nil {
		t.Fatal(err)
	}
	name[0] = 0xff
	if key != "kv/v1/1234" {
		t.Errorf("key changed with its name: %q", key)
	}
}

func TestKeyRejectsBadNames(t *testing.T) {
	s := mustStem(t, "kv")
	tests := []struct {
		name string
		in   []byte
		want string
	}{
		{"nil", nil, "keys: invalid name: empty"},
		{"empty", []byte{}, "keys: invalid name: empty"},
		{"one byte over", make([]byte, MaxNameBytes+1), "keys: invalid name: 513 bytes, over the limit of 512"},
		{"far over", make([]byte, 4096), "keys: invalid name: 4096 bytes, over the limit of 512"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			key, err := s.Key(tt.in)
			if err == nil {
				t.Fatalf("Key(%d bytes) = %q, nil; want an error", len(tt.in), key)
			}
			if !errors.Is(err, ErrInvalidName) {
				t.Errorf("error %q does not wrap ErrInvalidName", err)
			}
			if errors.Is(err, ErrInvalidPrefix) {
				t.Errorf("error %q wraps ErrInvalidPrefix", err)
			}
			if err.Error() != tt.want {
				t.Errorf("error\n got: %s\nwant: %s", err, tt.want)
			}
			if key != "" {
				t.Errorf("Key returned %q with its error", key)
			}
		})
	}
}

func TestKeyLen(t *testing.T) {
	s := mustStem(t, "kv/run")
	for n := 1; n <= MaxNameBytes; n++ {
		key, err := s.Key(make([]byte, n))
		if err != nil {
			t.Fatal(err)
		}
		if got := s.KeyLen(n); got != len(key) {
			t.Fatalf("KeyLen(%d) = %d, want %d", n, got, len(key))
		}
	}
	for _, n := range []int{0, -1, MaxNameBytes + 1, -1 << 62} {
		if got := s.KeyLen(n); got != 0 {
			t.Errorf("KeyLen(%d) = %d, want 0", n, got)
		}
	}
	if got := mustStem(t, strings.Repeat("p", MaxPrefixBytes)).KeyLen(MaxNameBytes); got != MaxKeyBytes-scopeSegmentBytes {
		t.Errorf("longest unscoped key is %d bytes, want MaxKeyBytes (%d) less a scope segment", got, MaxKeyBytes)
	}
	scoped, err := NewScopedStem(strings.Repeat("p", MaxPrefixBytes), exampleScope())
	if err != nil {
		t.Fatal(err)
	}
	key, err := scoped.Key(make([]byte, MaxNameBytes))
	if err != nil {
		t.Fatal(err)
	}
	if got := scoped.KeyLen(MaxNameBytes); got != MaxKeyBytes || len(key) != MaxKeyBytes {
		t.Errorf("longest scoped key is %d bytes (KeyLen %d), MaxKeyBytes is %d", len(key), got, MaxKeyBytes)
	}
}

func TestZeroStem(t *testing.T) {
	var s Stem
	if p := s.Prefix(); p != "" {
		t.Errorf("zero Stem Prefix() = %q", p)
	}
	if n := s.KeyLen(8); n != 0 {
		t.Errorf("zero Stem KeyLen(8) = %d, want 0", n)
	}
	const want = "keys: invalid prefix: zero Stem (build one with NewStem)"
	key, err := s.Key([]byte{1})
	if !errors.Is(err, ErrInvalidPrefix) || err.Error() != want {
		t.Errorf("zero Stem Key = %q, %v; want an error %q wrapping ErrInvalidPrefix", key, err, want)
	}
	dst := []string{"kept"}
	for _, names := range [][][]byte{nil, {{1}}, {{}}} {
		got, err := s.Keys(dst, names)
		if !errors.Is(err, ErrInvalidPrefix) || err.Error() != want {
			t.Errorf("zero Stem Keys(%d names) error = %v; want %q", len(names), err, want)
		}
		if !slices.Equal(got, dst) {
			t.Errorf("zero Stem Keys changed dst to %q", got)
		}
	}
}

func TestKeysMatchesKey(t *testing.T) {
	s := mustStem(t, "kv/batch")
	names := [][]byte{{0}, []byte("row-1"), bytes.Repeat([]byte{0xa5}, MaxNameBytes), {0xff, 0xee}, {0}}
	for _, dst := range [][]string{nil, {}, {"kept", "also kept"}, make([]string, 1, 64)} {
		before := slices.Clone(dst)
		got, err := s.Keys(dst, names)
		if err != nil {
			t.Fatalf("Keys: %v", err)
		}
		if len(got) != len(before)+len(names) {
			t.Fatalf("Keys returned %d keys, want %d", len(got), len(before)+len(names))
		}
		if !slices.Equal(got[:len(before)], before) {
			t.Errorf("Keys changed what dst held: %q, want %q", got[:len(before)], before)
		}
		for i, name := range names {
			want, err := s.Key(name)
			if err != nil {
				t.Fatal(err)
			}
			if k := got[len(before)+i]; k != want {
				t.Errorf("Keys key %d = %q, want %q", i, k, want)
			}
		}
	}
}

func TestKeysNoNames(t *testing.T) {
	s := mustStem(t, "kv")
	dst := make([]string, 2, 4)
	dst[0], dst[1] = "a", "b"
	for _, names := range [][][]byte{nil, {}} {
		got, err := s.Keys(dst, names)
		if err != nil {
			t.Fatalf("Keys(no names): %v", err)
		}
		if len(got) != 2 || unsafe.SliceData(got) != unsafe.SliceData(dst) {
			t.Errorf("Keys(no names) = %q, want dst itself", got)
		}
	}
}

func TestKeysRejectsBadNames(t *testing.T) {
	s := mustStem(t, "kv")
	good := []byte{1, 2}
	tests := []struct {
		name  string
		names [][]byte
		want  string
	}{
		{"empty at 3", [][]byte{good, good, good, {}, good}, "keys: invalid name: name 3: empty"},
		{"nil at 0", [][]byte{nil}, "keys: invalid name: name 0: empty"},
		{"long at 1", [][]byte{good, make([]byte, MaxNameBytes+1)}, "keys: invalid name: name 1: 513 bytes, over the limit of 512"},
		{"first of two named", [][]byte{good, make([]byte, 1000), nil}, "keys: invalid name: name 1: 1000 bytes, over the limit of 512"},
		{"last", [][]byte{good, good, nil}, "keys: invalid name: name 2: empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dst := make([]string, 1, 16)
			dst[0] = "kept"
			got, err := s.Keys(dst, tt.names)
			if err == nil {
				t.Fatalf("Keys = %q, nil; want an error", got)
			}
			if !errors.Is(err, ErrInvalidName) {
				t.Errorf("error %q does not wrap ErrInvalidName", err)
			}
			if err.Error() != tt.want {
				t.Errorf("error\n got: %s\nwant: %s", err, tt.want)
			}
			if len(got) != 1 || got[0] != "kept" {
				t.Errorf("Keys returned %q with its error, want dst as given", got)
			}
			if spare := dst[1:cap(dst)]; slices.ContainsFunc(spare, func(k string) bool { return k != "" }) {
				t.Errorf("Keys wrote into dst's spare capacity: %q", spare)
			}
		})
	}
}

// TestKeysShareOneBuffer checks the documented layout: the keys of one call
// lie back to back in one buffer.
func TestKeysShareOneBuffer(t *testing.T) {
	s := mustStem(t, "kv")
	got, err := s.Keys(nil, [][]byte{{1}, {2, 3}, make([]byte, 40), {4}})
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i < len(got); i++ {
		end := unsafe.Add(unsafe.Pointer(unsafe.StringData(got[i-1])), len(got[i-1]))
		if unsafe.Pointer(unsafe.StringData(got[i])) != end {
			t.Errorf("key %d does not start where key %d ends", i, i-1)
		}
	}
}

func TestAllocations(t *testing.T) {
	s := mustStem(t, "kvshare/run-1")
	names := make([][]byte, 256)
	for i := range names {
		names[i] = bytes.Repeat([]byte{byte(i)}, 32)
	}
	dst := make([]string, 0, len(names))
	buf := make([]byte, 0, MaxKeyBytes)
	tests := []struct {
		what string
		want float64
		f    func()
	}{
		{"Keys into dst with room", 1, func() { dst, _ = s.Keys(dst[:0], names) }},
		{"Keys into nil dst", 2, func() { _, _ = s.Keys(nil, names) }},
		{"Keys of no names", 0, func() { dst, _ = s.Keys(dst[:0], nil) }},
		{"Key", 1, func() { _, _ = s.Key(names[0]) }},
		{"AppendKey into a buffer with room", 0, func() { buf = s.AppendKey(buf[:0], names[0]) }},
	}
	for _, tt := range tests {
		if got := testing.AllocsPerRun(50, tt.f); got != tt.want {
			t.Errorf("%s: %v allocations, want %v", tt.what, got, tt.want)
		}
	}
}

func TestAppendKeyMatchesKey(t *testing.T) {
	names := [][]byte{{0}, {0xff, 0x10}, []byte("a/b"), bytes.Repeat([]byte{7}, MaxNameBytes)}
	for _, prefix := range []string{"kv", "kv/run-1", "a.b/c_d"} {
		s := mustStem(t, prefix)
		for _, name := range names {
			want, err := s.Key(name)
			if err != nil {
				t.Fatal(err)
			}
			got := s.AppendKey([]byte("head:"), name)
			if string(got) != "head:"+want {
				t.Errorf("Stem(%q).AppendKey(%x) = %q, want head:%q", prefix, name, got, want)
			}
			if n := s.KeyLen(len(name)); n != len(got)-len("head:") {
				t.Errorf("Stem(%q): KeyLen(%d) = %d, AppendKey appended %d", prefix, len(name), n, len(got)-len("head:"))
			}
			if bytes.IndexByte(got, 0) >= 0 {
				t.Errorf("Stem(%q).AppendKey(%x) holds a NUL byte", prefix, name)
			}
		}
	}
}

func TestAppendKeyAppendsNothingWithoutAKey(t *testing.T) {
	s := mustStem(t, "kv")
	cases := []struct {
		what string
		s    Stem
		name []byte
	}{
		{"empty name", s, nil},
		{"name over MaxNameBytes", s, make([]byte, MaxNameBytes+1)},
		{"zero Stem", Stem{}, []byte{1}},
	}
	for _, c := range cases {
		dst := []byte("head")
		got := c.s.AppendKey(dst, c.name)
		if string(got) != "head" {
			t.Errorf("%s: AppendKey appended %q, want nothing", c.what, got[4:])
		}
		if n := c.s.KeyLen(len(c.name)); n != 0 {
			t.Errorf("%s: KeyLen = %d, want 0", c.what, n)
		}
	}
}

// TestKeysGrowDst checks the documented growth of dst: with room for the
// new keys Keys appends in place; without, it returns a new slice with
// room for exactly those keys, holding a copy of dst, and leaves the
// caller's dst untouched.
func TestKeysGrowDst(t *testing.T) {
	s := mustStem(t, "kv")
	names := [][]byte{{1}, {2}, {3}}
	want := []string{"kv/v1/01", "kv/v1/02", "kv/v1/03"}
	tests := []struct {
		what     string
		len, cap int
		inPlace  bool
		wantCap  int
	}{
		{"room for exactly the new keys", 2, 5, true, 5},
		{"room for more", 2, 9, true, 9},
		{"one short", 2, 4, false, 5},
		{"room for fewer than dst holds", 4, 6, false, 7},
		{"full", 4, 4, false, 7},
	}
	for _, tt := range tests {
		t.Run(tt.what, func(t *testing.T) {
			dst := make([]string, tt.len, tt.cap)
			for i := range dst {
				dst[i] = "old"
			}
			got, err := s.Keys(dst, names)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got[:tt.len], dst) || !slices.Equal(got[tt.len:], want) {
				t.Errorf("Keys = %q, want dst's %d keys then %q", got, tt.len, want)
			}
			if inPlace := unsafe.SliceData(got) == unsafe.SliceData(dst); inPlace != tt.inPlace {
				t.Errorf("Keys appended in dst's array: %v, want %v", inPlace, tt.inPlace)
			}
			if cap(got) != tt.wantCap {
				t.Errorf("cap(Keys(...)) = %d, want %d", cap(got), tt.wantCap)
			}
			if !tt.inPlace && slices.ContainsFunc(dst[:cap(dst)][tt.len:], func(k string) bool { return k != "" }) {
				t.Errorf("Keys wrote into the caller's dst although it lacked room: %q", dst[:cap(dst)])
			}
		})
	}
}
