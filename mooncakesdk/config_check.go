package mooncakesdk

import (
	"net"
	"strconv"
	"strings"

	"github.com/kvshare/kvshare/storeconfig"
)

// The ranges a store config's numbers must lie in.
const (
	MaxWorkers = 1024
	// MaxReplicas and MaxPreferredSegments bound replicas and
	// preferred_segments: far above any pool kvshare is run beside, low
	// enough that a typo is refused.
	MaxReplicas          = 64
	MaxPreferredSegments = 256
	MaxRowsPerCall       = storeconfig.MaxRowsPerCall
	MaxBytesPerCall      = storeconfig.MaxBytesPerCall
)

// check returns a refusal for every value of the [mooncake] section out
// of its range (the [blob] section checks its own: storeconfig).
func (c StoreConfig) check() storeconfig.Findings {
	var findings storeconfig.Findings
	refuse := func(section, key, format string, args ...any) {
		findings.Addf(c.File, section, key, format, args...)
	}
	inRange := func(section, key string, v, lo, hi int64) {
		findings.InRange(c.File, section, key, v, lo, hi)
	}
	noNUL := func(section, key, v string) bool {
		if strings.IndexByte(v, 0) >= 0 {
			refuse(section, key, "must not hold a NUL byte")
			return false
		}
		return true
	}
	required := func(section, key, v string) bool {
		if v == "" {
			refuse(section, key, "is required")
			return false
		}
		return noNUL(section, key, v)
	}

	m := c.Mooncake
	noNUL("mooncake", "library", m.Library)
	for i, h := range m.SDKSHA256 {
		if !isSHA256Hex(h) {
			refuse("mooncake", "sdk_sha256", "item %d (%q) is not a SHA-256 in hex (64 hex digits)", i, h)
		}
	}
	if required("mooncake", "master", m.Master) {
		if reason := masterAddrProblem(m.Master); reason != "" {
			refuse("mooncake", "master", "%s, got %q", reason, m.Master)
		}
	}
	required("mooncake", "metadata_server", m.MetadataServer)
	if m.Protocol != "tcp" && m.Protocol != "rdma" {
		refuse("mooncake", "protocol", `must be "tcp" or "rdma", got %q`, m.Protocol)
	}
	for i, dev := range m.Devices {
		if dev == "" || strings.ContainsAny(dev, ", \t\x00") {
			refuse("mooncake", "devices", "item %d (%q) is not a device name", i, dev)
		}
	}
	required("mooncake", "local_hostname", m.LocalHostname)
	orDefault := func(key string, v, hi, def int64) { findings.InRangeOrDefault(c.File, "mooncake", key, v, hi, def) }
	orDefault("workers", int64(m.Workers), MaxWorkers, DefaultWorkers)
	orDefault("rows_per_call", int64(m.RowsPerCall), MaxRowsPerCall, DefaultRowsPerCall)
	orDefault("bytes_per_call", m.BytesPerCall, MaxBytesPerCall, DefaultBytesPerCall)
	inRange("mooncake", "calls_in_flight", int64(m.CallsInFlight), 0, MaxWorkers)
	orDefault("replicas", int64(m.Replicas), MaxReplicas, DefaultReplicas)
	if len(m.PreferredSegments) > MaxPreferredSegments {
		refuse("mooncake", "preferred_segments", "has %d segments, at most %d", len(m.PreferredSegments), MaxPreferredSegments)
	}
	for i, seg := range m.PreferredSegments {
		if seg == "" || strings.ContainsAny(seg, ", \t\x00") {
			refuse("mooncake", "preferred_segments", "item %d (%q) is not a segment name (host:port)", i, seg)
		}
	}
	return findings
}

// masterAddrProblem says why addr is not one host:port, or "".
func masterAddrProblem(addr string) string {
	if strings.ContainsAny(addr, ",; \t") {
		return "an HA master list is not supported: give one host:port"
	}
	if strings.Contains(addr, "://") {
		return "must be host:port, not a URL"
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "must be host:port"
	}
	if host == "" {
		return "must name a host"
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 1 || n > 65535 {
		return "must have a port between 1 and 65535"
	}
	return ""
}

func isSHA256Hex(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, r := range s {
		if !strings.ContainsRune("0123456789abcdefABCDEF", r) {
			return false
		}
	}
	return true
}
