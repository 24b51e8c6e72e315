package drivekit

import (
	"context"

	"github.com/kvshare/kvshare/contract"
)

// Store is what a store's author writes: the transport of one store
// call. The kit calls Transfer on one of its workers, never under its
// lock, with the rows of one operation in one direction, at most
// [Options.CallRows] of them.
type Store interface {
	// Transfer moves the call's rows and records each row's end in
	// c.Ends. It returns only once the store is done with every row's
	// memory, or gave up on a row it cannot prove done (End.Unprovable):
	// the kit records the verdicts after Transfer returns and takes
	// that return as the proof that access ended. A put whose
	// c.OwnWrite is set must end NotReady without reaching the store
	// (another put of this driver writes the key now). A panic is
	// recovered by the kit: every row of the call ends Fault, as with
	// End.Broke.
	Transfer(c *Call)
}

// Call is one store call: rows of one operation in one direction, or,
// with [Options.JoinCalls], of several operations of one direction, no
// key twice. Its slices are the kit's, valid until Transfer returns; a
// row's spans are the caller's memory, lent until the operation's
// access ends.
type Call struct {
	Dir contract.Direction
	// Keys are the rows' store keys, built at admission by the batch's
	// key maker: immutable strings a store may keep, unless it set
	// [Options.ReuseKeys]: then they are valid until Transfer returns
	// (and, for a row whose End is Unprovable, for good), and a store
	// that keeps one clones it.
	Keys []string
	// Rows are the rows' spans, in the operation's batch.
	Rows []contract.Row
	// OwnWrite says, for a put, that another put of this driver writes
	// the row's key now: the row ends NotReady without reaching the
	// store.
	OwnWrite []bool
	// Hint is the get's hint (nil for a put, or none given; a hinted
	// get's rows never share a call).
	Hint contract.Hint
	// Ends receives each row's end; all start as the zero End.
	Ends []End
	// Parts is the first row of each part the call carries, in order:
	// [0] for a call of one part. A store that answers rows of several
	// parts as one knows from it whose rows shared an answer.
	Parts []int

	cancelled <-chan struct{}
	group     []part              // the parts a worker took, its scratch
	seen      map[string]struct{} // apart's scratch
	d         *Driver
	filled    []part // the parts of the call, in order
	settled   []bool // rows recorded by Settle, under the driver's lock
}

// Shared reports whether the call carries rows of more than one part
// (see [Options.JoinCalls]).
func (c *Call) Shared() bool { return len(c.Parts) > 1 }

// Cancelled returns a channel closed once the operation is cancelled:
// a store that holds a row before the store sees it may end it
// Cancelled then, since nothing touched its memory. A call carrying
// rows of several operations cannot be cancelled: nil, never closed.
func (c *Call) Cancelled() <-chan struct{} { return c.cancelled }

// End is how one row of a call ended: its verdict and what it proves.
type End struct {
	// Status is the row's final status; a status that is not final
	// (Pending) is recorded as Fault.
	Status contract.RowStatus
	// Unprovable says the store gave up on the transfer, which may
	// still run: the operation's access becomes Unprovable and its
	// memory stays lent until a Recycle tears the store's client down.
	// A store that answers several rows as one (one request over a
	// shared call's rows) marks every row that answer leaves unproven.
	Unprovable bool
	// Broke says the store call broke (a crash): every row of the
	// operation no worker took ends Fault too.
	Broke bool
}

// Looker is the optional interface of a [Store] that can say which keys
// it holds. The kit refuses a bad batch before asking, counts the
// lookups inside the store, answers InFlight for the keys this driver
// is putting, and answers Unknown for what a lookup abandoned at its
// context's end did not answer.
type Looker interface {
	// Look appends one presence per key, in order, to dst. Present is
	// for a complete object a get would read whole (rule 1 of
	// [contract.Looker]); InFlight for a key another writer writes.
	// What the store failed to answer is Unknown. keys are the kit's,
	// valid until Look returns.
	Look(ctx context.Context, keys [][]byte, dst []contract.Presence) []contract.Presence
	// LookBlocks says whether a Look made now may block inside the
	// store (a network call, a held store): the kit then runs it, for a
	// caller whose context can end, on a goroutine of its own with its
	// own copy of the keys, so that the caller can abandon it. A store
	// that answers false, and a caller whose context cannot end, are
	// asked on the caller's goroutine.
	LookBlocks() bool
}

