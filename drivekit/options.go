package drivekit

import (
	"log/slog"

	"github.com/kvshare/kvshare/contract"
)

// Options shape a kit driver: what it declares and how it runs calls.
type Options struct {
	// Name starts every error and log line of the driver ("memdrv").
	Name string
	// Caps is what the driver declares; the kit refuses at admission
	// what it does not. Put and Get both false means both true.
	Caps contract.Capabilities
	// Workers is the number of worker goroutines; 0 (or less) means 2.
	// 1 runs calls strictly in the order they were admitted, unless
	// GetsFirst is set.
	Workers int
	// GetsFirst runs the calls on a gets-first [scheduler.Pool] of
	// Workers goroutines instead of FIFO workers started on demand: gets
	// pass waiting puts by the scheduler's rule (a put goes after at most
	// four gets passed it; with two workers or more, one is left to
	// gets). The pool's goroutines start with [New] and live until a
	// Drain that returns true, or a Recycle that closes the driver: a
	// driver that is never drained keeps them.
	GetsFirst bool
	// CallRows is the most rows of one store call: admission cuts each
	// batch into calls of at most that many rows; 0 (or less) means 1.
	CallRows int
	// Logger receives the driver's logs (panics recovered in store
	// calls and callbacks); nil means slog.Default().
	Logger *slog.Logger
}

func (o Options) normal() Options {
	if o.Name == "" {
		o.Name = "drivekit"
	}
	if !o.Caps.Put && !o.Caps.Get {
		o.Caps.Put, o.Caps.Get = true, true
	}
	o.Caps.MaxRowsPerOp = max(o.Caps.MaxRowsPerOp, 0)
	if o.Workers <= 0 {
		o.Workers = 2
	}
	if o.CallRows <= 0 {
		o.CallRows = 1
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return o
}
