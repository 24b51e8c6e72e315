package redisdrv

import (
	"context"
	"fmt"
	"github.com/kvshare/kvshare/drivekit"
	"sync"

	"github.com/redis/rueidis"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/redisdrv/internal/slotmem"
	"github.com/kvshare/kvshare/scheduler"
)

// maxRedirects bounds how many times one row follows MOVED or ASK in a
// part; a row redirected once more ends Fault.
const maxRedirects = 5

// Transfer is the kit's store call: it sends the call's rows to the
// servers that hold them, reads the replies and records every row's
// verdict (a cluster's nodes' rows as each node answered, see record).
// A row another put of this driver writes now is NotReady unsent.
func (s *store) Transfer(c *drivekit.Call) {
	p := &part{c: c, dir: c.Dir, keys: c.Keys, status: make([]contract.RowStatus, len(c.Keys))}
	var bytes int64
	rows := make([]int, 0, p.len())
	for j := range p.keys {
		bytes += p.span(j).Len
		if c.OwnWrite[j] {
			p.status[j] = contract.NotReady // another put of this driver writes the key: no command
			continue
		}
		rows = append(rows, j)
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.callTimeout(bytes))
	var sn sent
	if len(rows) > 0 {
		sn = s.send(ctx, p, rows)
	}
	cancel()
	if sn.panicked != nil {
		// Nothing proves what a client that panicked midway still does
		// with the part's memory: keep it, for good.
		s.log.Error("redisdrv: the client panicked; every row of the part ends Fault and its access is unprovable",
			"dir", p.dir, "rows", p.len(), "panic", fmt.Sprint(sn.panicked))
		for j := range p.status {
			p.status[j] = contract.Fault
		}
	}
	for j, st := range p.status {
		c.Ends[j] = drivekit.End{Status: st, Unprovable: sn.panicked != nil}
	}
	s.add(sn)
}

// sent is what sending a part's rows came to, beside their verdicts.
type sent struct {
	panicked     any // a panic recovered around the client
	trips        int64
	resends      int64 // pipelines sent again after a dead connection
	moved, asked int64
	split        bool // the rows lay on more than one server at first
}

// send sends rows of p, each server's rows as one pipeline on a
// connection of that server's client, the servers' pipelines at once
// (the first on this goroutine), and returns once every one returned.
// Rows a cluster node answered MOVED or ASK go again, to the node the
// answer named (after ASKING for ASK), at most maxRedirects times.
func (s *store) send(ctx context.Context, p *part, rows []int) (sn sent) {
	groups := s.route.split(p.keys, rows)
	sn.split = len(groups) > 1
	for round := 0; ; round++ {
		sn.panicked = s.sendGroups(ctx, p, groups)
		var reds []redirect
		for _, g := range groups {
			sn.trips += g.trips
			sn.resends += g.resends
			reds = append(reds, g.redirects...)
		}
		if sn.panicked != nil || len(reds) == 0 {
			return sn
		}
		for _, rd := range reds {
			if rd.ask {
				sn.asked++
			} else {
				sn.moved++
			}
		}
		if round == maxRedirects {
			for _, rd := range reds {
				p.status[rd.row] = contract.Fault
			}
			s.log.Warn("redisdrv: rows still redirected after following MOVED/ASK; they end Fault",
				"dir", p.dir, "rows", len(reds), "times", maxRedirects, "first key", p.keys[reds[0].row], "last to", reds[0].addr)
			return sn
		}
		groups = s.route.regroup(ctx, reds)
	}
}

// sendGroups sends each group's rows, the first on this goroutine and
// the others on goroutines of their own, and returns once all returned:
// the first panic recovered, if any.
func (s *store) sendGroups(ctx context.Context, p *part, groups []*nodeRows) any {
	one := func(g *nodeRows) any {
		if g.err != nil {
			for _, j := range g.rows {
				p.status[j] = contract.Fault
			}
			s.log.Warn("redisdrv: rows end Fault unsent", "dir", p.dir, "rows", len(g.rows), "node", g.addr, "err", g.err)
			return nil
		}
		return scheduler.Call(func() {
			if p.dir == contract.PutDir {
				s.resending(ctx, p, g, s.putOnce)
			} else {
				s.resending(ctx, p, g, s.getOnce)
			}
		})
	}
	if len(groups) == 1 && !p.split {
		return one(groups[0])
	}
	p.split = true // no goroutine of the part runs yet
	// Each node's rows are recorded as soon as its pipeline returned, so
	// a slow or lost node holds up no other node's verdicts.
	oneAndRecord := func(g *nodeRows) any {
		pv := one(g)
		if pv == nil {
			s.record(p, g)
		}
		return pv
	}
	panics := make([]any, len(groups))
	var wg sync.WaitGroup
	for i, g := range groups[1:] {
		wg.Go(func() { panics[i+1] = oneAndRecord(g) })
	}
	panics[0] = oneAndRecord(groups[0])
	wg.Wait()
	for _, pv := range panics {
		if pv != nil {
			return pv
		}
	}
	return nil
}

