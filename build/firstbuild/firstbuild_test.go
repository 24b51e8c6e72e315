package firstbuild

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestNoise(t *testing.T) {
	out := "go: downloading github.com/x/y v1.0.0\n# github.com/NVIDIA/go-nvml/pkg/nvml\ncgo-gcc-prolog:263:2: warning: deprecated\ngo: finding module for package z\n"
	assert.Equal(t, []string{"# github.com/NVIDIA/go-nvml/pkg/nvml", "cgo-gcc-prolog:263:2: warning: deprecated"}, Noise(out))
	assert.Empty(t, Noise("go: downloading a v1\n\n"))
	assert.Empty(t, Noise(""))
}

func TestOwn(t *testing.T) {
	assert.NoError(t, Own("kvshare roundtrip: 1024 blocks\npublish ...\n", ""))
	assert.ErrorContains(t, Own("kvshare roundtrip: 1024 blocks\n", "slog: warn\n"), "standard error")
	assert.ErrorContains(t, Own("warning: x\nkvshare roundtrip: 1\n", ""), `"warning: x"`)
}
