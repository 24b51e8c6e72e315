package bench

import (
	"errors"
	"fmt"
	"sync"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/keys"
	"github.com/kvshare/kvshare/mooncakesdk"
)

// remove removes the objects stored under names (forced: an exists-check
// or a get left a read lease on them), on as many goroutines as the
// driver has workers. A client without a remove call leaves them.
func (r *poolRig) remove(names [][]byte) error {
	return removeObjects(r.target.client, r.stem, names, r.drv.Workers)
}

// removeObjects removes, forced, the objects stored under names with
// keys built by stem, on workers goroutines; an absent key is no error.
// A client without a remove call leaves them.
func removeObjects(client mooncakesdk.Client, stem keys.Stem, names [][]byte, workers int) error {
	rm, ok := client.(mooncakesdk.Remover)
	if !ok {
		return nil
	}
	var mu sync.Mutex
	var errs []error
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			var buf []byte
			for i := w; i < len(names); i += workers {
				buf = stem.AppendKey(buf[:0], names[i])
				err := rm.Remove(string(buf), true)
				var ce *mooncakesdk.CallError
				if err != nil && !(errors.As(err, &ce) && ce.Code == mooncakesdk.ObjectNotFound) {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	if len(errs) > 0 {
		return fmt.Errorf("bench: removing %d of %d objects failed, the first: %w", len(errs), len(names), errs[0])
	}
	return nil
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
		put := prepareFloor(contract.PutDir, r.stem, names, r.addrs(ri, n, rowBytes), rowBytes, r.o.Pool.ViewRows, r.raw.RowsPerCall, r.raw.BytesPerCall)
		r.loop.submit(put)
		<-put.done
		ready := int(put.ready.Load())
		stored += int64(ready) * rowBytes
		if ready < n {
			break // full
		}
	}
	return stored, r.remove(all)
}
