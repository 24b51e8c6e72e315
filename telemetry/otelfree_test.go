package telemetry_test

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// siblings returns the folders of the kvshare modules this one builds on:
// the targets of its go.mod's relative replace directives.
func siblings(t *testing.T) []string {
	t.Helper()
	f, err := os.Open("go.mod")
	require.NoError(t, err)
	defer f.Close()
	var dirs []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		_, target, ok := strings.Cut(sc.Text(), "=>")
		if target = strings.TrimSpace(target); ok && strings.HasPrefix(target, "../") {
			dirs = append(dirs, target)
		}
	}
	require.NoError(t, sc.Err())
	return dirs
}

// OpenTelemetry stays in this module: no module it builds on (binding,
// memdrv, mooncakedrv, node and theirs) requires any of it, not even for its
// tests. (mage deps checks what each module's packages import; this
// checks the module graph, tests included.)
func TestModulesBelowStayFreeOfOpenTelemetry(t *testing.T) {
	dirs := siblings(t)
	for _, want := range []string{"../binding", "../memdrv", "../mooncakedrv", "../node"} {
		require.Contains(t, dirs, want, "telemetry's go.mod replaces it")
	}
	for _, dir := range dirs {
		gomod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if os.IsNotExist(err) {
			t.Skipf("%s is not beside this module (vendored alone?)", dir)
		}
		require.NoError(t, err)
		assert.False(t, bytes.Contains(gomod, []byte("go.opentelemetry.io")), "%s/go.mod requires OpenTelemetry", dir)
	}
}
