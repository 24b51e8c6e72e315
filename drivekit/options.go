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
	// CallBytes, when above 0, is the most bytes (the rows' spans) of
	// one store call: admission also cuts a batch before the row that
	// would pass it. A row larger than CallBytes goes alone.
	CallBytes int64
	// JoinCalls lets a worker that takes a call, while every other
	// worker is busy, also take the queued calls of the same direction
	// that fit beside it within CallRows and CallBytes, other
	// operations' too, and make them one store call ([Call.Parts] says
	// whose rows are whose): fewer, larger calls. The price: a store
	// that answers the rows as one marks them all Unprovable when that
	// answer proves nothing, and a call taken into another can no
	// longer be cancelled. A hinted get joins none.
	// No key goes twice into one store call: a call holding a key that
	// another of the group holds waits for the worker's next store call.
	// It implies GetsFirst.
	JoinCalls bool
	// CallsInFlight, when above 0, is the most workers of one direction
	// inside the store at once; while that many run, that direction's
	// calls wait (and, with JoinCalls, join the next). It implies
	// GetsFirst.
	CallsInFlight int
	// LookupsInStore, when above 0, is the most lookups inside the store
	// at once, those abandoned at their deadline included: a lookup that
	// finds that many answers Unknown for every name at once, asking the
	// store nothing ([Stats].LookupsRefused), rather than pile up behind
	// a store that does not answer.
	LookupsInStore int
	// ReuseKeys says the store keeps no key of a call once its
	// Transfer returned (one it keeps, it clones): the kit then builds
	// each operation's keys into a buffer it reuses once the
	// operation's access Ended and no store call holds them, instead
	// of a fresh buffer a batch that a store may keep. The keys of an
	// operation whose access was Unprovable are never reused.
	ReuseKeys bool
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
	o.CallBytes = max(o.CallBytes, 0)
	o.CallsInFlight = max(o.CallsInFlight, 0)
	o.LookupsInStore = max(o.LookupsInStore, 0)
	if o.JoinCalls || o.CallsInFlight > 0 {
		o.GetsFirst = true // rules of the gets-first pool
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return o
}
