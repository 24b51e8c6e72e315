package storeconfig

import (
	"errors"

	"github.com/kvshare/kvshare/keys"
)

// ScopeSection is the [scope] section: the fields of a keys.Scope, each
// under its name in keys.ScopeFieldNames (model, revision, kv_dtype,
// tokens_per_block, …), text as TOML strings and numbers as integers. A
// file with the section makes every key under that scope; a file
// without it makes unscoped keys. Every store-file reader knows the
// section and checks it.
const ScopeSection = "scope"

// ScopeKeys lists the keys of the [scope] section, in the order of the
// scope's canonical encoding.
var ScopeKeys = keys.ScopeFieldNames()

// ScopeFindings turns the error of keys.Scope.Validate into refusals of
// the [scope] section, one per broken field, under the field's key; nil
// for a nil error.
func ScopeFindings(file string, err error) Findings {
	if err == nil {
		return nil
	}
	errs := []error{err}
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		errs = joined.Unwrap()
	}
	var out Findings
	for _, e := range errs {
		var se *keys.ScopeError
		if errors.As(e, &se) {
			out.Add(&Error{File: file, Section: ScopeSection, Key: se.Field, Reason: se.Reason})
		} else {
			out.Add(&Error{File: file, Section: ScopeSection, Reason: "not a valid scope", Err: e})
		}
	}
	return out
}
