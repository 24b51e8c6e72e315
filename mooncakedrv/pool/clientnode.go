package pool

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
)

// EnvNodeHost is set, in a client node's environment, to the node's own
// address, beside MC_TCP_BIND_ADDRESS: a program that sets its own bind
// address (a test binary's TestMain) reads it to keep the node's.
const EnvNodeHost = "KVSHARE_POOL_NODE_HOST"

// MaxClientNodes bounds the client nodes one pool starts in its life.
const MaxClientNodes = 100

// A ClientNode is a client process of an isolated pool that runs in a
// network namespace of its own, joined to the bridge like a provider, so
// that it can be cut off (Cut) as a provider can. It is made by
// StartClientNode; the caller owns its command (pipes, Wait).
type ClientNode struct {
	p    *Pool
	n    node
	cmd  *exec.Cmd
	name string
}

// StartClientNode starts cmd as a client node: in a new network
// namespace (CLONE_NEWNET, SIGKILLed if the pool's launcher thread dies),
// with its interface on the bridge at an address of its own
// (10.88.N.(100+j)) and the caller's SYN retries before cmd's program
// runs. MC_TCP_BIND_ADDRESS and EnvNodeHost are appended to cmd.Env
// (which, when nil, starts as this process's environment), and cmd's
// program is run through a shell that waits for the address. The caller
// must Wait for cmd; Stop kills a node still running. Only an isolated
// pool can (ErrState otherwise).
func (p *Pool) StartClientNode(name string, cmd *exec.Cmd) (*ClientNode, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.stopped:
		return nil, ErrStopped
	case p.iso == nil:
		return nil, fmt.Errorf("%w: the pool is not isolated, so a client node has no namespace to run in", ErrState)
	case p.iso.clients >= MaxClientNodes:
		return nil, fmt.Errorf("%w: the pool started %d client nodes, the most it can", ErrState, MaxClientNodes)
	case cmd.Process != nil:
		return nil, fmt.Errorf("%w: client node %s: its command was started already", ErrState, name)
	}
	n := p.iso.client(p.iso.clients)
	p.iso.clients++
	if cmd.Env == nil {
		cmd.Env = cmd.Environ()
	}
	cmd.Env = append(cmd.Env, "MC_TCP_BIND_ADDRESS="+n.host, EnvNodeHost+"="+n.host)
	shell, args := p.iso.wrap(n, cmd.Path, cmd.Args[1:])
	cmd.Path, cmd.Args = shell, append([]string{shell}, args...)
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Cloneflags |= syscall.CLONE_NEWNET
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	if err := p.launch.Start(cmd); err != nil {
		return nil, fmt.Errorf("pool: starting client node %s: %w", name, err)
	}
	c := &ClientNode{p: p, n: n, cmd: cmd, name: name}
	if err := p.iso.attach(n, cmd.Process.Pid); err != nil {
		_ = cmd.Process.Kill()
		return nil, fmt.Errorf("pool: client node %s: %w", name, err)
	}
	p.nodes = append(p.nodes, c)
	p.log.Info("pool: started", "role", "client node "+name, "pid", cmd.Process.Pid, "host", n.host)
	return c, nil
}

// Host is the node's address, the one it binds to.
func (c *ClientNode) Host() string { return c.n.host }

// Cut takes the node's link down: it runs on, but nothing reaches it and
// nothing leaves it until Heal.
func (c *ClientNode) Cut() error { return c.link(true) }

// Heal brings a cut node's link up again.
func (c *ClientNode) Heal() error { return c.link(false) }

func (c *ClientNode) link(cut bool) error {
	c.p.mu.Lock()
	defer c.p.mu.Unlock()
	if c.p.stopped {
		return ErrStopped
	}
	if cut {
		return c.p.iso.cut(c.n)
	}
	return c.p.iso.heal(c.n)
}

// kill ends a node that still runs (Stop). The caller's Wait reaps it.
func (c *ClientNode) kill() error {
	if err := c.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("pool: killing client node %s: %w", c.name, err)
	}
	return nil
}
