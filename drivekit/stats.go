package drivekit

import "github.com/kvshare/kvshare/contract"

// Stats is a snapshot of a driver's counters, totals since New unless
// they say "now": what metrics read, the same for every store.
type Stats struct {
	// PutOps and GetOps count operations admitted; OpsOpen those whose
	// access is Open now, OpsUnprovable those whose access is
	// Unprovable now (until a Recycle).
	PutOps, GetOps, OpsOpen, OpsUnprovable int64
	// PutRows and GetRows count rows by final status, indexed by
	// [contract.RowStatus].
	PutRows, GetRows [contract.RowStatusCount]int64
	// Hints counts the gets admitted with a non-nil hint.
	Hints int64
	// Parts counts the parts of operations workers took (a batch is
	// cut into parts of at most CallRows rows and CallBytes bytes);
	// Calls the store calls made (Transfer); Panics the store calls
	// that panicked (their rows ended Fault).
	Parts, Calls, Panics int64
	// CallsShared counts the store calls that carried rows of more than
	// one part ([Options.JoinCalls]); PartsShared the parts that had
	// rows in such a call.
	CallsShared, PartsShared int64
	// RowsUnprovable is the rows of the operations whose access is
	// Unprovable now: their memory stays lent until a Recycle.
	RowsUnprovable int64
	// KeysWriting is the number of keys a put of this driver is writing
	// now.
	KeysWriting int64
	// Recycles counts the Recycles that ended every access; OpsRecycled
	// and RowsRecycled the Unprovable operations, and their rows, whose
	// access they ended.
	Recycles, OpsRecycled, RowsRecycled int64
	// Lookups counts lookups admitted (those answered InFlight or
	// refused without asking the store too), LookupNames their names, LookupsAbandoned those whose context ended while the store
	// held them (the names answered Unknown); LookupsInStore is the
	// lookups inside the store now; LookupsRefused those answered
	// Unknown at once because [Options.LookupsInStore] were inside it.
	Lookups, LookupNames, LookupsAbandoned, LookupsInStore, LookupsRefused int64
}

// Stats returns a snapshot of the driver's counters.
func (d *Driver) Stats() Stats {
	d.mu.Lock()
	defer d.mu.Unlock()
	s := d.stats
	s.OpsOpen = int64(len(d.open))
	s.OpsUnprovable = int64(len(d.unprovable))
	s.KeysWriting = int64(d.puts.writing)
	s.LookupsInStore = int64(d.lookups.inside)
	for _, op := range d.unprovable {
		s.RowsUnprovable += int64(len(op.batch.Rows))
	}
	return s
}

// Name returns the driver's name ([Options.Name]): the store metrics
// name it by.
func (d *Driver) Name() string { return d.name }

// Counters appends the store's own counters ([Counting]) to dst; a
// store without them appends none.
func (d *Driver) Counters(dst []Counter) []Counter {
	if d.counting == nil {
		return dst
	}
	return d.counting.Counters(dst)
}
