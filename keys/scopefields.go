package keys

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
)

// scopeField is one field of a Scope, in the canonical order: its name
// (the store file's and the errors'), and either its text or its number.
type scopeField struct {
	name     string
	text     func(*Scope) *string // nil for a number
	num      func(*Scope) *uint32 // nil for text
	required bool                 // text: non-empty; number: at least 1
}

// scopeFields is every field of a Scope in the order of its canonical
// encoding. The order is part of the encoding's version 1: never
// reorder, never insert; a new field needs a new version.
var scopeFields = [...]scopeField{
	{name: "model", text: func(s *Scope) *string { return &s.Model }, required: true},
	{name: "revision", text: func(s *Scope) *string { return &s.Revision }, required: true},
	{name: "adapter", text: func(s *Scope) *string { return &s.Adapter }},
	{name: "kv_dtype", text: func(s *Scope) *string { return &s.KVDType }, required: true},
	{name: "quantization", text: func(s *Scope) *string { return &s.Quantization }},
	{name: "tokens_per_block", num: func(s *Scope) *uint32 { return &s.TokensPerBlock }, required: true},
	{name: "kv_heads", num: func(s *Scope) *uint32 { return &s.KVHeads }, required: true},
	{name: "head_dim", num: func(s *Scope) *uint32 { return &s.HeadDim }, required: true},
	{name: "first_layer", num: func(s *Scope) *uint32 { return &s.FirstLayer }},
	{name: "layers", num: func(s *Scope) *uint32 { return &s.Layers }, required: true},
	{name: "tp_rank", num: func(s *Scope) *uint32 { return &s.TPRank }},
	{name: "tp_size", num: func(s *Scope) *uint32 { return &s.TPSize }, required: true},
	{name: "pp_rank", num: func(s *Scope) *uint32 { return &s.PPRank }},
	{name: "pp_size", num: func(s *Scope) *uint32 { return &s.PPSize }, required: true},
	{name: "hash_algorithm", text: func(s *Scope) *string { return &s.HashAlgorithm }, required: true},
	{name: "hash_seed", text: func(s *Scope) *string { return &s.HashSeed }},
	{name: "tenant", text: func(s *Scope) *string { return &s.Tenant }},
}

// ScopeFieldNames returns the names of a Scope's fields in the order of
// the canonical encoding, as a store file's [scope] section spells them.
func ScopeFieldNames() []string {
	names := make([]string, len(scopeFields))
	for i, f := range scopeFields {
		names[i] = f.name
	}
	return names
}

// fault returns "" when the field of s keeps its own rule, or else why
// not (the rules between fields are Validate's).
func (f scopeField) fault(s *Scope) string {
	if f.text != nil {
		return textFault(*f.text(s), f.required)
	}
	if f.required && *f.num(s) == 0 {
		return "0, want at least 1"
	}
	return ""
}

// String is the field's value in s as the canonical encoding writes it.
func (f scopeField) String(s *Scope) string {
	if f.text != nil {
		return *f.text(s)
	}
	return fmt.Sprint(*f.num(s))
}

// ScopeFieldIsNumber reports whether the field of that name (one of
// [ScopeFieldNames]) is a number; the others are text.
func ScopeFieldIsNumber(name string) bool {
	for _, f := range scopeFields {
		if f.name == name {
			return f.num != nil
		}
	}
	return false
}

// ScopeFromFields builds a Scope from its fields by name (as
// [ScopeFieldNames] spells them), numbers written in decimal, and
// validates it. A name left out reads as "" or 0. An unknown name, a
// number that is not decimal digits without a leading zero up to
// 2³²-1, and every rule [Scope.Validate] finds broken are refused
// together, each a [*ScopeError] naming the field; the Scope is then
// the zero Scope.
func ScopeFromFields(fields map[string]string) (Scope, error) {
	var s Scope
	var errs []error
	known := 0
	for _, f := range scopeFields {
		v, ok := fields[f.name]
		if !ok {
			continue
		}
		known++
		if f.text != nil {
			*f.text(&s) = v
			continue
		}
		if reason := decimalFault(v); reason != "" {
			errs = append(errs, &ScopeError{Field: f.name, Reason: reason})
			continue
		}
		n, _ := strconv.ParseUint(v, 10, 32)
		*f.num(&s) = uint32(n)
	}
	if known != len(fields) {
		for _, name := range slices.Sorted(maps.Keys(fields)) {
			if !slices.Contains(ScopeFieldNames(), name) {
				errs = append(errs, &ScopeError{Field: name, Reason: "not a field of a scope"})
			}
		}
	}
	if len(errs) == 0 {
		if err := s.Validate(); err != nil {
			return Scope{}, err
		}
		return s, nil
	}
	// The fields refused already read as "" or 0: their rules add nothing.
	refused := map[string]bool{}
	for _, e := range errs {
		refused[e.(*ScopeError).Field] = true
	}
	if err := s.Validate(); err != nil {
		for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
			if !refused[e.(*ScopeError).Field] {
				errs = append(errs, e)
			}
		}
	}
	return Scope{}, errors.Join(errs...)
}

// Fields returns every field of s by name, numbers in decimal: what
// [ScopeFromFields] builds s from again.
func (s Scope) Fields() map[string]string {
	m := make(map[string]string, len(scopeFields))
	for _, f := range scopeFields {
		m[f.name] = f.String(&s)
	}
	return m
}
