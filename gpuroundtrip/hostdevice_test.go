package gpuroundtrip

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The stand-in moves bytes as a GPU would: pinned host memory to device
// memory and back, at an offset, and frees what it allocated.
func TestHostDeviceCopies(t *testing.T) {
	d := NewHostDevice()
	assert.False(t, d.OnGPU())
	assert.Equal(t, "host memory (stand-in for a GPU)", d.Name())
	dev, err := d.Alloc(1 << 16)
	require.NoError(t, err)
	host, err := d.AllocHost(1 << 16)
	require.NoError(t, err)
	fill(host, 7)
	require.NoError(t, d.CopyToDevice(dev, host))
	back := make([]byte, 1<<15)
	require.NoError(t, d.CopyToHost(back, dev+1<<15))
	assert.True(t, bytes.Equal(host[1<<15:], back))
	require.NoError(t, d.Synchronize())
	n, h := d.Live()
	assert.Equal(t, [2]int{1, 1}, [2]int{n, h})
	require.NoError(t, d.Free(dev))
	require.NoError(t, d.FreeHost(host))
	n, h = d.Live()
	assert.Equal(t, [2]int{0, 0}, [2]int{n, h})
	require.NoError(t, d.Close())
}

// Bad input to the stand-in is refused, as the CUDA runtime binding
// refuses it.
func TestHostDeviceRefusesBadInput(t *testing.T) {
	d := NewHostDevice()
	dev, err := d.Alloc(4096)
	require.NoError(t, err)
	host, err := d.AllocHost(4096)
	require.NoError(t, err)
	t.Cleanup(func() {
		assert.NoError(t, d.Free(dev))
		assert.NoError(t, d.FreeHost(host))
	})
	for _, tc := range []struct {
		name string
		run  func() error
	}{
		{"Alloc(0)", func() error { _, err := d.Alloc(0); return err }},
		{"Alloc(-1)", func() error { _, err := d.Alloc(-1); return err }},
		{"AllocHost(0)", func() error { _, err := d.AllocHost(0); return err }},
		{"Free of an unknown address", func() error { return d.Free(dev + 1) }},
		{"Free of pinned memory", func() error { return d.Free(addrOf(host)) }},
		{"FreeHost of Go memory", func() error { return d.FreeHost(make([]byte, 8)) }},
		{"CopyToDevice past the end", func() error { return d.CopyToDevice(dev+4000, host[:200]) }},
		{"CopyToHost from pinned memory", func() error { return d.CopyToHost(make([]byte, 8), addrOf(host)) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.ErrorIs(t, tc.run(), ErrHostDevice)
		})
	}
	assert.NoError(t, d.CopyToDevice(dev, nil), "an empty copy is nothing to do")
}
