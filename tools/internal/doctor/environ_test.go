package doctor

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestEnvironment(t *testing.T) {
	for _, c := range []struct {
		name    string
		vars    map[string]string
		verdict Verdict
		want    []string
	}{
		{"bind address", map[string]string{"MC_TCP_BIND_ADDRESS": "127.0.0.1"}, OK, []string{"MC_TCP_BIND_ADDRESS=127.0.0.1", "no variable the driver refuses"}},
		{"bind address unset", nil, Warn, []string{"MC_TCP_BIND_ADDRESS is not set", "first address it finds", "for every client and segment provider"}},
		{"bind address empty", map[string]string{"MC_TCP_BIND_ADDRESS": ""}, Warn, []string{"MC_TCP_BIND_ADDRESS is empty", "an empty address"}},
		{"hot cache off", map[string]string{"MC_STORE_LOCAL_HOT_CACHE_SIZE": "0", "MC_TCP_BIND_ADDRESS": "127.0.0.1"}, OK, nil},
		{"MC_TCP_PROTO other than 1", map[string]string{"MC_TCP_PROTO": "0", "MC_TCP_BIND_ADDRESS": "127.0.0.1"}, OK, nil},
		{"hot cache", map[string]string{"MC_STORE_LOCAL_HOT_CACHE_SIZE": "1024"}, Fail, []string{`MC_STORE_LOCAL_HOT_CACHE_SIZE="1024"`}},
		{"legacy TCP framing", map[string]string{"MC_TCP_PROTO": "1"}, Fail, []string{"MC_TCP_PROTO=1"}},
		{"another engine, even empty", map[string]string{"MC_USE_TENT": ""}, Fail, []string{`MC_USE_TENT=""`}},
		{"two at once", map[string]string{"MC_USE_TEV1": "1", "MC_TCP_PROTO": "1"}, Fail, []string{"MC_USE_TEV1", "MC_TCP_PROTO=1"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := checkEnvironment(env(c.vars))
			assert.Equal(t, CheckEnvironment, f.Check)
			assert.Equal(t, c.verdict, f.Verdict, f.Detail)
			for _, w := range c.want {
				assert.Contains(t, f.Detail, w)
			}
		})
	}
}
