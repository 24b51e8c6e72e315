package mooncakesdk

import (
	"strings"

	"github.com/kvshare/kvshare/storeconfig"
	"github.com/kvshare/kvshare/storeconfig/tomlfile"
)

// The defaults a store config gets for keys it leaves out.
const (
	DefaultProtocol     = "tcp"
	DefaultWorkers      = 4
	DefaultRowsPerCall  = 256
	DefaultBytesPerCall = 128 << 20
	// DefaultCallsInFlight: one call of each direction inside the store
	// at once.
	DefaultCallsInFlight = 1
	// DefaultReplicas: one copy of each object.
	DefaultReplicas = 1
)

// StoreConfig is one store config file: the blob backend's settings and
// the Mooncake client's. Build one with [LoadStoreConfig] or
// [ParseStoreConfig]; a StoreConfig built in code is checked again by
// [StoreConfig.Validate] (and by [Open]).
type StoreConfig struct {
	// File is the path the config was read from (for error messages).
	File     string
	Blob     BlobConfig
	Mooncake MooncakeConfig
}

// BlobConfig is the [blob] section: settings of the blob backend that
// stand above any particular store, shared by every store's file
// (package storeconfig). Hand it to binding.FromBlob for the backend's
// Config.
type BlobConfig = storeconfig.Blob

// MooncakeConfig is the [mooncake] section: where the library is, how the
// client is set up, and how the driver cuts its work.
type MooncakeConfig struct {
	// Library (library) is the path of libmooncake_store.so. Empty means
	// $KVSHARE_MOONCAKE_LIB, else the loader's search path.
	Library string
	// SDKSHA256 (sdk_sha256) lists the SHA-256 sums (lower-case hex) the
	// library may have. Empty means any library is accepted (its hash is
	// still logged).
	SDKSHA256 []string
	// Master (master) is the master's RPC address, one host:port. An HA
	// master list is refused.
	Master string
	// MetadataServer (metadata_server) is the transfer engine's metadata
	// service: an http://…/metadata URL, or "P2PHANDSHAKE".
	MetadataServer string
	// Protocol (protocol) is "tcp" (default) or "rdma".
	Protocol string
	// Devices (devices) names the RDMA devices; empty means the engine
	// discovers them.
	Devices []string
	// LocalHostname (local_hostname) is the address this client is known
	// by. Without a :port the library picks a free port itself.
	LocalHostname string
	// GlobalSegmentSize (global_segment_size) is the memory this client
	// contributes to the pool, in bytes; 0 contributes none.
	GlobalSegmentSize uint64
	// LocalBufferSize (local_buffer_size) is the library's internal
	// staging buffer, in bytes (unused by zero-copy puts and gets).
	LocalBufferSize uint64
	// Workers (workers) is the driver's worker count; 0 (or left out)
	// means the default, 4, as in mooncakedrv.Config.
	Workers int
	// RowsPerCall (rows_per_call) caps the rows of one SDK call; 0 (or
	// left out) means the default, 256.
	RowsPerCall int
	// BytesPerCall (bytes_per_call) caps the bytes of one SDK call; 0
	// (or left out) means the default, 128 MiB.
	BytesPerCall int64
	// CallsInFlight (calls_in_flight) is the most calls of one direction
	// the driver has inside the store at once (default 1; 0 means no
	// bound beyond Workers).
	CallsInFlight int
	// Replicas (replicas) is the copies of each object a put asks for;
	// 0 (or left out) means the default, 1. SoftPin (soft_pin) asks the master to keep the
	// objects from eviction while it can. PreferredSegments
	// (preferred_segments) names the segments (host:port, as providers
	// register them) the master should place copies on first. All three
	// reach every put's replicate config; with their defaults the put
	// passes none (the store's defaults).
	Replicas          int
	SoftPin           bool
	PreferredSegments []string
}

// LoadStoreConfig reads and checks the store config file at path. Every
// refusal wraps [ErrConfig] and is a [*ConfigError] naming the file, and
// the section and key where it lies; when there are several, all of them
// are joined (errors.As finds the first). Keys left out get their
// defaults.
func LoadStoreConfig(path string) (StoreConfig, error) {
	return decodeStoreConfig(path, tomlfile.Read(path, sections))
}

// ParseStoreConfig parses and checks a store config held in memory; file
// names it in errors and in the result's File. It refuses what
// [LoadStoreConfig] refuses.
func ParseStoreConfig(file string, data []byte) (StoreConfig, error) {
	return decodeStoreConfig(file, tomlfile.Parse(file, data, sections))
}

// Validate checks a config's values: the ranges, the master address, the
// protocol and the hashes that [ParseStoreConfig] checks.
func (c StoreConfig) Validate() error {
	return append(c.Blob.Check(c.File), c.check()...).Err()
}

// DeviceName is the device list as the library takes it: the names
// joined with commas.
func (m MooncakeConfig) DeviceName() string {
	return strings.Join(m.Devices, ",")
}
