package nodeclient

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"

	"github.com/kvshare/kvshare/nodewire"
)

// Geometry is the shape of a lend, as hostmem's: Regions regions (0
// means 1), each of SlotCount slots of SlotBytes bytes. Each region
// starts on a page boundary: region i at i × [nodewire.Stride].
type Geometry struct {
	SlotBytes int64
	SlotCount int
	Regions   int
}

// Lend is memory the engine lends the node: one sealed memfd that both
// map shared, laid out by its Geometry. The engine writes a slot before
// publishing it and reads it after a fetch's outcome; the node's store
// reads and writes it in between. A slot may be reused once the
// attempts that name it quiesced.
type Lend struct {
	c      *Client
	id     uint32
	g      Geometry
	stride int64
	size   int64
	mem    *memory

	mu     sync.Mutex
	state  lendState
	orphan bool // no caller holds the lend: the client finishes it
}

type lendState uint8

const (
	lent      lendState = iota // the node maps it; transfers may name it
	returning                  // a return is in flight
	held                       // the node answered Held: it keeps its mapping
	stranded                   // the connection ended before the node returned it
	returned                   // the node unmapped it; the client did too
)

var lendStateNames = [...]string{"lent", "being returned", "held by the node", "stranded (the connection ended before it was returned)", "returned"}

func (s lendState) String() string { return lendStateNames[s] }

// Lend creates a memfd for g (sealed against shrinking and growing,
// mapped shared here), lends it to the node and waits within ctx for the
// node to take it. A geometry the client cannot lay out is refused
// before anything is created, with an error wrapping
// nodewire.ErrBadLend, one over the node's max_lend_bytes with
// nodewire.ErrLimit; the node's refusal is a *nodewire.RefusedError.
//
// If ctx ends before the node answers, Lend returns ctx's error, and
// the client finishes on its own: a lend the node takes after that is
// returned at once, and its memory freed once the node answers Returned.
func (c *Client) Lend(ctx context.Context, g Geometry) (*Lend, error) {
	if g.Regions == 0 {
		g.Regions = 1
	}
	if g.SlotCount > math.MaxUint32 || g.Regions > math.MaxUint32 {
		return nil, fmt.Errorf("%w: lend: %d slots of %d regions: more than a u32 counts", nodewire.ErrBadLend, g.SlotCount, g.Regions)
	}
	size, err := nodewire.LendSize(g.SlotBytes, g.SlotCount, g.Regions)
	if err != nil {
		return nil, err
	}
	stride, _ := nodewire.Stride(g.SlotBytes, g.SlotCount)
	if max := c.welcome.MaxLendBytes; uint64(size) > max {
		return nil, fmt.Errorf("%w: lend: %d bytes, over the node's max_lend_bytes of %d", nodewire.ErrLimit, size, max)
	}
	if size > math.MaxInt {
		return nil, fmt.Errorf("%w: lend: %d bytes do not fit this process's address space", nodewire.ErrBadLend, size)
	}
	mem, err := newMemory(size)
	if err != nil {
		return nil, fmt.Errorf("kvshare/nodeclient: lend: %w", err)
	}
	c.mu.Lock()
	c.lent[mem] = size
	c.mu.Unlock()
	l := &Lend{c: c, g: g, stride: stride, size: size, mem: mem}

	// sent: 0 while the frame waits to be written, 1 once the writer
	// took it (the fd may have reached the node), 2 if it was dropped
	// unsent. Only 2 proves the node never saw the memfd.
	var sent atomic.Int32
	written := func(tried bool) {
		if tried {
			sent.Store(1)
		} else {
			sent.CompareAndSwap(0, 2)
		}
	}
	settle := func(m nodewire.Message, lostErr error) { l.settleLend(m, lostErr, sent.Load() == 2) }
	m, err := c.callWritten(ctx, &nodewire.Lend{SlotBytes: uint64(g.SlotBytes), SlotCount: uint32(g.SlotCount), Regions: uint32(g.Regions)},
		mem.fd, settle, written, nodewire.TypeLent)
	switch {
	case err == nil:
		if err := l.take(m.(*nodewire.Lent)); err != nil {
			return nil, err
		}
		return l, nil
	case abandoned(ctx, err):
		return nil, err // settle finishes it
	case errors.As(err, new(*nodewire.RefusedError)):
		_ = l.release() // the node closed its fd and maps nothing
	default:
		l.settleLend(nil, err, sent.Load() == 2) // the connection ended
	}
	return nil, fmt.Errorf("kvshare/nodeclient: lend of %d bytes: %w", size, err)
}

