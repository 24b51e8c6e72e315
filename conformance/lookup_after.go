package conformance

import (
	"fmt"

	"github.com/kvshare/kvshare/contract"
)

// A Drain stops taking work whatever it answers, and Close ends the
// driver: after either, a lookup is refused as a Put and a Get are, with
// ErrDriverRejected and nothing asked of the store (contract.Looker). So
// for a driver that implements contract.Looker, every Drain that answers
// false and every Close that returns nil, in every check, is followed by
// a lookup of a fresh name that must be refused. Its context is brief: a
// driver that asks the store anyway while a check holds its lookups
// there (memdrv's harness holds every lookup) comes back with its
// answer a quarter of Wait later, a finding, rather than hang the check;
// a driver that refuses returns at once.

// refuseLookupAfter makes the lookup that must be refused after a Drain
// that answered false or a Close (what), of one fresh name tagged tag;
// why is the rule. A driver that is no contract.Looker, or one that
// stopped answering, is not asked.
func (b *bench) refuseLookupAfter(tag, what, why string) {
	b.r.Helper()
	l, ok := b.d.(contract.Looker)
	if !ok || b.hung {
		return
	}
	p := b.probe(b.rowName(tag))
	ctx, cancel := b.brief()
	defer cancel()
	b.refuseLookupWithin(ctx, l, p.batch, what, why)
}

// refuseLookupAfterClose is refuseLookupAfter once Close returned nil.
func (b *bench) refuseLookupAfterClose() {
	b.r.Helper()
	b.closes++
	b.refuseLookupAfter(fmt.Sprintf("after-close-%d", b.closes), "after Close", "a closed driver answers no lookup and asks nothing of the store it closed")
}
