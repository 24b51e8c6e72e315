package bench

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"time"

	"github.com/kvshare/kvshare/binding"
	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/keys"
	"github.com/kvshare/kvshare/mooncakedrv"
	"github.com/kvshare/kvshare/mooncakesdk/fakesdk"
	"github.com/kvshare/kvshare/tools/internal/poolfloor"
)

// rowCPUPrefix is the key prefix of measurement 3.
const rowCPUPrefix = "bench/rowcpu"

// rowCPUReport is measurement 3: the CPU and allocation of backend and
// driver per row, over a fake SDK that answers at once, less the fake's
// own (the same calls straight to it), measured in the same run.
type rowCPUReport struct {
	RowBytes    int64        `json:"row_bytes"`
	Rows        int          `json:"rows_per_submission"`
	Submissions int          `json:"submissions"`
	Cases       []rowCPUCase `json:"cases"`
}

// rowCPUCase is one direction. NsPerRow, BytesPerRow and AllocsPerRow
// are kvshare's less the fake's, one figure per repetition; the sides'
// own figures are beside them.
type rowCPUCase struct {
	Direction          string `json:"direction"`
	NsPerRow           spread `json:"ns_per_row"`
	BytesPerRow        spread `json:"bytes_per_row"`
	AllocsPerRow       spread `json:"allocs_per_row"`
	KvshareNsPerRow    spread `json:"kvshare_ns_per_row"`
	FakeNsPerRow       spread `json:"fake_ns_per_row"`
	KvshareBytesPerRow spread `json:"kvshare_bytes_per_row"`
	FakeBytesPerRow    spread `json:"fake_bytes_per_row"`
}

// block is what one side's submissions cost.
type block struct {
	cpu     time.Duration
	bytes   uint64
	mallocs uint64
}

