package patience

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"
)

// MaxExtensions is how many times a Bound that runs out may be extended
// by its span: a wait lasts at most 1+MaxExtensions spans.
const MaxExtensions = 3

// StarvedShare sets what counts as starved over a span: the process
// waited on run queues more than Span/StarvedShare in all.
const StarvedShare = 4

// A Bound is a patient limit on one wait: Span, extended by Span while
// the process is starved or what the wait is for moves (see the package
// doc). The zero Bound has no span; give it one.
type Bound struct {
	// Span is the time given at first, and again with each extension.
	Span time.Duration
	// What names the wait in the lines that log extensions.
	What string
	// Moved, when set, reports whether what the wait is for changed
	// since Moved last returned (an operation's state, a counter of
	// progress). It is called once when the bound starts, and again each
	// time the span runs out, from a goroutine of the bound's own.
	Moved func() bool
	// Logf receives one line per extension (a test's t.Logf); nil logs
	// through log/slog's default logger.
	Logf func(format string, args ...any)
}

// Context returns a context that ends when parent does, when cancel is
// called (Err: context.Canceled), or when the bound runs out for good
// (Err: context.DeadlineExceeded). Its Deadline is the latest the bound
// can end, every extension taken (1+MaxExtensions spans from now), or
// parent's when that is earlier: code that sizes its own timeouts from
// a deadline gets one that never cuts the wait short, and the context
// may still end before it. cancel returns only once the bound's
// goroutine has ended, so no extension is logged after it; call it when
// the wait is over.
func (b Bound) Context(parent context.Context) (context.Context, context.CancelFunc) {
	c := &boundCtx{Context: parent, done: make(chan struct{}), stop: make(chan struct{}), exited: make(chan struct{})}
	c.latest = time.Now().Add(time.Duration(1+MaxExtensions) * b.Span)
	if d, ok := parent.Deadline(); ok && d.Before(c.latest) {
		c.latest = d
	}
	if b.Moved != nil {
		b.Moved()
	}
	start := sample(b.Span / 8)
	go c.watch(b, start)
	var once sync.Once
	return c, func() {
		once.Do(func() { close(c.stop) })
		<-c.exited
	}
}

// Wait waits until done is closed or the bound runs out for good, and
// reports whether done was closed.
func (b Bound) Wait(done <-chan struct{}) bool {
	ctx, cancel := b.Context(context.Background())
	defer cancel()
	select {
	case <-done:
		return true
	case <-ctx.Done():
		select {
		case <-done:
			return true
		default:
			return false
		}
	}
}

// boundCtx is the context of a Bound.
type boundCtx struct {
	context.Context           // the parent: Value
	latest          time.Time // the latest the bound can end
	done            chan struct{}
	stop            chan struct{} // closed by cancel
	exited          chan struct{} // closed when watch returns
	mu              sync.Mutex
	err             error
}

func (c *boundCtx) Done() <-chan struct{} { return c.done }

func (c *boundCtx) Deadline() (time.Time, bool) { return c.latest, true }

func (c *boundCtx) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

func (c *boundCtx) end(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err == nil {
		c.err = err
		close(c.done)
	}
}

func (c *boundCtx) String() string { return fmt.Sprintf("%v.WithPatience", c.Context) }

// watch runs the bound: it ends the context when the parent ends, when
// cancel is called, or when a span runs out unearned.
func (c *boundCtx) watch(b Bound, start time.Duration) {
	defer close(c.exited)
	t := time.NewTimer(b.Span)
	defer t.Stop()
	for extended := 0; ; {
		select {
		case <-c.Context.Done():
			c.end(c.Context.Err())
			return
		case <-c.stop:
			c.end(context.Canceled)
			return
		case <-t.C:
		}
		now := sample(0)
		why := b.earned(now - start)
		if why == "" || extended == MaxExtensions {
			c.end(context.DeadlineExceeded)
			return
		}
		extended++
		b.log("%s: the bound of %v ran out and is extended by as much (%d of %d): %s",
			b.name(), b.Span, extended, MaxExtensions, why)
		start = now
		t.Reset(b.Span)
	}
}

// earned says why the span just ended earns an extension, given how long
// the process was starved over it, or "" when it does not.
func (b Bound) earned(starved time.Duration) string {
	var why string
	if limit := b.Span / StarvedShare; starved > limit {
		why = fmt.Sprintf("the process waited %v for a CPU over it (more than 1/%d of it)", starved.Round(time.Millisecond), StarvedShare)
	}
	if b.Moved != nil && b.Moved() {
		if why != "" {
			why += "; "
		}
		why += "what it waits for moved"
	}
	return why
}

func (b Bound) name() string {
	if b.What == "" {
		return "a wait"
	}
	return b.What
}

func (b Bound) log(format string, args ...any) {
	if b.Logf != nil {
		b.Logf("patience: "+format, args...)
		return
	}
	slog.Info("patience: " + fmt.Sprintf(format, args...))
}

// For returns the bound of one wait of test t: Span is Wait(), What is
// t's name, and extensions are logged on t.
func For(t testing.TB) Bound {
	return Bound{Span: Wait(), What: t.Name(), Logf: t.Logf}
}
