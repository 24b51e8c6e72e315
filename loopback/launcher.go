package loopback

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
)

// A Launcher starts children from a single goroutine locked to its OS
// thread until Close. Children get SIGKILL when the thread that forked
// them dies (Pdeathsig), so pinning the fork to a thread that lives as
// long as the Launcher means a test binary that dies without running its
// cleanups takes its children with it, while no Go runtime thread
// retiring early can kill a child. Its methods are safe for concurrent
// use.
type Launcher struct {
	reqs chan func()
	quit chan struct{}
}

// NewLauncher starts the launcher's goroutine.
func NewLauncher() *Launcher {
	l := &Launcher{reqs: make(chan func()), quit: make(chan struct{})}
	go func() {
		// Never unlocked: on Close the thread exits with the goroutine,
		// and so SIGKILLs any child that outlived its Stop.
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

// Close ends the launcher's thread: every child still running gets
// SIGKILL. Call it once every child was stopped; Spawn after Close blocks.
func (l *Launcher) Close() { close(l.quit) }

// Spawn starts path with args and env (added to this process's), its
// output to logPath (created or truncated, the command line first), in
// its own process group, SIGKILLed if the launcher's thread dies. name
// is how errors and logs call the child.
func (l *Launcher) Spawn(name, path string, args, env []string, logPath string) (*Process, error) {
	return l.spawn(name, path, args, env, logPath, 0)
}

// SpawnInNetNS is Spawn with the child in a network namespace of its own
// (CLONE_NEWNET, which needs root): it starts with a loopback interface
// only, down, and reaches nothing until the caller moves an interface
// into it.
func (l *Launcher) SpawnInNetNS(name, path string, args, env []string, logPath string) (*Process, error) {
	return l.spawn(name, path, args, env, logPath, syscall.CLONE_NEWNET)
}

func (l *Launcher) spawn(name, path string, args, env []string, logPath string, cloneflags uintptr) (*Process, error) {
	logFile, err := os.OpenFile(logPath, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("loopback: %s log: %w", name, err)
	}
	defer logFile.Close() // the child holds its own descriptor
	cmd := exec.Command(path, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL, Cloneflags: cloneflags}
	fmt.Fprintf(logFile, "# loopback: %s %s\n", path, strings.Join(args, " "))
	if err := l.Start(cmd); err != nil {
		return nil, fmt.Errorf("loopback: starting %s (%s): %w", name, path, err)
	}
	pr := &Process{Name: name, PID: cmd.Process.Pid, LogPath: logPath, cmd: cmd, exited: make(chan struct{})}
	go func() {
		_ = cmd.Wait() // the exit is read from ProcessState
		pr.state = cmd.ProcessState
		close(pr.exited)
	}()
	return pr, nil
}

// Start starts cmd from the launcher's thread, so that a Pdeathsig in
// cmd.SysProcAttr takes effect when the Launcher's thread ends rather
// than when some Go runtime thread retires. The caller owns cmd: its
// pipes, its Wait.
func (l *Launcher) Start(cmd *exec.Cmd) error {
	errc := make(chan error, 1)
	l.reqs <- func() { errc <- cmd.Start() }
	return <-errc
}
