package bench

import (
	"errors"
	"fmt"
	"time"

	"github.com/kvshare/kvshare/contract"
)

// kvshareRound publishes n rows of region ri through kvshare in views
// of ViewRows, all at once, then fetches them back into the same slots,
// then removes what it stored.
func (r *poolRig) kvshareRound(ri int, names [][]byte) (poolRound, error) {
	var pr poolRound
	vs := views(names, len(names), r.o.Pool.ViewRows, 0)
	for i := range vs {
		vs[i].Groups[0].Region = ri
	}
	var err error
	start := time.Now()
	pr.putReady, err = submitCount(r.kv, contract.PutDir, vs)
	pr.put = time.Since(start)
	if err != nil {
		return pr, err
	}
	start = time.Now()
	pr.getReady, err = submitCount(r.kv, contract.GetDir, vs)
	pr.get = time.Since(start)
	return pr, errors.Join(err, r.remove(names))
}

// rawRound makes the same calls on the same client with nothing of
// kvshare between: the rows cut as the driver cuts them, puts (each with
// its exists-check) on the raw loop's goroutines, then gets; then
// removes what it stored.
func (r *poolRig) rawRound(ri int, rowBytes int64, names [][]byte) (poolRound, error) {
	var pr poolRound
	addrs := r.addrs(ri, len(names), rowBytes)
	put := prepareFloor(contract.PutDir, r.stem, names, addrs, rowBytes, r.o.Pool.ViewRows, r.raw.RowsPerCall, r.raw.BytesPerCall)
	get := prepareFloor(contract.GetDir, r.stem, names, addrs, rowBytes, r.o.Pool.ViewRows, r.raw.RowsPerCall, r.raw.BytesPerCall)
	start := time.Now()
	r.loop.submit(put)
	<-put.done
	pr.put, pr.putReady = time.Since(start), int(put.ready.Load())
	start = time.Now()
	r.loop.submit(get)
	<-get.done
	pr.get, pr.getReady = time.Since(start), int(get.ready.Load())
	return pr, r.remove(names)
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
