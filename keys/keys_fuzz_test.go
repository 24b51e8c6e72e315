package keys

import (
	"bytes"
	"errors"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// validPrefix is the prefix rules written a second way, as the oracle
// FuzzNewStem holds NewStem to.
func validPrefix(p string) bool {
	const allowed = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-/"
	if len(p) == 0 || len(p) > MaxPrefixBytes {
		return false
	}
	for i := range len(p) {
		if strings.IndexByte(allowed, p[i]) < 0 {
			return false
		}
	}
	for seg := range strings.SplitSeq(p, "/") {
		if seg == "" || seg == "." || seg == ".." || regexp.MustCompile(`^s1-[0-9a-f]{32}$`).MatchString(seg) {
			return false
		}
	}
	return true
}

// prefixSeeds returns the prefixes worth mutating from: valid ones, one at
// the length limit, and one breaking each rule.
func prefixSeeds() []string {
	return []string{
		"kv", "kvshare/llama-3.1-8b/tp2_rank0", "kv/v1", "...", "a..b",
		strings.Repeat("p", MaxPrefixBytes), strings.Repeat("p", MaxPrefixBytes+1),
		"", "a b", "kv\x00", "kv/é", "kv/s1-" + strings.Repeat("ab", ScopeDigestBytes), "kv/s1-" + strings.Repeat("ab", ScopeDigestBytes) + "0", "/kv", "kv/", "kv//run", ".", "..", "kv/./run", "kv/../run",
	}
}

func FuzzNewStem(f *testing.F) {
	for _, p := range prefixSeeds() {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, prefix string) {
		stem, err := NewStem(prefix)
		if want := validPrefix(prefix); (err == nil) != want {
			t.Fatalf("NewStem(%q) error = %v, want valid = %v", prefix, err, want)
		}
		if err != nil {
			if !errors.Is(err, ErrInvalidPrefix) {
				t.Fatalf("NewStem(%q) error %q does not wrap ErrInvalidPrefix", prefix, err)
			}
			if len(prefix) > 0 && len(prefix) <= MaxPrefixBytes && !strings.Contains(err.Error(), strconv.Quote(prefix)) {
				t.Fatalf("NewStem(%q) error %q does not quote the prefix", prefix, err)
			}
			if stem != (Stem{}) {
				t.Fatalf("NewStem(%q) returned a non-zero Stem with its error", prefix)
			}
			return
		}
		if got := stem.Prefix(); got != prefix {
			t.Fatalf("NewStem(%q).Prefix() = %q", prefix, got)
		}
		key, err := stem.Key([]byte{0x5a})
		if err != nil {
			t.Fatalf("Key under %q: %v", prefix, err)
		}
		if got, name, err := ParseKey(key); err != nil || got != stem || !bytes.Equal(name, []byte{0x5a}) {
			t.Fatalf("ParseKey(%q) = %q, %x, %v; want %q, 5a", key, got.Prefix(), name, err, prefix)
		}
	})
}

func FuzzKeyRoundTrip(f *testing.F) {
	for i, p := range prefixSeeds() {
		f.Add(p, bytes.Repeat([]byte{byte(i)}, i))
	}
	f.Add("kv", bytes.Repeat([]byte{0xff}, MaxNameBytes))
	f.Add("kv", bytes.Repeat([]byte{0xff}, MaxNameBytes+1))
	f.Add("kv/v1", []byte("/v1/"))
	f.Fuzz(func(t *testing.T, prefix string, name []byte) {
		stem, err := NewStem(prefix)
		if err != nil {
			return // FuzzNewStem covers refusals
		}
		key, err := stem.Key(name)
		appended := stem.AppendKey(nil, name)
		if len(appended) != stem.KeyLen(len(name)) || (err == nil) != (len(appended) > 0) || (err == nil && string(appended) != key) {
			t.Fatalf("AppendKey(%x) under %q = %q (KeyLen %d); Key = %q, %v", name, prefix, appended, stem.KeyLen(len(name)), key, err)
		}
		switch {
		case len(name) == 0:
			if !errors.Is(err, ErrInvalidName) || !strings.HasSuffix(err.Error(), ": empty") {
				t.Fatalf("Key(empty) = %q, %v; want an ErrInvalidName saying empty", key, err)
			}
			return
		case len(name) > MaxNameBytes:
			if !errors.Is(err, ErrInvalidName) || !strings.Contains(err.Error(), strconv.Itoa(len(name))+" bytes") {
				t.Fatalf("Key(%d bytes) = %q, %v; want an ErrInvalidName naming the length", len(name), key, err)
			}
			return
		}
		if err != nil {
			t.Fatalf("Key(%x) under %q: %v", name, prefix, err)
		}
		if len(key) != stem.KeyLen(len(name)) || len(key) > MaxKeyBytes {
			t.Fatalf("key %q is %d bytes; KeyLen says %d, MaxKeyBytes %d", key, len(key), stem.KeyLen(len(name)), MaxKeyBytes)
		}
		gotStem, gotName, err := ParseKey(key)
		if err != nil {
			t.Fatalf("ParseKey(%q): %v", key, err)
		}
		if gotStem != stem || !bytes.Equal(gotName, name) {
			t.Fatalf("ParseKey(%q) = %q, %x; want %q, %x", key, gotStem.Prefix(), gotName, prefix, name)
		}
		batch, err := stem.Keys(nil, [][]byte{name, name})
		if err != nil || len(batch) != 2 || batch[0] != key || batch[1] != key {
			t.Fatalf("Keys(name, name) = %q, %v; want twice %q", batch, err, key)
		}
	})
}

