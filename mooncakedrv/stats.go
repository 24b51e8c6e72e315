package mooncakedrv

import (
	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/drivekit"
)

// Stats is a snapshot of a driver's counters, totals since New unless
// they say "now".
type Stats struct {
	// Ops counts operations admitted; OpsOpen those whose access is Open
	// now; OpsUnprovable those whose access is Unprovable now (until a Recycle).
	Ops, OpsOpen, OpsUnprovable int64
	// PutRows and GetRows count rows by final status, indexed by
	// [contract.RowStatus].
	PutRows, GetRows [contract.RowStatusCount]int64
	// RowsUnprovable counts the rows of operations whose access is
	// Unprovable now: their memory is kept until a Recycle.
	RowsUnprovable int64
	// Recycles counts the Recycles that destroyed the client and ended
	// every access; OpsRecycled and RowsRecycled the Unprovable
	// operations, and their rows, whose access they ended.
	Recycles, OpsRecycled, RowsRecycled int64
	// KeysLeftOpen is the size of the ledger of keys left open (a put
	// answered RPC_FAIL, RPC_TIMEOUT or INTERNAL_ERROR): keys this driver
	// never puts again. It never shrinks.
	KeysLeftOpen int64
	// RowsDeclinedLeftOpen counts put rows Declined because their key was
	// left open and holds no complete object.
	RowsDeclinedLeftOpen int64
	// Parts counts parts run; Calls the SDK batch calls they made (a put
	// part makes two: put-from and its exists-check); Panics the panics
	// recovered around the SDK.
	Parts, Calls, Panics int64
	// CallsShared counts SDK calls that carried rows of more than one
	// part (parts the worker pool joined while the workers were busy);
	// PartsShared the parts that had rows in such a call;
	// PartsUnprovableShared those whose access a shared call made
	// Unprovable though no answer for their own rows did (the call failed
	// as a whole, or another part's row answered -800).
	CallsShared, PartsShared, PartsUnprovableShared int64
	// KeysWriting is the number of keys a put of this driver is writing
	// now.
	KeysWriting int64
	// Lookups counts lookups answered, LookupNames the names they asked;
	// LookupsAbandoned those whose context ended while their call was
	// inside the store (the names answered Unknown), LookupsRefused those
	// answered Unknown at once because MaxLookupsInStore calls were
	// inside it; LookupsInStore is the calls inside the store now.
	Lookups, LookupNames, LookupsAbandoned, LookupsRefused, LookupsInStore int64
}

// Stats returns a snapshot of the driver's counters: the kit's, read
// in one step, beside the store's own.
func (d *Driver) Stats() Stats {
	k := d.Driver.Stats()
	s := d.store
	s.mu.Lock()
	c, open := s.counts, int64(s.ledger.len())
	s.mu.Unlock()
	return Stats{
		Ops: k.PutOps + k.GetOps, OpsOpen: k.OpsOpen, OpsUnprovable: k.OpsUnprovable,
		PutRows: k.PutRows, GetRows: k.GetRows, RowsUnprovable: k.RowsUnprovable,
		Recycles: k.Recycles, OpsRecycled: k.OpsRecycled, RowsRecycled: k.RowsRecycled,
		KeysLeftOpen: open, RowsDeclinedLeftOpen: c.rowsDeclinedLeftOpen,
		Parts: k.Parts, Calls: c.calls, Panics: c.panics + k.Panics,
		CallsShared: c.callsShared, PartsShared: c.partsShared, PartsUnprovableShared: c.partsUnprovableShared,
		KeysWriting: k.KeysWriting,
		Lookups:     k.Lookups, LookupNames: k.LookupNames, LookupsAbandoned: k.LookupsAbandoned,
		LookupsRefused: k.LookupsRefused, LookupsInStore: k.LookupsInStore,
	}
}

// Counters is the store's own counters, for metrics beside the kit's
// (drivekit.Counting): the ledger of keys left open, and the SDK calls.
func (s *store) Counters(dst []drivekit.Counter) []drivekit.Counter {
	s.mu.Lock()
	c, open := s.counts, int64(s.ledger.len())
	s.mu.Unlock()
	return append(dst,
		drivekit.Counter{Name: "keys_left_open", Unit: "{key}", Level: true, Value: open,
			Description: "Keys left open (a put answered RPC_FAIL, RPC_TIMEOUT or INTERNAL_ERROR): the driver never puts them again."},
		drivekit.Counter{Name: "rows_declined_left_open", Unit: "{row}", Value: c.rowsDeclinedLeftOpen,
			Description: "Put rows declined because their key was left open and holds no complete object."},
		drivekit.Counter{Name: "sdk_calls", Unit: "{call}", Value: c.calls,
			Description: "Batch calls into Mooncake's C ABI (a put makes two: put-from and its exists-check)."},
		drivekit.Counter{Name: "sdk_panics", Unit: "{panic}", Value: c.panics,
			Description: "Panics recovered around Mooncake's C ABI."},
		drivekit.Counter{Name: "sdk_calls_shared", Unit: "{call}", Value: c.callsShared,
			Description: "Batch calls that carried the rows of more than one part (parts queued behind busy workers)."},
		drivekit.Counter{Name: "parts_unprovable_shared", Unit: "{part}", Value: c.partsUnprovableShared,
			Description: "Parts whose access a shared call made unprovable though no answer for their own rows did."},
	)
}
