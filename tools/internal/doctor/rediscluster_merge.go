package doctor

import (
	"fmt"
	"strings"

	"github.com/redis/rueidis"
)

// each runs judge on every node's client, in node order.
func each[T any](nodes []clusterNode, judge func(rueidis.Client) T) []nodeAnswer[T] {
	out := make([]nodeAnswer[T], len(nodes))
	for i, n := range nodes {
		out[i] = nodeAnswer[T]{addr: n.addr, v: judge(n.client)}
	}
	return out
}

// nodeAnswer is what one node answered.
type nodeAnswer[T any] struct {
	addr string
	v    T
}

// merged is one line for a check judged on every node: its verdict the
// worst of theirs (Fail, then Warn, then Skip, then OK), its detail one
// line for each group of nodes that saw the same, worst first, each
// naming its nodes ("every node asked" when all saw the same).
func merged(check string, per []nodeAnswer[Finding]) Finding {
	type group struct {
		addrs []string
		f     Finding
	}
	var groups []*group
	for _, p := range per {
		found := false
		for _, g := range groups {
			if g.f.Verdict == p.v.Verdict && g.f.Detail == p.v.Detail {
				g.addrs = append(g.addrs, p.addr)
				found = true
				break
			}
		}
		if !found {
			groups = append(groups, &group{addrs: []string{p.addr}, f: p.v})
		}
	}
	worst := Finding{Check: check, Verdict: OK}
	var lines []string
	for _, rank := range []Verdict{Fail, Warn, Skip, OK} {
		for _, g := range groups {
			if g.f.Verdict != rank {
				continue
			}
			if severity(rank) > severity(worst.Verdict) {
				worst.Verdict = rank
			}
			who := strings.Join(g.addrs, ", ")
			if len(groups) == 1 && len(per) > 1 {
				who = fmt.Sprintf("every node asked (%s)", who)
			}
			lines = append(lines, who+": "+g.f.Detail)
		}
	}
	worst.Detail = strings.Join(lines, "\n")
	return worst
}

// severity orders the verdicts for merging: OK, Skip, Warn, Fail.
func severity(v Verdict) int {
	switch v {
	case Fail:
		return 3
	case Warn:
		return 2
	case Skip:
		return 1
	}
	return 0
}
