package keys

import (
	"bytes"
	"encoding/hex"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// exampleScope is a valid scope with every field set: the scope of the
// package's tests.
func exampleScope() Scope {
	return Scope{
		Model: "meta-llama/Llama-3.1-8B-Instruct", Revision: "0e9e39f249a16976918f6564b8830bc894c89659",
		Adapter: "", KVDType: "fp16", Quantization: "",
		TokensPerBlock: 16, KVHeads: 8, HeadDim: 128, FirstLayer: 0, Layers: 32,
		TPRank: 0, TPSize: 1, PPRank: 0, PPSize: 1,
		HashAlgorithm: "sha256-cbor", HashSeed: "0", Tenant: "",
	}
}

// scopeFaults is the Field of every *ScopeError in err, in order.
func scopeFaults(err error) []string {
	var errs []error
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		errs = joined.Unwrap()
	} else if err != nil {
		errs = []error{err}
	}
	var fields []string
	for _, e := range errs {
		var se *ScopeError
		if errors.As(e, &se) {
			fields = append(fields, se.Field)
		} else {
			fields = append(fields, "?"+e.Error())
		}
	}
	return fields
}

func TestScopeValidateNamesTheField(t *testing.T) {
	long := strings.Repeat("m", MaxScopeFieldBytes+1)
	tests := []struct {
		name   string
		edit   func(*Scope)
		field  string
		reason string // in the message
	}{
		{"model empty", func(s *Scope) { s.Model = "" }, "model", "empty (required)"},
		{"model too long", func(s *Scope) { s.Model = long }, "model", "257 bytes, over the limit of 256"},
		{"model not UTF-8", func(s *Scope) { s.Model = "llama\xff" }, "model", "not valid UTF-8 (at offset 5)"},
		{"model control", func(s *Scope) { s.Model = "llama\n" }, "model", "control character U+000A at offset 5"},
		{"revision empty", func(s *Scope) { s.Revision = "" }, "revision", "empty (required)"},
		{"adapter control", func(s *Scope) { s.Adapter = "\u0085lora" }, "adapter", "control character U+0085 at offset 0"},
		{"adapter too long", func(s *Scope) { s.Adapter = long }, "adapter", "257 bytes"},
		{"kv_dtype empty", func(s *Scope) { s.KVDType = "" }, "kv_dtype", "empty (required)"},
		{"quantization not UTF-8", func(s *Scope) { s.Quantization = "\xc3" }, "quantization", "not valid UTF-8 (at offset 0)"},
		{"tokens_per_block 0", func(s *Scope) { s.TokensPerBlock = 0 }, "tokens_per_block", "0, want at least 1"},
		{"kv_heads 0", func(s *Scope) { s.KVHeads = 0 }, "kv_heads", "0, want at least 1"},
		{"head_dim 0", func(s *Scope) { s.HeadDim = 0 }, "head_dim", "0, want at least 1"},
		{"layers 0", func(s *Scope) { s.Layers = 0 }, "layers", "0, want at least 1"},
		{"layers past the last", func(s *Scope) { s.FirstLayer, s.Layers = 1<<32-2, 3 }, "layers", "first_layer 4294967294 + layers 3"},
		{"tp_size 0", func(s *Scope) { s.TPSize = 0 }, "tp_size", "0, want at least 1"},
		{"tp_rank at tp_size", func(s *Scope) { s.TPRank, s.TPSize = 2, 2 }, "tp_rank", "2, want below tp_size (2)"},
		{"pp_size 0", func(s *Scope) { s.PPSize = 0 }, "pp_size", "0, want at least 1"},
		{"pp_rank over pp_size", func(s *Scope) { s.PPRank, s.PPSize = 5, 4 }, "pp_rank", "5, want below pp_size (4)"},
		{"pp_rank at pp_size", func(s *Scope) { s.PPRank, s.PPSize = 3, 3 }, "pp_rank", "3, want below pp_size (3)"},
		{"hash_algorithm empty", func(s *Scope) { s.HashAlgorithm = "" }, "hash_algorithm", "empty (required)"},
		{"hash_seed control", func(s *Scope) { s.HashSeed = "\x00" }, "hash_seed", "control character U+0000"},
		{"tenant too long", func(s *Scope) { s.Tenant = long }, "tenant", "257 bytes"},
		{"tenant DEL", func(s *Scope) { s.Tenant = "a\x7f" }, "tenant", "control character U+007F at offset 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := exampleScope()
			tt.edit(&s)
			err := s.Validate()
			if !errors.Is(err, ErrInvalidScope) {
				t.Fatalf("Validate() = %v, want ErrInvalidScope", err)
			}
			if got := scopeFaults(err); len(got) != 1 || got[0] != tt.field {
				t.Fatalf("Validate() faults %q, want just %q (%v)", got, tt.field, err)
			}
			if want := "keys: invalid scope: " + tt.field + ": "; !strings.HasPrefix(err.Error(), want) || !strings.Contains(err.Error(), tt.reason) {
				t.Fatalf("Validate() = %q, want %q…%q", err, want, tt.reason)
			}
			for what, call := range map[string]func() error{
				"MarshalText":   func() error { _, err := s.MarshalText(); return err },
				"Digest":        func() error { _, err := s.Digest(); return err },
				"NewScopedStem": func() error { _, err := NewScopedStem("kv", s); return err },
			} {
				if err := call(); !errors.Is(err, ErrInvalidScope) || !strings.Contains(err.Error(), tt.field) {
					t.Errorf("%s = %v, want ErrInvalidScope naming %s", what, err, tt.field)
				}
			}
		})
	}
}

