package bench

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kvshare/kvshare/contract"
)

// redisPlain is measurement 7's context, not a floor: what a plain
// client loop does, one SET or GET at a time (client.Do) on each of as
// many goroutines as the driver has workers, copying each value (into a
// string for SET, out of the reply for GET); on a cluster each command
// goes to its key's node, found as the command is sent, as a cluster
// client finds it. The client pipelines concurrent calls on its shared
// connection by itself.
type redisPlain struct {
	nodes   *redisNodes
	workers int
	// bound bounds one command carrying bytes bytes (the floor's).
	bound func(bytes int64) time.Duration
}

// run moves every row in direction dir and returns the rows that came
// back Ready: a SET answered OK, a GET whose value has the slot's
// length.
func (p *redisPlain) run(dir contract.Direction, keys []string, slots [][]byte) int {
	var ready atomic.Int64
	var wg sync.WaitGroup
	for w := range p.workers {
		wg.Go(func() {
			n := int64(0)
			for i := w; i < len(keys); i += p.workers {
				if p.one(dir, keys[i], slots[i]) {
					n++
				}
			}
			ready.Add(n)
		})
	}
	wg.Wait()
	return int(ready.Load())
}

// one sends one row's command and waits for its reply.
func (p *redisPlain) one(dir contract.Direction, key string, slot []byte) bool {
	ctx, cancel := context.WithTimeout(context.Background(), p.bound(int64(len(slot))))
	defer cancel()
	client := p.nodes.clients[p.nodes.of(key)]
	if dir == contract.PutDir {
		ok, err := client.Do(ctx, client.B().Set().Key(key).Value(string(slot)).Build()).ToString()
		return err == nil && ok == "OK"
	}
	v, err := client.Do(ctx, client.B().Get().Key(key).Build()).AsBytes()
	if err != nil || len(v) != len(slot) {
		return false
	}
	copy(slot, v)
	return true
}