// putOnce sends, for the group's rows, SET key value NX and STRLEN key
// in one pipeline (each after ASKING when the rows were redirected by
// ASK), the value a string over the row's span (the client copies it
// through its write buffer, never whole), and records their verdicts.
// The client writes and flushes the whole pipeline on this goroutine
// before DoMultiStream returns, and reads the spans nowhere else: from
// its return on, the rows' memory is not read. It reports, when resend
// is allowed, that the connection was dead before the first reply (a
// pooled connection the server closed, say by restarting or for being
// idle; the verdicts are then not recorded): the caller sends again
// (see resending), and SET NX makes a second send of a put that did
// land Ready, not a second object.
func (s *store) putOnce(ctx context.Context, p *part, g *nodeRows, resend bool) (dead bool) {
	c := g.client
	per := 2
	if g.asking {
		per = 4
	}
	cmds := make(rueidis.Commands, 0, per*len(g.rows))
	for _, j := range g.rows {
		s, k := p.span(j), p.keys[j]
		if g.asking {
			cmds = append(cmds, c.B().Asking().Build())
		}
		cmds = append(cmds, c.B().Set().Key(k).Value(slotmem.String(s.Addr, s.Len)).Nx().Build())
		if g.asking {
			cmds = append(cmds, c.B().Asking().Build())
		}
		cmds = append(cmds, c.B().Strlen().Key(k).Build())
	}
	g.trips++
	stream := c.DoMultiStream(ctx, cmds...)
	var r reply
	var faults faultLog
	for i, j := range g.rows {
		if g.asking {
			r.read(&stream) // ASKING's OK; a failure shows in SET's reply too
		}
		set := r.read(&stream)
		if i == 0 && resend && deadBeforeReply(ctx, set.err) {
			drain(&stream)
			return true
		}
		if g.asking {
			r.read(&stream)
		}
		strlen := r.read(&stream)
		if s.redirected(g, j, set.err) {
			continue
		}
		p.status[j] = putVerdict(set, strlen, p.span(j).Len)
		if p.status[j] == contract.Fault {
			faults.add(j, set, strlen)
		}
	}
	drain(&stream)
	s.logFaults(p, g, faults)
	return false
}

// getOnce sends GET key for each of the group's rows in one pipeline
// (each after ASKING when the rows were redirected by ASK) and streams
// each value straight into its row's span (a slotWriter that learns the
// value's length before its first byte), recording the verdicts. The
// spans are written only inside WriteTo, on this goroutine: once the
// last reply was read, nothing writes them. It reports, as putOnce
// does, a connection dead before its first reply wrote a byte.
func (s *store) getOnce(ctx context.Context, p *part, g *nodeRows, resend bool) (dead bool) {
	c := g.client
	per := 1
	if g.asking {
		per = 2
	}
	cmds := make(rueidis.Commands, 0, per*len(g.rows))
	for _, j := range g.rows {
		if g.asking {
			cmds = append(cmds, c.B().Asking().Build())
		}
		cmds = append(cmds, c.B().Get().Key(p.keys[j]).Build())
	}
	g.trips++
	stream := c.DoMultiStream(ctx, cmds...)
	var r reply
	var w slotWriter
	var faults faultLog
	for i, j := range g.rows {
		var first error
		if g.asking {
			first = r.read(&stream).err
		}
		w.reset(p.span(j))
		_, err := stream.WriteTo(&w)
		if !g.asking {
			first = err
		}
		if i == 0 && resend && w.written == 0 && deadBeforeReply(ctx, first) {
			drain(&stream)
			return true
		}
		if w.written == 0 && s.redirected(g, j, err) {
			continue
		}
		p.status[j] = getVerdict(&w, err)
		if p.status[j] == contract.Fault {
			faults.add(j, answer{n: w.written, err: err}, answer{})
		}
	}
	drain(&stream)
	s.logFaults(p, g, faults)
	return false
}

// redirected records row j as redirected when err is a cluster node's
// MOVED or ASK, and reports whether it was. A server that is not a
// cluster's has no redirects: there such an answer is the row's Fault.
// A failed connection marks the cluster's slot map stale.
func (s *store) redirected(g *nodeRows, j int, err error) bool {
	if err == nil || !s.route.cluster {
		return false
	}
	re, ok := rueidis.IsRedisErr(err)
	if !ok {
		s.route.markStale()
		return false
	}
	if addr, ok := re.IsMoved(); ok {
		g.redirects = append(g.redirects, redirect{row: j, addr: addr})
		return true
	}
	if addr, ok := re.IsAsk(); ok {
		g.redirects = append(g.redirects, redirect{row: j, addr: addr, ask: true})
		return true
	}
	if re.IsClusterDown() {
		s.route.markStale()
	}
	return false
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

// logFaults logs, once per group of a part, the rows that ended Fault.
func (s *store) logFaults(p *part, g *nodeRows, f faultLog) {
	if f.n == 0 {
		return
	}
	args := []any{"dir", p.dir, "rows", f.n, "of", p.len(),
		"first key", p.keys[f.first], "answer", f.answer.String(), "then", f.then.String()}
	if g.addr != "" {
		args = append(args, "node", g.addr)
	}
	s.log.Warn("redisdrv: rows ended Fault", args...)
}
