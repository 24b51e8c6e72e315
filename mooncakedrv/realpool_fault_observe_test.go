package mooncakedrv

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/kvshare/kvshare/contract"
)

// tally counts things by group and name ("put" "RPC_FAIL(-900)"), and
// prints them as "put 0×56, RPC_FAIL(-900)×8; get whole×64", groups and
// names in the order first seen.
type tally struct {
	groups []string
	names  map[string][]string
	n      map[string]map[string]int
}

// add counts k of name in group.
func (c *tally) add(group, name string, k int) {
	if c.n == nil {
		c.n, c.names = map[string]map[string]int{}, map[string][]string{}
	}
	if c.n[group] == nil {
		c.n[group] = map[string]int{}
		c.groups = append(c.groups, group)
	}
	if _, ok := c.n[group][name]; !ok {
		c.names[group] = append(c.names[group], name)
	}
	c.n[group][name] += k
}

// count is how many of name group has.
func (c *tally) count(group, name string) int { return c.n[group][name] }

// String prints the tally, "none" when empty.
func (c *tally) String() string {
	if len(c.groups) == 0 {
		return "none"
	}
	var parts []string
	for _, g := range c.groups {
		var items []string
		for _, name := range c.names[g] {
			items = append(items, fmt.Sprintf("%s×%d", name, c.n[g][name]))
		}
		parts = append(parts, strings.TrimSpace(g+" "+strings.Join(items, ", ")))
	}
	return strings.Join(parts, "; ")
}

// observation is what the matrix saw of the traffic of one or more
// lenders: the store's answers, the rows' verdicts, the operations'
// access, and what stayed lent.
type observation struct {
	answers, verdicts, access tally
	opsUnprovable             int
	rowsUnprovable            int
}

// answerName names one answer for the matrix: a get's byte count as
// "whole" when it is the row's size.
func answerName(a sdkAnswer) string {
	switch {
	case a.err != nil:
		return "call failed"
	case a.kind == kindGet && a.code == faultSlotBytes:
		return "whole"
	}
	return codeName(a.code)
}

// dirName names a direction as the backend does.
func dirName(d contract.Direction) string {
	if d == contract.PutDir {
		return "publish"
	}
	return "fetch"
}

// kept is what a lender keeps for good: the directions with an
// unprovable operation, and their rows.
type kept struct {
	dirs map[contract.Direction]bool
	rows int
}

// observe checks every operation l recorded against the rule (each
// row's verdict from its key's answers, the access from all of them),
// checks the bytes of every Ready fetch, fences the slots of every
// operation whose access ended, checks the driver's and the backend's
// stats against what is unprovable, and adds it all to ob. It returns
// what l keeps.
func (l *faultLender) observe(ob *observation) kept {
	t := l.t
	t.Helper()
	unprovable := map[contract.Direction]bool{}
	ops, rows := 0, 0
	for _, r := range l.drv.recorded() {
		st := r.op.Poll(nil)
		want, access := l.rule(r)
		var whys []string
		for _, name := range r.names {
			ans := answersFor(r.dir, l.client.answersOf(l.key(name)))
			whys = append(whys, ruleFor(r.dir, ans).why)
			for _, a := range ans {
				ob.answers.add(a.kind.String(), answerName(a), 1)
			}
		}
		assert.Equal(t, want, st.Rows, "lender %s: %s of %s…: the verdicts the verdict table gives the store's answers %q", l.name, dirName(r.dir), r.names[0], whys)
		assert.Equal(t, access, st.Access, "lender %s: %s of %s…: the access the store's answers %q leave", l.name, dirName(r.dir), r.names[0], whys)
		for _, s := range st.Rows {
			ob.verdicts.add(dirName(r.dir), s.String(), 1)
		}
		ob.access.add("", st.Access.String(), 1)
		if st.Access != contract.Ended {
			ops++
			rows += len(r.names)
			unprovable[r.dir] = true
			continue // kept for good: never written, never checked
		}
		for i, s := range st.Rows {
			if r.dir == contract.GetDir && s == contract.Ready {
				assert.True(t, l.holds(r.slots[i], r.names[i]),
					"lender %s: fetch of %s is Ready with other bytes", l.name, r.names[i])
			}
		}
		for _, s := range r.slots {
			l.fenceSlot(s)
		}
	}
	ob.opsUnprovable += ops
	ob.rowsUnprovable += rows
	ds, bs := l.drv.Stats(), l.be.Stats()
	assert.Zero(t, ds.OpsOpen, "lender %s: driver operations open", l.name)
	assert.EqualValues(t, ops, ds.OpsUnprovable, "lender %s: driver Stats.OpsUnprovable", l.name)
	assert.EqualValues(t, rows, ds.RowsUnprovable, "lender %s: driver Stats.RowsUnprovable", l.name)
	assert.Zero(t, bs.CallsInFlight, "lender %s: backend calls in flight", l.name)
	assert.EqualValues(t, ops, bs.CallsUnprovable, "lender %s: backend Stats.CallsUnprovable", l.name)
	assert.EqualValues(t, rows, bs.RowsLent, "lender %s: backend Stats.RowsLent: exactly the unprovable calls' rows", l.name)
	assert.EqualValues(t, int64(rows)*faultSlotBytes, bs.BytesLent, "lender %s: backend Stats.BytesLent", l.name)
	return kept{dirs: unprovable, rows: rows}
}

