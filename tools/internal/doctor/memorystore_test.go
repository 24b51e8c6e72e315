package doctor

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// An embedded store's file: its config and key prefix, and its capacity
// mapped as the store would map it and given back; huge pages asked and
// not given warn (the store runs without them), never fail.
func TestAnEmbeddedStoresFile(t *testing.T) {
	rep := Run(t.Context(), Options{ConfigPath: storeFile(t, "[blob]\nkey_prefix = \"team\"\n[memory]\ncapacity = 8388608\nchunk_bytes = 16384\nhuge_pages = \"2MiB\"\n")})
	require.Len(t, rep.Findings, 3)
	for i, c := range []string{CheckConfig, CheckKeyPrefix, CheckMemory} {
		assert.Equal(t, c, rep.Findings[i].Check, "in order")
	}
	assert.False(t, rep.Failed(), "%+v", rep.Findings)
	f, _ := rep.Find(CheckConfig)
	assert.Contains(t, f.Detail, "the embedded store, 8 MiB in chunks of 16 KiB, huge pages 2MiB, 2 workers")
	f, _ = rep.Find(CheckKeyPrefix)
	assert.Equal(t, `"team"`, f.Detail)
	f, _ = rep.Find(CheckMemory)
	assert.Contains(t, f.Detail, "8 MiB, ")
	switch {
	case f.Verdict == Warn:
		assert.Contains(t, f.Detail, "huge pages asked and not given: 8 MiB, base pages (2 MiB huge pages asked:")
	case strings.Contains(f.Detail, "MADV_HUGEPAGE"):
		assert.Equal(t, OK, f.Verdict, "transparent huge pages advised count as given")
	default:
		assert.Equal(t, OK, f.Verdict)
		assert.Contains(t, f.Detail, "2 MiB huge pages")
	}

	rep = Run(t.Context(), Options{ConfigPath: storeFile(t, "[memory]\ncapacity = 0\n")})
	f, _ = rep.Find(CheckMemory)
	assert.Equal(t, OK, f.Verdict)
	assert.Contains(t, f.Detail, "capacity 0: the store holds nothing")
}

// A refused [memory] section stops everything, naming the key.
func TestAnEmbeddedStoresFileRefused(t *testing.T) {
	rep := Run(t.Context(), Options{ConfigPath: storeFile(t, "[memory]\ncapacity = -5\nworkers = -1\n")})
	assert.True(t, rep.Failed())
	f, _ := rep.Find(CheckConfig)
	assert.Equal(t, Fail, f.Verdict)
	assert.Contains(t, f.Detail, "[memory] capacity: must be between 0 and")
	assert.Contains(t, f.Detail, "[memory] workers: must be between 0 (the default, 2) and 1024, got -1")
	f, _ = rep.Find(CheckMemory)
	assert.Equal(t, Skip, f.Verdict)
	assert.Contains(t, f.Detail, "the config was refused")
}
