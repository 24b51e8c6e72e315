package doccheck

import (
	"errors"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/binding"
	"github.com/kvshare/kvshare/memdrv"
	"github.com/kvshare/kvshare/mooncakedrv/pool"
	"github.com/kvshare/kvshare/mooncakesdk"
	"github.com/kvshare/kvshare/mooncakesdk/fakesdk"
	"github.com/kvshare/kvshare/node"
	"github.com/kvshare/kvshare/storeconfig"
)

// defaultTables is every table of the documentation with a default
// column, each tied to the code it documents. A new table needs an
// entry here: TestDefaultTablesStateTheCode names one that has none.
var defaultTables = []defaultTable{
	{file: "mooncakesdk/README.md", first: "Section", names: []int{0, 1}, code: mooncakeStoreFile},
	{file: "mooncakesdk/README.md", first: "Options field", code: fakesdkOptions},
	{file: "mooncakedrv/README.md", first: "pool.Options field", code: poolOptions},
	{file: "node/README.md", first: "Field", code: nodeConfig},
	{file: "memdrv/README.md", first: "StoreOptions", code: memdrvStoreOptions},
	{file: "memdrv/README.md", first: "Field", code: memdrvOptions},
	{file: "binding/README.md", first: "Field", code: bindingConfig},
	{file: "tools/README.md", first: "[node] key", names: []int{1}, code: nodeSection},
	{file: "tools/README.md", first: "flag", skip: "the kvshare command's flags: their defaults are set in package main and " +
		"tools/internal, which no module outside tools can import"},
}

// minimalMooncake is the least Mooncake store file: its required keys.
var minimalMooncake = []string{"[mooncake]", `master = "127.0.0.1:50051"`, `metadata_server = "P2PHANDSHAKE"`, `local_hostname = "127.0.0.1"`}

// mooncakeStoreFile is what mooncakesdk's loader gives each key a store
// file leaves out: a file of the required keys alone, decoded, [blob]
// with the defaults every backend applies (storeconfig.Blob.WithDefaults).
func mooncakeStoreFile(t *testing.T) (map[string]value, []string) {
	cfg, err := mooncakesdk.ParseStoreConfig("least.toml", []byte(strings.Join(minimalMooncake, "\n")))
	require.NoError(t, err)
	blob, m := cfg.Blob.WithDefaults(), cfg.Mooncake
	requiredKey := func(key string) value {
		var lines []string
		for _, l := range minimalMooncake {
			if !strings.HasPrefix(l, key+" ") {
				lines = append(lines, l)
			}
		}
		_, err := mooncakesdk.ParseStoreConfig("least.toml", []byte(strings.Join(lines, "\n")))
		return required(refuses(err, "mooncake", key), "mooncakesdk.ParseStoreConfig")
	}
	want := map[string]value{
		"[blob] key_prefix":              text(blob.KeyPrefix, "storeconfig.DefaultKeyPrefix"),
		"[blob] rows_per_call":           count(int64(blob.RowsPerCall), "0: no cap of the backend's own"),
		"[blob] bytes_per_call":          size(blob.BytesPerCall, "0: no cap of the backend's own"),
		"[mooncake] library":             described(m.Library == "", "empty: found when the client opens"),
		"[mooncake] sdk_sha256":          described(len(m.SDKSHA256) == 0, "empty: any library"),
		"[mooncake] master":              requiredKey("master"),
		"[mooncake] metadata_server":     requiredKey("metadata_server"),
		"[mooncake] protocol":            text(m.Protocol, "mooncakesdk.DefaultProtocol"),
		"[mooncake] devices":             described(len(m.Devices) == 0, "empty: the engine finds them"),
		"[mooncake] local_hostname":      requiredKey("local_hostname"),
		"[mooncake] global_segment_size": size(int64(m.GlobalSegmentSize), "MooncakeConfig.GlobalSegmentSize"),
		"[mooncake] local_buffer_size":   size(int64(m.LocalBufferSize), "MooncakeConfig.LocalBufferSize"),
		"[mooncake] workers":             count(int64(m.Workers), "mooncakesdk.DefaultWorkers"),
		"[mooncake] rows_per_call":       count(int64(m.RowsPerCall), "mooncakesdk.DefaultRowsPerCall"),
		"[mooncake] bytes_per_call":      size(m.BytesPerCall, "mooncakesdk.DefaultBytesPerCall"),
		"[mooncake] replicas":            count(int64(m.Replicas), "mooncakesdk.DefaultReplicas"),
		"[mooncake] soft_pin":            flag(m.SoftPin, "MooncakeConfig.SoftPin"),
		"[mooncake] preferred_segments":  described(len(m.PreferredSegments) == 0, "empty: no preference"),
		"[mooncake] calls_in_flight":     count(int64(m.CallsInFlight), "mooncakesdk.DefaultCallsInFlight"),
	}
	var fields []string
	for _, k := range storeconfig.BlobKeys {
		fields = append(fields, "[blob] "+k)
	}
	for _, k := range knownKeys(t, "mooncake") {
		fields = append(fields, "[mooncake] "+k)
	}
	return want, fields
}

