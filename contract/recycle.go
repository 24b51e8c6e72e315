package contract

import (
	"context"
	"errors"
)

// ErrRecycledClosed is wrapped by a [Recycler.Recycle] that tore the
// store's resources down but could not have fresh ones: every access
// ended, and the driver is closed (see Recycler).
var ErrRecycledClosed = errors.New("kvshare: recycled, then closed")

// Recycler is an optional interface of a [Driver] that can end the
// access it could not prove ended, by tearing down what could still
// reach the memory (its store client: the threads and sockets of its
// transfers) and starting again with fresh resources. Find it by type
// assertion, like io.WriterTo. The backend calls it (binding's
// Backend.Reclaim); nothing else should.
//
// Recycle keeps these rules:
//
//  1. From the moment it is called until it returns, Put, Get, lookups,
//     Register and Unregister are refused with [ErrDriverRejected].
//  2. It ends Cancelled every row no worker took, then waits within ctx
//     for the rows and lookups inside the store, and only then tears the
//     store's resources down. A row inside the store keeps the verdict
//     the store gives it.
//  3. If ctx ends before the teardown, Recycle returns an error wrapping
//     ErrDriverRejected, has torn nothing down, and changes no access:
//     an Unprovable operation stays Unprovable. The driver takes work
//     again, unless a Drain had stopped it.
//  4. On nil, every operation admitted before the call has every row
//     final and its access Ended, Unprovable ones included: the one
//     change Unprovable ever makes, and only here. onChange was called
//     for each operation it changed before Recycle returned. Nothing the
//     old resources did can touch lent memory any more. Every region
//     registered before is registered again with the fresh resources,
//     under the same handle, and the driver takes work again unless a
//     Drain had stopped it.
//  5. On an error wrapping [ErrRecycledClosed], rule 4's access ends
//     hold, but the driver has no resources: it refuses every later
//     call, Unregister of any handle succeeds (nothing is registered),
//     Drain answers true, and Close succeeds.
//  6. After Close, Recycle is refused with ErrDriverRejected.
type Recycler interface {
	Recycle(ctx context.Context) error
}
