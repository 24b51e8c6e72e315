package bench

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"runtime/pprof"
	"time"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/diskdrv"
)

// diskReport is measurement 9: kvshare over the disk tier (a diskdrv
// driver) against raw pwrite/pread of the same bytes from the same
// memory (the floor), in MB/s each way, counting only rows that came
// back Ready; and a lookup of LookupNames names against a stat of each
// name's object file.
type diskReport struct {
	// Where is the store's directory: a store file's, or a temporary
	// one; FloorAt the floor's folder.
	Where   string `json:"where"`
	FloorAt string `json:"floor_at"`
	// DirectIO says whether rows moved with O_DIRECT, and why not;
	// DirectRows and CachedRows count kvshare's rows moved each way.
	DirectIO      string     `json:"direct_io"`
	DirectRows    int64      `json:"direct_rows"`
	CachedRows    int64      `json:"cached_rows"`
	KeyPrefix     string     `json:"key_prefix"`
	Workers       int        `json:"workers"`
	RowsPerCall   int        `json:"rows_per_call"`
	ViewRows      int        `json:"view_rows"`
	BytesPerRound int64      `json:"bytes_per_round"`
	Cases         []diskCase `json:"cases,omitempty"`
	// LookupBlockMs is about how long one side's block of lookups takes;
	// Lookup are the lookup's cases (stop at first, every row).
	LookupBlockMs float64      `json:"lookup_block_ms"`
	Lookup        []lookupCase `json:"lookup,omitempty"`
}

// diskCase is one row size. Rates are 10⁶ bytes of Ready rows per
// second, one figure per repetition; ratios kvshare's over the floor's.
// NotReady counts the rows, over every repetition, that did not come
// back Ready (those are not counted as moved).
type diskCase struct {
	RowBytes int64 `json:"row_bytes"`
	Rows     int   `json:"rows"`
	sidesMBs
	KvshareNotReady int `json:"kvshare_not_ready"`
	FloorNotReady   int `json:"floor_not_ready"`
}

// measureDisk runs measurement 9: per row size one unmeasured round of
// each side (the files' metadata and the memory warmed), then per
// repetition one round of kvshare and one of the floor (which goes
// first changes every repetition), each under fresh names, after a
// collection, removed after the round; then the lookup of LookupNames
// names over the same store.
func measureDisk(ctx context.Context, o Options, step func(string), logger *slog.Logger) (*diskReport, error) {
	step("9 disk: opening")
	r, err := newDiskRig(o, logger)
	if err != nil {
		return nil, err
	}
	rep := &diskReport{
		Where: r.t.where, FloorAt: r.t.floorAt, DirectIO: r.direct, KeyPrefix: r.t.cfg.KeyPrefix,
		Workers: r.workers(), RowsPerCall: r.callRows(), ViewRows: o.Disk.ViewRows, BytesPerRound: o.Disk.Bytes,
		LookupBlockMs: ms(o.Lookup.Block),
	}
	direct, cached := r.store.Rows()
	for ri, rs := range o.Disk.RowSizes {
		c, err := r.rowSize(ctx, ri, rs, step)
		if err != nil {
			return rep, errors.Join(err, r.close())
		}
		rep.Cases = append(rep.Cases, c)
	}
	d, c := r.store.Rows()
	rep.DirectRows, rep.CachedRows = d-direct, c-cached
	s, err := r.lookupStage()
	if err != nil {
		return rep, errors.Join(err, r.close())
	}
	// A profile tells it apart: go tool pprof -tagfocus store=diskdrv.
	pprof.Do(ctx, pprof.Labels("store", s.store), func(ctx context.Context) {
		rep.Lookup, err = s.measure(ctx, o, []lookupView{newLookupView(o.Disk.LookupNames)}, step)
	})
	return rep, errors.Join(err, s.close(), r.close())
}

// rowSize measures one row size (region ri of the binding).
func (r *diskRig) rowSize(ctx context.Context, ri int, rowBytes int64, step func(string)) (diskCase, error) {
	n := r.o.Disk.rows(rowBytes)
	c := diskCase{RowBytes: rowBytes, Rows: n}
	step(fmt.Sprintf("9 disk %s: warming", size(rowBytes)))
	round := ri * (r.o.Reps + 1)
	if _, err := r.kvshareRound(ri, round, n); err != nil {
		return c, err
	}
	if _, err := r.floorRound(ri, round, n, rowBytes); err != nil {
		return c, err
	}
	sides := mbsRounds{rowBytes: rowBytes}
	for rep := range r.o.Reps {
		if err := ctx.Err(); err != nil {
			return c, err
		}
		step(fmt.Sprintf("9 disk %s", size(rowBytes)))
		round++
		var kv, fl poolRound
		var kerr, ferr error
		inTurn(rep, func() { kv, kerr = r.kvshareRound(ri, round, n) }, func() { fl, ferr = r.floorRound(ri, round, n, rowBytes) })
		if err := errors.Join(kerr, ferr); err != nil {
			return c, err
		}
		c.KvshareNotReady += 2*n - kv.putReady - kv.getReady
		c.FloorNotReady += 2*n - fl.putReady - fl.getReady
		sides.add(kv, fl)
	}
	c.sidesMBs = sides.spreads()
	return c, nil
}

// kvshareRound publishes n rows of region ri through kvshare in views
// of ViewRows, all at once; drops the page cache of their objects
// (outside the clock); fetches them back into the same slots; then
// removes what it stored.
func (r *diskRig) kvshareRound(ri, round, n int) (poolRound, error) {
	var pr poolRound
	names := roundNames(sideKvshare, round, n)
	ks, err := r.keys(names)
	if err != nil {
		return pr, err
	}
	vs := views(names, n, r.o.Disk.ViewRows, 0)
	for i := range vs {
		vs[i].Groups[0].Region = ri
	}
	runtime.GC()
	pr.putReady, pr.put, err = timedCount(r.kv, contract.PutDir, vs)
	if err == nil {
		err = r.dropCache(ks)
	}
	if err != nil {
		return pr, errors.Join(err, r.remove(ks, pr.putReady))
	}
	runtime.GC()
	pr.getReady, pr.get, err = timedCount(r.kv, contract.GetDir, vs)
	return pr, errors.Join(err, r.remove(ks, pr.putReady))
}

// floorRound writes the same slots' bytes to one file a row in the
// floor's folder, drops their page cache (outside the clock), reads
// them back into the same slots, then removes the files.
func (r *diskRig) floorRound(ri, round, n int, rowBytes int64) (poolRound, error) {
	var pr poolRound
	slots := r.slots(ri, n, rowBytes)
	runtime.GC()
	start := time.Now()
	pr.putReady = r.floor.run(contract.PutDir, round, slots)
	pr.put = time.Since(start)
	if err := diskdrv.DropCache(r.floor.dir); err != nil {
		return pr, errors.Join(err, r.floor.remove(round, n, pr.putReady))
	}
	runtime.GC()
	start = time.Now()
	pr.getReady = r.floor.run(contract.GetDir, round, slots)
	pr.get = time.Since(start)
	return pr, r.floor.remove(round, n, pr.putReady)
}
