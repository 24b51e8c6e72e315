package doctor

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBadConfigIsNamedAndStopsEverything(t *testing.T) {
	good := config("/nonexistent/libmooncake_store.so", "127.0.0.1:25151", "http://127.0.0.1:28180/metadata")
	for _, c := range []struct {
		name string
		text string
		want []string // in the config line
	}{
		{"unknown key", strings.Replace(good, "master =", "mastr =", 1),
			[]string{"[mooncake] mastr: unknown key", "[mooncake] master: is required"}},
		{"wrong type", strings.Replace(good, "global_segment_size = 0", `global_segment_size = "2 GB"`, 1),
			[]string{"[mooncake] global_segment_size: wants an integer, got a string"}},
		{"HA master list", strings.Replace(good, `master = "127.0.0.1:25151"`, `master = "a:1,b:2"`, 1),
			[]string{"[mooncake] master: an HA master list is not supported"}},
		{"master as URL", strings.Replace(good, `master = "127.0.0.1:25151"`, `master = "http://a:1"`, 1),
			[]string{"[mooncake] master: must be host:port, not a URL"}},
		{"unknown section", good + "\n[extra]\nx = 1\n",
			[]string{"[extra]: unknown section"}},
		{"bad protocol", strings.Replace(good, `protocol = "tcp"`, `protocol = "udp"`, 1),
			[]string{`[mooncake] protocol: must be "tcp" or "rdma", got "udp"`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := storeFile(t, c.text)
			rep := Run(t.Context(), Options{ConfigPath: path, LookupEnv: noEnv})
			assert.True(t, rep.Failed())
			require.Len(t, rep.Findings, 2, "the config's line, and one for the rest")
			f := rep.Findings[0]
			assert.Equal(t, CheckConfig, f.Check)
			assert.Equal(t, Fail, f.Verdict)
			assert.Contains(t, f.Detail, path, "names the file")
			for _, w := range c.want {
				assert.Contains(t, f.Detail, w)
			}
			assert.Equal(t, rest(checks[1:], "the config was refused"), rep.Findings[1])
			assert.Contains(t, rep.Findings[1].Detail, "the 11 other checks (key prefix, library, ")
			for _, c := range checks[1:] {
				f, found := rep.Find(c)
				assert.True(t, found, c)
				assert.Equal(t, Skip, f.Verdict, c)
				assert.Contains(t, f.Detail, "not run: the config was refused", c)
			}
		})
	}
}

func TestMissingConfigFileIsNamed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nosuch.toml")
	rep := Run(t.Context(), Options{ConfigPath: path, LookupEnv: noEnv})
	f, _ := rep.Find(CheckConfig)
	assert.Equal(t, Fail, f.Verdict)
	assert.Contains(t, f.Detail, path)
	assert.Contains(t, f.Detail, "no such file")
}

func TestConfigLineSaysWhatWasRead(t *testing.T) {
	cfg, f := checkConfig(storeFile(t, config("/x/lib.so", "10.0.0.1:25151", "http://10.0.0.1:28180/metadata")))
	assert.Equal(t, OK, f.Verdict)
	assert.Equal(t, "10.0.0.1:25151", cfg.Mooncake.Master)
	for _, want := range []string{"master 10.0.0.1:25151", "metadata http://10.0.0.1:28180/metadata", "protocol tcp", "global segment 0 B", "local buffer 64 MiB", "4 workers", "calls_in_flight 1", "replicas 1"} {
		assert.Contains(t, f.Detail, want)
	}
}

func TestConfigLineSaysTheReplicas(t *testing.T) {
	path := storeFile(t, config("/x/lib.so", "10.0.0.1:25151", "http://10.0.0.1:28180/metadata")+
		"replicas = 2\nsoft_pin = true\npreferred_segments = [\"10.0.0.2:13000\", \"10.0.0.3:13000\"]\n")
	_, f := checkConfig(path)
	require.Equal(t, OK, f.Verdict, f.Detail)
	assert.Contains(t, f.Detail, "replicas 2, soft pin, preferred segments 10.0.0.2:13000 10.0.0.3:13000")
}

func TestKeyPrefix(t *testing.T) {
	for _, c := range []struct {
		name, prefix string
		verdict      Verdict
		want         string
	}{
		{"set", "team/kv", OK, "team/kv/doctor/"},
		{"unset", "", OK, "kvshare/doctor/"},
		{"trailing slash", "team/", Fail, "[blob] key_prefix"},
		{"space", "te am", Fail, "[blob] key_prefix"},
	} {
		t.Run(c.name, func(t *testing.T) {
			text := strings.Replace(config("/x/lib.so", "127.0.0.1:1", "http://127.0.0.1:2/metadata"), `key_prefix = "kvshare"`, "key_prefix = \""+c.prefix+"\"", 1)
			path := storeFile(t, text)
			cfg, f := checkConfig(path)
			if c.verdict == Fail && f.Verdict == Fail { // a loader that checks the prefix itself
				assert.Contains(t, f.Detail, c.want)
				assert.Contains(t, f.Detail, path, "names the file")
				return
			}
			require.Equal(t, OK, f.Verdict, f.Detail)
			prefix, f := checkKeyPrefix(cfg.File, cfg.Blob)
			assert.Equal(t, c.verdict, f.Verdict, f.Detail)
			assert.Contains(t, f.Detail, c.want)
			if c.verdict == Fail {
				assert.Contains(t, f.Detail, path, "names the file")
				assert.Empty(t, prefix)
			}
		})
	}
}
