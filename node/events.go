package node

import (
	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/keys"
	"github.com/kvshare/kvshare/nodewire"
)

// Events is told what the node learns about the blocks of the store, for
// a KV-aware router (module events publishes it over ZeroMQ). Every
// method is called from the goroutine that learned it and must return at
// once: an implementation that cannot keep up drops, and counts, rather
// than slow a publish. Scope is the session's (the zero Scope: the
// session declared none) and digest its [keys.Scope.Digest] (zero with
// it). The names are the engine's, as its frame carried them: they are
// never changed after the call, and the implementation may keep them.
type Events interface {
	// Stored: a publish's rows ended Ready under these names.
	Stored(scope keys.Scope, digest keys.ScopeDigest, names [][]byte)
	// Absent: a lookup found these names Absent, or a fetch found them
	// Miss. Most were never stored; the implementation keeps only what it
	// announced.
	Absent(scope keys.Scope, digest keys.ScopeDigest, names [][]byte)
}

// tellOutcome tells Config.Events a transfer's outcome: a publish's Ready
// rows stored, a fetch's Miss rows absent. Rows are in view order.
func (e *engine) tellOutcome(t *transfer, out contract.Outcome) {
	ev := e.n.cfg.Events
	if ev == nil {
		return
	}
	want := contract.Ready
	if t.dir == contract.GetDir {
		want = contract.Miss
	}
	names := namesWith(t.groups, out.Rows, want)
	if len(names) == 0 {
		return
	}
	d, _ := e.scope.stem.Scope()
	if want == contract.Ready {
		ev.Stored(e.scope.scope, d, names)
	} else {
		ev.Absent(e.scope.scope, d, names)
	}
}

// namesWith returns the names of groups whose row status is want.
func namesWith(groups []nodewire.Group, rows []contract.RowStatus, want contract.RowStatus) [][]byte {
	n := 0
	for _, s := range rows {
		if s == want {
			n++
		}
	}
	if n == 0 {
		return nil
	}
	names := make([][]byte, 0, n)
	i := 0
	for _, g := range groups {
		for _, name := range g.Names {
			if i < len(rows) && rows[i] == want {
				names = append(names, name)
			}
			i++
		}
	}
	return names
}

// tellAbsent tells Config.Events the names a lookup found Absent.
func (e *engine) tellAbsent(groups [][][]byte, rows []contract.Presence) {
	ev := e.n.cfg.Events
	if ev == nil {
		return
	}
	var names [][]byte
	i := 0
	for _, g := range groups {
		for _, name := range g {
			if i < len(rows) && rows[i] == contract.Absent {
				names = append(names, name)
			}
			i++
		}
	}
	if len(names) > 0 {
		d, _ := e.scope.stem.Scope()
		ev.Absent(e.scope.scope, d, names)
	}
}
