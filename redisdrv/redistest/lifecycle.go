package redistest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"testing"

	"github.com/kvshare/kvshare/loopback"
)

// Stop stops the server by its PID: SIGTERM (with SIGCONT, so a frozen
// server sees it), then SIGKILL after StopTimeout. It is idempotent and
// fits t.Cleanup; after it the server starts nothing more (ErrStopped).
// The temporary working folder Start made is removed once the process is
// gone; an error names a process that survived.
func (s *Server) Stop() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return nil
	}
	s.stopped = true
	if s.proc != nil && s.proc.Alive() {
		if err := s.proc.Stop(s.log, s.opts.StopTimeout); err != nil {
			return err // the launcher's thread stays, so Pdeathsig stays armed
		}
		s.log.Info("redistest: stopped", "pid", s.proc.PID, "addr", loopback.HostPort(s.port))
	}
	s.frozen = false
	s.launch.Close()
	if s.ownDir {
		if err := os.RemoveAll(s.dir); err != nil {
			return fmt.Errorf("redistest: removing %s: %w", s.dir, err)
		}
	}
	return nil
}

// Kill SIGKILLs the server, as a crash would, and waits for its exit
// (within StopTimeout). Its data is gone; Restart starts it again.
func (s *Server) Kill() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	pr, err := s.running()
	if err != nil {
		return err
	}
	s.frozen = false
	return pr.Kill(s.opts.StopTimeout)
}

// Freeze stops the server with SIGSTOP and returns once the kernel shows
// it stopped (state T): it accepts connections but answers nothing until
// Resume.
func (s *Server) Freeze() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	pr, err := s.running()
	if err != nil {
		return err
	}
	if s.frozen {
		return fmt.Errorf("%w: redis-server pid %d is already frozen", ErrState, pr.PID)
	}
	err = pr.Freeze(s.opts.StopTimeout)
	// SIGSTOP was sent when only the wait failed: the process may be stopped.
	s.frozen = err == nil || errors.Is(err, loopback.ErrSignalState)
	return err
}

// Resume continues a frozen server with SIGCONT and returns once the
// kernel shows it running again.
func (s *Server) Resume() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	pr, err := s.running()
	if err != nil {
		return err
	}
	if !s.frozen {
		return fmt.Errorf("%w: redis-server pid %d is not frozen", ErrState, pr.PID)
	}
	s.frozen = false
	return pr.Resume(s.opts.StopTimeout)
}

// Restart stops the server if it runs (as Stop does, without ending the
// Server) and starts a new one on the same port with the same options,
// returning once it answers PING. The new server is empty: nothing
// persists. A new log file is started (LogPath).
func (s *Server) Restart(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return ErrStopped
	}
	if s.proc != nil {
		if err := s.proc.Stop(s.log, s.opts.StopTimeout); err != nil {
			return err
		}
	}
	s.frozen = false
	return s.start(ctx, false)
}

// running returns the running process, s.mu held.
func (s *Server) running() (*loopback.Process, error) {
	switch {
	case s.stopped:
		return nil, ErrStopped
	case s.proc == nil:
		return nil, ErrNotRunning
	case !s.proc.Alive():
		return nil, s.proc.ExitError(ErrNotRunning)
	}
	return s.proc, nil
}

// Cleanup registers a t.Cleanup that logs the server's log tail when t
// failed, stops the server and fails t when it survived.
func Cleanup(t testing.TB, s *Server) {
	t.Helper()
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("redis-server log %s (tail):\n%s", s.LogPath(), s.LogTail())
		}
		if err := s.Stop(); err != nil {
			t.Errorf("stopping redis-server: %v", err)
		}
	})
}

// StartForTest starts a server for t with o: the binary from Require (so
// t skips when the tier is off), the working folder under t.TempDir()
// when o.Dir is empty, the server's events in t's output when o.Logger is
// nil, stopped by Cleanup. It fails t when the server does not start.
func StartForTest(t testing.TB, o Options) *Server {
	t.Helper()
	binary := forTest(t, &o.Dir, &o.Logger)
	s, err := Start(t.Context(), binary, o)
	if err != nil {
		t.Fatalf("starting %s: %v", binary, err)
	}
	Cleanup(t, s)
	return s
}

// forTest returns the tier's binary for t (skipping t when the tier is
// off) and fills a test's defaults: the folder under t.TempDir() when
// *dir is empty, t's output as the logger when *logger is nil.
func forTest(t testing.TB, dir *string, logger **slog.Logger) string {
	t.Helper()
	binary := Require(t)
	if *dir == "" {
		*dir = t.TempDir()
	}
	if *logger == nil {
		*logger = slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return binary
}
