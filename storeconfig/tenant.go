package storeconfig

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// MaxTenantName is the longest tenant name, in bytes (a scope's text
// field: keys.MaxScopeFieldBytes).
const MaxTenantName = 256

// The settings of a tenant's spec, as [ParseNodeTenant] reads them.
const (
	TenantUIDs                = "uids"
	TenantGIDs                = "gids"
	TenantMaxLentBytes        = "max_lent_bytes"
	TenantMaxBytesInFlight    = "max_bytes_in_flight"
	TenantMaxAttemptsInFlight = "max_attempts_in_flight"
	TenantName                = "tenant"
)

// ParseNodeTenant reads a tenant's spec, as the [node] section's
// tenants and `kvshare node --tenant` give it: settings separated by
// spaces, each key=value, the tenant's name last and taking the rest of
// the spec as it is (a name may hold spaces, '=' or ','):
//
//	uids=1000,1001 gids=100 max_lent_bytes=8589934592 max_bytes_in_flight=1073741824 max_attempts_in_flight=32 tenant=acme
//
// uids and gids are comma-separated ids (at least one of them for a
// named tenant); the limits are integers above 0, left out for none;
// "tenant=" alone is the tenant of scopes that name none. A spec it
// cannot read is refused naming the setting.
func ParseNodeTenant(spec string) (NodeTenant, error) {
	var t NodeTenant
	rest := spec
	named := false
	for rest != "" && !named {
		var field string
		field, rest, _ = strings.Cut(rest, " ")
		if field == "" {
			continue
		}
		key, value, ok := strings.Cut(field, "=")
		if !ok {
			return NodeTenant{}, fmt.Errorf("%q: want key=value, got %q", spec, field)
		}
		var err error
		switch key {
		case TenantName:
			t.Name, named = value, true
			if rest != "" {
				t.Name += " " + rest
			}
		case TenantUIDs:
			t.UIDs, err = ids(value)
		case TenantGIDs:
			t.GIDs, err = ids(value)
		case TenantMaxLentBytes:
			t.MaxLentBytes, err = positive(value, math.MaxInt64)
		case TenantMaxBytesInFlight:
			t.MaxBytesInFlight, err = positive(value, math.MaxInt64)
		case TenantMaxAttemptsInFlight:
			var n int64
			n, err = positive(value, math.MaxInt32)
			t.MaxAttemptsInFlight = int(n)
		default:
			err = fmt.Errorf("unknown setting (known: %s)", strings.Join([]string{TenantUIDs, TenantGIDs,
				TenantMaxLentBytes, TenantMaxBytesInFlight, TenantMaxAttemptsInFlight, TenantName}, ", "))
		}
		if err != nil {
			return NodeTenant{}, fmt.Errorf("%q: %s: %w", spec, key, err)
		}
	}
	if !named {
		return NodeTenant{}, fmt.Errorf("%q: no %s=NAME, the last setting", spec, TenantName)
	}
	if why := t.check(); why != "" {
		return NodeTenant{}, fmt.Errorf("%q: %s", spec, why)
	}
	return t, nil
}

// String is the tenant's spec, as ParseNodeTenant reads it.
func (t NodeTenant) String() string {
	var b strings.Builder
	list := func(key string, ids []uint32) {
		if len(ids) == 0 {
			return
		}
		b.WriteString(key + "=")
		for i, id := range ids {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.FormatUint(uint64(id), 10))
		}
		b.WriteByte(' ')
	}
	list(TenantUIDs, t.UIDs)
	list(TenantGIDs, t.GIDs)
	for _, l := range []struct {
		key string
		v   int64
	}{{TenantMaxLentBytes, t.MaxLentBytes}, {TenantMaxBytesInFlight, t.MaxBytesInFlight}, {TenantMaxAttemptsInFlight, int64(t.MaxAttemptsInFlight)}} {
		if l.v != 0 {
			fmt.Fprintf(&b, "%s=%d ", l.key, l.v)
		}
	}
	b.WriteString(TenantName + "=" + t.Name)
	return b.String()
}

// check says what is wrong with t, or "".
func (t NodeTenant) check() string {
	switch {
	case len(t.Name) > MaxTenantName:
		return fmt.Sprintf("the tenant's name is %d bytes, want at most %d", len(t.Name), MaxTenantName)
	case !utf8.ValidString(t.Name):
		return "the tenant's name is not UTF-8"
	case t.Name != "" && len(t.UIDs) == 0 && len(t.GIDs) == 0:
		return fmt.Sprintf("tenant %q: neither uids nor gids: no peer could declare it", t.Name)
	case t.MaxLentBytes < 0 || t.MaxBytesInFlight < 0 || t.MaxAttemptsInFlight < 0:
		return fmt.Sprintf("tenant %q: a negative limit", t.Name)
	}
	return ""
}

// ids reads comma-separated user or group ids.
func ids(s string) ([]uint32, error) {
	var out []uint32
	for f := range strings.SplitSeq(s, ",") {
		n, err := strconv.ParseUint(f, 10, 32)
		if err != nil {
			return nil, fmt.Errorf("%q is not an id (0 to %d)", f, uint32(math.MaxUint32))
		}
		out = append(out, uint32(n))
	}
	return out, nil
}

// positive reads an integer from 1 to hi.
func positive(s string, hi int64) (int64, error) {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 1 || n > hi {
		return 0, fmt.Errorf("%q: want an integer from 1 to %d", s, hi)
	}
	return n, nil
}
