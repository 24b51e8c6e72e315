package redistest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/redis/rueidis"

	"github.com/kvshare/kvshare/loopback"
)

// Server is a redis-server process on 127.0.0.1, a child of this process,
// with persistence off. Its methods are safe for concurrent use; those
// that start, stop or signal the process run one at a time.
type Server struct {
	binary  string
	version string
	opts    Options
	log     *slog.Logger
	launch  *loopback.Launcher
	dir     string
	ownDir  bool // dir was made by Start, so Stop removes it
	conf    string

	mu      sync.Mutex
	port    int
	proc    *loopback.Process // the latest start; nil before the first
	starts  int               // numbers the log files
	frozen  bool              // proc is stopped by SIGSTOP (Freeze)
	stopped bool
}

// Start checks binary (see Check) and starts it on 127.0.0.1 with o's
// settings and persistence off (save "", appendonly no; bind 127.0.0.1,
// protected-mode no, daemonize no), as a child that dies with this process.
// It returns once the server accepts a connection on its port and answers
// PING with PONG, within o.StartTimeout and ctx. A server that exits
// first is ErrEarlyExit, with the tail of its log; on a picked port it is
// launched again on a fresh one, three times in all. On error nothing
// Start launched is left running.
func Start(ctx context.Context, binary string, o Options) (*Server, error) {
	o, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	version, err := Check(ctx, binary)
	if err != nil {
		return nil, err
	}
	s := &Server{binary: binary, version: version, opts: o, log: o.Logger, dir: o.Dir, port: o.Port}
	if s.dir == "" {
		if s.dir, err = os.MkdirTemp("", "kvshare-redis-"); err != nil {
			return nil, fmt.Errorf("redistest: working folder: %w", err)
		}
		s.ownDir = true
	} else if s.dir, err = filepath.Abs(s.dir); err != nil {
		return nil, fmt.Errorf("redistest: working folder %q: %w", o.Dir, err)
	} else if err := os.MkdirAll(s.dir, 0o755); err != nil {
		return nil, fmt.Errorf("redistest: working folder: %w", err)
	}
	s.conf = filepath.Join(s.dir, "redis.conf")
	s.launch = loopback.NewLauncher()
	s.mu.Lock()
	err = s.start(ctx, o.Port == 0)
	s.mu.Unlock()
	if err != nil {
		s.ownDir = false // keep the log the error names
		return nil, errors.Join(err, s.Stop())
	}
	return s, nil
}

// Addr is the server's address, "127.0.0.1:port".
func (s *Server) Addr() string { return loopback.HostPort(s.Port()) }

// Port is the server's TCP port; Restart keeps it.
func (s *Server) Port() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.port
}

// PID is the running server process's ID, 0 when none runs.
func (s *Server) PID() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc != nil && s.proc.Alive() {
		return s.proc.PID
	}
	return 0
}

// LogPath is the log file of the latest start (redis-N.log in the
// working folder): the server's output, the command line first.
func (s *Server) LogPath() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.logPath(max(s.starts, 1))
}

// LogTail returns the last lines of the latest start's log, for an error
// or a failed test's output.
func (s *Server) LogTail() string { return loopback.LogTail(s.LogPath()) }

// Dir is the server's working folder (Options.Dir, or the temporary one
// Start made).
func (s *Server) Dir() string { return s.dir }

// Version is the server's version as Check read it, for example "7.0.15".
func (s *Server) Version() string { return s.version }

// Client returns a new rueidis client connected straight to the server,
// one connection (ForceSingleClient) without client-side caching, for raw
// commands: seeding keys, OBJECT, CONFIG SET, FLUSHALL. The caller closes
// it.
func (s *Server) Client() (rueidis.Client, error) {
	c, err := rueidis.NewClient(rueidis.ClientOption{
		InitAddress:       []string{s.Addr()},
		ForceSingleClient: true,
		DisableCache:      true,
	})
	if err != nil {
		return nil, fmt.Errorf("redistest: client for %s: %w", s.Addr(), err)
	}
	return c, nil
}

func (s *Server) logPath(n int) string {
	return filepath.Join(s.dir, fmt.Sprintf("redis-%d.log", n))
}

// start launches the server, s.mu held. pickPort: on a fresh port each
// attempt (retrying early exits); otherwise once, on s.port.
func (s *Server) start(ctx context.Context, pickPort bool) error {
	attempts := 1
	if pickPort {
		attempts = startAttempts
	}
	var errs []error
	for attempt := 1; attempt <= attempts; attempt++ {
		if pickPort {
			ports, err := loopback.Pick(loopback.Ports{N: 1, Avoid: []int{s.port}})
			if err != nil {
				return err
			}
			s.port = ports[0]
		}
		err := s.launchOne(ctx)
		if err == nil {
			return nil
		}
		if !errors.Is(err, ErrEarlyExit) {
			return err
		}
		errs = append(errs, err)
	}
	return fmt.Errorf("redistest: redis-server did not start in %d attempts: %w", attempts, errors.Join(errs...))
}

// launchOne writes the config, starts the process and waits until it
// answers PING; on error the process is stopped again.
func (s *Server) launchOne(ctx context.Context) error {
	if err := os.WriteFile(s.conf, []byte(s.opts.config(s.port, s.dir)), 0o644); err != nil {
		return fmt.Errorf("redistest: writing %s: %w", s.conf, err)
	}
	s.starts++
	logPath := s.logPath(s.starts)
	pr, err := s.launch.Spawn("redis-server", s.binary, []string{s.conf}, nil, logPath)
	if err != nil {
		return err
	}
	s.proc, s.frozen = pr, false
	began := time.Now()
	ctx, cancel := context.WithTimeout(ctx, s.opts.StartTimeout)
	defer cancel()
	err = pr.WaitReady(ctx, s.opts.StartTimeout, s.port)
	if err == nil {
		err = waitPong(ctx, pr, s.port)
	}
	if err != nil {
		err = errors.Join(err, pr.Stop(s.log, s.opts.StopTimeout))
		s.log.Warn("redistest: start failed", "pid", pr.PID, "port", s.port, "log", logPath, "err", err)
		return err
	}
	s.log.Info("redistest: started", "pid", pr.PID, "addr", loopback.HostPort(s.port), "version", s.version,
		"after", time.Since(began).Round(time.Millisecond), "log", logPath)
	return nil
}

// pongPoll is how often waitPong tries again after a reply other than
// PONG.
const pongPoll = 25 * time.Millisecond

// waitPong sends PING on fresh connections to port until one answers
// "+PONG", pr exits (ErrEarlyExit) or ctx ends (ErrNoPong).
func waitPong(ctx context.Context, pr *loopback.Process, port int) error {
	var last error
	for {
		if last = ping(ctx, port); last == nil {
			return nil
		}
		select {
		case <-pr.Exited():
			return pr.ExitError(ErrEarlyExit)
		case <-ctx.Done():
			return fmt.Errorf("%w: %s pid %d on port %d: %v (%w); log %s:\n%s",
				ErrNoPong, pr.Name, pr.PID, port, last, context.Cause(ctx), pr.LogPath, loopback.LogTail(pr.LogPath))
		case <-time.After(pongPoll):
		}
	}
}

// ping sends one PING on a new connection and reads the answer.
func ping(ctx context.Context, port int) error {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp4", loopback.HostPort(port))
	if err != nil {
		return err
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	if _, err := conn.Write([]byte("*1\r\n$4\r\nPING\r\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil {
		return err
	}
	if line != "+PONG\r\n" {
		return fmt.Errorf("PING answered %q", line)
	}
	return nil
}
