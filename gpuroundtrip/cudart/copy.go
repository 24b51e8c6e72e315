package cudart

import "fmt"

// CopyToDevice copies src to device memory at dst (cudaMemcpy, host to
// device) and returns when the copy is done. dst..dst+len(src) must lie
// inside one allocation of Alloc ([ErrBadArgument] otherwise, without
// calling the runtime). src may be pinned (AllocHost, the fast path) or
// any Go memory, which is kept alive for the call.
func (r *Runtime) CopyToDevice(dst uintptr, src []byte) error {
	if len(src) == 0 {
		return nil
	}
	if err := r.deviceRange(dst, len(src), "CopyToDevice"); err != nil {
		return err
	}
	return r.call(func() string { return fmt.Sprintf("cudaMemcpy(%#x, host, %d, HostToDevice)", dst, len(src)) },
		func() int32 { return r.lib.fn.memcpyToDevice(dst, src, uint64(len(src)), memcpyHostToDevice) })
}

// CopyToHost copies len(dst) bytes of device memory at src into dst
// (cudaMemcpy, device to host) and returns when the copy is done.
// src..src+len(dst) must lie inside one allocation of Alloc.
func (r *Runtime) CopyToHost(dst []byte, src uintptr) error {
	if len(dst) == 0 {
		return nil
	}
	if err := r.deviceRange(src, len(dst), "CopyToHost"); err != nil {
		return err
	}
	return r.call(func() string { return fmt.Sprintf("cudaMemcpy(host, %#x, %d, DeviceToHost)", src, len(dst)) },
		func() int32 { return r.lib.fn.memcpyToHost(dst, src, uint64(len(dst)), memcpyDeviceToHost) })
}
