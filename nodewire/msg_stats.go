package nodewire

import "github.com/kvshare/kvshare/contract"

// Stats asks for the node's counters.
type Stats struct{}

// StatsReply is the node's counters, over all engines: totals since the
// node started unless they say "now". On the wire, each is a u64 in the
// order of the fields here.
type StatsReply struct {
	// Engines attached now.
	Engines uint64
	// Attempts accepted; AttemptsOpen those not yet quiesced, now.
	Attempts     uint64
	AttemptsOpen uint64
	// Rows counts the rows of outcomes by status, indexed by
	// contract.RowStatus (Rows[Pending]: rows an outcome forced at a
	// deadline reported still pending).
	Rows [contract.RowStatusCount]uint64
	// Lookups asked; LookupNames the names they asked about,
	// LookupPresent those answered Present.
	Lookups       uint64
	LookupNames   uint64
	LookupPresent uint64
	// Lends and LentBytes: lends mapped now and their bytes.
	Lends     uint64
	LentBytes uint64
	// HeldLends and HeldBytes: of those, lends whose engine returned or
	// left them while access could not be proven ended, kept mapped now.
	HeldLends uint64
	HeldBytes uint64
	// Refusals: requests refused. PeersRefused: connections refused
	// because the peer's uid is not allowed. Disconnects: sessions the
	// node closed (protocol errors, slow readers, limits, shutdown).
	Refusals     uint64
	PeersRefused uint64
	Disconnects  uint64
	// Reclaims: reclaims of held memory that ended every access;
	// BytesReclaimed the bytes they gave back.
	Reclaims       uint64
	BytesReclaimed uint64
}

// statsCounters is the number of u64 counters of a StatsReply.
const statsCounters = 15 + int(contract.RowStatusCount)

func (*Stats) Type() Type      { return TypeStats }
func (*StatsReply) Type() Type { return TypeStatsReply }

func (*Stats) AppendBody(b []byte) []byte { return b }

// counters returns pointers to the counters in wire order.
func (m *StatsReply) counters() [statsCounters]*uint64 {
	var c [statsCounters]*uint64
	fixed := []*uint64{&m.Engines, &m.Attempts, &m.AttemptsOpen}
	i := copy(c[:], fixed)
	for s := range m.Rows {
		c[i] = &m.Rows[s]
		i++
	}
	copy(c[i:], []*uint64{&m.Lookups, &m.LookupNames, &m.LookupPresent,
		&m.Lends, &m.LentBytes, &m.HeldLends, &m.HeldBytes,
		&m.Refusals, &m.PeersRefused, &m.Disconnects,
		&m.Reclaims, &m.BytesReclaimed})
	return c
}

func (m *StatsReply) AppendBody(b []byte) []byte {
	for _, c := range m.counters() {
		b = appendU64(b, *c)
	}
	return b
}
