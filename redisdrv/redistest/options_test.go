package redistest

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestOptionsDefaults(t *testing.T) {
	o, err := Options{}.withDefaults()
	require.NoError(t, err)
	assert.Equal(t, "noeviction", o.Policy)
	assert.Equal(t, DefaultStartTimeout, o.StartTimeout)
	assert.Equal(t, DefaultStopTimeout, o.StopTimeout)
	assert.NotNil(t, o.Logger)
}

func TestOptionsRefused(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    Options
		text string
	}{
		{"negative maxmemory", Options{MaxMemory: -1}, "MaxMemory -1"},
		{"port too high", Options{Port: 70000}, "Port 70000"},
		{"negative port", Options{Port: -2}, "Port -2"},
		{"negative start timeout", Options{StartTimeout: -time.Second}, "StartTimeout"},
		{"negative stop timeout", Options{StopTimeout: -time.Second}, "StopTimeout"},
		{"unknown policy", Options{Policy: "lru"}, `Policy "lru"`},
		{"empty directive", Options{Extra: [][2]string{{"", "1"}}}, `name ""`},
		{"directive with space", Options{Extra: [][2]string{{"hz 10", "1"}}}, `name "hz 10"`},
		{"upper-case directive", Options{Extra: [][2]string{{"HZ", "1"}}}, `name "HZ"`},
		{"value with newline", Options{Extra: [][2]string{{"hz", "1\nport 1"}}}, "directive hz"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.o.withDefaults()
			require.ErrorIs(t, err, ErrOptions)
			assert.Contains(t, err.Error(), tc.text)
			// Start refuses them before looking at the binary.
			_, err = Start(t.Context(), "/nonexistent/redis-server", tc.o)
			require.ErrorIs(t, err, ErrOptions)
		})
	}
}

func TestConfigText(t *testing.T) {
	o, err := Options{MaxMemory: 1 << 20, Policy: "allkeys-lru", Extra: [][2]string{{"hz", "100"}, {"client-output-buffer-limit", `normal 0 0 0`}}}.withDefaults()
	require.NoError(t, err)
	text := o.config(23456, `/tmp/a dir/"q"\`)
	for _, line := range []string{
		`bind "127.0.0.1"`,
		`port "23456"`,
		`protected-mode "no"`,
		`daemonize "no"`,
		`save ""`,
		`appendonly "no"`,
		`logfile ""`,
		`dir "/tmp/a dir/\"q\"\\"`,
		`maxmemory "1048576"`,
		`maxmemory-policy "allkeys-lru"`,
		`hz 100`,
		`client-output-buffer-limit normal 0 0 0`,
	} {
		assert.Contains(t, strings.Split(text, "\n"), line)
	}
	assert.Less(t, strings.Index(text, "maxmemory-policy"), strings.Index(text, "hz"), "Extra comes after the server's own directives")
	assert.Equal(t, `"caf\xc3\xa9\x01"`, quoteConfig("café\x01"))
}