// Regions is the optional interface of a [Store] that must know the
// memory it may touch. The kit calls it outside its lock, possibly
// from several goroutines at once, and counts each call as inside the
// store: Recycle waits for it and Close is refused while one runs. A
// region is used for admission only once Keep returned, and no longer
// from the moment its revocation begins.
type Regions interface {
	// Keep makes rs (one region, or a batch when together) available
	// to the store and returns the store's token for them. An error
	// registers nothing, unless it is a [*contract.RegistrationError]
	// with a non-zero Registration: then the regions may be live, the
	// kit issues a handle for them (the token is kept) and returns the
	// error with that handle.
	Keep(rs []contract.SlotRegion, together bool) (token any, err error)
	// Release revokes what Keep made. The kit calls it only once no
	// operation with access Open or Unprovable has a span in rs.
	Release(rs []contract.SlotRegion, token any)
}

// Registrar is [Regions] for a store whose revocation can fail (a
// store that refuses, a binding that panics): the kit calls Revoke
// where it would call Release, and an error leaves the regions
// registered under their handle, the kit's Unregister answering an
// error wrapping [contract.ErrDriverRejected] that wraps it; the
// caller asks again. While a revocation runs, the handle is neither
// usable nor revocable by another call. A store implements Regions or
// Registrar; the kit prefers Registrar.
type Registrar interface {
	Keep(rs []contract.SlotRegion, together bool) (token any, err error)
	Revoke(rs []contract.SlotRegion, token any) error
}

// Closer is the optional interface of a [Store] with a client to free
// when the driver closes. The kit calls Close once, from the first
// Close allowed (a Drain returned true, every handle revoked, nothing
// inside the store), outside its lock; the driver reads closed even if
// it fails, and its error is Close's.
type Closer interface {
	Close() error
}

// KeyChecker is the optional interface of a [Store] that cannot hold
// every key a key maker makes (a C string holds no NUL byte). The kit
// asks it of every row's key at admission and of every name's key in a
// lookup, and refuses the batch, recording nothing, when it answers an
// error. A key given to CheckKey is valid only during the call.
type KeyChecker interface {
	CheckKey(key string) error
}

// Teardown is the optional interface of a [Store] that can end every
// transfer by tearing its client down (see [contract.Recycler]). The
// kit calls it from Recycle once no worker runs a call and no lookup
// is inside the store, outside its lock.
type Teardown interface {
	// Teardown ends everything the store's client could still do to
	// lent memory, and makes fresh resources with the regions rs
	// registered again. nil: every transfer ended and the store takes
	// work. An error wrapping [contract.ErrRecycledClosed]: every
	// transfer ended but there are no fresh resources. Any other error:
	// nothing was torn down, no access ends.
	Teardown(ctx context.Context, rs []contract.SlotRegion) error
}

// Counting is the optional interface of a [Store] with counters of its
// own, which metrics export beside the kit's [Stats] under the store's
// name ([Driver.Counters]).
type Counting interface {
	// Counters appends the store's counters, in an order that does not
	// change, to dst.
	Counters(dst []Counter) []Counter
}

// Counter is one of a store's own counters: a total since the driver
// was made, or, when Level is set, a level now (it may fall).
type Counter struct {
	// Name is the counter's name within its store, lower case with
	// underscores ("keys_left_open"); Unit its unit in UCUM's braces
	// ("{key}"); Description one sentence.
	Name, Unit, Description string
	Level                   bool
	Value                   int64
}
