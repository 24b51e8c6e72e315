package storeconfig

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ErrConfig is matched (errors.Is) by every refusal of a store file.
var ErrConfig = errors.New("store config refused")

// Error is one refusal of a store file. It matches [ErrConfig] with
// errors.Is, and the underlying error (an io/fs error for an unreadable
// file, a TOML parse error, a key prefix's refusal) through Unwrap.
type Error struct {
	// File is the store file ("" for settings built in code).
	File string
	// Section is the TOML table ("blob", "mooncake"), or "" when the
	// refusal concerns the whole file or a key outside every table.
	Section string
	// Key is the key inside Section, or "" when the refusal concerns the
	// section itself or the whole file.
	Key string
	// Line and Column locate malformed TOML (1-based); 0 when unknown.
	Line, Column int
	// Reason says what is wrong.
	Reason string
	// Err is the underlying error, if any.
	Err error
}

// Error reads "store config FILE[:LINE:COL]: [SECTION] KEY: REASON[:
// underlying error]".
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("store config")
	if e.File != "" {
		b.WriteString(" " + e.File)
	}
	if e.Line > 0 {
		b.WriteString(":" + strconv.Itoa(e.Line))
		if e.Column > 0 {
			b.WriteString(":" + strconv.Itoa(e.Column))
		}
	}
	b.WriteString(": ")
	switch {
	case e.Section != "" && e.Key != "":
		b.WriteString("[" + e.Section + "] " + e.Key + ": ")
	case e.Section != "":
		b.WriteString("[" + e.Section + "]: ")
	case e.Key != "":
		b.WriteString(e.Key + " (outside every section): ")
	}
	b.WriteString(e.Reason)
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Unwrap returns [ErrConfig] and the underlying error.
func (e *Error) Unwrap() []error {
	if e.Err == nil {
		return []error{ErrConfig}
	}
	return []error{ErrConfig, e.Err}
}

// Findings collects the refusals of one file, in the order found.
type Findings []*Error

// Add appends a refusal.
func (f *Findings) Add(e *Error) { *f = append(*f, e) }

// Addf appends a refusal of section's key with a formatted reason.
func (f *Findings) Addf(file, section, key, format string, args ...any) {
	f.Add(&Error{File: file, Section: section, Key: key, Reason: fmt.Sprintf(format, args...)})
}

// InRange refuses section's key when v lies outside lo..hi.
func (f *Findings) InRange(file, section, key string, v, lo, hi int64) {
	if v < lo || v > hi {
		f.Addf(file, section, key, "must be between %d and %d, got %d", lo, hi, v)
	}
}

// InRangeOrDefault refuses section's key when v lies outside 0..hi,
// saying that 0 stands for the default, def (as in the drivers' Go
// configs): a count such as workers.
func (f *Findings) InRangeOrDefault(file, section, key string, v, hi, def int64) {
	if v < 0 || v > hi {
		f.Addf(file, section, key, "must be between 0 (the default, %d) and %d, got %d", def, hi, v)
	}
}

// Err is nil, the one refusal, or all of them joined (errors.As finds
// the first).
func (f Findings) Err() error {
	switch len(f) {
	case 0:
		return nil
	case 1:
		return f[0]
	}
	errs := make([]error, len(f))
	for i, e := range f {
		errs[i] = e
	}
	return errors.Join(errs...)
}
