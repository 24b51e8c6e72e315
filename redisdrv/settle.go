package redisdrv

import (
	"github.com/kvshare/kvshare/drivekit"
)

// record settles, once one node's pipeline of a split part returned,
// the verdicts of that node's rows that were not redirected: the other
// nodes' rows may still be on their way, and the part's access ends
// only when Transfer returns.
func (s *store) record(p *part, g *nodeRows) {
	redirected := make(map[int]bool, len(g.redirects))
	for _, rd := range g.redirects {
		redirected[rd.row] = true
	}
	rows := make([]int, 0, len(g.rows))
	for _, j := range g.rows {
		st := p.status[j]
		if redirected[j] || !st.Final() {
			continue // sent again, or left to the call's end
		}
		p.c.Ends[j] = drivekit.End{Status: st}
		rows = append(rows, j)
	}
	if len(rows) > 0 {
		p.c.Settle(rows...)
	}
}
