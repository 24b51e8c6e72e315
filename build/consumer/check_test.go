package consumer

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func writeFile(t *testing.T, name, body string) string {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(name), 0o755))
	require.NoError(t, os.WriteFile(name, []byte(body), 0o644))
	return name
}

func TestCheckGoMod(t *testing.T) {
	for _, tc := range []struct {
		name, goMod string
		want        []string
	}{
		{"good", "module c\n\nrequire github.com/kvshare/kvshare/binding v0.3.0\n", nil},
		{"a replace", "module c\n\nrequire github.com/kvshare/kvshare/binding v0.3.0\n\nreplace github.com/kvshare/kvshare/binding => ../../binding\n",
			[]string{"replaces github.com/kvshare/kvshare/binding"}},
		{"another version", "module c\n\nrequire github.com/kvshare/kvshare/binding v0.2.0\n",
			[]string{"requires github.com/kvshare/kvshare/binding at v0.2.0, but the repository's modules are at v0.3.0"}},
		{"no kvshare", "module c\n\nrequire github.com/stretchr/testify v1.12.1\n", []string{"requires no kvshare module"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFile(t, filepath.Join(dir, "go.mod"), tc.goMod)
			err := checkGoMod(dir, "v0.3.0")
			if tc.want == nil {
				assert.NoError(t, err)
				return
			}
			for _, w := range tc.want {
				assert.ErrorContains(t, err, w)
			}
		})
	}
}

func TestCheckVendor(t *testing.T) {
	name := writeFile(t, filepath.Join(t.TempDir(), "modules.txt"), `# github.com/kvshare/kvshare/binding v0.3.0
## explicit; go 1.26
github.com/kvshare/kvshare/binding
# github.com/ebitengine/purego v0.11.3
## explicit
github.com/ebitengine/purego
# go.opentelemetry.io/otel/metric v1.47.0
go.opentelemetry.io/otel/metric
`)
	assert.NoError(t, checkVendor(name, []string{"github.com/NVIDIA/go-nvml", "github.com/kvshare/kvshare/bind"}))
	err := checkVendor(name, []string{"github.com/ebitengine/purego", "go.opentelemetry.io"})
	assert.ErrorContains(t, err, "lists github.com/ebitengine/purego v0.11.3")
	assert.ErrorContains(t, err, "lists go.opentelemetry.io/otel/metric v1.47.0")
	assert.ErrorContains(t, checkVendor(filepath.Join(t.TempDir(), "none"), nil), "no such file")
}

func TestCheckOutput(t *testing.T) {
	assert.NoError(t, checkOutput("lend\nkvshare consumer: 64 rows, 4194304 bytes round-tripped, every byte identical\n"))
	assert.ErrorContains(t, checkOutput("kvshare consumer: 0 rows, 0 bytes round-tripped, every byte identical\n"), "round-tripped nothing")
	assert.ErrorContains(t, checkOutput("row 3 differs\n"), "does not say every byte round-tripped")
}

func TestCopyConsumerLeavesOutWhatTidyAndVendorMake(t *testing.T) {
	src := t.TempDir()
	writeFile(t, filepath.Join(src, "go.mod"), "module c\n")
	writeFile(t, filepath.Join(src, "go.sum"), "x\n")
	writeFile(t, filepath.Join(src, "main.go"), "package main\n")
	writeFile(t, filepath.Join(src, "vendor", "modules.txt"), "# x\n")
	dst := filepath.Join(t.TempDir(), "c")
	require.NoError(t, copyConsumer(src, dst))
	assert.FileExists(t, filepath.Join(dst, "go.mod"))
	assert.FileExists(t, filepath.Join(dst, "main.go"))
	assert.NoFileExists(t, filepath.Join(dst, "go.sum"))
	assert.NoDirExists(t, filepath.Join(dst, "vendor"))
}