// A scope at every limit is valid: ranks just below their sizes, the
// layers ending at the last layer number, text of the longest length.
func TestScopeAtTheLimits(t *testing.T) {
	s := exampleScope()
	s.TPRank, s.TPSize, s.PPRank, s.PPSize = 1<<32-2, 1<<32-1, 6, 7
	s.FirstLayer, s.Layers = 1, 1<<32-1
	s.Model, s.Tenant = strings.Repeat("m", MaxScopeFieldBytes), strings.Repeat("é", MaxScopeFieldBytes/2)
	if err := s.Validate(); err != nil {
		t.Fatalf("Validate() = %v", err)
	}
	s.FirstLayer = 2
	if got := scopeFaults(s.Validate()); len(got) != 1 || got[0] != "layers" {
		t.Fatalf("first_layer 2 + layers 2^32-1: faults %q, want layers", got)
	}
}

func TestZeroScopeNamesEveryRequiredField(t *testing.T) {
	var zero Scope
	if !zero.IsZero() || exampleScope().IsZero() {
		t.Fatal("IsZero is wrong")
	}
	want := []string{"model", "revision", "kv_dtype", "tokens_per_block", "kv_heads", "head_dim", "layers", "tp_size", "pp_size", "hash_algorithm"}
	if got := scopeFaults(zero.Validate()); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("zero Scope faults %q, want %q", got, want)
	}
	if text, err := zero.MarshalText(); err == nil || text != nil {
		t.Fatalf("zero Scope MarshalText = %q, %v; want no text and an error", text, err)
	}
	if d, err := zero.Digest(); err == nil || d != (ScopeDigest{}) {
		t.Fatalf("zero Scope Digest = %v, %v; want the zero digest and an error", d, err)
	}
	if stem, err := NewScopedStem("kv", zero); err == nil || stem != (Stem{}) {
		t.Fatalf("NewScopedStem(zero) = %v, %v; want an error", stem, err)
	}
}

func TestScopeEncoding(t *testing.T) {
	s := exampleScope()
	s.Adapter, s.Tenant, s.TPRank, s.TPSize = "sql-lora", "équipe-7", 1, 2
	text, err := s.MarshalText()
	if err != nil {
		t.Fatal(err)
	}
	want := "kvscope1;32:meta-llama/Llama-3.1-8B-Instruct,40:0e9e39f249a16976918f6564b8830bc894c89659,8:sql-lora,4:fp16,0:," +
		"2:16,1:8,3:128,1:0,2:32,1:1,1:2,1:0,1:1,11:sha256-cbor,1:0,9:équipe-7,"
	if string(text) != want {
		t.Fatalf("MarshalText\n got %s\nwant %s", text, want)
	}
	if !utf8.Valid(text) {
		t.Fatal("the encoding is not UTF-8")
	}
	appended, err := s.AppendText([]byte("x"))
	if err != nil || string(appended) != "x"+want {
		t.Fatalf("AppendText = %q, %v", appended, err)
	}
	back, err := ParseScope(want)
	if err != nil || back != s {
		t.Fatalf("ParseScope = %+v, %v; want %+v", back, err, s)
	}
	var u Scope
	if err := u.UnmarshalText(text); err != nil || u != s {
		t.Fatalf("UnmarshalText = %+v, %v", u, err)
	}
	u = exampleScope()
	if err := u.UnmarshalText([]byte("kvscope1;")); err == nil || u != exampleScope() {
		t.Fatalf("a refused UnmarshalText changed the scope to %+v (%v)", u, err)
	}
}