// delivered checks that the outcome of attempt a, over the rows names,
// delivers exactly the rows l's driver ended Ready.
func (l *faultLender) delivered(a contract.Attempt, names []string) {
	ready := map[string]bool{}
	for _, r := range l.drv.recorded() {
		st := r.op.Poll(nil)
		for i, n := range r.names {
			ready[n] = st.Rows[i] == contract.Ready
		}
	}
	o, ok := a.Outcome()
	if !assert.True(l.t, ok, "lender %s: %v has no outcome", l.name, a) {
		return
	}
	for i, n := range names {
		assert.Equal(l.t, ready[n], o.Delivered[i], "lender %s: %v row %s delivered, its verdict Ready", l.name, a, n)
	}
}

// checkHeld checks what Shutdown said l still holds: nothing when no
// operation is unprovable; otherwise the attempts among attempts whose
// direction has one, and the region, with the hold kept and the driver
// refusing to close.
func (l *faultLender) checkHeld(held []string, k kept, attempts map[contract.Direction]contract.Attempt) {
	t := l.t
	unprovable, rows := k.dirs, k.rows
	if len(unprovable) == 0 {
		assert.Nil(t, held, "lender %s: Shutdown holds something, yet every access ended", l.name)
		return
	}
	var want []string
	for _, d := range []contract.Direction{contract.PutDir, contract.GetDir} {
		if a := attempts[d]; unprovable[d] && a != nil {
			want = append(want, fmt.Sprint(a))
		}
	}
	// Shutdown names the attempts in the order they were made (a lender
	// may have made its fetch first), then the region.
	if assert.NotEmpty(t, held, "lender %s: Shutdown holds nothing, yet access is unprovable", l.name) {
		assert.ElementsMatch(t, want, held[:len(held)-1], "lender %s: Shutdown names the attempts holding unprovable calls", l.name)
		assert.Equal(t, "region 0", held[len(held)-1], "lender %s: Shutdown names the region last", l.name)
	}
	assert.EqualValues(t, rows, l.be.Stats().RowsLent, "lender %s: after Shutdown, the unprovable calls' rows are still counted lent", l.name)
	assert.EqualValues(t, rows, l.drv.Stats().RowsUnprovable, "lender %s: after Shutdown, the driver still counts them unprovable", l.name)
	assert.Zero(t, l.hold.n.Load(), "lender %s: the hold was released with access unprovable", l.name)
	assert.ErrorIs(t, l.drv.Close(), contract.ErrDriverRejected, "lender %s: Close with access unprovable", l.name)
}

// heldCell is the matrix's cell for what Shutdown said a lender holds.
func heldCell(name string, held []string, rows int) string {
	if held == nil {
		return name + ": nothing (hold released)"
	}
	return fmt.Sprintf("%s: %s; hold kept, %d rows lent", name, strings.Join(held, ", "), rows)
}

// fenceCell checks the fences of lenders and is the matrix's cell for
// them.
func fenceCell(t *testing.T, lenders ...*faultLender) string {
	checked := 0
	var touched []string
	for _, l := range lenders {
		n, bad := l.fences()
		checked += n
		for _, s := range bad {
			touched = append(touched, fmt.Sprintf("%s slot %d", l.name, s))
		}
	}
	assert.Empty(t, touched, "slots written after their operation's access ended")
	if len(touched) > 0 {
		return "WRITTEN: " + strings.Join(touched, ", ")
	}
	return fmt.Sprintf("none (%d slots checked)", checked)
}

// answersFor keeps the answers of the calls an operation in dir makes:
// a put's and its exists-check's, or a get's (a round trip puts and gets
// one key).
func answersFor(dir contract.Direction, ans []sdkAnswer) []sdkAnswer {
	var out []sdkAnswer
	for _, a := range ans {
		if (a.kind == kindGet) == (dir == contract.GetDir) {
			out = append(out, a)
		}
	}
	return out
}

// rule is what the rule says r's rows and access must be, from what the
// store answered for its keys.
func (l *faultLender) rule(r *recordedOp) ([]contract.RowStatus, contract.Access) {
	rows := make([]ruleRow, len(r.names))
	for i, name := range r.names {
		k, err := l.stem.Key([]byte(name))
		if err != nil {
			panic(err) // names are the test's own
		}
		rows[i] = ruleFor(r.dir, answersFor(r.dir, l.client.answersOf(k)))
	}
	return ruleOp(rows)
}

// ruleFor decides one row of dir from its key's answers. A row whose
// call was shared with other parts is unprovable when any answer of that
// call was: the store answered the call as one.
func ruleFor(dir contract.Direction, ans []sdkAnswer) ruleRow {
	r := ruleGet(ans, faultSlotBytes)
	if dir == contract.PutDir {
		r = rulePut(ans)
	}
	for _, a := range ans {
		if a.call != nil && a.call.unprovable && !r.unprovable {
			r.unprovable, r.why = true, r.why+", in a call another key left unprovable"
		}
	}
	return r
}
