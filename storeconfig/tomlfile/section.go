package tomlfile

import (
	"github.com/BurntSushi/toml"
)

// A Section reads one section of a [File]. Each method takes a key of
// the section; a key left out gives the default, a key of the wrong TOML
// type is refused (its value quoted) and gives the default too.
type Section struct {
	f    *File
	name string
	keys map[string]toml.Primitive
}

// Section returns the reader of a section, or nil when the file has no
// such section (or did not parse); a section that is not a table is
// refused and reads as absent.
func (f *File) Section(name string) *Section {
	if !f.Has(name) {
		return nil
	}
	// A table defined only through a dotted sub-table ([mooncake.x]) has
	// no type of its own.
	if t := f.md.Type(name); t != "Hash" && t != "" {
		f.Refuse(name, "", "must be a table, got %s", typeWords(t))
		return nil
	}
	s := &Section{f: f, name: name, keys: map[string]toml.Primitive{}}
	if err := f.md.PrimitiveDecode(f.raw[name], &s.keys); err != nil {
		f.Refuse(name, "", "cannot decode: %v", err)
		return nil
	}
	return s
}

// Type is the TOML type of key ("String", "Integer", "Array", "Hash",
// …), or "" when the section does not hold it.
func (s *Section) Type(key string) string { return s.f.md.Type(s.name, key) }

// Refuse records a refusal of the section's key.
func (s *Section) Refuse(key, format string, args ...any) { s.f.Refuse(s.name, key, format, args...) }

// present reports whether key is there with TOML type want; a key of
// another type is refused, its value quoted.
func (s *Section) present(key, want, wantWords string) bool {
	t := s.Type(key)
	switch t {
	case "":
		return false
	case want:
		return true
	}
	var v any
	_ = s.f.md.PrimitiveDecode(s.keys[key], &v)
	s.Refuse(key, "wants %s, got %s (%v)", wantWords, typeWords(t), v)
	return false
}

// String returns the key's string, and whether the file gave one.
func (s *Section) String(key, def string) (string, bool) {
	if !s.present(key, "String", "a string") {
		return def, false
	}
	var v string
	if err := s.f.md.PrimitiveDecode(s.keys[key], &v); err != nil {
		s.Refuse(key, "cannot decode: %v", err)
		return def, false
	}
	return v, true
}

// Strings returns the key's array of strings (nil when left out).
func (s *Section) Strings(key string) []string {
	if !s.present(key, "Array", "an array of strings") {
		return nil
	}
	var v []any
	if err := s.f.md.PrimitiveDecode(s.keys[key], &v); err != nil {
		s.Refuse(key, "wants an array of strings: %v", err)
		return nil
	}
	out := make([]string, len(v))
	for i, e := range v {
		str, ok := e.(string)
		if !ok {
			s.Refuse(key, "wants an array of strings, item %d is %T (%v)", i, e, e)
			return nil
		}
		out[i] = str
	}
	return out
}

// Ints returns the key's array of integers (nil when left out or
// refused; empty, not nil, for an empty array).
func (s *Section) Ints(key string) []int64 {
	if !s.present(key, "Array", "an array of integers") {
		return nil
	}
	var v []any
	if err := s.f.md.PrimitiveDecode(s.keys[key], &v); err != nil {
		s.Refuse(key, "wants an array of integers: %v", err)
		return nil
	}
	out := make([]int64, len(v))
	for i, e := range v {
		n, ok := e.(int64)
		if !ok {
			s.Refuse(key, "wants an array of integers, item %d is %T (%v)", i, e, e)
			return nil
		}
		out[i] = n
	}
	return out
}

// Int returns the key's integer.
func (s *Section) Int(key string, def int64) int64 {
	if !s.present(key, "Integer", "an integer") {
		return def
	}
	var n int64
	if err := s.f.md.PrimitiveDecode(s.keys[key], &n); err != nil {
		s.Refuse(key, "cannot decode: %v", err)
		return def
	}
	return n
}

// NonNegative returns the key's integer, refusing a negative one.
func (s *Section) NonNegative(key string, def int64) int64 {
	n := s.Int(key, def)
	if n < 0 {
		s.Refuse(key, "must not be negative, got %d", n)
		return def
	}
	return n
}

// Bool returns the key's boolean.
func (s *Section) Bool(key string, def bool) bool {
	if !s.present(key, "Bool", "a boolean") {
		return def
	}
	var b bool
	if err := s.f.md.PrimitiveDecode(s.keys[key], &b); err != nil {
		s.Refuse(key, "cannot decode: %v", err)
		return def
	}
	return b
}

// typeWords names a TOML type the way a refusal should.
func typeWords(t string) string {
	switch t {
	case "Integer":
		return "an integer"
	case "Float":
		return "a float"
	case "String":
		return "a string"
	case "Bool":
		return "a boolean"
	case "Array":
		return "an array"
	case "Hash":
		return "a table"
	case "ArrayHash":
		return "an array of tables"
	case "Datetime", "DatetimeLocal", "DateLocal", "TimeLocal":
		return "a date or time"
	}
	return t
}
