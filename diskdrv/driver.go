package diskdrv

import (
	"context"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/drivekit"
)

// Driver is a [contract.Driver], [contract.Looker] and
// [contract.Recycler] over a [Store]: a [drivekit.Driver] whose store
// calls read and write the store's files. Its capabilities: Put, Get,
// Cancel, AbsentIsMiss, LookupInFlight and MultiSpan.
type Driver struct {
	*drivekit.Driver
	store *Store
}

var (
	_ contract.Driver   = (*Driver)(nil)
	_ contract.Looker   = (*Driver)(nil)
	_ contract.Recycler = (*Driver)(nil)
)

// Caps is what every driver of the package declares.
var Caps = contract.Capabilities{Put: true, Get: true, Cancel: true, AbsentIsMiss: true, LookupInFlight: true, MultiSpan: true}

// New returns a driver over s.
func New(s *Store, o DriverOptions) *Driver {
	if o.Workers <= 0 {
		o.Workers = 4
	}
	if o.CallRows <= 0 {
		o.CallRows = 1
	}
	if o.Logger == nil {
		o.Logger = s.log
	}
	d := &Driver{store: s}
	d.Driver = drivekit.New(client{s}, drivekit.Options{Name: "diskdrv", Caps: Caps, Workers: o.Workers, CallRows: o.CallRows, Logger: o.Logger})
	return d
}

// Store returns the store the driver reads and writes.
func (d *Driver) Store() *Store { return d.store }

// client is the store the kit calls.
type client struct{ s *Store }

var _ drivekit.Looker = client{}

// Transfer runs the call's rows one after another with pwrite and
// pread on the worker's own goroutine: when it returns, no byte of the
// rows' memory is touched any more, so no End is ever Unprovable. A row
// of an operation cancelled before the row began ends Cancelled.
func (c client) Transfer(call *drivekit.Call) {
	direct := c.s.direct
	for i, key := range call.Keys {
		end := &call.Ends[i]
		select {
		case <-call.Cancelled():
			end.Status = contract.Cancelled
			continue
		default:
		}
		if call.Dir == contract.PutDir && call.OwnWrite[i] {
			end.Status = contract.NotReady
			continue
		}
		r := row{s: c.s, dir: call.Dir, key: key, spans: call.Rows[i].Spans}
		r.direct = direct && aligned(r.spans)
		if r.direct {
			c.s.directRows.Add(1)
		} else {
			c.s.cachedRows.Add(1)
		}
		r.ask(Begin)
		if call.Dir == contract.PutDir {
			end.Status = r.put()
		} else {
			end.Status = r.get()
		}
	}
}

// Look answers from the index in memory: a complete object Present, a
// key being written InFlight, any other Absent; a key the seam fails
// Unknown.
func (c client) Look(_ context.Context, keys [][]byte, dst []contract.Presence) []contract.Presence {
	s := c.s
	var failed []bool
	if s.o.Seam != nil {
		failed = make([]bool, len(keys))
		for i, k := range keys {
			failed[i] = s.o.Seam(Look, contract.GetDir, string(k)).Err != nil
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, k := range keys {
		switch {
		case failed != nil && failed[i]:
			dst = append(dst, contract.Unknown)
		case s.index[string(k)] != nil:
			dst = append(dst, contract.Present)
		default:
			if _, ok := s.writing[string(k)]; ok {
				dst = append(dst, contract.InFlight)
			} else {
				dst = append(dst, contract.Absent)
			}
		}
	}
	return dst
}

// LookBlocks is false: the index answers at once.
func (client) LookBlocks() bool { return false }
