package redisdrv

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"

	"github.com/redis/rueidis"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/redisdrv/internal/slotmem"
	"github.com/kvshare/kvshare/scheduler"
)

// run is the worker pool's function: it sends a part's pipeline, reads
// its replies, records the rows' verdicts and calls the operation's
// callback before it returns (so the pool's Stop, and with it Drain,
// cannot return before the callback).
func (d *Driver) run(p *part) {
	ctx, cancel := context.WithTimeout(context.Background(), d.cfg.callTimeout(p.bytes))
	var panicked any
	if p.op.dir == contract.PutDir {
		panicked = scheduler.Call(func() { d.runPut(ctx, p) })
	} else {
		panicked = scheduler.Call(func() { d.runGet(ctx, p) })
	}
	cancel()
	if panicked != nil {
		// Nothing proves what a client that panicked midway still does
		// with the part's memory: keep it, for good.
		d.log.Error("redisdrv: the client panicked; every row of the part ends Fault and its access is unprovable",
			"dir", p.op.dir, "rows", p.len(), "panic", fmt.Sprint(panicked))
		for j := range p.status {
			p.status[j] = contract.Fault
		}
		d.mu.Lock()
		d.stats.Panics++
		d.mu.Unlock()
	}
	op := p.op
	d.finish(p, panicked != nil)
	d.callOnChange(op)
}

// runPut sends, for every row the part may put, SET key value NX and
// STRLEN key in one pipeline, the value a string over the row's span
// (the client copies it through its write buffer, never whole); rows
// whose key another put of this driver is writing end NotReady without
// a command. The client writes and flushes the whole pipeline on this
// goroutine before DoMultiStream returns, and reads the spans nowhere
// else: from its return on, the part's memory is not read. A pipeline
// whose connection turns out dead before its first reply (a pooled
// connection the server closed, say by restarting) is sent once more,
// on a fresh one: SET NX makes a second send of a put that did land
// Ready, not a second object.
func (d *Driver) runPut(ctx context.Context, p *part) {
	rows := make([]int, 0, p.len())
	for j := range p.keys {
		if p.op.writing[p.lo+j] {
			p.status[j] = contract.NotReady
			continue
		}
		rows = append(rows, j)
	}
	if len(rows) == 0 {
		return
	}
	if d.putOnce(ctx, p, rows, true) {
		d.putOnce(ctx, p, rows, false)
	}
}

// putOnce sends the part's put pipeline for rows and records their
// verdicts; it reports, when retry is allowed, that the connection was
// dead before the first reply (the verdicts are then not recorded).
func (d *Driver) putOnce(ctx context.Context, p *part, rows []int, retry bool) (stale bool) {
	cmds := make(rueidis.Commands, 0, 2*len(rows))
	for _, j := range rows {
		s, k := p.span(j), p.keys[j]
		cmds = append(cmds,
			d.client.B().Set().Key(k).Value(slotmem.String(s.Addr, s.Len)).Nx().Build(),
			d.client.B().Strlen().Key(k).Build())
	}
	stream := d.client.DoMultiStream(ctx, cmds...)
	var r reply
	var faults faultLog
	for i, j := range rows {
		set := r.read(&stream)
		if i == 0 && retry && deadBeforeReply(ctx, set.err) {
			drain(&stream)
			return true
		}
		strlen := r.read(&stream)
		p.status[j] = putVerdict(set, strlen, p.span(j).Len)
		if p.status[j] == contract.Fault {
			faults.add(j, set, strlen)
		}
	}
	drain(&stream)
	d.logFaults(p, faults)
	return false
}

// runGet sends GET key for every row of the part in one pipeline and
// streams each value straight into its row's span (a slotWriter that
// learns the value's length before its first byte). The spans are
// written only inside WriteTo, on this goroutine: once the last reply
// was read, nothing writes them. A pipeline whose connection turns out
// dead before its first reply, not a byte written, is sent once more on
// a fresh one, as a put's is.
func (d *Driver) runGet(ctx context.Context, p *part) {
	if d.getOnce(ctx, p, true) {
		d.getOnce(ctx, p, false)
	}
}

// getOnce sends the part's get pipeline and records the verdicts; it
// reports, when retry is allowed, that the connection was dead before
// the first reply wrote a byte (the verdicts are then not recorded).
func (d *Driver) getOnce(ctx context.Context, p *part, retry bool) (stale bool) {
	cmds := make(rueidis.Commands, 0, p.len())
	for _, k := range p.keys {
		cmds = append(cmds, d.client.B().Get().Key(k).Build())
	}
	stream := d.client.DoMultiStream(ctx, cmds...)
	var w slotWriter
	var faults faultLog
	for j := range p.keys {
		w.reset(p.span(j))
		_, err := stream.WriteTo(&w)
		if j == 0 && retry && w.written == 0 && deadBeforeReply(ctx, err) {
			drain(&stream)
			return true
		}
		p.status[j] = getVerdict(&w, err)
		if p.status[j] == contract.Fault {
			faults.add(j, answer{n: w.written, err: err}, answer{})
		}
	}
	drain(&stream)
	d.logFaults(p, faults)
	return false
}

// deadBeforeReply reports whether err, a pipeline's first reply, says
// its connection was closed by the other side (EOF, a reset, a broken
// pipe) while the part still had time: not a timeout, not an answer of
// the server.
func deadBeforeReply(ctx context.Context, err error) bool {
	if err == nil || ctx.Err() != nil {
		return false
	}
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) || errors.Is(err, net.ErrClosed)
}

// drain reads whatever replies a stream still holds, so that its
// connection goes back to the client's pool (none are left when every
// row read its own).
func drain(s *rueidis.MultiRedisResultStream) {
	var r reply
	for s.HasNext() {
		r.read(s)
	}
}

// faultLog is what a part logs of its rows that ended Fault: how many,
// and what the server answered the first.
type faultLog struct {
	n, first     int
	answer, then answer
}

func (f *faultLog) add(j int, first, second answer) {
	if f.n == 0 {
		f.first, f.answer, f.then = j, first, second
	}
	f.n++
}

// logFaults logs, once per part, the rows that ended Fault.
func (d *Driver) logFaults(p *part, f faultLog) {
	if f.n == 0 {
		return
	}
	d.log.Warn("redisdrv: rows ended Fault", "dir", p.op.dir, "rows", f.n, "of", p.len(),
		"first key", p.keys[f.first], "answer", f.answer.String(), "then", f.then.String())
}
