package keys

import "fmt"

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