func TestParseScopeRefusesWhatItDidNotMake(t *testing.T) {
	good, err := exampleScope().MarshalText()
	if err != nil {
		t.Fatal(err)
	}
	g := string(good)
	tests := []struct {
		name  string
		text  string
		field string // "" when the fault is not one field's
		want  string // in the message
	}{
		{"empty", "", "", `does not start with "kvscope1;"`},
		{"other version", strings.Replace(g, "kvscope1;", "kvscope2;", 1), "", `does not start with "kvscope1;"`},
		{"no header", g[len("kvscope1;"):], "", `does not start with`},
		{"header only", "kvscope1;", "model", "at offset 9: missing (the text ends)"},
		{"length leading zero", strings.Replace(g, ";32:", ";032:", 1), "model", `length "032" has a leading zero`},
		{"length not digits", strings.Replace(g, ";32:", ";x2:", 1), "model", `byte 'x' (0x78) where its length's decimal digits should start`},
		{"length without colon", strings.Replace(g, ";32:", ";32;", 1), "model", `length "32" is not followed by ':'`},
		{"length too short", strings.Replace(g, ";32:", ";31:", 1), "model", `byte 't' (0x74) at offset 43 where ',' should end the value`},
		{"length too long", strings.Replace(g, ";32:", ";33:", 1), "model", `byte '4' (0x34) at offset 45 where ',' should end the value`},
		{"length over the limit", strings.Replace(g, ";32:", ";99999999999999999999:", 1), "model", "over the limit of 256"},
		{"length past the end", "kvscope1;5:ab", "model", "length 5, but the text ends first"},
		{"number leading zero", strings.Replace(g, ",2:16,", ",3:016,", 1), "tokens_per_block", `number "016" has a leading zero`},
		{"number not digits", strings.Replace(g, ",2:16,", ",2:1x,", 1), "tokens_per_block", `number "1x" holds byte 'x'`},
		{"number signed", strings.Replace(g, ",2:16,", ",3:+16,", 1), "tokens_per_block", `number "+16" holds byte '+'`},
		{"number empty", strings.Replace(g, ",2:16,", ",0:,", 1), "tokens_per_block", "empty number"},
		{"number over 32 bits", strings.Replace(g, ",2:16,", ",10:4294967296,", 1), "tokens_per_block", "number 4294967296, over the limit of 4294967295"},
		{"field missing", strings.TrimSuffix(g, "0:,"), "tenant", "missing (the text ends)"},
		{"bytes after", g + "0:,", "", "3 bytes after the last field (tenant)"},
		{"invalid scope", strings.Replace(g, ",1:0,1:1,1:0,1:1,", ",1:1,1:1,1:0,1:1,", 1), "tp_rank", "1, want below tp_size (1)"},
		{"required empty", strings.Replace(g, ",4:fp16,", ",0:,", 1), "kv_dtype", "empty (required)"},
		{"not UTF-8", strings.Replace(g, ",4:fp16,", ",4:fp\xff6,", 1), "kv_dtype", "not valid UTF-8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := ParseScope(tt.text)
			if err == nil {
				t.Fatalf("ParseScope accepted %q as %+v", tt.text, s)
			}
			if s != (Scope{}) {
				t.Errorf("ParseScope returned %+v with its error", s)
			}
			if !errors.Is(err, ErrInvalidScope) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("ParseScope error %q, want ErrInvalidScope saying %q", err, tt.want)
			}
			var se *ScopeError
			if got := errors.As(err, &se); got != (tt.field != "") || got && se.Field != tt.field {
				t.Errorf("ParseScope error %q: field %v, want %q", err, se, tt.field)
			}
		})
	}
}

func TestScopeFieldNames(t *testing.T) {
	got := ScopeFieldNames()
	want := "model revision adapter kv_dtype quantization tokens_per_block kv_heads head_dim first_layer layers tp_rank tp_size pp_rank pp_size hash_algorithm hash_seed tenant"
	if strings.Join(got, " ") != want {
		t.Fatalf("ScopeFieldNames() = %q", got)
	}
	got[0] = "changed"
	if ScopeFieldNames()[0] != "model" {
		t.Fatal("ScopeFieldNames shares its slice")
	}
}