// abandoned reports whether err is a call's giving up because ctx ended.
func abandoned(ctx context.Context, err error) bool {
	return ctx.Err() != nil && errors.Is(err, ctx.Err())
}

// take checks the node's Lent against the client's layout. A node that
// laid the memory out otherwise would move rows to the wrong bytes: the
// lend is returned at once and refused.
func (l *Lend) take(m *nodewire.Lent) error {
	l.id = m.Lend
	if int64(m.RegionStride) != l.stride || m.Lend == 0 {
		l.returnOrphan()
		return fmt.Errorf("%w: lend: the node took lend %d with a region stride of %d bytes, the client's is %d; returned",
			nodewire.ErrProtocol, m.Lend, m.RegionStride, l.stride)
	}
	return nil
}

// settleLend finishes a lend nobody waits for (its Lend call gave up) or
// that failed: taken → returned at once; refused → freed (the node
// closed its fd); never answered → freed only if the frame was never
// sent, else kept mapped.
func (l *Lend) settleLend(m nodewire.Message, lostErr error, unsent bool) {
	switch m := m.(type) {
	case *nodewire.Lent:
		if err := l.take(m); err == nil {
			l.returnOrphan()
		}
	case *nodewire.Refused:
		l.release()
	case nil:
		if unsent {
			l.release()
			return
		}
		l.c.log.Warn("kvshare/nodeclient: a lend's memfd may have reached the node, which never answered: its memory stays mapped until the node's exit is proven",
			"bytes", l.size, "err", lostErr)
		l.mu.Lock()
		l.orphan = true
		l.mu.Unlock()
		l.strand()
	}
}

// strand marks the lend cut off from its node (the connection ended
// before the node returned it). A lend no caller holds is freed once
// the node's exit is proven; one a caller holds, by its Return then.
func (l *Lend) strand() {
	l.mu.Lock()
	l.state = stranded
	orphan := l.orphan
	l.mu.Unlock()
	if !orphan {
		return
	}
	c := l.c
	c.mu.Lock()
	if !c.exited {
		c.orphans = append(c.orphans, l)
		c.mu.Unlock()
		return
	}
	c.mu.Unlock()
	_ = l.release()
}

// returnOrphan returns a lend no caller holds, without waiting.
func (l *Lend) returnOrphan() {
	l.mu.Lock()
	l.state = returning
	l.orphan = true
	l.mu.Unlock()
	k := &call{c: l.c, want: []nodewire.Type{nodewire.TypeReturned, nodewire.TypeHeld}, abandoned: true,
		orphan: func(m nodewire.Message, lostErr error) { l.settleReturn(m, lostErr) }}
	id, err := l.c.request(k)
	if err != nil {
		l.settleReturn(nil, err)
		return
	}
	l.c.send(id, &nodewire.Return{Lend: l.id}, -1, nil)
}

// ID returns the node's id of the lend.
func (l *Lend) ID() uint32 { return l.id }

// Geometry returns the lend's geometry (Regions at least 1).
func (l *Lend) Geometry() Geometry { return l.g }

// Stride returns the distance in bytes between the starts of two
// regions.
func (l *Lend) Stride() int64 { return l.stride }

// Bytes returns the size of the lend's memfd.
func (l *Lend) Bytes() int64 { return l.size }

