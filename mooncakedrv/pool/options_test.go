package pool

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMasterArgsForTests(t *testing.T) {
	o, err := ForTests("/m").withDefaults()
	require.NoError(t, err)
	args := o.masterArgs(Host, 20001, 20002, 20003)
	for _, want := range []string{
		"--rpc_address=127.0.0.1", "--rpc_port=20001",
		"--enable_http_metadata_server=true", "--http_metadata_server_host=127.0.0.1",
		"--http_metadata_server_port=20002", "--metrics_host=127.0.0.1", "--metrics_port=20003",
		"--eviction_ratio=0", "--eviction_high_watermark_ratio=1.0",
		"--put_start_discard_timeout_sec=2", "--put_start_release_timeout_sec=4",
	} {
		assert.Contains(t, args, want)
	}
	for _, a := range args {
		assert.NotContains(t, a, "client_ttl", "zero ClientTTL keeps Mooncake's default")
	}
}

func TestMasterArgsWithEvictionAndTTL(t *testing.T) {
	o, err := Options{Dir: "/m", Eviction: true, ClientTTL: 3 * time.Second, MasterFlags: []string{"--v=1"}}.withDefaults()
	require.NoError(t, err)
	args := o.masterArgs(Host, 1, 2, 3)
	assert.Contains(t, args, "--client_ttl=3")
	assert.Equal(t, "--v=1", args[len(args)-1])
	for _, a := range args {
		assert.NotContains(t, a, "eviction")
		assert.NotContains(t, a, "put_start")
	}
}

func TestProviderArgs(t *testing.T) {
	o, err := Options{Dir: "/m", SegmentSize: 64 << 20, ProviderFlags: []string{"--threads=2"}}.withDefaults()
	require.NoError(t, err)
	args := o.providerArgs(Host, 20004, "127.0.0.1:20001", "http://127.0.0.1:20002/metadata")
	for _, want := range []string{
		"--host=127.0.0.1", "--port=20004", "--protocol=tcp",
		"--master_server_address=127.0.0.1:20001", "--metadata_server=http://127.0.0.1:20002/metadata",
		"--global_segment_size=67108864", "--local_buffer_size=16777216", "--threads=2",
	} {
		assert.Contains(t, args, want)
	}
}

func TestOptionsRefused(t *testing.T) {
	for name, o := range map[string]Options{
		"fraction of a second": {PutDiscardTimeout: 1500 * time.Millisecond},
		"negative ttl":         {ClientTTL: -time.Second},
		"release below discard": {
			PutDiscardTimeout: 4 * time.Second, PutReleaseTimeout: 2 * time.Second,
		},
		"negative segment":  {SegmentSize: -1},
		"negative attempts": {Attempts: -1},
	} {
		_, err := o.withDefaults()
		assert.ErrorIs(t, err, ErrOptions, name)
	}
}
