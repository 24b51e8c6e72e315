package cudart

import (
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Open counts the devices, selects one, and reads what identifies it,
// all through the library it was given.
func TestOpenSelectsTheDevice(t *testing.T) {
	f := newFake(t)
	f.setDevices(2, 0)
	r := f.open(t, 1)
	assert.Equal(t, int32(1), f.currentDevice())
	assert.Equal(t, 1, r.Device())
	assert.Equal(t, "0000:19:00.0", r.PCIBusID())
	rv, dv := r.Versions()
	assert.Equal(t, 12080, rv)
	assert.Equal(t, 12090, dv)
	assert.Equal(t, f.path, r.Library())
	assert.Equal(t, "cudaGetDeviceCount,cudaSetDevice,cudaDeviceGetPCIBusId,cudaRuntimeGetVersion,cudaDriverGetVersion", f.callLog())
	free, total, err := r.MemInfo()
	require.NoError(t, err)
	assert.Equal(t, uint64(80<<30), total)
	assert.Equal(t, total, free)
}

// No device to use is an error wrapping ErrNoDevice that says why, and
// leaves nothing running.
func TestOpenRefusesWhenNoDeviceIsUsable(t *testing.T) {
	for _, tc := range []struct {
		name      string
		count     int32
		countErr  int32
		device    int
		wantInErr string
		wantCalls string
	}{
		{"no device", 0, 0, 0, "the CUDA runtime reports no device", "cudaGetDeviceCount"},
		{"cudaErrorNoDevice", 0, 100, 0, "cudaErrorNoDevice (100): no CUDA-capable device is detected", "cudaGetDeviceCount"},
		{"driver too old", 0, 35, 0, "cudaErrorInsufficientDriver (35): CUDA driver version is insufficient", "cudaGetDeviceCount"},
		{"ordinal out of range", 2, 0, 2, "device 2, but the CUDA runtime reports 2", "cudaGetDeviceCount"},
		{"negative ordinal", 1, 0, -1, "device -1", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t)
			f.setDevices(tc.count, tc.countErr)
			r, err := Open(Options{Library: f.path, Device: tc.device, Logger: quiet})
			require.ErrorIs(t, err, ErrNoDevice)
			assert.Nil(t, r)
			assert.Contains(t, err.Error(), tc.wantInErr)
			assert.Equal(t, tc.wantCalls, f.callLog())
		})
	}
}

// Every CUDA call runs on one OS thread, the one the device was selected
// on, however many goroutines call.
func TestEveryCallRunsOnTheOwnerThread(t *testing.T) {
	f := newFake(t)
	r := f.open(t, 0)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			host, err := r.AllocHost(4096)
			if !assert.NoError(t, err) {
				return
			}
			for i := range 20 {
				d, err := r.Alloc(4096)
				if !assert.NoError(t, err) {
					return
				}
				host[0] = byte(g + i)
				assert.NoError(t, r.CopyToDevice(d, host))
				assert.NoError(t, r.CopyToHost(host, d))
				assert.NoError(t, r.Synchronize())
				assert.NoError(t, r.Free(d))
			}
			assert.NoError(t, r.FreeHost(host))
		})
	}
	wg.Wait()
	tids := f.tids()
	require.Len(t, tids, 5+8*(2+20*5))
	for i, tid := range tids {
		require.Equal(t, tids[1], tid, "call %d ran on another thread than cudaSetDevice", i)
	}
	assert.Zero(t, f.live(fakeDevice))
	assert.Zero(t, f.live(fakeHost))
}

// After Close every call is refused without reaching the runtime, and
// Close may be called again.
func TestCallsAfterCloseAreRefused(t *testing.T) {
	f := newFake(t)
	r := f.open(t, 0)
	before := f.callLog()
	require.NoError(t, r.Close())
	require.NoError(t, r.Close())
	_, err := r.Alloc(1)
	assert.ErrorIs(t, err, ErrClosed)
	_, err = r.AllocHost(1)
	assert.ErrorIs(t, err, ErrClosed)
	assert.ErrorIs(t, r.Synchronize(), ErrClosed)
	_, _, err = r.MemInfo()
	assert.ErrorIs(t, err, ErrClosed)
	assert.Equal(t, before, f.callLog())
	assert.False(t, strings.Contains(f.callLog(), "cudaMalloc"))
}

// A panic in a call is an error for its caller; the owner serves on,
// on the same thread.
func TestAPanicInACallIsAnError(t *testing.T) {
	f := newFake(t)
	r := f.open(t, 0)
	err := r.do(func() { panic("purego says no") })
	assert.EqualError(t, err, "cudart: panic in a CUDA call: purego says no")
	require.NoError(t, r.Synchronize())
	tids := f.tids()
	assert.Equal(t, tids[0], tids[len(tids)-1])
}
