package node

import (
	"maps"
	"sync"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/nodewire"
)

// Counts are what the node counts, for the whole node and for each
// engine: totals since the start unless they say "now".
type Counts struct {
	// Lends and LentBytes: lends mapped now, and their bytes.
	Lends, LentBytes int64
	// HeldLends and HeldBytes: of those, lends kept because their engine
	// returned or left them while access could not be proven ended. The
	// node keeps them mapped until it can (they are in Lends too).
	HeldLends, HeldBytes int64
	// Attempts: publishes and fetches accepted; AttemptsOpen: of those,
	// not quiesced now (their memory still lent).
	Attempts, AttemptsOpen int64
	// Rows counts the rows of outcomes by status (Rows[Pending]: rows an
	// outcome forced at a deadline left pending).
	Rows [contract.RowStatusCount]int64
	// Lookups asked, the names they asked about, and those Present.
	Lookups, LookupNames, LookupPresent int64
	// Refusals counts the requests refused, by code.
	Refusals map[nodewire.Code]int64
	// Ended counts, by the code of the goodbye, the sessions the node
	// ended itself: protocol errors, slow readers, shutdown.
	Ended map[nodewire.Code]int64
	// What reclaims cost the engines (one recycle of the store client
	// for all of them, see [Node.Reclaim]): ReclaimRefused counts the
	// lends, publishes, fetches and lookups refused (code Busy, also in
	// Refusals) because a reclaim ran; ReclaimDisturbed the publishes and
	// fetches whose outcome was not yet known when a reclaim's recycle
	// began (or that reached the store while it ran), and
	// ReclaimCancelledRows their rows that ended Cancelled (also in Rows).
	ReclaimRefused, ReclaimDisturbed, ReclaimCancelledRows int64
}

// Refused sums Refusals.
func (c Counts) Refused() int64 { return sum(c.Refusals) }

// Disconnects sums Ended.
func (c Counts) Disconnects() int64 { return sum(c.Ended) }

func sum(m map[nodewire.Code]int64) int64 {
	var n int64
	for _, v := range m {
		n += v
	}
	return n
}

// Stats is the node's counters: the node's own, and each engine's.
type Stats struct {
	Counts
	// Engines attached now; Attached: sessions welcomed since the start.
	Engines, Attached int64
	// PeersRefused: connections refused because the peer's uid is not
	// on the allow-list.
	PeersRefused int64
	// Reclaims whose one recycle of the store client ended every access,
	// and the bytes of the unprovable calls they gave back.
	Reclaims, BytesReclaimed int64
	// PerEngine: each engine attached now, in the order it attached.
	PerEngine []EngineStats
	// PerTenant: each tenant of the node's configuration, and the tenant
	// "" once a session declared it, by name: its usage now against its
	// limits, and what they refused.
	PerTenant []TenantStats
}

// EngineStats is one engine's session: who it is and its counts.
type EngineStats struct {
	// Session numbers sessions in the order the node accepted them.
	Session uint64
	// Engine is the name its hello gave; PID and UID its peer's.
	Engine string
	PID    int32
	UID    uint32
	// Scope is the digest of the scope its keys are made under (32 hex
	// digits), "" for none; Tenant the tenant the scope declared.
	Scope, Tenant string
	Counts
}

// tally is a Counts behind a mutex.
type tally struct {
	mu sync.Mutex
	c  Counts
}

func (t *tally) add(f func(*Counts)) {
	t.mu.Lock()
	f(&t.c)
	t.mu.Unlock()
}

func (t *tally) snapshot() Counts {
	t.mu.Lock()
	defer t.mu.Unlock()
	c := t.c
	c.Refusals = cloneCodes(t.c.Refusals)
	c.Ended = cloneCodes(t.c.Ended)
	return c
}

func cloneCodes(m map[nodewire.Code]int64) map[nodewire.Code]int64 {
	if m == nil {
		return map[nodewire.Code]int64{}
	}
	return maps.Clone(m)
}

// refused counts one refusal of code.
func refused(code nodewire.Code) func(*Counts) {
	return func(c *Counts) {
		if c.Refusals == nil {
			c.Refusals = map[nodewire.Code]int64{}
		}
		c.Refusals[code]++
	}
}

// ended counts one session the node ended with code.
func ended(code nodewire.Code) func(*Counts) {
	return func(c *Counts) {
		if c.Ended == nil {
			c.Ended = map[nodewire.Code]int64{}
		}
		c.Ended[code]++
	}
}

// reply is the node's counters as a stats-reply carries them.
func (s Stats) reply() *nodewire.StatsReply {
	r := &nodewire.StatsReply{
		Engines:        uint64(s.Engines),
		Attempts:       uint64(s.Attempts),
		AttemptsOpen:   uint64(s.AttemptsOpen),
		Lookups:        uint64(s.Lookups),
		LookupNames:    uint64(s.LookupNames),
		LookupPresent:  uint64(s.LookupPresent),
		Lends:          uint64(s.Lends),
		LentBytes:      uint64(s.LentBytes),
		HeldLends:      uint64(s.HeldLends),
		HeldBytes:      uint64(s.HeldBytes),
		Refusals:       uint64(s.Refused()),
		PeersRefused:   uint64(s.PeersRefused),
		Disconnects:    uint64(s.Disconnects()),
		Reclaims:       uint64(s.Reclaims),
		BytesReclaimed: uint64(s.BytesReclaimed),
	}
	for i, n := range s.Rows {
		r.Rows[i] = uint64(n)
	}
	return r
}
