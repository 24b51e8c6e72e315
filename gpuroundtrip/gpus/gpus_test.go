package gpus

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
)

func isNoGPU(err error) bool { return errors.Is(err, ErrNoGPU) }

func TestByPCIBusIDMatchesEitherSpelling(t *testing.T) {
	m := Machine{GPUs: []GPU{
		{Index: 0, Name: "a", PCIBusID: "00000000:18:00.0"},
		{Index: 1, Name: "b", PCIBusID: "00000000:2A:00.0"},
	}}
	for _, tc := range []struct {
		busID string
		want  string // "" for no match
	}{
		{"0000:18:00.0", "a"},
		{"00000000:18:00.0", "a"},
		{"0000:2a:00.0", "b"},
		{"0000:2A:00.0", "b"},
		{"0000:19:00.0", ""},
		{"", ""},
		{"garbage", ""},
		{"0000:18:00", ""},
		{"zz:18:00.0", ""},
	} {
		t.Run(tc.busID, func(t *testing.T) {
			g, ok := m.ByPCIBusID(tc.busID)
			assert.Equal(t, tc.want != "", ok)
			assert.Equal(t, tc.want, g.Name)
		})
	}
}

func TestGPUString(t *testing.T) {
	g := GPU{Index: 3, Name: "NVIDIA H200", PCIBusID: "00000000:18:00.0", MemoryBytes: 141 << 30}
	assert.Equal(t, "NVIDIA H200 (index 3, 00000000:18:00.0, 141 GiB)", g.String())
}
