package redisdrv

import "github.com/kvshare/kvshare/contract"

// Stats is a snapshot of a driver's counters, totals since New unless
// they say "now".
type Stats struct {
	// Ops counts operations admitted; OpsOpen those whose access is Open
	// now; OpsUnprovable those whose access is Unprovable (for good).
	Ops, OpsOpen, OpsUnprovable int64
	// PutRows and GetRows count rows by final status, indexed by
	// [contract.RowStatus].
	PutRows, GetRows [contract.RowStatusCount]int64
	// RowsUnprovable counts the rows of operations whose access is
	// Unprovable: their memory is kept for good.
	RowsUnprovable int64
	// Parts counts parts run, RoundTrips the pipelines they and the
	// lookups sent (one a server a part holds rows on, one more for each
	// resend), Panics the panics recovered around the client.
	Parts, RoundTrips, Panics int64
	// Resends counts pipelines sent again because the connection they
	// went on was found dead before its first reply (a pooled connection
	// the server closed: a restart, an idle timeout).
	Resends int64
	// PartsSplit counts the parts whose rows lay on more than one
	// cluster node, each node's rows sent as a pipeline of their own.
	PartsSplit int64
	// Moved and Asked count rows a cluster node answered MOVED or ASK,
	// sent again to the node named; SlotMapReads counts the readings of
	// a cluster's slot map (CLUSTER SLOTS), the first at start included.
	Moved, Asked, SlotMapReads int64
	// KeysWriting is the number of keys a put of this driver is writing
	// now.
	KeysWriting int64
	// Lookups counts lookups answered, LookupNames the names they asked;
	// LookupsAbandoned those whose context ended while their call was
	// inside the client (the names answered Unknown), LookupsRefused
	// those answered Unknown at once because MaxLookupsInStore calls were
	// inside it; LookupsInStore is the calls inside the client now.
	Lookups, LookupNames, LookupsAbandoned, LookupsRefused, LookupsInStore int64
}

// Stats returns a snapshot of the driver's counters: the kit's, read
// in one step, beside the store's own.
func (d *Driver) Stats() Stats {
	k := d.Driver.Stats()
	s := d.store
	s.mu.Lock()
	c := s.counts
	s.mu.Unlock()
	_, reads := s.route.nodes()
	return Stats{
		Ops: k.PutOps + k.GetOps, OpsOpen: k.OpsOpen, OpsUnprovable: k.OpsUnprovable,
		PutRows: k.PutRows, GetRows: k.GetRows, RowsUnprovable: k.RowsUnprovable,
		Parts: k.Parts, RoundTrips: c.roundTrips, Panics: c.panics + k.Panics, Resends: c.resends,
		PartsSplit: c.partsSplit, Moved: c.moved, Asked: c.asked, SlotMapReads: reads,
		KeysWriting: k.KeysWriting,
		Lookups:     k.Lookups, LookupNames: k.LookupNames, LookupsAbandoned: k.LookupsAbandoned,
		LookupsRefused: k.LookupsRefused, LookupsInStore: k.LookupsInStore,
	}
}
