package pool

import (
	"fmt"

	"github.com/kvshare/kvshare/loopback"
)

// FreezeMaster stops the master with SIGSTOP and returns once the kernel
// shows it stopped. Its sockets stay open, so clients' connections and
// requests are accepted by the kernel and never answered: a client's
// master RPCs end in its own RPC timeout (MC_RPC_TIMEOUT_MS), and new
// clients cannot set up. The HTTP metadata server, which runs in the
// master's process, does not answer either.
func (p *Pool) FreezeMaster() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	pr, err := p.runningMaster()
	if err != nil {
		return err
	}
	return p.freeze("master", pr, &p.masterFrozen)
}

// ResumeMaster continues a frozen master with SIGCONT and returns once
// the kernel shows it running again. It then serves the requests that
// queued up meanwhile, those their clients already gave up on included.
func (p *Pool) ResumeMaster() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	pr, err := p.runningMaster()
	if err != nil {
		return err
	}
	return p.resume("master", pr, &p.masterFrozen)
}

// KillProvider SIGKILLs provider 0 (KillProviderAt).
func (p *Pool) KillProvider() error { return p.KillProviderAt(0) }

// KillProviderAt SIGKILLs provider i, as a crash would: it does not
// unmount its segment, so the master keeps it (and its objects' metadata)
// until the provider's client_ttl runs out. StartProviderAt starts a
// new, empty one.
func (p *Pool) KillProviderAt(i int) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	pr, err := p.runningProvider(i)
	if err != nil {
		return err
	}
	p.providers[i].proc, p.providers[i].frozen = nil, false
	return pr.Kill(p.opts.StopTimeout)
}

// runningMaster returns the master if it runs.
func (p *Pool) runningMaster() (*loopback.Process, error) {
	if p.stopped {
		return nil, ErrStopped
	}
	if p.master == nil {
		return nil, fmt.Errorf("%w: no master is running", ErrState)
	}
	if !p.master.Alive() {
		return nil, p.master.ExitError(ErrExited)
	}
	return p.master, nil
}

// CutProvider takes provider i's network link down: it runs on, but
// nothing reaches it and nothing leaves it until HealProvider. Only an
// isolated pool can (ErrState otherwise).
func (p *Pool) CutProvider(i int) error { return p.link(i, true) }

// HealProvider brings a cut provider's link up again.
func (p *Pool) HealProvider(i int) error { return p.link(i, false) }

func (p *Pool) link(i int, cut bool) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.iso == nil {
		return fmt.Errorf("%w: the providers are not isolated, so none can be cut off", ErrState)
	}
	if _, err := p.runningProvider(i); err != nil {
		return err
	}
	if cut {
		return p.iso.cut(p.iso.provider(i))
	}
	return p.iso.heal(p.iso.provider(i))
}