// Slot returns the bytes of slot slot of region region, shared with the
// node. It panics for a region or slot out of range, and once the lend
// is returned (its memory is unmapped then).
func (l *Lend) Slot(region, slot int) []byte {
	if region < 0 || region >= l.g.Regions || slot < 0 || slot >= l.g.SlotCount {
		panic(fmt.Sprintf("kvshare/nodeclient: slot %d of region %d of a lend of %d regions of %d slots", slot, region, l.g.Regions, l.g.SlotCount))
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.state == returned {
		panic(fmt.Sprintf("kvshare/nodeclient: slot %d of region %d of lend %d, which was returned", slot, region, l.id))
	}
	off := int64(region)*l.stride + int64(slot)*l.g.SlotBytes
	return l.mem.mem[off : off+l.g.SlotBytes : off+l.g.SlotBytes]
}

// Return gives the lend back and waits within ctx for the node's answer.
// Returned: the node unmapped it; the client unmaps it and closes the
// memfd, and the lend's slots must not be touched again. Held: the node
// could not prove every access ended (a store still holds a transfer),
// so it keeps its mapping, counted; Return's error wraps [ErrHeld] and
// says how many bytes, and the client keeps its own mapping too (Lent
// counts it). A refusal (nodewire.ErrBusy: attempts in flight) leaves
// the lend as it was. If ctx ends first, the answer that comes later is
// applied all the same.
//
// A lend cut off from its node (the connection ended before the node
// returned it) is freed only on proof that the node's process exited:
// Return waits within ctx for that proof ([Client.WaitNodeExit]), and
// then unmaps the memory and closes the memfd. Without it, the error is
// a *[NodeLostError] of EvidenceUnknown (wrapping [ErrNoEvidence] when
// the client cannot see the node's exit, else ctx's error) and the
// memory stays mapped; Return may be called again.
func (l *Lend) Return(ctx context.Context) error {
	l.mu.Lock()
	if l.state == stranded || l.state == held && l.c.Err() != nil {
		l.mu.Unlock()
		return l.returnCutOff(ctx)
	}
	if l.state != lent {
		s := l.state
		l.mu.Unlock()
		return fmt.Errorf("%w: lend %d is %v", nodewire.ErrUnknownLend, l.id, s)
	}
	l.state = returning
	l.mu.Unlock()
	m, err := l.c.call(ctx, &nodewire.Return{Lend: l.id}, -1, func(m nodewire.Message, lostErr error) { _ = l.settleReturn(m, lostErr) },
		nodewire.TypeReturned, nodewire.TypeHeld)
	switch {
	case err == nil:
		err = l.settleReturn(m, nil)
	case abandoned(ctx, err):
		return err // the answer is applied when it comes
	case errors.As(err, new(*nodewire.RefusedError)):
		l.setState(lent)
	default:
		_ = l.settleReturn(nil, err)
		return l.returnCutOff(ctx)
	}
	if err != nil {
		return fmt.Errorf("kvshare/nodeclient: return of lend %d: %w", l.id, err)
	}
	return nil
}

// returnCutOff frees a lend cut off from its node once the node's exit
// is proven, waiting within ctx for the proof.
func (l *Lend) returnCutOff(ctx context.Context) error {
	c := l.c
	if err := c.WaitNodeExit(ctx); err != nil {
		lost := &NodeLostError{Evidence: EvidenceUnknown, Err: fmt.Errorf("%w; %w", c.Err(), err)}
		return fmt.Errorf("kvshare/nodeclient: return of lend %d: stranded, its %d bytes kept mapped: %w", l.id, l.size, lost)
	}
	return l.release()
}

func (l *Lend) setState(s lendState) {
	l.mu.Lock()
	l.state = s
	l.mu.Unlock()
}

// settleReturn applies the node's answer to a return: Returned frees
// the memory; Held keeps it (ErrHeld); a refusal leaves the lend lent;
// no answer (the connection ended) strands it, kept.
func (l *Lend) settleReturn(m nodewire.Message, lostErr error) error {
	switch m := m.(type) {
	case *nodewire.Returned:
		return l.release()
	case *nodewire.Held:
		l.setState(held)
		l.c.log.Warn("kvshare/nodeclient: the node holds a returned lend: its memory stays mapped", "lend", l.id, "bytes", m.Bytes)
		return fmt.Errorf("%w: the node keeps %d bytes mapped (access not proven ended); the client keeps its mapping", ErrHeld, m.Bytes)
	case *nodewire.Refused:
		l.setState(lent)
		return m.Err()
	}
	l.c.log.Warn("kvshare/nodeclient: the connection ended before the node returned a lend: its memory stays mapped until the node's exit is proven", "lend", l.id, "bytes", l.size, "err", lostErr)
	l.strand()
	return lostErr
}

// release unmaps the lend's memory and closes its memfd: only once the
// node answered Returned or refused the lend, or never saw it.
func (l *Lend) release() error {
	l.mu.Lock()
	if l.state == returned {
		l.mu.Unlock()
		return nil
	}
	l.state = returned
	err := l.mem.release()
	l.mu.Unlock()
	l.c.mu.Lock()
	delete(l.c.lent, l.mem)
	l.c.mu.Unlock()
	return err
}
