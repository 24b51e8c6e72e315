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
	// Calls counts store calls taken by a worker; Panics the store calls
	// that panicked (their rows ended Fault).
	Calls, Panics int64
	// KeysWriting is the number of keys a put of this driver is writing
	// now.
	KeysWriting int64
	// Recycles counts the Recycles that ended every access; OpsRecycled
	// and RowsRecycled the Unprovable operations, and their rows, whose
	// access they ended.
	Recycles, OpsRecycled, RowsRecycled int64
	// Lookups counts lookups asked of the store, LookupNames their
	// names, LookupsAbandoned those whose context ended while the store
	// held them (the names answered Unknown); LookupsInStore is the
	// lookups inside the store now.
	Lookups, LookupNames, LookupsAbandoned, LookupsInStore int64
}

// Stats returns a snapshot of the driver's counters.
func (d *Driver) Stats() Stats {
	d.mu.Lock()
	defer d.mu.Unlock()
	s := d.stats
	s.OpsOpen = int64(len(d.open))
	s.OpsUnprovable = int64(len(d.unprovable))
	s.KeysWriting = int64(len(d.writing))
	s.LookupsInStore = int64(d.lookups.inside)
	return s
}
