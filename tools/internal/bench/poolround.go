package bench

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/tools/internal/poolfloor"
)

// kvshareRound publishes n rows of region ri through kvshare in views
// of ViewRows, all at once, then fetches them back into the same slots,
// then removes what it stored.
func (r *poolRig) kvshareRound(ri int, names [][]byte) (poolRound, error) {
	return r.viewsRound(ri, names, r.o.Pool.ViewRows, 1)
}

// roundtripRound is kvshare shaped as `kvshare roundtrip` submits: the
// n rows of region ri in views of RoundtripViewRows, dealt in turn to
// as many goroutines as the driver has workers (several engine requests
// at once), each submitting its views at once and waiting for them;
// published, then fetched back into the same slots, then removed.
func (r *poolRig) roundtripRound(ri int, names [][]byte) (poolRound, error) {
	return r.viewsRound(ri, names, r.o.Pool.RoundtripViewRows, r.roundtripGoroutines())
}

// viewsRound publishes the rows of region ri through kvshare in views
// of viewRows from goroutines goroutines, then fetches them back into
// the same slots, then removes what it stored.
func (r *poolRig) viewsRound(ri int, names [][]byte, viewRows, goroutines int) (poolRound, error) {
	var pr poolRound
	vs := views(names, len(names), viewRows, 0)
	for i := range vs {
		vs[i].Groups[0].Region = ri
	}
	var err error
	start := time.Now()
	pr.putReady, err = submitFrom(r.kv, contract.PutDir, vs, goroutines)
	pr.put = time.Since(start)
	if err != nil {
		return pr, errors.Join(err, r.remove(names))
	}
	start = time.Now()
	pr.getReady, err = submitFrom(r.kv, contract.GetDir, vs, goroutines)
	pr.get = time.Since(start)
	return pr, errors.Join(err, r.remove(names))
}

// rawRound makes the same calls on the same client with nothing of
// kvshare between: the rows cut as the driver cuts them, puts (each with
// its exists-check) on the raw loop's goroutines, then gets; then
// removes what it stored.
func (r *poolRig) rawRound(ri int, rowBytes int64, names [][]byte) (poolRound, error) {
	addrs := r.addrs(ri, len(names), rowBytes)
	put := poolfloor.Prepare(contract.PutDir, r.stem, names, addrs, rowBytes, r.o.Pool.ViewRows, r.raw.RowsPerCall, r.raw.BytesPerCall)
	get := poolfloor.Prepare(contract.GetDir, r.stem, names, addrs, rowBytes, r.o.Pool.ViewRows, r.raw.RowsPerCall, r.raw.BytesPerCall)
	return r.floorRound(r.loop, put, get, names)
}

// largeCallRound is the large-call floor: the same rows as one view,
// one call each way per largeRowsPerCall rows (fewer where the pool's
// bytes_per_call caps a call), each put with its exists-check, on the
// large-call loop (one goroutine: [poolRig.largeGoroutines]); then
// removes what it stored.
func (r *poolRig) largeCallRound(ri int, rowBytes int64, names [][]byte) (poolRound, error) {
	addrs := r.addrs(ri, len(names), rowBytes)
	per := r.largeCallRows(rowBytes)
	put := poolfloor.Prepare(contract.PutDir, r.stem, names, addrs, rowBytes, 0, per, r.drv.BytesPerCall)
	get := poolfloor.Prepare(contract.GetDir, r.stem, names, addrs, rowBytes, 0, per, r.drv.BytesPerCall)
	return r.floorRound(r.large, put, get, names)
}

// floorRound runs put on loop, then get, timing each and counting its
// Ready rows, then removes the objects stored under names.
func (r *poolRig) floorRound(loop *poolfloor.Loop, put, get *poolfloor.Submission, names [][]byte) (poolRound, error) {
	var pr poolRound
	start := time.Now()
	loop.Submit(put)
	<-put.Done()
	pr.put, pr.putReady = time.Since(start), put.Ready()
	start = time.Now()
	loop.Submit(get)
	<-get.Done()
	pr.get, pr.getReady = time.Since(start), get.Ready()
	return pr, r.remove(names)
}

// submitFrom deals vs in turn to goroutines goroutines, each submitting
// its views at once with [submitCount], and sums their Ready rows once
// all have returned.
func submitFrom(l *lender, dir contract.Direction, vs []contract.View, goroutines int) (int, error) {
	shares := make([][]contract.View, max(1, min(goroutines, len(vs))))
	for i, v := range vs {
		shares[i%len(shares)] = append(shares[i%len(shares)], v)
	}
	ready := make([]int, len(shares))
	errs := make([]error, len(shares))
	var wg sync.WaitGroup
	for g, share := range shares {
		wg.Go(func() { ready[g], errs[g] = submitCount(l, dir, share) })
	}
	wg.Wait()
	sum := 0
	for _, n := range ready {
		sum += n
	}
	return sum, errors.Join(errs...)
}

// timedCount is submitCount timed: the Ready rows, and the wall time
// from the first submission to the last outcome.
func timedCount(l *lender, dir contract.Direction, vs []contract.View) (int, time.Duration, error) {
	start := time.Now()
	n, err := submitCount(l, dir, vs)
	return n, time.Since(start), err
}

// submitCount submits every view at once and counts the Ready rows
// once every attempt has quiesced.
func submitCount(l *lender, dir contract.Direction, vs []contract.View) (int, error) {
	attempts := make([]contract.Attempt, 0, len(vs))
	for _, v := range vs {
		var a contract.Attempt
		var err error
		if dir == contract.GetDir {
			a, err = l.backend.Fetch(v, nil)
		} else {
			a, err = l.backend.Publish(v, nil)
		}
		if err != nil {
			return 0, fmt.Errorf("bench: %s: %w", dirName(dir), err)
		}
		attempts = append(attempts, a)
	}
	ready := 0
	for _, a := range attempts {
		<-a.Done()
		o, _ := a.Outcome()
		ready += delivered(o)
	}
	return ready, nil
}
