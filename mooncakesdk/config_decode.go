package mooncakesdk

import (
	"cmp"
	"strings"

	"github.com/kvshare/kvshare/storeconfig/tomlfile"
)

// The [mooncake] section's keys, exactly as a file spells them.
var sections = map[string][]string{
	"mooncake": {"library", "sdk_sha256", "master", "metadata_server", "protocol", "devices",
		"local_hostname", "global_segment_size", "local_buffer_size", "workers", "rows_per_call", "bytes_per_call", "calls_in_flight",
		"replicas", "soft_pin", "preferred_segments"},
}

// decodeStoreConfig decodes a parsed file into a StoreConfig (defaults
// for the keys left out and for keys refused), checks the values decoded
// and returns every refusal of the file.
func decodeStoreConfig(file string, f *tomlfile.File) (StoreConfig, error) {
	cfg := StoreConfig{File: file}
	m := &cfg.Mooncake
	m.Protocol = DefaultProtocol
	m.Workers = DefaultWorkers
	m.RowsPerCall = DefaultRowsPerCall
	m.BytesPerCall = DefaultBytesPerCall
	m.CallsInFlight = DefaultCallsInFlight
	m.Replicas = DefaultReplicas

	cfg.Blob = f.Blob()
	if s := f.Section("mooncake"); s != nil {
		m.Library, _ = s.String("library", "")
		m.SDKSHA256 = s.Strings("sdk_sha256")
		for i, h := range m.SDKSHA256 {
			m.SDKSHA256[i] = strings.ToLower(h)
		}
		if s.Type("master") == "Array" {
			s.Refuse("master", "an HA master list is not supported: give one host:port")
		} else {
			m.Master, _ = s.String("master", "")
		}
		m.MetadataServer, _ = s.String("metadata_server", "")
		m.Protocol, _ = s.String("protocol", m.Protocol)
		m.Devices = s.Strings("devices")
		m.LocalHostname, _ = s.String("local_hostname", "")
		m.GlobalSegmentSize = uint64(s.NonNegative("global_segment_size", 0))
		m.LocalBufferSize = uint64(s.NonNegative("local_buffer_size", 0))
		// 0 means the default, as in mooncakedrv.Config (calls_in_flight
		// aside: 0 is no bound there and here).
		m.Workers = cmp.Or(int(s.Int("workers", 0)), DefaultWorkers)
		m.RowsPerCall = cmp.Or(int(s.Int("rows_per_call", 0)), DefaultRowsPerCall)
		m.BytesPerCall = cmp.Or(s.Int("bytes_per_call", 0), DefaultBytesPerCall)
		m.CallsInFlight = int(s.Int("calls_in_flight", int64(m.CallsInFlight)))
		m.Replicas = cmp.Or(int(s.Int("replicas", 0)), DefaultReplicas)
		m.SoftPin = s.Bool("soft_pin", false)
		m.PreferredSegments = s.Strings("preferred_segments")
	}
	if f.Parsed() { // check the values decoded, those refused aside
		for _, e := range cfg.check() {
			f.Add(e)
		}
	}
	if err := f.Finish(); err != nil {
		return StoreConfig{}, err
	}
	return cfg, nil
}
