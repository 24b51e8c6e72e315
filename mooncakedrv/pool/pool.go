package pool

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/kvshare/kvshare/loopback"
)

// Pool is a running master and its segment providers (Options.Providers,
// one by default) on loopback. Its methods are safe for concurrent use
// and run one at a time. The methods without an index act on provider 0.
type Pool struct {
	opts   Options
	log    *slog.Logger
	launch *loopback.Launcher
	logDir string
	ownDir bool // logDir was made by Start, so Stop removes it

	iso  *isolation // nil: every process on loopback
	host string     // the master's and the clients' address

	mu           sync.Mutex
	stopped      bool
	rpcPort      int
	metadataPort int
	metricsPort  int
	master       *loopback.Process   // nil while killed or stopped
	providers    []provider          // Options.Providers of them
	masterFrozen bool                // the master is stopped by SIGSTOP (FreezeMaster)
	launches     map[Role]int        // numbers the log files
	all          []*loopback.Process // every process started, for Stop
	nodes        []*ClientNode       // every client node started, for Stop
}

// provider is one segment provider's slot: its process (nil while
// stopped or killed), its service port, and whether it is frozen.
type provider struct {
	proc   *loopback.Process
	port   int
	frozen bool
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
	p := &Pool{opts: opts, log: opts.Logger, logDir: opts.LogDir, launches: map[Role]int{}, providers: make([]provider, opts.Providers)}
	if p.logDir == "" {
		if p.logDir, err = os.MkdirTemp("", "kvshare-pool-"); err != nil {
			return nil, fmt.Errorf("pool: log folder: %w", err)
		}
		p.ownDir = true
	} else if err := os.MkdirAll(p.logDir, 0o755); err != nil {
		return nil, fmt.Errorf("pool: log folder: %w", err)
	}
	p.host = loopback.Host
	if opts.Isolate {
		if why := isolationUnavailable(); why != "" {
			p.log.Warn("pool: providers run on loopback, not each in a network namespace of its own: " + why)
		} else if p.iso, err = newIsolation(); err != nil {
			return nil, err
		} else {
			p.host = p.iso.host()
		}
	}
	p.launch = loopback.NewLauncher()
	p.mu.Lock()
	err = p.startMaster(ctx, false)
	for i := 0; err == nil && i < len(p.providers); i++ {
		err = p.startProvider(ctx, i)
	}
	p.mu.Unlock()
	if err != nil {
		p.ownDir = false // keep the logs the error points to
		return nil, errors.Join(err, p.Stop())
	}
	return p, nil
}

// MasterAddress is the master's RPC address, "127.0.0.1:port".
func (p *Pool) MasterAddress() string { return net.JoinHostPort(p.host, strconv.Itoa(p.rpcPort)) }

// Host is the address the master listens on and clients bind to:
// 127.0.0.1, or the bridge's of an isolated pool.
func (p *Pool) Host() string { return p.host }

// Isolated reports whether each provider runs in a network namespace of
// its own (Options.Isolate, where the process could).
func (p *Pool) Isolated() bool { return p.iso != nil }

// ProviderAddress is provider i's host:port.
func (p *Pool) ProviderAddress(i int) string {
	host := p.host
	if p.iso != nil {
		host = p.iso.providerHost(i)
	}
	return net.JoinHostPort(host, strconv.Itoa(p.ProviderPortOf(i)))
}

// MetadataURL is the master's HTTP metadata server as a client's
// metadata_server setting: "http://127.0.0.1:port/metadata".
func (p *Pool) MetadataURL() string {
	return "http://" + net.JoinHostPort(p.host, strconv.Itoa(p.metadataPort)) + "/metadata"
}

// ProviderPort is provider 0's service port; StartProvider may move it
// when the old one was taken meanwhile.
func (p *Pool) ProviderPort() int { return p.ProviderPortOf(0) }

// ProviderPortOf is provider i's service port (0 for no such provider).
func (p *Pool) ProviderPortOf(i int) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if i < 0 || i >= len(p.providers) {
		return 0
	}
	return p.providers[i].port
}

// Providers is the number of segment providers the pool runs.
func (p *Pool) Providers() int { return len(p.providers) }

// ProviderPID is provider i's PID, 0 when it does not run.
func (p *Pool) ProviderPID(i int) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if i < 0 || i >= len(p.providers) {
		return 0
	}
	if pr := p.providers[i].proc; pr != nil && pr.Alive() {
		return pr.PID
	}
	return 0
}

