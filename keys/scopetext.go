package keys

import (
	"fmt"
	"strconv"
)

// scopeHeader opens the canonical encoding of a Scope: its name and the
// encoding's version.
const scopeHeader = "kvscope1;"

// MarshalText returns the canonical encoding of s (version 1): the
// header "kvscope1;", then every field in a fixed order (the package
// documentation's [scope] table), each written as its length in bytes
// in decimal, ':', the value, and ','. A number's value is its decimal
// digits, without leading zeros. Equal scopes give equal bytes and
// different scopes different bytes; the text is valid UTF-8, because
// every field is. An invalid scope (the zero Scope among them) gives
// [Scope.Validate]'s error and no text.
func (s Scope) MarshalText() ([]byte, error) { return s.AppendText(nil) }

// AppendText appends the canonical encoding of s to dst, as
// [Scope.MarshalText]; on an invalid scope it returns dst unchanged and
// the error.
func (s Scope) AppendText(dst []byte) ([]byte, error) {
	if err := s.Validate(); err != nil {
		return dst, err
	}
	dst = append(dst, scopeHeader...)
	for _, f := range scopeFields {
		v := f.String(&s)
		dst = strconv.AppendInt(dst, int64(len(v)), 10)
		dst = append(dst, ':')
		dst = append(dst, v...)
		dst = append(dst, ',')
	}
	return dst, nil
}

// UnmarshalText sets s to the scope [ParseScope] reads from text; on an
// error s is left as it was.
func (s *Scope) UnmarshalText(text []byte) error {
	parsed, err := ParseScope(string(text))
	if err != nil {
		return err
	}
	*s = parsed
	return nil
}

// ParseScope reads a scope's canonical encoding, as [Scope.MarshalText]
// writes it, and nothing else: another header or version, a length with
// a leading zero or not matching its value, a number with a leading zero
// or over 2³²-1, a missing ',', bytes after the last field, or a scope
// that does not validate are refused with an error matching
// [ErrInvalidScope] that names the field and the offset. Every text it
// accepts is exactly what MarshalText makes of the scope it returns.
func ParseScope(text string) (Scope, error) {
	var s Scope
	if len(text) < len(scopeHeader) || text[:len(scopeHeader)] != scopeHeader {
		return Scope{}, fmt.Errorf("%w: does not start with %q (version 1 of the encoding)", ErrInvalidScope, scopeHeader)
	}
	off := len(scopeHeader)
	for _, f := range scopeFields {
		v, next, reason := netstring(text, off)
		if reason == "" && f.num != nil {
			reason = decimalFault(v)
		}
		if reason != "" {
			return Scope{}, &ScopeError{Field: f.name, Reason: fmt.Sprintf("at offset %d: %s", off, reason)}
		}
		if f.text != nil {
			*f.text(&s) = v
		} else {
			n, _ := strconv.ParseUint(v, 10, 32) // decimalFault checked it
			*f.num(&s) = uint32(n)
		}
		off = next
	}
	if off != len(text) {
		return Scope{}, fmt.Errorf("%w: %d bytes after the last field (tenant), at offset %d", ErrInvalidScope, len(text)-off, off)
	}
	if err := s.Validate(); err != nil {
		return Scope{}, err
	}
	return s, nil
}

// netstring reads one field, length ':' value ',', at text[off:], and
// returns the value and the offset after the ','; or why it cannot.
func netstring(text string, off int) (value string, next int, reason string) {
	colon := off
	for colon < len(text) && '0' <= text[colon] && text[colon] <= '9' {
		colon++
	}
	digits := text[off:colon]
	switch {
	case off >= len(text):
		return "", 0, "missing (the text ends)"
	case digits == "":
		return "", 0, fmt.Sprintf("%s where its length's decimal digits should start", describeByte(text[off]))
	case len(digits) > 1 && digits[0] == '0':
		return "", 0, fmt.Sprintf("length %q has a leading zero", digits)
	case colon >= len(text) || text[colon] != ':':
		return "", 0, fmt.Sprintf("length %q is not followed by ':'", digits)
	}
	n, err := strconv.Atoi(digits)
	if err != nil || n > MaxScopeFieldBytes {
		return "", 0, fmt.Sprintf("length %s, over the limit of %d", digits, MaxScopeFieldBytes)
	}
	start := colon + 1
	if len(text)-start < n+1 {
		return "", 0, fmt.Sprintf("length %d, but the text ends first", n)
	}
	if text[start+n] != ',' {
		return "", 0, fmt.Sprintf("%s at offset %d where ',' should end the value", describeByte(text[start+n]), start+n)
	}
	return text[start : start+n], start + n + 1, ""
}

// decimalFault returns "" when v is a number as the encoding writes it
// (decimal digits, no leading zero, at most 2³²-1), or else why not.
func decimalFault(v string) string {
	if v == "" {
		return "empty number"
	}
	for i := 0; i < len(v); i++ {
		if v[i] < '0' || v[i] > '9' {
			return fmt.Sprintf("number %q holds %s", v, describeByte(v[i]))
		}
	}
	if len(v) > 1 && v[0] == '0' {
		return fmt.Sprintf("number %q has a leading zero", v)
	}
	if _, err := strconv.ParseUint(v, 10, 32); err != nil {
		return fmt.Sprintf("number %s, over the limit of %d", v, uint32(1<<32-1))
	}
	return ""
}
