package tomlfile

import (
	"math"
	"strconv"

	"github.com/kvshare/kvshare/keys"
	"github.com/kvshare/kvshare/storeconfig"
)

// Scope decodes the [scope] section and checks it: every field of the
// scope under its key (storeconfig.ScopeKeys), a string for text and an
// integer from 0 to 2³²-1 for a number. A key left out reads as "" or 0,
// so a required one left out is refused as such; a file without the
// section gives the zero Scope (unscoped keys). Each broken rule is
// refused under its key, and the Scope is then the zero Scope.
func (f *File) Scope() keys.Scope {
	f.scope = true
	s := f.Section(storeconfig.ScopeSection)
	if s == nil {
		return keys.Scope{}
	}
	fields := map[string]string{}
	for _, key := range storeconfig.ScopeKeys {
		if s.Type(key) == "" {
			continue
		}
		if !keys.ScopeFieldIsNumber(key) {
			if v, ok := s.String(key, ""); ok {
				fields[key] = v
			}
			continue
		}
		n := s.Int(key, 0)
		if n < 0 || n > math.MaxUint32 {
			s.Refuse(key, "must be between 0 and %d, got %d", uint32(math.MaxUint32), n)
		}
		fields[key] = strconv.FormatInt(n, 10)
	}
	sc, err := keys.ScopeFromFields(fields)
	for _, e := range storeconfig.ScopeFindings(f.name, err) {
		if _, given := fields[e.Key]; e.Key != "" && !given {
			e.Reason = "is required (left out)"
		}
		f.Add(e)
	}
	for _, key := range storeconfig.ScopeKeys {
		if f.Refused(storeconfig.ScopeSection, key) {
			return keys.Scope{} // a scope the file did not quite state is none
		}
	}
	return sc
}
