package keys

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"slices"
	"testing"
)

// scopeVectors is testdata/scope-vectors.json: the committed test
// vectors that pin version 1 of the scope encoding, its digest and the
// keys made under it, for every implementation (Go here, Python later).
type scopeVectors struct {
	FieldOrder []string `json:"field_order"`
	Scopes     []struct {
		Comment     string            `json:"comment"`
		Scope       map[string]string `json:"scope"`
		Encoding    string            `json:"encoding"`
		EncodingHex string            `json:"encoding_hex"`
		SHA256      string            `json:"sha256"`
		Digest      string            `json:"digest"`
		Keys        []vectorKey       `json:"keys"`
	} `json:"scopes"`
	UnscopedKeys []vectorKey `json:"unscoped_keys"`
	Refused      []struct {
		Comment  string `json:"comment"`
		Encoding string `json:"encoding"`
		Field    string `json:"field"`
	} `json:"refused"`
}

type vectorKey struct {
	Prefix  string `json:"prefix"`
	NameHex string `json:"name_hex"`
	Key     string `json:"key"`
}

// scopeOf builds the Scope a vector's fields name, every field given.
func scopeOf(t *testing.T, fields map[string]string) Scope {
	t.Helper()
	if len(fields) != len(scopeFields) {
		t.Fatalf("vector has %d fields, a scope %d", len(fields), len(scopeFields))
	}
	s, err := ScopeFromFields(fields)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// checkKey checks that stem makes the vector's key of its name, and
// that ParseKey takes the key back apart into stem and the name.
func checkKey(t *testing.T, stem Stem, v vectorKey) {
	t.Helper()
	name, err := hex.DecodeString(v.NameHex)
	if err != nil {
		t.Fatal(err)
	}
	key, err := stem.Key(name)
	if err != nil || key != v.Key {
		t.Errorf("key of %s under %q = %q, %v; want %q", v.NameHex, v.Prefix, key, err, v.Key)
	}
	back, backName, err := ParseKey(v.Key)
	if err != nil || back != stem || !bytes.Equal(backName, name) {
		t.Errorf("ParseKey(%q) = %q, %x, %v", v.Key, back.Prefix(), backName, err)
	}
}

func TestScopeVectors(t *testing.T) {
	data, err := os.ReadFile("testdata/scope-vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var vs scopeVectors
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&vs); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(vs.FieldOrder, ScopeFieldNames()) {
		t.Fatalf("field_order %q, the encoding's %q", vs.FieldOrder, ScopeFieldNames())
	}
	if len(vs.Scopes) < 4 || len(vs.UnscopedKeys) == 0 || len(vs.Refused) == 0 {
		t.Fatalf("the vectors lost cases: %d scopes, %d unscoped keys, %d refused", len(vs.Scopes), len(vs.UnscopedKeys), len(vs.Refused))
	}
	digests := map[string]bool{}
	for _, v := range vs.Scopes {
		t.Run(v.Comment, func(t *testing.T) {
			s := scopeOf(t, v.Scope)
			text, err := s.MarshalText()
			if err != nil || string(text) != v.Encoding || hex.EncodeToString(text) != v.EncodingHex {
				t.Fatalf("MarshalText = %q, %v; want %q (hex %s)", text, err, v.Encoding, v.EncodingHex)
			}
			if back, err := ParseScope(v.Encoding); err != nil || back != s {
				t.Fatalf("ParseScope = %+v, %v", back, err)
			}
			sum := sha256.Sum256(text)
			d, err := s.Digest()
			if err != nil || hex.EncodeToString(sum[:]) != v.SHA256 || d.String() != v.Digest || v.SHA256[:32] != v.Digest {
				t.Fatalf("Digest = %v, %v; want %s, the first half of %s", d, err, v.Digest, v.SHA256)
			}
			if digests[v.Digest] {
				t.Fatalf("digest %s twice", v.Digest)
			}
			digests[v.Digest] = true
			for _, k := range v.Keys {
				stem, err := NewScopedStem(k.Prefix, s)
				if err != nil {
					t.Fatal(err)
				}
				checkKey(t, stem, k)
			}
		})
	}
	for _, k := range vs.UnscopedKeys {
		checkKey(t, mustStem(t, k.Prefix), k)
	}
	for _, r := range vs.Refused {
		s, err := ParseScope(r.Encoding)
		var se *ScopeError
		if err == nil || !errors.Is(err, ErrInvalidScope) || errors.As(err, &se) != (r.Field != "") || se != nil && se.Field != r.Field {
			t.Errorf("%s: ParseScope = %+v, %v; want a refusal naming field %q", r.Comment, s, err, r.Field)
		}
	}
}
