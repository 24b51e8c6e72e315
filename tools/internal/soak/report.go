package soak

import (
	"fmt"
	"time"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/memdrv"
)

// Report is what a soak did and checked.
type Report struct {
	Config  Config
	RunID   string // the run's key prefix
	Elapsed time.Duration
	// Publishes, Fetches and Cancels count attempts submitted (a
	// cancelled attempt counts in its direction too); Rounds the rounds;
	// Rebinds the backends shut down and bound again.
	Publishes, Fetches, Cancels, Rounds, Rebinds int64
	// Rows counts rows by final status, over every backend.
	Rows [contract.RowStatusCount]int64
	// RowsChecked counts fetched rows compared byte for byte;
	// BytesChecked their bytes; MissesChecked fetches of names never
	// published, which must not be delivered.
	RowsChecked, BytesChecked, MissesChecked int64
	// ShutdownsChecked counts backends shut down whose promises were
	// checked (nothing lent, no label, hold released, regions
	// unregistered, driver closed); MemoryFreed the regions given back
	// at the end.
	ShutdownsChecked, MemoryFreed int64
	// AttemptsUnprovable counts attempts whose access the store left
	// unprovable (with Config.Faults); RegionsKept the regions retired
	// for them and kept for good, BytesKept their bytes.
	AttemptsUnprovable, RegionsKept, BytesKept int64
	// Reclaims counts the reclaims (with Config.Reclaim) that gave
	// unprovable calls back, BytesReclaimed their bytes, FencesChecked the
	// slots fenced after a reclaim and found untouched by the next round.
	Reclaims, BytesReclaimed, FencesChecked int64
	// Store is the embedded store's figures at the end (objects,
	// evictions, declines), when the soak ran over it.
	Store *memdrv.StoreStats
}

// OpsPerSecond is attempts submitted per second.
func (r Report) OpsPerSecond() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.Publishes+r.Fetches) / r.Elapsed.Seconds()
}

// String is the report's summary.
func (r Report) String() string {
	return fmt.Sprintf("soak %s: %v, seed %d, %d lenders: %d publishes, %d fetches (%d cancelled), %.0f attempts/s, %d rebinds; "+
		"checked %d rows (%d bytes) byte for byte, %d never-published names undelivered, %d shutdowns clean, %d regions freed",
		r.RunID, r.Elapsed.Round(time.Millisecond), r.Config.Seed, r.Config.Lenders, r.Publishes, r.Fetches, r.Cancels, r.OpsPerSecond(), r.Rebinds,
		r.RowsChecked, r.BytesChecked, r.MissesChecked, r.ShutdownsChecked, r.MemoryFreed) + r.keptString() + r.storeString()
}

// storeString gives the embedded store's figures, when the soak ran
// over it.
func (r Report) storeString() string {
	if r.Store == nil {
		return ""
	}
	return fmt.Sprintf("; the store evicted %d objects (%d bytes) and declined %d puts, %d objects left", r.Store.Evictions, r.Store.EvictedBytes, r.Store.Declines, r.Store.Objects)
}

// keptString says what faults left held for good, when they did.
func (r Report) keptString() string {
	if r.AttemptsUnprovable == 0 && r.RegionsKept == 0 {
		return ""
	}
	s := fmt.Sprintf("; %d attempts left unprovable by faults, %d regions (%d bytes) kept for good", r.AttemptsUnprovable, r.RegionsKept, r.BytesKept)
	if r.Reclaims > 0 {
		s += fmt.Sprintf(", %d reclaims gave %d bytes back (%d fenced slots untouched)", r.Reclaims, r.BytesReclaimed, r.FencesChecked)
	}
	return s
}

// add merges o's counts into r.
func (r *Report) add(o Report) {
	r.Publishes += o.Publishes
	r.Fetches += o.Fetches
	r.Cancels += o.Cancels
	r.Rounds += o.Rounds
	r.Rebinds += o.Rebinds
	r.RowsChecked += o.RowsChecked
	r.BytesChecked += o.BytesChecked
	r.MissesChecked += o.MissesChecked
	r.ShutdownsChecked += o.ShutdownsChecked
	r.MemoryFreed += o.MemoryFreed
	r.AttemptsUnprovable += o.AttemptsUnprovable
	r.RegionsKept += o.RegionsKept
	r.BytesKept += o.BytesKept
	r.Reclaims += o.Reclaims
	r.BytesReclaimed += o.BytesReclaimed
	r.FencesChecked += o.FencesChecked
}
