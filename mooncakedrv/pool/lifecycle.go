package pool

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"

	"github.com/kvshare/kvshare/loopback"
)

// Freeze stops provider 0 with SIGSTOP (FreezeProvider).
func (p *Pool) Freeze() error { return p.FreezeProvider(0) }

// Resume continues provider 0 (ResumeProvider).
func (p *Pool) Resume() error { return p.ResumeProvider(0) }

// FreezeProvider stops provider i with SIGSTOP and returns once the
// kernel shows it stopped: it answers nothing until ResumeProvider, and
// past the master's client TTL the master drops its segment.
func (p *Pool) FreezeProvider(i int) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	pr, err := p.runningProvider(i)
	if err != nil {
		return err
	}
	return p.freeze(p.providerName(i), pr, &p.providers[i].frozen)
}

// ResumeProvider continues a frozen provider i with SIGCONT and returns
// once the kernel shows it running again.
func (p *Pool) ResumeProvider(i int) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	pr, err := p.runningProvider(i)
	if err != nil {
		return err
	}
	return p.resume(p.providerName(i), pr, &p.providers[i].frozen)
}

// freeze sends SIGSTOP to pr (the role named), unless *frozen says it
// is already stopped, marks it frozen and waits for the kernel to show
// it stopped.
func (p *Pool) freeze(role string, pr *loopback.Process, frozen *bool) error {
	if *frozen {
		return fmt.Errorf("%w: %s pid %d is already frozen", ErrState, role, pr.PID)
	}
	err := pr.Freeze(p.opts.StopTimeout)
	// SIGSTOP was sent when the wait alone failed: the process may be stopped.
	*frozen = err == nil || errors.Is(err, loopback.ErrSignalState)
	return err
}

// resume sends SIGCONT to a frozen pr (the role named), marks it running
// and waits for the kernel to show it running.
func (p *Pool) resume(role string, pr *loopback.Process, frozen *bool) error {
	if !*frozen {
		return fmt.Errorf("%w: %s pid %d is not frozen", ErrState, role, pr.PID)
	}
	*frozen = false
	return pr.Resume(p.opts.StopTimeout)
}

// StopProvider stops provider 0 (StopProviderAt).
func (p *Pool) StopProvider() error { return p.StopProviderAt(0) }

// StartProvider starts provider 0 again (StartProviderAt).
func (p *Pool) StartProvider(ctx context.Context) error { return p.StartProviderAt(ctx, 0) }

// StopProviderAt stops provider i (SIGTERM, SIGKILL after StopTimeout);
// its objects are gone. The master and the other providers keep
// running.
func (p *Pool) StopProviderAt(i int) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	pr, err := p.runningProvider(i)
	if err != nil {
		return err
	}
	p.providers[i].proc, p.providers[i].frozen = nil, false
	return pr.Stop(p.log, p.opts.StopTimeout)
}

// StartProviderAt starts a new, empty provider i after StopProviderAt or
// KillProviderAt (or after it exited by itself), on its old port when
// that is free.
func (p *Pool) StartProviderAt(ctx context.Context, i int) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		return ErrStopped
	}
	if i < 0 || i >= len(p.providers) {
		return fmt.Errorf("%w: no provider %d (the pool has %d)", ErrState, i, len(p.providers))
	}
	if pr := p.providers[i].proc; pr != nil && pr.Alive() {
		return fmt.Errorf("%w: provider %d pid %d is running", ErrState, i, pr.PID)
	}
	if p.master == nil || !p.master.Alive() {
		return fmt.Errorf("%w: the master is not running", ErrState)
	}
	p.providers[i].proc = nil
	return p.startProvider(ctx, i)
}

// StopMaster stops the master (SIGTERM, SIGKILL after StopTimeout); the
// provider keeps running, cut off from it.
func (p *Pool) StopMaster() error { return p.endMaster(false) }

