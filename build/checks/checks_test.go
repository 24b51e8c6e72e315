package checks

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/build/modules"
	"github.com/kvshare/kvshare/patience"
)

func TestTheTagFlags(t *testing.T) {
	for _, tc := range []struct{ tags, vet, test string }{
		{"", "-tags=", "-tags="},
		{"mage", "-tags=mage", "-tags="},
		{"nvml", "-tags=nvml", "-tags=nvml"},
		{"mage,nvml", "-tags=mage,nvml", "-tags=nvml"},
	} {
		m := modules.Module{Dir: "x", Tags: tc.tags}
		assert.Equal(t, tc.vet, Tags(m), tc.tags)
		assert.Equal(t, tc.test, TestTags(m), tc.tags)
	}
}

func TestUnformatted(t *testing.T) {
	root := t.TempDir()
	for _, f := range []string{"go.mod", "binding/go.mod", "build/modules/list.go", "binding/x/y.go", "examples/c/go.mod"} {
		p := filepath.Join(root, filepath.FromSlash(f))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, nil, 0o644))
	}
	j := func(f string) string { return filepath.Join(root, filepath.FromSlash(f)) }
	out := strings.Join([]string{j("magefile.go"), j("build/modules/list.go"), j("binding/backend.go"), j("binding/x/y.go"), j("examples/c/main.go")}, "\n")
	assert.Equal(t, []string{j("magefile.go"), j("build/modules/list.go")}, Unformatted(out, root),
		"the root module's own files, its build packages included; nested modules' files are theirs")
	inBinding := j("binding/backend.go") + "\n" + j("binding/x/y.go") + "\n"
	assert.Equal(t, []string{j("binding/backend.go"), j("binding/x/y.go")}, Unformatted(inBinding, j("binding")))
	assert.Empty(t, Unformatted("", root))
}

func TestCgoEnv(t *testing.T) {
	for tags, quiet := range map[string]bool{"": false, "-tags=": false, "-tags=mage": false, "-tags=nvml": true, "-tags=mage,nvml": true, "nvml": true, "-tags=nvmlx": false} {
		if quiet {
			assert.Equal(t, []string{QuietCgo}, CgoEnv(tags), tags)
		} else {
			assert.Empty(t, CgoEnv(tags), tags)
		}
	}
	assert.Contains(t, QuietCgo, "-Wno-deprecated-declarations")
	assert.True(t, strings.HasPrefix(QuietCgo, "CGO_CFLAGS=-O2 -g "), "go's default flags kept")
}

func TestTestTimeout(t *testing.T) {
	got, err := TestTimeout()
	require.NoError(t, err)
	scale, err := patience.Scale()
	require.NoError(t, err)
	want := time.Duration(float64(DefaultTestTimeout) * scale).Round(time.Second)
	assert.Equal(t, "-timeout="+want.String(), got)
}
