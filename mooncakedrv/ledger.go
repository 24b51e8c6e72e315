package mooncakedrv

import "strings"

// ledger is the driver's record of keys left open: keys whose put
// answered RPC_FAIL, RPC_TIMEOUT or INTERNAL_ERROR, so that the end of
// that put may still run at the master later, matched by key and client
// alone. The driver never puts such a key again, for its whole life: a
// later put of it is Ready if the key holds a complete object, else
// Declined. The ledger never forgets a key (forgetting one could let a
// late end of the old put commit over a new put's bytes); its size is in
// [Stats]. It is guarded by the driver's lock.
type ledger struct {
	keys map[string]struct{}
}

// has reports whether key was left open.
func (l *ledger) has(key string) bool {
	_, ok := l.keys[key]
	return ok
}

// add records key as left open (copying it: the key is a slice of its
// batch's key buffer, which the ledger must not pin). It reports whether
// the key is new.
func (l *ledger) add(key string) bool {
	if l.has(key) {
		return false
	}
	if l.keys == nil {
		l.keys = make(map[string]struct{})
	}
	l.keys[strings.Clone(key)] = struct{}{}
	return true
}

// len returns the number of keys left open.
func (l *ledger) len() int { return len(l.keys) }
