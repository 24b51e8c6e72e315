package mooncakesdk

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCheckEnvironment(t *testing.T) {
	for _, tc := range []struct {
		name    string
		env     map[string]string
		refused []string // variables the error must name
	}{
		{"nothing set", nil, nil},
		{"hot cache empty", map[string]string{EnvHotCacheSize: ""}, nil},
		{"hot cache zero", map[string]string{EnvHotCacheSize: "0"}, nil},
		{"hot cache on", map[string]string{EnvHotCacheSize: "33554432"}, []string{EnvHotCacheSize}},
		{"hot cache not a number", map[string]string{EnvHotCacheSize: "lots"}, []string{EnvHotCacheSize}},
		{"hot cache zero padded", map[string]string{EnvHotCacheSize: "00"}, []string{EnvHotCacheSize}},
		{"legacy tcp framing", map[string]string{EnvTCPProto: "1"}, []string{EnvTCPProto}},
		{"tcp framing v2", map[string]string{EnvTCPProto: "2"}, nil},
		{"tcp framing empty", map[string]string{EnvTCPProto: ""}, nil},
		{"tcp framing 1 with more", map[string]string{EnvTCPProto: "10"}, nil},
		{"TENT", map[string]string{EnvUseTENT: "1"}, []string{EnvUseTENT}},
		{"TENT set empty", map[string]string{EnvUseTENT: ""}, []string{EnvUseTENT}},
		{"TEv1 set to 0", map[string]string{EnvUseTEv1: "0"}, []string{EnvUseTEv1}},
		{"every refusal at once",
			map[string]string{EnvHotCacheSize: "1", EnvTCPProto: "1", EnvUseTENT: "", EnvUseTEv1: "yes"},
			[]string{EnvHotCacheSize, EnvTCPProto, EnvUseTENT, EnvUseTEv1}},
		{"unrelated variables", map[string]string{"MC_TCP_BIND_ADDRESS": "127.0.0.1", "MC_LOG_LEVEL": "2"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckEnvironment(func(k string) (string, bool) {
				v, ok := tc.env[k]
				return v, ok
			})
			if len(tc.refused) == 0 {
				assert.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, ErrEnvironment)
			for _, name := range tc.refused {
				assert.Contains(t, err.Error(), name)
			}
		})
	}
}