func TestScopedStem(t *testing.T) {
	s := exampleScope()
	stem, err := NewScopedStem("kv/run-1", s)
	if err != nil {
		t.Fatal(err)
	}
	digest, _ := s.Digest()
	if got, scoped := stem.Scope(); !scoped || got != digest || stem.Prefix() != "kv/run-1" {
		t.Fatalf("Scope() = %v, %v; Prefix() = %q", got, scoped, stem.Prefix())
	}
	if _, scoped := mustStem(t, "kv/run-1").Scope(); scoped {
		t.Fatal("an unscoped Stem says it is scoped")
	}
	if _, scoped := (Stem{}).Scope(); scoped {
		t.Fatal("the zero Stem says it is scoped")
	}
	if other, _ := NewScopedStem("kv/run-2", s); other == stem {
		t.Fatal("two prefixes, one Stem")
	}
	if again, _ := NewScopedStem("kv/run-1", s); again != stem {
		t.Fatal("one prefix and scope, two Stems")
	}
	names := [][]byte{{0}, []byte("row-1"), bytes.Repeat([]byte{0xab}, MaxNameBytes)}
	batch, err := stem.Keys(nil, names)
	if err != nil {
		t.Fatal(err)
	}
	for i, name := range names {
		key, err := stem.Key(name)
		want := "kv/run-1/s1-" + digest.String() + "/v1/" + hex.EncodeToString(name)
		if err != nil || key != want || batch[i] != want || string(stem.AppendKey(nil, name)) != want || stem.KeyLen(len(name)) != len(want) {
			t.Fatalf("name %d: Key %q, Keys %q, KeyLen %d; want %q", i, key, batch[i], stem.KeyLen(len(name)), want)
		}
	}
	_, err = NewScopedStem("kv//run", s)
	if !errors.Is(err, ErrInvalidPrefix) || errors.Is(err, ErrInvalidScope) {
		t.Fatalf("NewScopedStem with a bad prefix: %v; want ErrInvalidPrefix only", err)
	}
	if allocs := testing.AllocsPerRun(100, func() { _, _ = stem.Key(names[1]) }); allocs != 1 {
		t.Fatalf("Key under a scope makes %v allocations, want 1", allocs)
	}
}

func TestScopeFromFields(t *testing.T) {
	want := exampleScope()
	fields := map[string]string{}
	for _, f := range scopeFields {
		fields[f.name] = f.String(&want)
		if ScopeFieldIsNumber(f.name) != (f.num != nil) {
			t.Errorf("ScopeFieldIsNumber(%q) = %v", f.name, !(f.num != nil))
		}
	}
	if ScopeFieldIsNumber("nope") {
		t.Error("ScopeFieldIsNumber of an unknown name")
	}
	got, err := ScopeFromFields(fields)
	if err != nil || got != want {
		t.Fatalf("ScopeFromFields = %+v, %v; want %+v", got, err, want)
	}
	if !maps.Equal(want.Fields(), fields) {
		t.Fatalf("Fields() = %v, want %v", want.Fields(), fields)
	}
	with := func(edit map[string]string, drop ...string) map[string]string {
		m := maps.Clone(fields)
		maps.Copy(m, edit)
		for _, d := range drop {
			delete(m, d)
		}
		return m
	}
	tests := []struct {
		name   string
		fields map[string]string
		faults []string
	}{
		{"unknown name", with(map[string]string{"kv_type": "fp16"}), []string{"kv_type"}},
		{"number not decimal", with(map[string]string{"kv_heads": "0x8"}), []string{"kv_heads"}},
		{"number leading zero", with(map[string]string{"head_dim": "0128"}), []string{"head_dim"}},
		{"number over 32 bits", with(map[string]string{"layers": "4294967296"}), []string{"layers"}},
		{"number negative", with(map[string]string{"tp_rank": "-1"}), []string{"tp_rank"}},
		{"required left out", with(nil, "model", "tp_size"), []string{"model", "tp_size"}},
		{"bad number and a rule", with(map[string]string{"kv_heads": "x", "kv_dtype": ""}), []string{"kv_heads", "kv_dtype"}},
		{"no fields", map[string]string{}, scopeFaults(Scope{}.Validate())},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := ScopeFromFields(tt.fields)
			if !errors.Is(err, ErrInvalidScope) || s != (Scope{}) {
				t.Fatalf("ScopeFromFields = %+v, %v; want a refusal", s, err)
			}
			if got := scopeFaults(err); !slices.Equal(got, tt.faults) {
				t.Fatalf("faults %q, want %q (%v)", got, tt.faults, err)
			}
		})
	}
}