// ClientEnv is the environment ("NAME=value") a client process of this
// pool needs: the transfer engine bound to loopback.
func (p *Pool) ClientEnv() []string { return []string{"MC_TCP_BIND_ADDRESS=" + p.host} }

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
	return p.providers[0].proc
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
			ports, err := loopback.PickPorts(3, p.providerPorts()...)
			if err != nil {
				return err
			}
			p.rpcPort, p.metadataPort, p.metricsPort = ports[0], ports[1], ports[2]
		}
		args := p.opts.masterArgs(p.host, p.rpcPort, p.metadataPort, p.metricsPort)
		pr, err := p.launchOne(ctx, Master, attempt, spawnSpec{path: MasterBinary, args: args, env: p.opts.MasterEnv, host: p.host, provider: -1},
			p.rpcPort, p.metadataPort, p.metricsPort)
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

// providerPorts lists the providers' ports, for picking others.
func (p *Pool) providerPorts() []int {
	var ports []int
	for _, pv := range p.providers {
		if pv.port != 0 {
			ports = append(ports, pv.port)
		}
	}
	return ports
}

// startProvider launches provider i, on its old port first when it had
// one and that port is free, else on a fresh port.
func (p *Pool) startProvider(ctx context.Context, i int) error {
	pv := &p.providers[i]
	var errs []error
	for attempt := 1; attempt <= p.opts.Attempts; attempt++ {
		if pv.port == 0 || attempt > 1 || !loopback.Free(pv.port) {
			ports, err := loopback.PickPorts(1, append(p.providerPorts(), p.rpcPort, p.metadataPort, p.metricsPort)...)
			if err != nil {
				return err
			}
			pv.port = ports[0]
		}
		host := p.host
		if p.iso != nil {
			host = p.iso.providerHost(i)
		}
		args := p.opts.providerArgs(host, pv.port, p.MasterAddress(), p.MetadataURL())
		pr, err := p.launchOne(ctx, Provider, attempt, spawnSpec{path: ProviderBinary, args: args, env: p.opts.ProviderEnv, host: host, provider: i}, pv.port)
		if err == nil {
			pv.proc, pv.frozen = pr, false
			return nil
		}
		if !errors.Is(err, ErrEarlyExit) {
			return err
		}
		errs = append(errs, err)
	}
	return fmt.Errorf("pool: %s did not start in %d attempts: %w", p.providerName(i), p.opts.Attempts, errors.Join(errs...))
}

// providerName names provider i in errors: "provider" in a pool of one.
func (p *Pool) providerName(i int) string {
	if len(p.providers) == 1 {
		return "provider"
	}
	return fmt.Sprint("provider ", i)
}

// spawnSpec is what launchOne starts: a binary of the folder, its
// arguments and environment, the address it listens on, and, for a
// provider, its index (-1 for the master).
type spawnSpec struct {
	path     string
	args     []string
	env      []string
	host     string
	provider int
}

// launchOne starts one process and waits until it accepts on every port
// (ErrEarlyExit when it exits first, ErrNotReady past StartTimeout, when
// it is stopped again). A provider of an isolated pool starts in a
// network namespace of its own, joined to the bridge before it runs.
func (p *Pool) launchOne(ctx context.Context, role Role, attempt int, s spawnSpec, ports ...int) (*loopback.Process, error) {
	if p.opts.beforeLaunch != nil {
		p.opts.beforeLaunch(role, attempt, ports)
	}
	p.launches[role]++
	logPath := p.logPath(role, p.launches[role])
	env := append([]string{"MC_TCP_BIND_ADDRESS=" + s.host}, s.env...)
	path, args := filepath.Join(p.opts.Dir, s.path), s.args
	isolated := p.iso != nil && s.provider >= 0
	var pr *loopback.Process
	var err error
	if isolated {
		path, args = p.iso.wrap(p.iso.provider(s.provider), path, args)
		pr, err = p.launch.SpawnInNetNS(string(role), path, args, env, logPath)
	} else {
		pr, err = p.launch.Spawn(string(role), path, args, env, logPath)
	}
	if err != nil {
		return nil, err
	}
	p.all = append(p.all, pr)
	started := time.Now()
	if isolated {
		err = p.iso.attach(p.iso.provider(s.provider), pr.PID)
	}
	switch {
	case err != nil:
	case s.host != loopback.Host: // an isolated pool's: on the bridge, or in a namespace of its own
		err = pr.WaitReadyAt(ctx, p.opts.StartTimeout, s.host, ports...)
	default:
		err = pr.WaitReady(ctx, p.opts.StartTimeout, ports...)
	}
	if err != nil {
		err = errors.Join(err, pr.Stop(p.log, p.opts.StopTimeout)) // Join drops a nil
		p.log.Warn("pool: launch failed", "role", role, "attempt", attempt, "pid", pr.PID, "ports", ports, "log", logPath, "err", err)
		return nil, err
	}
	p.log.Info("pool: started", "role", role, "pid", pr.PID, "host", s.host, "ports", ports, "after", time.Since(started).Round(time.Millisecond), "log", logPath)
	return pr, nil
}
