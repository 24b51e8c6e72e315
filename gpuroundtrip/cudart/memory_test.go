package cudart

import (
	"bytes"
	"errors"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// addr is the address of b's first byte.
func addr(b []byte) uint64 { return uint64(uintptr(unsafe.Pointer(unsafe.SliceData(b)))) }

// What crosses the boundary: device memory the runtime allocated, pinned
// memory with the portable flag and not zeroed, copies of the right kind
// and size to the right places, and every allocation freed.
func TestMemoryAndCopiesCrossTheBoundary(t *testing.T) {
	f := newFake(t)
	r := f.open(t, 0)
	const n = 1 << 20
	dev, err := r.Alloc(n)
	require.NoError(t, err)
	assert.Equal(t, int32(1), f.isAlloc(uint64(dev), n, fakeDevice), "a device allocation of the runtime")

	host, err := r.AllocHost(n)
	require.NoError(t, err)
	require.Len(t, host, n)
	assert.Equal(t, int32(1), f.isAlloc(addr(host), n, fakeHost), "pinned memory of the runtime")
	assert.Equal(t, uint32(hostAllocPortable), f.hostFlags())
	assert.Equal(t, bytes.Repeat([]byte{0xa5}, 16), host[:16], "pinned memory is the runtime's, not zeroed by Go")

	for i := range host {
		host[i] = byte(i * 7)
	}
	require.NoError(t, r.CopyToDevice(dev, host))
	back, err := r.AllocHost(n)
	require.NoError(t, err)
	require.NoError(t, r.CopyToHost(back, dev))
	assert.True(t, bytes.Equal(host, back))

	// A copy into the middle of an allocation, from Go memory.
	part := []byte("kv page")
	require.NoError(t, r.CopyToDevice(dev+4096, part))
	require.NoError(t, r.CopyToHost(back[:4096+len(part)], dev))
	assert.Equal(t, part, back[4096:4096+len(part)])
	assert.Equal(t, uint64(n+len(part)), f.copied(memcpyHostToDevice))
	assert.Equal(t, uint64(n+4096+len(part)), f.copied(memcpyDeviceToHost))

	require.NoError(t, r.Free(dev))
	require.NoError(t, r.FreeHost(host))
	require.NoError(t, r.FreeHost(back))
	assert.Zero(t, f.live(fakeDevice))
	assert.Zero(t, f.live(fakeHost))
}

// A runtime error comes back as text: the call, the code, the runtime's
// name and string for it; the next call is unaffected.
func TestRuntimeErrorsAsText(t *testing.T) {
	for _, tc := range []struct {
		call string
		code int32
		run  func(r *Runtime) error
		want string
	}{
		{"cudaMalloc", 2, func(r *Runtime) error { _, err := r.Alloc(1024); return err },
			"cudart: cudaMalloc(1024): cudaErrorMemoryAllocation (2): out of memory"},
		{"cudaHostAlloc", 2, func(r *Runtime) error { _, err := r.AllocHost(2048); return err },
			"cudart: cudaHostAlloc(2048): cudaErrorMemoryAllocation (2): out of memory"},
		{"cudaDeviceSynchronize", 1, func(r *Runtime) error { return r.Synchronize() },
			"cudart: cudaDeviceSynchronize: cudaErrorInvalidValue (1): invalid argument"},
		{"cudaMemcpy", 999, func(r *Runtime) error {
			d, err := r.Alloc(8)
			require.NoError(t, err)
			return r.CopyToDevice(d, make([]byte, 8))
		}, "cudaErrorUnknown (999): unknown error"},
	} {
		t.Run(tc.call, func(t *testing.T) {
			f := newFake(t)
			r := f.open(t, 0)
			f.fail(tc.call, tc.code)
			err := tc.run(r)
			var ce *Error
			require.True(t, errors.As(err, &ce), "got %v", err)
			assert.Equal(t, int(tc.code), ce.Code)
			assert.Contains(t, err.Error(), tc.want)
			assert.NotErrorIs(t, err, ErrNoDevice)
			assert.NoError(t, tc.run(r), "the failure was scripted once")
		})
	}
}

// Bad arguments are refused before they reach the runtime.
func TestBadArgumentsNeverReachTheRuntime(t *testing.T) {
	f := newFake(t)
	r := f.open(t, 0)
	dev, err := r.Alloc(4096)
	require.NoError(t, err)
	host, err := r.AllocHost(4096)
	require.NoError(t, err)
	freed, err := r.Alloc(16)
	require.NoError(t, err)
	require.NoError(t, r.Free(freed))
	goMem := make([]byte, 64)
	before := f.callLog()
	for _, tc := range []struct {
		name string
		run  func() error
		want error
	}{
		{"Alloc(0)", func() error { _, err := r.Alloc(0); return err }, ErrBadArgument},
		{"Alloc(-1)", func() error { _, err := r.Alloc(-1); return err }, ErrBadArgument},
		{"AllocHost(0)", func() error { _, err := r.AllocHost(0); return err }, ErrBadArgument},
		{"Free(0)", func() error { return r.Free(0) }, ErrNotAllocated},
		{"Free of an address inside", func() error { return r.Free(dev + 8) }, ErrNotAllocated},
		{"Free twice", func() error { return r.Free(freed) }, ErrNotAllocated},
		{"FreeHost of Go memory", func() error { return r.FreeHost(goMem) }, ErrNotAllocated},
		{"FreeHost of a slice inside", func() error { return r.FreeHost(host[1:]) }, ErrNotAllocated},
		{"CopyToDevice past the end", func() error { return r.CopyToDevice(dev+4000, host[:200]) }, ErrBadArgument},
		{"CopyToHost past the end", func() error { return r.CopyToHost(make([]byte, 4097), dev) }, ErrBadArgument},
		{"CopyToDevice into freed memory", func() error { return r.CopyToDevice(freed, goMem) }, ErrBadArgument},
		{"CopyToHost from a host address", func() error { return r.CopyToHost(goMem, uintptr(addr(host))) }, ErrBadArgument},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.ErrorIs(t, tc.run(), tc.want)
		})
	}
	assert.Equal(t, before, f.callLog(), "no call reached the runtime")
	assert.NoError(t, r.CopyToDevice(dev, nil), "an empty copy is nothing to do")
	assert.NoError(t, r.CopyToHost(nil, dev))
	assert.Equal(t, before, f.callLog())
}
