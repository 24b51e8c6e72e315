package pool

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"time"
)

// Role names a process of the pool.
type Role string

// The pool's two processes.
const (
	Master   Role = "master"
	Provider Role = "provider"
)

// launcher starts every child of one pool from a single goroutine locked
// to its OS thread for the pool's life. Children get SIGKILL when the
// thread that forked them dies (Pdeathsig), so pinning the fork to a
// thread that lives as long as the pool means a test binary that dies
// without running its cleanups (a timeout panic, os.Exit) takes its pool
// with it, while no Go runtime thread retiring early can kill a child.
type launcher struct {
	reqs chan func()
	quit chan struct{}
}

func newLauncher() *launcher {
	l := &launcher{reqs: make(chan func()), quit: make(chan struct{})}
	go func() {
		// Never unlocked: when the pool closes, the thread exits with the
		// goroutine, and so SIGKILLs any child that outlived Stop.
		runtime.LockOSThread()
		for {
			select {
			case f := <-l.reqs:
				f()
			case <-l.quit:
				return
			}
		}
	}()
	return l
}

// start runs cmd.Start on the launcher's thread.
func (l *launcher) start(cmd *exec.Cmd) error {
	errc := make(chan error, 1)
	l.reqs <- func() { errc <- cmd.Start() }
	return <-errc
}

func (l *launcher) close() { close(l.quit) }

// process is one child: its role, its log and its exit.
type process struct {
	role    Role
	cmd     *exec.Cmd
	pid     int
	logPath string
	exited  chan struct{} // closed once the child is reaped
	state   *os.ProcessState
}

// spawn starts path with args and env (added to this process's), output
// to logPath, in its own process group, SIGKILLed if the launcher's
// thread dies.
func spawn(l *launcher, role Role, path string, args, env []string, logPath string) (*process, error) {
	logFile, err := os.OpenFile(logPath, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("pool: %s log: %w", role, err)
	}
	defer logFile.Close() // the child holds its own descriptor
	cmd := exec.Command(path, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	fmt.Fprintf(logFile, "# pool: %s %s\n", path, strings.Join(args, " "))
	if err := l.start(cmd); err != nil {
		return nil, fmt.Errorf("pool: starting %s (%s): %w", role, path, err)
	}
	pr := &process{role: role, cmd: cmd, pid: cmd.Process.Pid, logPath: logPath, exited: make(chan struct{})}
	go func() {
		_ = cmd.Wait() // the exit is read from ProcessState
		pr.state = cmd.ProcessState
		close(pr.exited)
	}()
	return pr, nil
}

// alive reports whether the child has not been reaped yet.
func (pr *process) alive() bool {
	select {
	case <-pr.exited:
		return false
	default:
		return true
	}
}

// signal sends sig to the child if it still runs (by its PID, through
// os.Process, which never signals a reused PID).
func (pr *process) signal(sig syscall.Signal) error {
	err := pr.cmd.Process.Signal(sig)
	if err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("pool: %s (pid %d): %v: %w", pr.role, pr.pid, sig, err)
	}
	return nil
}

// stop sends SIGTERM (and SIGCONT, so a frozen child sees it), waits up to
// bound, then SIGKILLs and waits up to bound again.
func (pr *process) stop(log *slog.Logger, bound time.Duration) error {
	if !pr.alive() {
		return nil
	}
	start := time.Now()
	_ = pr.signal(syscall.SIGTERM)
	_ = pr.signal(syscall.SIGCONT)
	if pr.waitExit(bound) {
		log.Debug("pool: stopped", "role", pr.role, "pid", pr.pid, "after", time.Since(start).Round(time.Millisecond), "exit", pr.state.String())
		return nil
	}
	log.Warn("pool: no exit after SIGTERM, sending SIGKILL", "role", pr.role, "pid", pr.pid, "after", bound)
	return pr.kill(bound)
}

// kill SIGKILLs the child and waits up to bound for its exit.
func (pr *process) kill(bound time.Duration) error {
	_ = pr.signal(syscall.SIGKILL)
	if pr.waitExit(bound) {
		return nil
	}
	return fmt.Errorf("%w: %s pid %d", ErrStillRunning, pr.role, pr.pid)
}

// waitExit waits up to bound for the child to be reaped.
func (pr *process) waitExit(bound time.Duration) bool {
	t := time.NewTimer(bound)
	defer t.Stop()
	select {
	case <-pr.exited:
		return true
	case <-t.C:
		return false
	}
}

// exitError describes a child that has exited, with the tail of its log.
func (pr *process) exitError(sentinel error) error {
	return fmt.Errorf("%w: %s pid %d: %s; log %s:\n%s", sentinel, pr.role, pr.pid, pr.state, pr.logPath, logTail(pr.logPath))
}

// Tail limits: the master logs a multi-kilobyte metrics line every 10 s.
const (
	tailLines     = 15
	tailLineBytes = 400
	tailReadBytes = 64 << 10
)

// logTail returns the last lines of the log at path, each cut short.
func logTail(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return "  (log unreadable: " + err.Error() + ")"
	}
	defer f.Close()
	if info, err := f.Stat(); err == nil {
		_, _ = f.Seek(max(0, info.Size()-tailReadBytes), io.SeekStart) // the last tailReadBytes at most
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return "  (log unreadable: " + err.Error() + ")"
	}
	lines := strings.Split(string(bytes.TrimRight(data, "\n")), "\n")
	lines = lines[max(0, len(lines)-tailLines):]
	if len(lines) == 1 && lines[0] == "" {
		return "  (log empty)"
	}
	for i, l := range lines {
		if len(l) > tailLineBytes {
			l = l[:tailLineBytes] + " …"
		}
		lines[i] = "  | " + l
	}
	return strings.Join(lines, "\n")
}
