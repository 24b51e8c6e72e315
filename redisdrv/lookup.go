package redisdrv

import (
	"context"
	"sync"

	"github.com/redis/rueidis"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/scheduler"
)

// MaxLookupsInStore bounds the lookup calls inside the client at once,
// those a lookup abandoned at its deadline included: a lookup that finds
// the bound reached answers Unknown for every name at once, sending
// nothing, rather than pile up goroutines behind a server that does not
// answer.
const MaxLookupsInStore = 8

// probe is one lookup's round trip: its own keys (strings the client
// keeps, never lent memory), the names sent, and the answers.
type probe struct {
	keys  []string
	ask   []int               // the names sent, by index
	found []contract.Presence // by name index
}

// Look is the lookup's store call, through the kit's Lookup (which
// answers InFlight for this driver's own puts): one pipeline of EXISTS
// key a name on each server holding names (1 Present, 0 Absent, an
// error reply Unknown), MOVED and ASK followed at most maxRedirects
// times. A Redis value is whole the moment it exists (SET is atomic),
// so no other writer's value is ever "in flight": InFlight is this
// driver's own puts alone, which is why the driver declares
// LookupInFlight. The round trip is bounded by the driver's call
// timeout, so a lookup the kit abandoned at its caller's deadline ends
// by it at the latest.
func (s *store) Look(_ context.Context, keys [][]byte, dst []contract.Presence) []contract.Presence {
	p := &probe{keys: make([]string, len(keys)), ask: make([]int, len(keys)), found: make([]contract.Presence, len(keys))}
	var bytes int64
	for i, k := range keys {
		p.keys[i], p.ask[i] = string(k), i
		bytes += int64(len(k))
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.callTimeout(bytes))
	defer cancel()
	var sn sent
	groups := s.route.split(p.keys, p.ask)
	for round := 0; len(groups) > 0 && sn.panicked == nil; round++ {
		sn.panicked = s.probeGroups(ctx, p, groups)
		var reds []redirect
		for _, g := range groups {
			sn.trips += g.trips
			reds = append(reds, g.redirects...)
		}
		if len(reds) == 0 || round == maxRedirects {
			break // names still redirected stay Unknown
		}
		groups = s.route.regroup(ctx, reds)
	}
	s.add(sn)
	if sn.panicked != nil {
		s.log.Error("redisdrv: lookup: the client panicked; the names are Unknown", "panic", sn.panicked)
		clear(p.found) // Unknown
	}
	return append(dst, p.found...)
}

// LookBlocks is true: every lookup is a round trip to a server.
func (s *store) LookBlocks() bool { return true }

// probeGroups asks each group's server, the groups at once, EXISTS key
// for each of its names in one pipeline (after ASKING for a group
// redirected by ASK), and returns once every one answered: the first
// panic recovered, if any.
func (s *store) probeGroups(ctx context.Context, p *probe, groups []*nodeRows) any {
	if len(groups) == 1 && groups[0].err == nil {
		return scheduler.Call(func() { s.probeOnce(ctx, p, groups[0]) })
	}
	panics := make([]any, len(groups))
	var wg sync.WaitGroup
	for i, g := range groups {
		if g.err != nil {
			continue // the names stay Unknown
		}
		wg.Go(func() { panics[i] = scheduler.Call(func() { s.probeOnce(ctx, p, g) }) })
	}
	wg.Wait()
	for _, pv := range panics {
		if pv != nil {
			return pv
		}
	}
	return nil
}

// probeOnce sends one group's EXISTS pipeline and records the answers:
// 1 Present, 0 Absent, MOVED and ASK as redirects, anything else
// Unknown.
func (s *store) probeOnce(ctx context.Context, p *probe, g *nodeRows) {
	c := g.client
	cmds := make(rueidis.Commands, 0, 2*len(g.rows))
	for _, i := range g.rows {
		if g.asking {
			cmds = append(cmds, c.B().Asking().Build())
		}
		cmds = append(cmds, c.B().Exists().Key(p.keys[i]).Build())
	}
	g.trips++
	answers := c.DoMulti(ctx, cmds...)
	for k, i := range g.rows {
		if g.asking {
			k = 2*k + 1
		}
		if k >= len(answers) {
			return
		}
		n, err := answers[k].AsInt64()
		switch {
		case err != nil:
			s.redirected(g, i, err)
		case n == 1:
			p.found[i] = contract.Present
		case n == 0:
			p.found[i] = contract.Absent
		}
	}
}