// knownKeys is the keys mooncakesdk's loader knows in a section, as its
// refusal of an unknown key lists them.
func knownKeys(t *testing.T, section string) []string {
	_, err := mooncakesdk.ParseStoreConfig("probe.toml", []byte("["+section+"]\nno_such_key = 1\n"))
	for _, e := range refusals(err) {
		var se *storeconfig.Error
		if errors.As(e, &se) && se.Key == "no_such_key" {
			m := knownList.FindStringSubmatch(se.Reason)
			require.NotNil(t, m, "the refusal of an unknown key lists the known ones: %q", se.Reason)
			return strings.Split(m[1], ", ")
		}
	}
	t.Fatalf("mooncakesdk took an unknown key in [%s]: %v", section, err)
	return nil
}

var knownList = regexp.MustCompile(`\(known: ([^)]*)\)`)

// refuses reports whether err holds a refusal of section's key.
func refuses(err error, section, key string) bool {
	for _, e := range refusals(err) {
		var se *storeconfig.Error
		if errors.As(e, &se) && se.Section == section && se.Key == key {
			return true
		}
	}
	return false
}

// fakesdkOptions is what a fake store makes of fakesdk.Options left
// zero.
func fakesdkOptions(*testing.T) (map[string]value, []string) {
	return map[string]value{
		"Capacity":        described(true, "0: no limit (fakesdk.Options)"),
		"RDMA":            described(true, "false: TCP (fakesdk.Options)"),
		"Latency":         described(true, "0: none (fakesdk.Options)"),
		"DiscardTimeout":  duration(fakesdk.DefaultDiscardTimeout, "fakesdk.DefaultDiscardTimeout"),
		"TransferTimeout": duration(fakesdk.DefaultTCPTransferTimeout, "fakesdk.DefaultTCPTransferTimeout"),
	}, exported(fakesdk.Options{})
}

// poolOptions is what pool.Start makes of pool.Options left zero: the
// defaults its withDefaults fills in, read from its source.
func poolOptions(t *testing.T) (map[string]value, []string) {
	r := openRepo(t)
	d, err := zeroDefaults(filepath.Join(r.root, "mooncakedrv", "pool"), "withDefaults")
	require.NoError(t, err)
	from := "pool.Options.withDefaults"
	return map[string]value{
		"Dir":               required(errors.Is(pool.Check(t.Context(), ""), pool.ErrNotAbsolute), "pool.Start checks it with pool.Check"),
		"Providers":         count(d["Providers"], from),
		"Isolate":           described(true, "false: loopback"),
		"SegmentSize":       size(d["SegmentSize"], from),
		"LocalBufferSize":   size(d["LocalBufferSize"], from),
		"Eviction":          described(true, "false: eviction off"),
		"PutDiscardTimeout": described(true, "0: no flag, Mooncake's own"),
		"PutReleaseTimeout": described(true, "0: no flag, Mooncake's own"),
		"ClientTTL":         described(true, "0: no flag, Mooncake's own"),
		"MasterFlags":       described(true, "none added"),
		"ProviderFlags":     described(true, "none added"),
		"MasterEnv":         described(true, "none added"),
		"ProviderEnv":       described(true, "none added"),
		"LogDir":            described(true, "empty: a temporary folder"),
		"Logger":            described(d["Logger"] == 0, "nil: slog.Default()"),
		"StartTimeout":      duration(time.Duration(d["StartTimeout"]), from),
		"StopTimeout":       duration(time.Duration(d["StopTimeout"]), from),
		"Attempts":          count(d["Attempts"], from),
	}, exported(pool.Options{})
}

// nodeConfig is what node.New makes of node.Config left zero.
func nodeConfig(*testing.T) (map[string]value, []string) {
	_, err := node.New(node.Config{})
	return map[string]value{
		"Driver":          required(errors.Is(err, node.ErrConfig) && strings.Contains(err.Error(), "Driver"), "node.New"),
		"KeyPrefix":       text(storeconfig.DefaultKeyPrefix, "storeconfig.DefaultKeyPrefix"),
		"MaxRowsPerCall":  described(true, "0: no cap"),
		"MaxBytesPerCall": described(true, "0: no cap"),
		"Socket":          described(true, "empty: ListenAndServe needs one"),
		"Mode":            mode(node.DefaultMode, "node.DefaultMode"),
		"AllowUIDs":       described(true, "empty: the node's own user"),
		"MaxFrame":        size(node.DefaultMaxFrame, "node.DefaultMaxFrame"),
		"MaxAttempts":     count(node.DefaultMaxAttempts, "node.DefaultMaxAttempts"),
		"MaxRows":         count(node.DefaultMaxRows, "node.DefaultMaxRows"),
		"MaxLendBytes":    size(node.DefaultMaxLendBytes, "node.DefaultMaxLendBytes"),
		"MaxRegions":      count(node.DefaultMaxRegions, "node.DefaultMaxRegions"),
		"OutQueue":        count(node.DefaultOutQueue, "node.DefaultOutQueue"),
		"EngineWait":      duration(node.DefaultEngineWait, "node.DefaultEngineWait"),
		"ReclaimAbove":    described(true, "0: never"),
		"ReclaimWait":     duration(node.DefaultReclaimWait, "node.DefaultReclaimWait"),
		"RequireScope":    described(true, "false: unscoped sessions served"),
		"Tenants":         described(true, "none: the tenant \"\" alone"),
		"Events":          described(true, "nil: no one told"),
		"Logger":          described(true, "nil: slog.Default()"),
	}, exported(node.Config{})
}