func FuzzDistinctNames(f *testing.F) {
	f.Add("kv", []byte{0}, []byte{0})
	f.Add("kv", []byte{0}, []byte{0, 0})
	f.Add("kv", []byte{0x01, 0x23}, []byte{0x12, 0x30})
	f.Add("kv/v1", []byte("/v1/"), []byte("v1"))
	f.Add("kv", []byte("name"), []byte("Name"))
	f.Fuzz(func(t *testing.T, prefix string, a, b []byte) {
		stem, err := NewStem(prefix)
		if err != nil {
			return
		}
		ka, errA := stem.Key(a)
		kb, errB := stem.Key(b)
		if errA != nil || errB != nil {
			return // bad names: FuzzKeyRoundTrip covers them
		}
		if same := bytes.Equal(a, b); (ka == kb) != same {
			t.Fatalf("names %x and %x (equal: %v) give keys %q and %q", a, b, same, ka, kb)
		}
		batch, err := stem.Keys(nil, [][]byte{a, b})
		if err != nil || len(batch) != 2 || batch[0] != ka || batch[1] != kb {
			t.Fatalf("Keys(%x, %x) = %q, %v; want %q, %q", a, b, batch, err, ka, kb)
		}
	})
}

// scopedKey matches a key whose segment before its last "/v1/" is a
// scope segment: the keys ParseKey gives a scoped Stem.
var scopedKey = regexp.MustCompile(`/s1-[0-9a-f]{32}/v1/[0-9a-f]*$`)

func FuzzParseKey(f *testing.F) {
	for _, k := range []string{
		"kv/v1/00", "kv/run-1/v1/00ff10ab", "kv/v1/v1/01", "kv/v1/00/v1/",
		"", "kv/run", "/v1/00", "kv//v1/00", "kv/../v1/00", "kv/v1/", "kv/v1/0A", "kv/v1/abc",
		"kv/v1/ab/cd", "kv/v1/" + strings.Repeat("00", MaxNameBytes), "kv/v1/" + strings.Repeat("00", MaxNameBytes+1),
		"kv/s1-" + strings.Repeat("0a", ScopeDigestBytes) + "/v1/00", "s1-" + strings.Repeat("0a", ScopeDigestBytes) + "/v1/00",
		"/s1-" + strings.Repeat("0a", ScopeDigestBytes) + "/v1/00", "kv/s1-" + strings.Repeat("0A", ScopeDigestBytes) + "/v1/00",
		"kv/s1-" + strings.Repeat("0a", ScopeDigestBytes) + "/s1-" + strings.Repeat("0a", ScopeDigestBytes) + "/v1/00",
		strings.Repeat("p", MaxPrefixBytes) + "/s1-" + strings.Repeat("0a", ScopeDigestBytes) + "/v1/" + strings.Repeat("00", MaxNameBytes),
	} {
		f.Add(k)
	}
	f.Fuzz(func(t *testing.T, key string) {
		stem, name, err := ParseKey(key)
		if err != nil {
			if !errors.Is(err, ErrInvalidKey) {
				t.Fatalf("ParseKey(%q) error %q does not wrap ErrInvalidKey", key, err)
			}
			if stem != (Stem{}) || name != nil {
				t.Fatalf("ParseKey(%q) returned %q, %x with its error", key, stem.Prefix(), name)
			}
			return
		}
		prefix := stem.Prefix()
		if _, err := NewStem(prefix); err != nil {
			t.Fatalf("ParseKey(%q) accepted prefix %q that NewStem refuses: %v", key, prefix, err)
		}
		if digest, scoped := stem.Scope(); scoped != scopedKey.MatchString(key) || scoped && !strings.Contains(key, "/s1-"+digest.String()+"/v1/") {
			t.Fatalf("ParseKey(%q) gave scope %v, %v", key, digest, scoped)
		}
		again, err := stem.Key(name)
		if err != nil {
			t.Fatalf("ParseKey(%q) accepted name %x that Key refuses: %v", key, name, err)
		}
		if again != key {
			t.Fatalf("ParseKey(%q) = %q, %x, which encodes to %q", key, prefix, name, again)
		}
	})
}
