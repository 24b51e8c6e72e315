package tomlfile

import (
	"math"
	"os"
	"strconv"
	"time"

	"github.com/kvshare/kvshare/storeconfig"
)

// Node decodes the [node] section (how `kvshare node` serves the store
// the file names) and checks its values; a key left out reads as 0 or
// empty (the node's default), a file without the section gives the zero
// Node (Has says whether it holds one). A key given must say something:
// a mode of "0", an empty allow_uids, a limit of 0 are refused, naming
// the key.
func (f *File) Node() storeconfig.Node {
	f.node = true
	var n storeconfig.Node
	s := f.Section(storeconfig.NodeSection)
	if s == nil {
		return n
	}
	n.Socket, _ = s.String(storeconfig.KeySocket, "")
	if v, ok := s.String(storeconfig.KeyMode, ""); ok {
		m, err := strconv.ParseUint(v, 8, 32)
		if err != nil || m == 0 || m > 0o777 {
			s.Refuse(storeconfig.KeyMode, "wants permission bits in octal from \"0001\" to \"0777\", such as \"0660\", got %q", v)
		} else {
			n.Mode = os.FileMode(m)
		}
	}
	if s.Type(storeconfig.KeyAllowUIDs) != "" {
		uids := s.Ints(storeconfig.KeyAllowUIDs)
		if uids != nil && len(uids) == 0 {
			s.Refuse(storeconfig.KeyAllowUIDs, "is empty: leave it out for the node's own user only")
		}
		for i, u := range uids {
			if u < 0 || u > math.MaxUint32 {
				s.Refuse(storeconfig.KeyAllowUIDs, "item %d is %d, not a user id (0 to %d)", i, u, uint32(math.MaxUint32))
				n.AllowUIDs = nil
				break
			}
			n.AllowUIDs = append(n.AllowUIDs, uint32(u))
		}
	}
	limit := func(key string) int64 {
		v := s.Int(key, 0)
		if v == 0 && s.Type(key) == "Integer" {
			s.Refuse(key, "is 0: leave it out for the node's default")
		}
		return v
	}
	n.MaxFrame = limit(storeconfig.KeyMaxFrame)
	n.MaxAttempts = int(clampInt(limit(storeconfig.KeyMaxAttempts)))
	n.MaxRows = int(clampInt(limit(storeconfig.KeyMaxRows)))
	n.MaxLendBytes = limit(storeconfig.KeyMaxLendBytes)
	n.MaxRegions = int(clampInt(limit(storeconfig.KeyMaxRegions)))
	n.OutQueue = int(clampInt(limit(storeconfig.KeyOutQueue)))
	n.EngineWait = s.Duration(storeconfig.KeyEngineWait)
	n.ShutdownWait = s.Duration(storeconfig.KeyShutdownWait)
	n.ReclaimAbove = limit(storeconfig.KeyReclaimAbove)
	n.ReclaimWait = s.Duration(storeconfig.KeyReclaimWait)
	n.RequireScope = s.Bool(storeconfig.KeyRequireScope, false)
	for i, spec := range s.Strings(storeconfig.KeyTenants) {
		t, err := storeconfig.ParseNodeTenant(spec)
		if err != nil {
			s.Refuse(storeconfig.KeyTenants, "item %d: %v", i, err)
			continue
		}
		n.Tenants = append(n.Tenants, t)
	}
	for _, e := range n.Check(f.name) {
		f.Add(e)
	}
	return n
}

// clampInt keeps v within int32, so that a huge value stays out of
// range (refused by the range check) on every platform's int.
func clampInt(v int64) int64 { return min(max(v, math.MinInt32), math.MaxInt32) }

// Duration returns the key's Go duration string ("10s", "250ms") as a
// duration, 0 when left out; one that does not parse, or is not above
// 0, is refused.
func (s *Section) Duration(key string) time.Duration {
	v, ok := s.String(key, "")
	if !ok {
		return 0
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		s.Refuse(key, "wants a positive Go duration such as \"10s\", got %q", v)
		return 0
	}
	return d
}

// SectionErr returns the refusals recorded so far of one section (and
// those of the whole file: unreadable, not TOML), without Finish's
// checks of the rest: for a reader that takes one shared section ahead
// of the store's own parser, which checks the whole file.
func (f *File) SectionErr(section string) error {
	var mine storeconfig.Findings
	for _, e := range f.findings {
		if e.Section == section || e.Section == "" && e.Key == "" {
			mine = append(mine, e)
		}
	}
	return mine.Err()
}