// KillMaster SIGKILLs the master, as a crash would.
func (p *Pool) KillMaster() error { return p.endMaster(true) }

func (p *Pool) endMaster(kill bool) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		return ErrStopped
	}
	pr := p.master
	if pr == nil || !pr.Alive() {
		return fmt.Errorf("%w: the master is not running", ErrState)
	}
	p.master, p.masterFrozen = nil, false
	if kill {
		return pr.Kill(p.opts.StopTimeout)
	}
	return pr.Stop(p.log, p.opts.StopTimeout)
}

// StartMaster starts a new master, with no objects, on the ports of the
// old one (clients and the provider know its address), after StopMaster
// or KillMaster.
func (p *Pool) StartMaster(ctx context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		return ErrStopped
	}
	if p.master != nil && p.master.Alive() {
		return fmt.Errorf("%w: master pid %d is running", ErrState, p.master.PID)
	}
	p.master, p.masterFrozen = nil, false
	return p.startMaster(ctx, true)
}

// Healthy reports, with ErrExited and the tail of its log, each process
// that should be running and has exited.
func (p *Pool) Healthy() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		return ErrStopped
	}
	var errs []error
	procs := []*loopback.Process{p.master}
	for _, pv := range p.providers {
		procs = append(procs, pv.proc)
	}
	for _, pr := range procs {
		if pr != nil && !pr.Alive() {
			errs = append(errs, pr.ExitError(ErrExited))
		}
	}
	return errors.Join(errs...)
}

// Stop stops every process the pool started, by PID: the provider, then
// the master, each with SIGTERM and SIGKILL after StopTimeout. It is safe
// to call more than once and from t.Cleanup; an error names a process that
// survived. A log folder Start made is removed when everything stopped.
func (p *Pool) Stop() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		return nil
	}
	p.stopped = true
	var errs []error
	for _, c := range p.nodes {
		if err := c.kill(); err != nil {
			errs = append(errs, err)
		}
	}
	// Providers first: on SIGTERM a provider unmounts its segment at the
	// master, and hangs past StopTimeout when the master is gone.
	for _, pr := range stopOrder(p.all) {
		if err := pr.Stop(p.log, p.opts.StopTimeout); err != nil {
			errs = append(errs, err)
		}
	}
	p.master, p.masterFrozen = nil, false
	for i := range p.providers {
		p.providers[i].proc, p.providers[i].frozen = nil, false
	}
	if len(errs) > 0 {
		return errors.Join(errs...) // the launcher's thread stays, so Pdeathsig stays armed
	}
	p.launch.Close()
	if p.iso != nil {
		if err := p.iso.remove(); err != nil {
			return err
		}
	}
	if p.ownDir {
		if err := os.RemoveAll(p.logDir); err != nil {
			return fmt.Errorf("pool: removing logs: %w", err)
		}
	}
	p.log.Info("pool: stopped", "processes", len(p.all))
	return nil
}

// stopOrder is the order Stop stops processes in: every provider, then
// every master, the newest of each role first.
func stopOrder(all []*loopback.Process) []*loopback.Process {
	order := make([]*loopback.Process, 0, len(all))
	for _, role := range []Role{Provider, Master} {
		for _, pr := range slices.Backward(all) {
			if pr.Name == string(role) {
				order = append(order, pr)
			}
		}
	}
	return order
}

// runningProvider returns provider i if it runs.
func (p *Pool) runningProvider(i int) (*loopback.Process, error) {
	if p.stopped {
		return nil, ErrStopped
	}
	if i < 0 || i >= len(p.providers) {
		return nil, fmt.Errorf("%w: no provider %d (the pool has %d)", ErrState, i, len(p.providers))
	}
	pr := p.providers[i].proc
	if pr == nil {
		return nil, fmt.Errorf("%w: no %s is running", ErrState, p.providerName(i))
	}
	if !pr.Alive() {
		return nil, pr.ExitError(ErrExited)
	}
	return pr, nil
}
