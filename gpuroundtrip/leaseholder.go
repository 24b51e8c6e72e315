package gpuroundtrip

import (
	"context"
	"fmt"
	"time"

	"github.com/kvshare/kvshare/contract"
)

// Transfer is what one direction of a request moved.
type Transfer struct {
	// Outcome is the attempt's outcome: one flag per block, layer by
	// layer, and the fault that stopped it, if any.
	Outcome contract.Outcome
	// Prefixes holds each layer's delivered prefix, in blocks; Bound is
	// their minimum, the request's resume bound (contract.View.ResumeBound).
	Prefixes []int
	Bound    int
	// Delivered counts the blocks delivered, in any layer and place.
	Delivered int
	// CopyBytes and Copy are the bytes copied between pages and staging
	// and the time it took; Store is the time from submission to
	// quiescence.
	CopyBytes int64
	Copy      time.Duration
	Store     time.Duration
}

// LeaseHolder drives a [Lender] as an engine's runtime would: it leases
// the staging slots, builds the request's view, submits it, waits for
// quiescence, marks what arrived, and releases the slots. It is safe for
// concurrent use; requests take turns at the lender's slots.
type LeaseHolder struct {
	l *Lender
}

// NewLeaseHolder returns a lease holder of l.
func NewLeaseHolder(l *Lender) *LeaseHolder { return &LeaseHolder{l: l} }

// Publish copies the request's pages to their staging slots (device to
// host) and publishes them. The transfer's Bound is the number of leading
// blocks published in every layer. An error means the publish could not
// run to its end (the slots could not be leased, a copy failed, the
// backend refused the view, or ctx ended before quiescence); a fault of
// the store is the outcome's, not an error.
func (h *LeaseHolder) Publish(ctx context.Context, req Request) (Transfer, error) {
	var t Transfer
	lease, err := h.l.Lend(ctx)
	if err != nil {
		return t, err
	}
	start := time.Now()
	if err := h.l.stageOut(); err != nil {
		lease.Release() // nothing was submitted
		return t, err
	}
	t.Copy, t.CopyBytes = time.Since(start), h.l.size()
	v := h.l.View(req)
	start = time.Now()
	a, err := h.l.backend.Publish(v, nil)
	if err != nil {
		lease.Release() // refused: nothing reached the store
		return t, fmt.Errorf("lender %s: publish: %w", h.l.name, err)
	}
	if err := h.await(ctx, a, lease); err != nil {
		return t, fmt.Errorf("lender %s: publish: %w", h.l.name, err)
	}
	t.Store = time.Since(start)
	err = t.mark(v, a)
	lease.Release()
	return t, err
}

// Fetch fetches the request's blocks into the staging slots, waits for
// quiescence, and copies to the pages (host to device) only the leading
// blocks that arrived in every layer: up to the transfer's Bound, where
// the request resumes. Blocks delivered past the bound are not copied.
// Errors as for Publish.
func (h *LeaseHolder) Fetch(ctx context.Context, req Request) (Transfer, error) {
	var t Transfer
	lease, err := h.l.Lend(ctx)
	if err != nil {
		return t, err
	}
	v := h.l.View(req)
	start := time.Now()
	a, err := h.l.backend.Fetch(v, nil)
	if err != nil {
		lease.Release()
		return t, fmt.Errorf("lender %s: fetch: %w", h.l.name, err)
	}
	if err := h.await(ctx, a, lease); err != nil {
		return t, fmt.Errorf("lender %s: fetch: %w", h.l.name, err)
	}
	t.Store = time.Since(start)
	if err := t.mark(v, a); err != nil {
		lease.Release()
		return t, err
	}
	start = time.Now()
	err = h.l.stageIn(t.Bound)
	t.Copy, t.CopyBytes = time.Since(start), int64(t.Bound*h.l.layers)*h.l.blockBytes
	lease.Release()
	return t, err
}

// await waits within ctx for the attempt to quiesce. If ctx ends first it
// cancels the attempt and leaves the lease out: the slots go back to the
// lender only when the attempt quiesces, which may be never.
func (h *LeaseHolder) await(ctx context.Context, a contract.Attempt, lease *Lease) error {
	select {
	case <-a.Done():
		return nil
	case <-ctx.Done():
	}
	a.Cancel()
	go func() {
		<-a.Done()
		lease.Release()
	}()
	h.l.log.Warn("gpuroundtrip: attempt not quiesced; its slots stay lent until it does",
		"lender", h.l.name, "cause", context.Cause(ctx))
	return fmt.Errorf("the attempt did not quiesce (its slots stay lent until it does): %w", context.Cause(ctx))
}

// mark reads the quiesced attempt's outcome: what arrived, each layer's
// prefix and the bound.
func (t *Transfer) mark(v contract.View, a contract.Attempt) error {
	o, ok := a.Outcome()
	if !ok {
		return fmt.Errorf("gpuroundtrip: a quiesced attempt has no outcome")
	}
	prefixes, err := LayerPrefixes(v, o)
	if err != nil {
		return err
	}
	t.Outcome, t.Prefixes, t.Bound = o, prefixes, v.ResumeBound(o)
	for _, d := range o.Delivered {
		if d {
			t.Delivered++
		}
	}
	return nil
}
