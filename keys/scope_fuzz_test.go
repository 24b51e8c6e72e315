package keys

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

func FuzzParseScope(f *testing.F) {
	good, err := exampleScope().MarshalText()
	if err != nil {
		f.Fatal(err)
	}
	g := string(good)
	for _, seed := range []string{
		g, "", "kvscope1;", "kvscope2;" + g[9:], strings.Replace(g, ";32:", ";032:", 1),
		strings.Replace(g, ",2:16,", ",3:016,", 1), strings.Replace(g, ",2:16,", ",10:4294967296,", 1),
		strings.Replace(g, ",2:16,", ",10:4294967295,", 1), g + "0:,", strings.TrimSuffix(g, ","),
		strings.Replace(g, ",4:fp16,", ",5:fp16\x00,", 1), strings.Replace(g, ",4:fp16,", ",4:fp\xff6,", 1),
		strings.Replace(g, ",0:,2:16,", ",4:int4,2:16,", 1),
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, text string) {
		s, err := ParseScope(text)
		if err != nil {
			if !errors.Is(err, ErrInvalidScope) || s != (Scope{}) {
				t.Fatalf("ParseScope(%q) = %+v, %v; want the zero Scope and ErrInvalidScope", text, s, err)
			}
			return
		}
		again, err := s.MarshalText()
		if err != nil || string(again) != text {
			t.Fatalf("ParseScope(%q) = %+v, which encodes to %q, %v", text, s, again, err)
		}
		if !utf8.ValidString(text) {
			t.Fatalf("ParseScope accepted text that is not UTF-8: %q", text)
		}
	})
}

// FuzzScopedKeyRoundTrip builds a scope from every field, and, when it
// is valid, checks its encoding parses back to it and a key under it
// parses back to its prefix, digest and name.
func FuzzScopedKeyRoundTrip(f *testing.F) {
	s := exampleScope()
	f.Add("kv", []byte("row-0"), s.Model, s.Revision, s.Adapter, s.KVDType, s.Quantization,
		s.TokensPerBlock, s.KVHeads, s.HeadDim, s.FirstLayer, s.Layers, s.TPRank, s.TPSize, s.PPRank, s.PPSize,
		s.HashAlgorithm, s.HashSeed, s.Tenant)
	f.Add("kv/v1", []byte{0}, "m", "r", "a", "int4", "q", uint32(1), uint32(1), uint32(1), uint32(1<<32-1), uint32(1),
		uint32(3), uint32(4), uint32(0), uint32(1), "h", "", "t")
	f.Add("kv", []byte{0}, "m\n", "", "", "", "", uint32(0), uint32(0), uint32(0), uint32(0), uint32(0),
		uint32(1), uint32(1), uint32(0), uint32(0), "", "\xff", strings.Repeat("t", MaxScopeFieldBytes+1))
	f.Fuzz(func(t *testing.T, prefix string, name []byte, model, revision, adapter, dtype, quant string,
		tokens, heads, dim, first, layers, tpRank, tpSize, ppRank, ppSize uint32, algo, seed, tenant string) {
		s := Scope{Model: model, Revision: revision, Adapter: adapter, KVDType: dtype, Quantization: quant,
			TokensPerBlock: tokens, KVHeads: heads, HeadDim: dim, FirstLayer: first, Layers: layers,
			TPRank: tpRank, TPSize: tpSize, PPRank: ppRank, PPSize: ppSize, HashAlgorithm: algo, HashSeed: seed, Tenant: tenant}
		text, err := s.MarshalText()
		if verr := s.Validate(); (err == nil) != (verr == nil) {
			t.Fatalf("MarshalText error %v, Validate %v", err, verr)
		}
		if err != nil {
			if !errors.Is(err, ErrInvalidScope) || text != nil {
				t.Fatalf("MarshalText(%+v) = %q, %v", s, text, err)
			}
			return
		}
		if !utf8.Valid(text) {
			t.Fatalf("encoding %q is not UTF-8", text)
		}
		back, err := ParseScope(string(text))
		if err != nil || back != s {
			t.Fatalf("ParseScope(%q) = %+v, %v; want %+v", text, back, err, s)
		}
		stem, err := NewScopedStem(prefix, s)
		if err != nil {
			if _, perr := NewStem(prefix); perr == nil {
				t.Fatalf("NewScopedStem(%q) refused a prefix NewStem takes: %v", prefix, err)
			}
			return
		}
		key, err := stem.Key(name)
		if err != nil {
			return // FuzzKeyRoundTrip covers bad names
		}
		digest, _ := s.Digest()
		if len(key) > MaxKeyBytes || len(key) != stem.KeyLen(len(name)) || !strings.Contains(key, "/s1-"+digest.String()+"/v1/") {
			t.Fatalf("key %q (%d bytes) under digest %v", key, len(key), digest)
		}
		got, gotName, err := ParseKey(key)
		gotDigest, scoped := got.Scope()
		if err != nil || got != stem || got.Prefix() != prefix || !scoped || gotDigest != digest || !bytes.Equal(gotName, name) {
			t.Fatalf("ParseKey(%q) = %q %v %v, %x, %v", key, got.Prefix(), gotDigest, scoped, gotName, err)
		}
	})
}