// nodeSection is what `kvshare node` makes of a [node] key left out:
// the node's defaults, but for shutdown_wait, the command's own.
func nodeSection(t *testing.T) (map[string]value, []string) {
	cfg, _ := nodeConfig(t)
	return map[string]value{
		storeconfig.KeySocket:       described(true, "the command's: $XDG_RUNTIME_DIR/kvshare/node.sock"),
		storeconfig.KeyMode:         cfg["Mode"],
		storeconfig.KeyAllowUIDs:    cfg["AllowUIDs"],
		storeconfig.KeyMaxFrame:     cfg["MaxFrame"],
		storeconfig.KeyMaxAttempts:  cfg["MaxAttempts"],
		storeconfig.KeyMaxRows:      cfg["MaxRows"],
		storeconfig.KeyMaxLendBytes: cfg["MaxLendBytes"],
		storeconfig.KeyMaxRegions:   cfg["MaxRegions"],
		storeconfig.KeyOutQueue:     cfg["OutQueue"],
		storeconfig.KeyEngineWait:   cfg["EngineWait"],
		storeconfig.KeyShutdownWait: described(true, "the command's own, in tools/internal"),
		storeconfig.KeyReclaimAbove: cfg["ReclaimAbove"],
		storeconfig.KeyReclaimWait:  cfg["ReclaimWait"],
		storeconfig.KeyRequireScope: cfg["RequireScope"],
		storeconfig.KeyTenants:      cfg["Tenants"],
	}, storeconfig.NodeKeys
}

// memdrvStoreOptions is what memdrv.NewBoundedStore makes of
// memdrv.StoreOptions left zero.
func memdrvStoreOptions(*testing.T) (map[string]value, []string) {
	return map[string]value{
		"Capacity":   described(true, "0: a store that holds nothing"),
		"ChunkBytes": size(memdrv.DefaultChunkBytes, "memdrv.DefaultChunkBytes"),
		"HugePages":  described(true, "0: base pages"),
		"Lock":       described(true, "false: not locked"),
	}, exported(memdrv.StoreOptions{})
}

// memdrvOptions is what memdrv.New makes of memdrv.Options left zero:
// read from a driver built so.
func memdrvOptions(t *testing.T) (map[string]value, []string) {
	d := memdrv.New(memdrv.NewStore(), memdrv.Options{})
	defer func() {
		require.True(t, d.Drain(t.Context()), "an idle driver drains at once")
		require.NoError(t, d.Close())
	}()
	caps := d.Capabilities()
	_, workers, _ := d.Workers("")
	return map[string]value{
		"Put":            described(caps.Put && caps.Get, "both directions served"),
		"Get":            described(caps.Put && caps.Get, "both directions served"),
		"DeviceMemory":   described(!caps.DeviceMemory, "Device regions refused"),
		"Hints":          described(!caps.Hints, "hints refused"),
		"MultiSpan":      described(!caps.MultiSpan, "one span per row"),
		"MaxRowsPerOp":   described(caps.MaxRowsPerOp == 0, "no cap"),
		"Workers":        count(int64(workers), "the workers of a memdrv.Driver built from the zero Options"),
		"NoCancel":       described(caps.Cancel, "Cancel declared"),
		"NoAbsentIsMiss": described(caps.AbsentIsMiss, "AbsentIsMiss declared"),
		"Logger":         described(true, "nil: slog.Default()"),
	}, exported(memdrv.Options{})
}

// bindingConfig is what binding.New makes of binding.Config left zero.
func bindingConfig(*testing.T) (map[string]value, []string) {
	return map[string]value{
		"KeyPrefix":       text(storeconfig.DefaultKeyPrefix, "storeconfig.DefaultKeyPrefix"),
		"Scope":           described(true, "the zero Scope: unscoped keys"),
		"MaxRowsPerCall":  described(true, "0: no cap of the backend's own"),
		"MaxBytesPerCall": described(true, "0: no cap"),
		"Wake":            described(true, "nil: none"),
		"Logger":          described(true, "nil: slog.Default()"),
		"SlowCall":        duration(binding.DefaultSlowCall, "binding.DefaultSlowCall"),
		"ReclaimAbove":    described(true, "0: never"),
		"ReclaimWait":     duration(binding.DefaultReclaimWait, "binding.DefaultReclaimWait"),
	}, exported(binding.Config{})
}
