package poolfloor

import (
	"errors"
	"fmt"
	"sync"

	"github.com/kvshare/kvshare/keys"
	"github.com/kvshare/kvshare/mooncakesdk"
)

// Remove removes, forced (an exists-check or a get left a read lease on
// them), the objects stored under names with keys built by stem, on
// workers goroutines; an absent key is no error. A client without a
// remove call leaves them.
func Remove(client mooncakesdk.Client, stem keys.Stem, names [][]byte, workers int) error {
	rm, ok := client.(mooncakesdk.Remover)
	if !ok {
		return nil
	}
	workers = max(workers, 1)
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
		return fmt.Errorf("poolfloor: removing %d of %d objects failed, the first: %w", len(errs), len(names), errs[0])
	}
	return nil
}
