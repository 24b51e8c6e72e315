package pool

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/kvshare/kvshare/loopback"
)

// Pool is a running master and segment provider on loopback. Its methods
// are safe for concurrent use and run one at a time.
type Pool struct {
	opts   Options
	log    *slog.Logger
	launch *loopback.Launcher
	logDir string
	ownDir bool // logDir was made by Start, so Stop removes it

	mu           sync.Mutex
	stopped      bool
	rpcPort      int
	metadataPort int
	metricsPort  int
	providerPort int
	master       *loopback.Process   // nil while killed or stopped
	provider     *loopback.Process   // nil while stopped
	frozen       bool                // the provider is stopped by SIGSTOP (Freeze)
	masterFrozen bool                // the master is stopped by SIGSTOP (FreezeMaster)
	launches     map[Role]int        // numbers the log files
	all          []*loopback.Process // every process started, for Stop
}

// Start checks opts.Dir (see Check), starts the master and then the
// segment provider on free loopback ports, and returns once both accept
// on every port they were given. A launch whose process exits before that
// is retried on fresh ports, Options.Attempts times in all. On error
// nothing Start launched is left running.
func Start(ctx context.Context, opts Options) (*Pool, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	if err := Check(ctx, opts.Dir); err != nil {
		return nil, err
	}
	p := &Pool{opts: opts, log: opts.Logger, logDir: opts.LogDir, launches: map[Role]int{}}
	if p.logDir == "" {
		if p.logDir, err = os.MkdirTemp("", "kvshare-pool-"); err != nil {
			return nil, fmt.Errorf("pool: log folder: %w", err)
		}
		p.ownDir = true
	} else if err := os.MkdirAll(p.logDir, 0o755); err != nil {
		return nil, fmt.Errorf("pool: log folder: %w", err)
	}
	p.launch = loopback.NewLauncher()
	p.mu.Lock()
	err = p.startMaster(ctx, false)
	if err == nil {
		err = p.startProvider(ctx)
	}
	p.mu.Unlock()
	if err != nil {
		p.ownDir = false // keep the logs the error points to
		return nil, errors.Join(err, p.Stop())
	}
	return p, nil
}

// MasterAddress is the master's RPC address, "127.0.0.1:port".
func (p *Pool) MasterAddress() string { return loopback.HostPort(p.rpcPort) }

// MetadataURL is the master's HTTP metadata server as a client's
// metadata_server setting: "http://127.0.0.1:port/metadata".
func (p *Pool) MetadataURL() string {
	return "http://" + loopback.HostPort(p.metadataPort) + "/metadata"
}

// ProviderPort is the segment provider's service port; StartProvider may
// move it when the old one was taken meanwhile.
func (p *Pool) ProviderPort() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.providerPort
}

// ClientEnv is the environment ("NAME=value") a client process of this
// pool needs: the transfer engine bound to loopback.
func (p *Pool) ClientEnv() []string { return []string{"MC_TCP_BIND_ADDRESS=" + loopback.Host} }

// LogDir is the folder that holds the processes' logs.
func (p *Pool) LogDir() string { return p.logDir }

// PID is the PID of the role's running process, 0 when none runs.
func (p *Pool) PID(role Role) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if pr := p.current(role); pr != nil && pr.Alive() {
		return pr.PID
	}
	return 0
}

// PIDs lists every process the pool started that has not been reaped:
// empty after Stop.
func (p *Pool) PIDs() []int {
	p.mu.Lock()
	defer p.mu.Unlock()
	var pids []int
	for _, pr := range p.all {
		if pr.Alive() {
			pids = append(pids, pr.PID)
		}
	}
	return pids
}

// LogTail returns the last lines of the role's latest log.
func (p *Pool) LogTail(role Role) string {
	p.mu.Lock()
	n := p.launches[role]
	p.mu.Unlock()
	if n == 0 {
		return "  (never started)"
	}
	return loopback.LogTail(p.logPath(role, n))
}

