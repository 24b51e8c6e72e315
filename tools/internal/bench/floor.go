package bench

import (
	"sync"
	"sync/atomic"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/keys"
	"github.com/kvshare/kvshare/mooncakesdk"
)

// floor makes the SDK calls a driver must make, and nothing else: a
// fixed number of bare goroutines take prepared parts from two queues,
// gets before puts, and make one call per get part and two per put part
// (the put and the exists-check that confirms its 0s). Keys, buffers and
// result slices are built before the clock starts. It is the floor of
// every measurement that compares kvshare with "the same calls"; beside
// publishes, measurement 1 also has [ruleFloor], the same parts in the
// driver's order.
type floor struct {
	client     mooncakesdk.Client
	gets, puts chan *floorPart
	quit       chan struct{}
	wg         sync.WaitGroup
}

// floorPart is one SDK call's rows (one put and its exists-check for a
// put part), prepared before the clock starts.
type floorPart struct {
	dir   contract.Direction
	keys  mooncakesdk.KeyList
	bufs  []uintptr
	sizes []uint64
	codes []int64
	exist []int32
	sub   *floorSubmission
}

// floorSubmission is one submission of the floor: its parts, how many
// are left, how many rows came back Ready, and a channel closed when the
// last part is done.
type floorSubmission struct {
	parts []*floorPart
	rows  int
	left  atomic.Int32
	ready atomic.Int64
	done  chan struct{}
}

// newFloor starts workers goroutines making calls on client.
func newFloor(client mooncakesdk.Client, workers int) *floor {
	f := &floor{
		client: client,
		gets:   make(chan *floorPart, 1<<12),
		puts:   make(chan *floorPart, 1<<12),
		quit:   make(chan struct{}),
	}
	f.wg.Add(workers)
	for range workers {
		go f.work()
	}
	return f
}

// stop ends the workers once they finish the part in hand.
func (f *floor) stop() {
	close(f.quit)
	f.wg.Wait()
}

func (f *floor) work() {
	defer f.wg.Done()
	for {
		select {
		case p := <-f.gets:
			runPart(f.client, p)
			continue
		default:
		}
		select {
		case p := <-f.gets:
			runPart(f.client, p)
		case p := <-f.puts:
			runPart(f.client, p)
		case <-f.quit:
			return
		}
	}
}

// runPart makes the part's calls on client and counts its Ready rows: a
// get answered with the row's size; a put answered 0 whose key then
// exists. Both floors run their parts with it.
func runPart(client mooncakesdk.Client, p *floorPart) {
	ready := 0
	if p.dir == contract.GetDir {
		if client.BatchGetIntoList(&p.keys, p.bufs, p.sizes, p.codes) == nil {
			for i, c := range p.codes {
				if c == int64(p.sizes[i]) {
					ready++
				}
			}
		}
	} else if client.BatchPutFromList(&p.keys, p.bufs, p.sizes, p.codes) == nil &&
		client.BatchIsExistList(&p.keys, p.exist) == nil {
		for i, c := range p.codes {
			if c == 0 && p.exist[i] == 1 {
				ready++
			}
		}
	}
	s := p.sub
	s.ready.Add(int64(ready))
	if s.left.Add(-1) == 0 {
		close(s.done)
	}
}

// submit queues every part of s; s.done closes when the last is done.
func (f *floor) submit(s *floorSubmission) {
	s.reset()
	q := f.puts
	if s.dir() == contract.GetDir {
		q = f.gets
	}
	for _, p := range s.parts {
		q <- p
	}
}

// reset readies s for another run of its parts: no row Ready yet, every
// part left, a fresh done channel.
func (s *floorSubmission) reset() {
	s.ready.Store(0)
	s.left.Store(int32(len(s.parts)))
	s.done = make(chan struct{})
}

// dir is the direction of s's parts (every part of a submission has
// one); a submission without parts counts as a put.
func (s *floorSubmission) dir() contract.Direction {
	if len(s.parts) > 0 && s.parts[0].dir == contract.GetDir {
		return contract.GetDir
	}
	return contract.PutDir
}

// cut is how a driver cuts rows into parts: at most rowsPerCall rows
// and bytesPerCall bytes each (one larger row alone).
func cut(rows int, rowBytes int64, rowsPerCall int, bytesPerCall int64) int {
	per := min(rowsPerCall, int(max(1, bytesPerCall/rowBytes)))
	return max(per, 1)
}

// prepareFloor builds a floor submission moving rows named names (keys
// built with stem, as the backend builds them) between the store and
// the slots at addrs, cut as kvshare cuts them: into views of viewRows
// rows (0: one view), each cut into parts as a driver with rowsPerCall
// and bytesPerCall cuts a call.
func prepareFloor(dir contract.Direction, stem keys.Stem, names [][]byte, addrs []uintptr, rowBytes int64, viewRows, rowsPerCall int, bytesPerCall int64) *floorSubmission {
	s := &floorSubmission{rows: len(names)}
	if viewRows <= 0 {
		viewRows = len(names)
	}
	per := cut(len(names), rowBytes, rowsPerCall, bytesPerCall)
	for vlo := 0; vlo < len(names); vlo += viewRows {
		vhi := min(vlo+viewRows, len(names))
		s.parts = append(s.parts, floorParts(dir, s, stem, names, addrs, rowBytes, vlo, vhi, per)...)
	}
	return s
}

// floorParts cuts rows [vlo, vhi) into parts of per rows.
func floorParts(dir contract.Direction, s *floorSubmission, stem keys.Stem, names [][]byte, addrs []uintptr, rowBytes int64, vlo, vhi, per int) []*floorPart {
	var parts []*floorPart
	for lo := vlo; lo < vhi; lo += per {
		hi := min(lo+per, vhi)
		p := &floorPart{dir: dir, sub: s, codes: make([]int64, hi-lo), exist: make([]int32, hi-lo)}
		for i := lo; i < hi; i++ {
			if err := p.keys.Add(stem.AppendKey(p.keys.Tail(), names[i])); err != nil {
				panic(err) // the stem's keys never hold a NUL and names are never empty
			}
			p.bufs = append(p.bufs, addrs[i])
			p.sizes = append(p.sizes, uint64(rowBytes))
		}
		parts = append(parts, p)
	}
	return parts
}