// measureRowCPU runs measurement 3: per repetition and direction, a
// block of submissions through kvshare and a block of the same calls
// straight to the fake (which goes first changes every repetition),
// each after a collection and one submission outside the count, so that
// neither pays for the other's garbage and both count the steady state.
// A fetch reads objects published before the clock starts; a publish
// puts keys already stored, which the store answers at once (a put never
// overwrites), so the fake copies no bytes for it.
func measureRowCPU(ctx context.Context, o Options, step func(string)) (*rowCPUReport, error) {
	c := o.RowCPU
	store := fakesdk.New(fakesdk.Options{})
	drv, err := mooncakedrv.New(store.Client(), mooncakedrv.Config{
		Workers: o.Settle.Workers, RowsPerCall: o.Settle.RowsPerCall, BytesPerCall: o.Settle.BytesPerCall,
		Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		return nil, err
	}
	kv, err := newLender(drv, c.RowBytes, 2*c.Rows, binding.Config{KeyPrefix: rowCPUPrefix}, observed(o, RowCPU))
	if err != nil {
		return nil, err
	}
	// The floor moves rows between the store and the same slots (never
	// while kvshare does): no difference of memory between the sides.
	flMem := kv.mems[0]
	fl := poolfloor.Start(store.Client(), o.Settle.Workers)
	cleanup := func() error { fl.Stop(); return kv.close() }

	fetchNames, pubNames := rowNames('a', c.Rows), rowNames('b', c.Rows)
	kvViews := map[contract.Direction]contract.View{
		contract.GetDir: view(fetchNames, 0, c.Rows, 0),
		contract.PutDir: view(pubNames, 0, c.Rows, c.Rows),
	}
	for _, v := range kvViews {
		if err := kvSubmit(kv, contract.PutDir, v); err != nil {
			return nil, errors.Join(fmt.Errorf("bench: row cpu warm-up: %w", err), cleanup())
		}
	}
	stem, err := keys.NewStem(rowCPUPrefix)
	if err != nil {
		return nil, errors.Join(err, cleanup())
	}
	addrs := func(first int) []uintptr {
		out := make([]uintptr, c.Rows)
		for i := range out {
			out[i] = flMem.Region.Base + uintptr(int64(first+i)*c.RowBytes)
		}
		return out
	}
	flSubs := map[contract.Direction]*poolfloor.Submission{
		contract.GetDir: poolfloor.Prepare(contract.GetDir, stem, fetchNames, addrs(0), c.RowBytes, 0, o.Settle.RowsPerCall, o.Settle.BytesPerCall),
		contract.PutDir: poolfloor.Prepare(contract.PutDir, stem, pubNames, addrs(c.Rows), c.RowBytes, 0, o.Settle.RowsPerCall, o.Settle.BytesPerCall),
	}

	rep := &rowCPUReport{RowBytes: c.RowBytes, Rows: c.Rows, Submissions: c.Submissions}
	for _, dir := range []contract.Direction{contract.GetDir, contract.PutDir} {
		var ns, bytes, allocs, kvNs, fkNs, kvB, fkB []float64
		for r := range o.Reps {
			if err := ctx.Err(); err != nil {
				return nil, errors.Join(err, cleanup())
			}
			step(fmt.Sprintf("3 row cpu %v", dirName(dir)))
			var kb, fb block
			var kerr, ferr error
			runKv := func() {
				kb, kerr = measureBlock(c.Submissions, func() error { return kvSubmit(kv, dir, kvViews[dir]) })
			}
			runFl := func() { fb, ferr = measureBlock(c.Submissions, func() error { return floorSubmit(fl, flSubs[dir]) }) }
			inTurn(r, runKv, runFl)
			if err := errors.Join(kerr, ferr); err != nil {
				return nil, errors.Join(err, cleanup())
			}
			rows := float64(c.Submissions * c.Rows)
			kn, fn := float64(kb.cpu)/rows, float64(fb.cpu)/rows
			ns, kvNs, fkNs = append(ns, kn-fn), append(kvNs, kn), append(fkNs, fn)
			kbr, fbr := float64(kb.bytes)/rows, float64(fb.bytes)/rows
			bytes, kvB, fkB = append(bytes, kbr-fbr), append(kvB, kbr), append(fkB, fbr)
			allocs = append(allocs, (float64(kb.mallocs)-float64(fb.mallocs))/rows)
		}
		rep.Cases = append(rep.Cases, rowCPUCase{
			Direction: dirName(dir), NsPerRow: spreadOf(ns), BytesPerRow: spreadOf(bytes), AllocsPerRow: spreadOf(allocs),
			KvshareNsPerRow: spreadOf(kvNs), FakeNsPerRow: spreadOf(fkNs), KvshareBytesPerRow: spreadOf(kvB), FakeBytesPerRow: spreadOf(fkB),
		})
	}
	return rep, cleanup()
}

// measureBlock runs submit n times after a collection and one more
// submission, and returns the process CPU and the heap allocation of
// the n: the steady state (the collection empties the pools of reused
// buffers both sides keep, which the first submission refills).
func measureBlock(n int, submit func() error) (block, error) {
	runtime.GC()
	if err := submit(); err != nil {
		return block{}, err
	}
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	cpu0 := processCPU()
	for range n {
		if err := submit(); err != nil {
			return block{}, err
		}
	}
	cpu := processCPU() - cpu0
	runtime.ReadMemStats(&m1)
	return block{cpu: cpu, bytes: m1.TotalAlloc - m0.TotalAlloc, mallocs: m1.Mallocs - m0.Mallocs}, nil
}

// kvSubmit submits v in direction dir, waits for it to quiesce and
// checks that every row came back Ready.
func kvSubmit(l *lender, dir contract.Direction, v contract.View) error {
	var a contract.Attempt
	var err error
	if dir == contract.GetDir {
		a, err = l.backend.Fetch(v, nil)
	} else {
		a, err = l.backend.Publish(v, nil)
	}
	if err != nil {
		return err
	}
	<-a.Done()
	o, _ := a.Outcome()
	if n := delivered(o); n != v.Rows() {
		return fmt.Errorf("bench: kvshare %s delivered %d of %d rows (fault: %v)", dirName(dir), n, v.Rows(), o.Fault)
	}
	return nil
}

// floorSubmit submits s on the floor, waits for it and checks that
// every row came back Ready.
func floorSubmit(f *poolfloor.Loop, s *poolfloor.Submission) error {
	f.Submit(s)
	<-s.Done()
	if n := s.Ready(); n != s.Rows() {
		return fmt.Errorf("bench: the floor delivered %d of %d rows", n, s.Rows())
	}
	return nil
}

func dirName(d contract.Direction) string {
	if d == contract.GetDir {
		return "fetch"
	}
	return "publish"
}
