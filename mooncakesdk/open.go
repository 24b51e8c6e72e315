package mooncakesdk

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"runtime"
)

// Open loads the Mooncake library and sets up one client, in this order,
// stopping at the first refusal:
//
//  1. cfg is checked ([StoreConfig.Validate]; [ErrConfig]);
//  2. the environment is checked ([CheckEnvironment]; [ErrEnvironment]);
//  3. the library is found (cfg's path, $KVSHARE_MOONCAKE_LIB, or
//     libmooncake_store.so on the loader's search path), hashed, checked
//     against cfg's sdk_sha256 pin ([ErrLibraryHash]), loaded, and every
//     one of the nineteen store_c.h symbols looked up ([ErrLibrary],
//     naming each one missing); its path and SHA-256 are logged;
//  4. the master's address accepts a TCP connection within ctx, or
//     within [DefaultMasterWait] when ctx has no deadline ([ErrMaster]);
//  5. the handle is created and set up on a goroutine locked to an OS
//     thread that exits without unlocking, so the thread whose signal
//     mask the library changes is thrown away ([ErrSetup]).
//
// If setup fails, the handle is destroyed at once and no other call
// reaches it: a Client exists only for a handle whose setup succeeded.
// If ctx ends while setup runs (it cannot be interrupted), Open returns
// ctx's error wrapped in [ErrSetup] and the handle is destroyed as soon as
// setup returns. logger receives the load and setup records; nil means
// slog.Default().
func Open(ctx context.Context, cfg StoreConfig, logger *slog.Logger) (Client, error) {
	if logger == nil {
		logger = slog.Default()
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := CheckEnvironment(os.LookupEnv); err != nil {
		return nil, err
	}
	lib, err := loadLibrary(cfg.Mooncake, os.LookupEnv, logger)
	if err != nil {
		return nil, err
	}
	waitCtx := ctx
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		waitCtx, cancel = context.WithTimeout(ctx, DefaultMasterWait)
		defer cancel()
	}
	if err := waitForMaster(waitCtx, cfg.Mooncake.Master); err != nil {
		return nil, err
	}
	return setUp(ctx, lib, cfg.Mooncake, logger)
}

// setupOutcome is what the setup thread reports: a handle whose setup
// succeeded, or an error (and no handle).
type setupOutcome struct {
	handle uintptr
	err    error
}

// setUp creates and sets up a handle on a throwaway OS thread.
func setUp(ctx context.Context, lib *library, m MooncakeConfig, logger *slog.Logger) (Client, error) {
	done := make(chan setupOutcome, 1)
	go func() {
		// Never unlocked: the first create blocks SIGINT, SIGTERM, SIGHUP
		// and SIGUSR1 on this thread (and the threads setup starts from it
		// inherit the mask). A goroutine that exits while locked takes its
		// thread with it, so no Go code ever runs on that thread again.
		// (Should this be the process's main thread, which Go never ends,
		// the runtime parks it for good instead: the same promise.)
		runtime.LockOSThread()
		done <- createAndSetUp(lib, m)
	}()

	select {
	case out := <-done:
		if out.err != nil {
			return nil, out.err
		}
		c := &storeClient{lib: lib, handle: out.handle, replicate: newReplicate(m)}
		logger.Info("mooncakesdk: client set up", "master", m.Master, "protocol", m.Protocol, "hostname", c.hostname())
		return c, nil
	case <-ctx.Done():
		go func() {
			out := <-done
			if out.handle != 0 {
				lib.fn.destroy(out.handle)
				logger.Warn("mooncakesdk: destroyed a client whose setup outlived Open's context", "master", m.Master)
			}
		}()
		return nil, fmt.Errorf("%w: %w while setup was running (the handle is destroyed once setup returns)", ErrSetup, ctx.Err())
	}
}

// createAndSetUp runs on the setup thread. On any failure it destroys
// the handle before reporting, so no handle escapes unless set up.
func createAndSetUp(lib *library, m MooncakeConfig) setupOutcome {
	h := lib.fn.create()
	if h == 0 {
		return setupOutcome{err: fmt.Errorf("%w: mooncake_store_create returned NULL", ErrSetup)}
	}
	rc := lib.fn.setup(h, m.LocalHostname, m.MetadataServer, m.GlobalSegmentSize, m.LocalBufferSize,
		m.Protocol, m.DeviceName(), m.Master)
	if rc != 0 {
		lib.fn.destroy(h)
		return setupOutcome{err: fmt.Errorf("%w: master %s: %w", ErrSetup, m.Master,
			&CallError{Func: "mooncake_store_setup", Code: Code(rc)})}
	}
	return setupOutcome{handle: h}
}
