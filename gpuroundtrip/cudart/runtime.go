package cudart

import (
	"fmt"
	"log/slog"
	"runtime"
	"sync"
)

// Options say which runtime library to load and which device to use.
type Options struct {
	// Library is the CUDA runtime's path or name; empty means
	// $KVSHARE_CUDART, else [DefaultLibraries] in order.
	Library string
	// Device is the CUDA device ordinal (as the runtime numbers devices,
	// after CUDA_VISIBLE_DEVICES).
	Device int
	// Logger receives the runtime's one record at open; nil means
	// slog.Default().
	Logger *slog.Logger
}

// Runtime is the CUDA runtime API bound with purego, serving one device.
// Every CUDA call it makes runs on one goroutine locked to its OS thread
// (the owner), because the runtime's current device is per thread: the
// device selected at Open stays current for every later call, whichever
// goroutine asked for it.
//
// A Runtime is safe for concurrent use; calls are served one at a time,
// in the order they reach the owner.
type Runtime struct {
	lib      *library
	device   int
	pciBusID string
	runtimeV int
	driverV  int

	calls   chan func() // to the owner; unbuffered, so a call sent is a call run
	closing chan struct{}
	stopped chan struct{}
	once    sync.Once

	mu   sync.Mutex
	dev  map[uintptr]int64 // device allocations live, by address
	host map[uintptr]int64 // pinned host allocations live, by address
}

// Open loads the CUDA runtime (see [Options.Library]), starts the owner
// goroutine, and selects the device on it: it counts the devices, sets
// the device, and reads its PCI bus id and the runtime and driver
// versions. A library that cannot be loaded or lacks a function is an
// error wrapping [ErrLibrary]; no device, a driver too old for the
// runtime, or an ordinal out of range wrap [ErrNoDevice]. On error
// nothing is left running.
func Open(opts Options) (*Runtime, error) {
	if opts.Device < 0 {
		return nil, fmt.Errorf("%w: device %d", ErrNoDevice, opts.Device)
	}
	lib, err := loadLibrary(opts.Library)
	if err != nil {
		return nil, err
	}
	r := &Runtime{
		lib:     lib,
		device:  opts.Device,
		calls:   make(chan func()),
		closing: make(chan struct{}),
		stopped: make(chan struct{}),
		dev:     map[uintptr]int64{},
		host:    map[uintptr]int64{},
	}
	go r.own()
	if err := r.selectDevice(); err != nil {
		r.Close()
		return nil, err
	}
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	log.Info("cudart: CUDA runtime loaded", "library", lib.name, "device", r.device,
		"pci_bus_id", r.pciBusID, "runtime_version", r.runtimeV, "driver_version", r.driverV)
	return r, nil
}

// own is the owner goroutine: it locks itself to its OS thread and runs
// every call until Close. It exits without unlocking, so the thread,
// which the CUDA runtime has made its own (current device, context),
// ends with it instead of going back to Go's pool.
func (r *Runtime) own() {
	runtime.LockOSThread()
	defer close(r.stopped)
	for {
		select {
		case f := <-r.calls:
			f()
		case <-r.closing:
			return
		}
	}
}

// do runs f on the owner and waits for it; after Close, ErrClosed. A
// panic in f (purego refusing an argument, say) is recovered on the
// owner, which serves on, and returned as an error.
func (r *Runtime) do(f func()) error {
	done := make(chan struct{})
	var panicked any
	run := func() {
		defer close(done)
		defer func() { panicked = recover() }()
		f()
	}
	select {
	case r.calls <- run:
	case <-r.closing:
		return ErrClosed
	}
	<-done
	if panicked != nil {
		return fmt.Errorf("cudart: panic in a CUDA call: %v", panicked)
	}
	return nil
}

// call runs one CUDA call on the owner and turns a code other than
// cudaSuccess into an [*Error] (its text read on the owner too).
func (r *Runtime) call(what func() string, f func() int32) error {
	var err error
	if derr := r.do(func() {
		if code := f(); code != codeSuccess {
			err = &Error{Call: what(), Code: int(code), Name: r.lib.fn.getErrorName(code), Text: r.lib.fn.getErrorString(code)}
		}
	}); derr != nil {
		return derr
	}
	return err
}

// name returns a constant label for call.
func name(s string) func() string { return func() string { return s } }

// selectDevice counts the devices and makes r.device current on the
// owner's thread.
func (r *Runtime) selectDevice() error {
	fn := &r.lib.fn
	var n int32
	if err := r.call(name("cudaGetDeviceCount"), func() int32 { return fn.getDeviceCount(&n) }); err != nil {
		return fmt.Errorf("%w: %w", ErrNoDevice, err)
	}
	if n == 0 {
		return fmt.Errorf("%w: the CUDA runtime reports no device", ErrNoDevice)
	}
	if r.device >= int(n) {
		return fmt.Errorf("%w: device %d, but the CUDA runtime reports %d", ErrNoDevice, r.device, n)
	}
	if err := r.call(func() string { return fmt.Sprintf("cudaSetDevice(%d)", r.device) },
		func() int32 { return fn.setDevice(int32(r.device)) }); err != nil {
		return err
	}
	bus := make([]byte, 32)
	if err := r.call(name("cudaDeviceGetPCIBusId"), func() int32 { return fn.deviceGetPCIBusID(bus, int32(len(bus)), int32(r.device)) }); err != nil {
		return err
	}
	r.pciBusID = cString(bus)
	var rv, dv int32
	if err := r.call(name("cudaRuntimeGetVersion"), func() int32 { return fn.runtimeGetVersion(&rv) }); err != nil {
		return err
	}
	if err := r.call(name("cudaDriverGetVersion"), func() int32 { return fn.driverGetVersion(&dv) }); err != nil {
		return err
	}
	r.runtimeV, r.driverV = int(rv), int(dv)
	return nil
}

// cString is the bytes of b before its first NUL.
func cString(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}

// Device returns the device ordinal the runtime serves.
func (r *Runtime) Device() int { return r.device }

// PCIBusID returns the device's PCI bus id as the runtime writes it,
// e.g. "0000:18:00.0".
func (r *Runtime) PCIBusID() string { return r.pciBusID }

// Versions returns the runtime's and the driver's CUDA versions as the
// runtime encodes them (1000*major + 10*minor, e.g. 12080 for 12.8).
func (r *Runtime) Versions() (runtimeVersion, driverVersion int) { return r.runtimeV, r.driverV }

// Library returns the name the runtime library was loaded by.
func (r *Runtime) Library() string { return r.lib.name }

// MemInfo returns the device's free and total memory in bytes.
func (r *Runtime) MemInfo() (free, total uint64, err error) {
	err = r.call(name("cudaMemGetInfo"), func() int32 { return r.lib.fn.memGetInfo(&free, &total) })
	return free, total, err
}

// Synchronize waits until the device has finished all work
// (cudaDeviceSynchronize).
func (r *Runtime) Synchronize() error {
	return r.call(name("cudaDeviceSynchronize"), r.lib.fn.deviceSynchronize)
}

// Close stops the owner goroutine; every later call returns ErrClosed.
// It frees nothing and does not reset the device: free what you
// allocated first (the runtime's memory outlives Close otherwise), and
// other users of the CUDA runtime in this process keep their state. The
// library stays loaded. Close is idempotent.
func (r *Runtime) Close() error {
	r.once.Do(func() { close(r.closing) })
	<-r.stopped
	return nil
}
