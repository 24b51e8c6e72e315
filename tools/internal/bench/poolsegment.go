package bench

import (
	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/tools/internal/poolfloor"
)

// remove removes the objects stored under names (forced: an exists-check
// or a get left a read lease on them), on as many goroutines as the
// driver has workers. A client without a remove call leaves them.
func (r *poolRig) remove(names [][]byte) error {
	return poolfloor.Remove(r.target.client, r.stem, names, r.drv.Workers)
}

// warmSegment puts rows of the largest size through the raw loop until
// bytes are stored or the pool answers that it is full, then removes
// them: the provider's segment memory is then touched, and a measured
// round pays no first-touch page faults. It returns the bytes stored.
func (r *poolRig) warmSegment(bytes int64) (int64, error) {
	ri := len(r.o.Pool.RowSizes) - 1
	rowBytes := r.o.Pool.RowSizes[ri]
	n := int(r.o.Pool.Bytes / rowBytes)
	var stored int64
	var all [][]byte
	for round := 0; stored < bytes; round++ {
		names := r.names('w', round, n)
		all = append(all, names...)
		put := poolfloor.Prepare(contract.PutDir, r.stem, names, r.addrs(ri, n, rowBytes), rowBytes, r.o.Pool.ViewRows, r.raw.RowsPerCall, r.raw.BytesPerCall)
		r.loop.Submit(put)
		<-put.Done()
		ready := put.Ready()
		stored += int64(ready) * rowBytes
		if ready < n {
			break // full
		}
	}
	return stored, r.remove(all)
}
