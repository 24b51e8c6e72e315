package mooncakesdk

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every range takes its two ends and refuses the values just past them.
func TestParseStoreConfigRangeEdges(t *testing.T) {
	master := func(addr string) string {
		return strings.Replace(goodMooncake, `"127.0.0.1:50051"`, fmt.Sprintf("%q", addr), 1)
	}
	for _, tc := range []struct {
		name, toml string
		ok         bool
	}{
		{"workers 0 (the default)", goodMooncake + "workers = 0\n", true},
		{"workers -1", goodMooncake + "workers = -1\n", false},
		{"workers 1", goodMooncake + "workers = 1\n", true},
		{"workers at the most", goodMooncake + fmt.Sprintf("workers = %d\n", MaxWorkers), true},
		{"workers past the most", goodMooncake + fmt.Sprintf("workers = %d\n", MaxWorkers+1), false},
		{"rows per call 1", goodMooncake + "rows_per_call = 1\n", true},
		{"rows per call at the most", goodMooncake + fmt.Sprintf("rows_per_call = %d\n", MaxRowsPerCall), true},
		{"rows per call past the most", goodMooncake + fmt.Sprintf("rows_per_call = %d\n", MaxRowsPerCall+1), false},
		{"bytes per call 1", goodMooncake + "bytes_per_call = 1\n", true},
		{"calls in flight 0 (no bound)", goodMooncake + "calls_in_flight = 0\n", true},
		{"calls in flight at the most", goodMooncake + fmt.Sprintf("calls_in_flight = %d\n", MaxWorkers), true},
		{"calls in flight past the most", goodMooncake + fmt.Sprintf("calls_in_flight = %d\n", MaxWorkers+1), false},
		{"bytes per call at the most", goodMooncake + fmt.Sprintf("bytes_per_call = %d\n", int64(MaxBytesPerCall)), true},
		{"blob rows at the most", fmt.Sprintf("[blob]\nrows_per_call = %d\n", MaxRowsPerCall) + goodMooncake, true},
		{"blob rows past the most", fmt.Sprintf("[blob]\nrows_per_call = %d\n", MaxRowsPerCall+1) + goodMooncake, false},
		{"blob bytes at the most", fmt.Sprintf("[blob]\nbytes_per_call = %d\n", int64(MaxBytesPerCall)) + goodMooncake, true},
		{"master port 1", master("127.0.0.1:1"), true},
		{"master port 65535", master("127.0.0.1:65535"), true},
		{"master port 0", master("127.0.0.1:0"), false},
		{"master port 65536", master("127.0.0.1:65536"), false},
		{"a NUL as the key prefix's first byte", "[blob]\nkey_prefix = \"\\u0000a\"\n" + goodMooncake, false},
		{"a NUL as the library's first byte", goodMooncake + "library = \"\\u0000lib.so\"\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseStoreConfig("edge.toml", []byte(tc.toml))
			if tc.ok {
				assert.NoError(t, err)
			} else {
				assert.ErrorIs(t, err, ErrConfig)
			}
		})
	}
}

// A table where a value belongs is refused once, however many keys it
// holds: its keys are not refused again one by one.
func TestATableForAValueIsRefusedOnce(t *testing.T) {
	for _, text := range []string{
		goodMooncake + "[mooncake.workers]\nn = 4\nm = 5\n",
		goodMooncake + "[mooncake.surplus]\nn = 4\nm = 5\n",
		goodMooncake + "Workers = \"4\"\n",
	} {
		_, err := ParseStoreConfig("table.toml", []byte(text))
		require.ErrorIs(t, err, ErrConfig, text)
		errs := err.(interface{ Unwrap() []error }).Unwrap()
		assert.Len(t, errs, 1, "%s: %v", text, err)
	}
}

// A parse error's position shows its line, and its column when known.
func TestConfigErrorShowsWhereItIs(t *testing.T) {
	for _, tc := range []struct {
		line, col int
		want      string
	}{
		{0, 0, "store config a.toml: [mooncake] workers: bad"},
		{3, 0, "store config a.toml:3: [mooncake] workers: bad"},
		{3, 1, "store config a.toml:3:1: [mooncake] workers: bad"},
		{1, 7, "store config a.toml:1:7: [mooncake] workers: bad"},
	} {
		e := &ConfigError{File: "a.toml", Line: tc.line, Column: tc.col, Section: "mooncake", Key: "workers", Reason: "bad"}
		assert.Equal(t, tc.want, e.Error())
	}
}
