package conformance

import (
	"bytes"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const testPrefix = "kvshare-conformance/test/"

func TestSuiteKeys(t *testing.T) {
	k := suiteKeys{prefix: testPrefix}
	for name, want := range map[string]string{
		"a b":          "a%20b~~~~",
		"plain":        "plain~~~~~~~~~~",
		"a/b.c_d-E9":   "a/b.c_d-E9" + strings.Repeat("~", 20),
		"\x00":         "%00",
		"%":            "%25",
		"~":            "%7E",
		"\xff\xfe":     "%FF%FE",
		"nul\x00byte":  "nul%00byte" + strings.Repeat("~", 14),
		"per%cent":     "per%25cent" + strings.Repeat("~", 14),
		"with space":   "with%20space" + strings.Repeat("~", 18),
		"check/pick-1": "check/pick-1" + strings.Repeat("~", 24),
	} {
		assert.Equal(t, testPrefix+want, k.key(name), "%q", name)
	}
}

func TestSuiteKeysNoKey(t *testing.T) {
	k := suiteKeys{prefix: testPrefix}
	assert.Zero(t, k.KeyLen(0))
	assert.Zero(t, k.KeyLen(-1))
	assert.Zero(t, k.KeyLen(maxSuiteName+1))
	assert.Equal(t, len(testPrefix)+3*maxSuiteName, k.KeyLen(maxSuiteName))
	dst := []byte("kept")
	assert.Equal(t, "kept", string(k.AppendKey(dst, nil)))
	assert.Equal(t, "kept", string(k.AppendKey(dst, bytes.Repeat([]byte("x"), maxSuiteName+1))))
}

// TestSuiteKeysAllocs: with room in dst, AppendKey allocates nothing.
func TestSuiteKeysAllocs(t *testing.T) {
	k := suiteKeys{prefix: testPrefix}
	name := []byte("check/with space/%~\x00")
	dst := make([]byte, 0, k.KeyLen(len(name)))
	assert.Zero(t, testing.AllocsPerRun(100, func() { dst = k.AppendKey(dst[:0], name) }))
}

// TestSuiteKeysConcurrent builds keys from many goroutines at once, for
// the race detector; each gets the key built alone.
func TestSuiteKeysConcurrent(t *testing.T) {
	k := suiteKeys{prefix: testPrefix}
	want := k.key("shared name")
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				assert.Equal(t, want, string(k.AppendKey(nil, []byte("shared name"))))
			}
		})
	}
	wg.Wait()
}

// FuzzSuiteKeys holds the key maker to contract.KeyMaker's properties:
// exact KeyLen, no NUL, the prefix first, and injective (the name comes
// back from its key), with dst's contents kept.
func FuzzSuiteKeys(f *testing.F) {
	for _, s := range [][2]string{{"a", "b"}, {"a b", "a%20b"}, {"~", "%7E"}, {"x", "x~"}, {"\x00", ""}, {"ab", "ab"}} {
		f.Add([]byte(s[0]), []byte(s[1]))
	}
	k := suiteKeys{prefix: testPrefix}
	f.Fuzz(func(t *testing.T, a, b []byte) {
		ka, kb := keyOrNil(t, k, a), keyOrNil(t, k, b)
		if ka == nil || kb == nil {
			return
		}
		require.Equal(t, bytes.Equal(a, b), bytes.Equal(ka, kb), "names %q and %q, keys %q and %q", a, b, ka, kb)
	})
}

// keyOrNil returns the key of name after checking it, or nil when name
// has no key.
func keyOrNil(t *testing.T, k suiteKeys, name []byte) []byte {
	t.Helper()
	dst := k.AppendKey([]byte("dst"), name)
	require.Equal(t, "dst", string(dst[:3]), "AppendKey changed what dst held")
	key := dst[3:]
	n := k.KeyLen(len(name))
	require.Len(t, key, n, "KeyLen(%d) for name %q, key %q", len(name), name, key)
	if n == 0 {
		return nil
	}
	require.NotContains(t, string(key), "\x00")
	require.True(t, bytes.HasPrefix(key, []byte(testPrefix)))
	require.Equal(t, name, unescapeKey(t, key[len(testPrefix):]), "key %q", key)
	return key
}

// unescapeKey undoes the name part of a key: the fill dropped, each
// escape read back; it fails t on anything AppendKey never writes.
func unescapeKey(t *testing.T, part []byte) []byte {
	t.Helper()
	part = bytes.TrimRight(part, "~")
	var out []byte
	for i := 0; i < len(part); i++ {
		c := part[i]
		switch {
		case keySafe(c):
			out = append(out, c)
		case c == '%':
			require.Less(t, i+2, len(part), "a cut escape in %q", part)
			hi := strings.IndexByte(upperHex, part[i+1])
			lo := strings.IndexByte(upperHex, part[i+2])
			require.True(t, hi >= 0 && lo >= 0, "a bad escape in %q", part)
			out = append(out, byte(hi<<4|lo))
			i += 2
		default:
			t.Fatalf("byte %q at %d of %q is neither safe nor an escape", c, i, part)
		}
	}
	return out
}