func (p *Pool) current(role Role) *loopback.Process {
	if role == Master {
		return p.master
	}
	return p.provider
}

func (p *Pool) logPath(role Role, n int) string {
	return filepath.Join(p.logDir, fmt.Sprintf("%s-%d.log", role, n))
}

// startMaster launches the master, on the ports it had when samePorts
// (a restart: clients know its address), else on fresh ones each attempt.
func (p *Pool) startMaster(ctx context.Context, samePorts bool) error {
	var errs []error
	for attempt := 1; attempt <= p.opts.Attempts; attempt++ {
		if !samePorts {
			ports, err := loopback.PickPorts(3, p.providerPort)
			if err != nil {
				return err
			}
			p.rpcPort, p.metadataPort, p.metricsPort = ports[0], ports[1], ports[2]
		}
		args := p.opts.masterArgs(p.rpcPort, p.metadataPort, p.metricsPort)
		pr, err := p.launchOne(ctx, Master, attempt, MasterBinary, args, p.opts.MasterEnv, p.rpcPort, p.metadataPort, p.metricsPort)
		if err == nil {
			p.master = pr
			return nil
		}
		if !errors.Is(err, ErrEarlyExit) {
			return err
		}
		errs = append(errs, err)
	}
	return fmt.Errorf("pool: master did not start in %d attempts: %w", p.opts.Attempts, errors.Join(errs...))
}

// startProvider launches the provider, on its old port first when it had
// one and that port is free, else on a fresh port.
func (p *Pool) startProvider(ctx context.Context) error {
	var errs []error
	for attempt := 1; attempt <= p.opts.Attempts; attempt++ {
		if p.providerPort == 0 || attempt > 1 || !loopback.Free(p.providerPort) {
			ports, err := loopback.PickPorts(1, p.rpcPort, p.metadataPort, p.metricsPort, p.providerPort)
			if err != nil {
				return err
			}
			p.providerPort = ports[0]
		}
		args := p.opts.providerArgs(p.providerPort, p.MasterAddress(), p.MetadataURL())
		pr, err := p.launchOne(ctx, Provider, attempt, ProviderBinary, args, p.opts.ProviderEnv, p.providerPort)
		if err == nil {
			p.provider, p.frozen = pr, false
			return nil
		}
		if !errors.Is(err, ErrEarlyExit) {
			return err
		}
		errs = append(errs, err)
	}
	return fmt.Errorf("pool: provider did not start in %d attempts: %w", p.opts.Attempts, errors.Join(errs...))
}

// launchOne starts one process and waits until it accepts on every port
// (ErrEarlyExit when it exits first, ErrNotReady past StartTimeout, when
// it is stopped again).
func (p *Pool) launchOne(ctx context.Context, role Role, attempt int, binary string, args, env []string, ports ...int) (*loopback.Process, error) {
	if p.opts.beforeLaunch != nil {
		p.opts.beforeLaunch(role, attempt, ports)
	}
	p.launches[role]++
	logPath := p.logPath(role, p.launches[role])
	env = append([]string{"MC_TCP_BIND_ADDRESS=" + loopback.Host}, env...)
	pr, err := p.launch.Spawn(string(role), filepath.Join(p.opts.Dir, binary), args, env, logPath)
	if err != nil {
		return nil, err
	}
	p.all = append(p.all, pr)
	started := time.Now()
	if err := pr.WaitReady(ctx, p.opts.StartTimeout, ports...); err != nil {
		err = errors.Join(err, pr.Stop(p.log, p.opts.StopTimeout)) // Join drops a nil
		p.log.Warn("pool: launch failed", "role", role, "attempt", attempt, "pid", pr.PID, "ports", ports, "log", logPath, "err", err)
		return nil, err
	}
	p.log.Info("pool: started", "role", role, "pid", pr.PID, "ports", ports, "after", time.Since(started).Round(time.Millisecond), "log", logPath)
	return pr, nil
}
