package diskdrv

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/kvshare/kvshare/contract"
)

// The benchmarks set the driver against a floor: raw pwrite and pread
// of the same bytes, from and into the same lent memory, one file per
// row, with the same flags (O_DIRECT, as the driver uses for these
// page-aligned rows) and no sync (durability none for the driver). Before
// every fetch round the page cache of every file read is dropped with
// posix_fadvise(POSIX_FADV_DONTNEED), for the driver's files and the
// floor's alike. Run: go test -run '^$' -bench . -benchtime 20x

const benchRows = 32

var benchSizes = []int{64 << 10, 256 << 10, 1 << 20}

// benchRig is a driver over a fresh store, a region of benchRows slots
// registered with it, and the files the floor writes.
type benchRig struct {
	s      *Store
	d      *Driver
	l      *lent
	region contract.SlotRegion
	size   int
	floor  string
	wake   chan struct{}
}

func newBenchRig(b *testing.B, size int) *benchRig {
	dir := b.TempDir()
	s := open(b, filepath.Join(dir, "store"), Options{Durability: None})
	l := lend(b, benchRows*size)
	for i := range l.mem {
		l.mem[i] = byte(i * 7)
	}
	region := contract.SlotRegion{Base: l.span(0, size)[0].Addr, Len: int64(benchRows * size), SlotBytes: int64(size), SlotCount: benchRows, Kind: contract.Host}
	d := New(s, DriverOptions{})
	if _, err := d.Register(region); err != nil {
		b.Fatal(err)
	}
	floor := filepath.Join(dir, "floor")
	if err := os.Mkdir(floor, 0o755); err != nil {
		b.Fatal(err)
	}
	return &benchRig{s: s, d: d, l: l, region: region, size: size, floor: floor, wake: make(chan struct{}, 1)}
}

// batch is benchRows rows named round/slot, one per slot.
func (r *benchRig) batch(round int) contract.RowBatch {
	rows := make([]contract.Row, benchRows)
	for i := range rows {
		rows[i] = contract.Row{Name: []byte(fmt.Sprintf("bench/%d/%d", round, i)), Spans: []contract.Span{r.region.Slot(i)}}
	}
	return contract.RowBatch{Keys: names{}, Rows: rows}
}

func (r *benchRig) wait(b *testing.B, op contract.Operation) {
	for {
		st := op.Poll(nil)
		if st.Access != contract.Open {
			for _, row := range st.Rows {
				if row != contract.Ready {
					b.Fatalf("a row ended %v", row)
				}
			}
			return
		}
		<-r.wake
	}
}

func (r *benchRig) onChange() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// dropCache drops the page cache of every file under dir.
func dropCache(b *testing.B, dir string) {
	if err := DropCache(dir); err != nil {
		b.Fatal(err)
	}
}

func BenchmarkPublish(b *testing.B) {
	for _, size := range benchSizes {
		b.Run(strconv.Itoa(size>>10)+"KiB/driver", func(b *testing.B) {
			r := newBenchRig(b, size)
			b.SetBytes(int64(benchRows * size))
			for i := 0; b.Loop(); i++ {
				op, err := r.d.Put(r.batch(i), r.onChange)
				if err != nil {
					b.Fatal(err)
				}
				r.wait(b, op)
			}
		})
		b.Run(strconv.Itoa(size>>10)+"KiB/floor", func(b *testing.B) {
			r := newBenchRig(b, size)
			b.SetBytes(int64(benchRows * size))
			for i := 0; b.Loop(); i++ {
				for slot := range benchRows {
					path := filepath.Join(r.floor, fmt.Sprintf("%d-%d", i, slot))
					fd, err := unix.Open(path, unix.O_WRONLY|unix.O_CREAT|unix.O_TRUNC|unix.O_DIRECT, 0o644)
					if err != nil {
						b.Fatal(err)
					}
					if _, err := unix.Pwrite(fd, r.l.mem[slot*size:(slot+1)*size], 0); err != nil {
						b.Fatal(err)
					}
					unix.Close(fd)
				}
			}
		})
	}
}

func BenchmarkFetch(b *testing.B) {
	for _, size := range benchSizes {
		b.Run(strconv.Itoa(size>>10)+"KiB/driver", func(b *testing.B) {
			r := newBenchRig(b, size)
			op, err := r.d.Put(r.batch(0), r.onChange)
			if err != nil {
				b.Fatal(err)
			}
			r.wait(b, op)
			b.SetBytes(int64(benchRows * size))
			for b.Loop() {
				b.StopTimer()
				dropCache(b, r.s.dir)
				b.StartTimer()
				op, err := r.d.Get(r.batch(0), nil, r.onChange)
				if err != nil {
					b.Fatal(err)
				}
				r.wait(b, op)
			}
		})
		b.Run(strconv.Itoa(size>>10)+"KiB/floor", func(b *testing.B) {
			r := newBenchRig(b, size)
			for slot := range benchRows {
				if err := os.WriteFile(filepath.Join(r.floor, strconv.Itoa(slot)), r.l.mem[slot*size:(slot+1)*size], 0o644); err != nil {
					b.Fatal(err)
				}
			}
			b.SetBytes(int64(benchRows * size))
			for b.Loop() {
				b.StopTimer()
				dropCache(b, r.floor)
				b.StartTimer()
				for slot := range benchRows {
					fd, err := unix.Open(filepath.Join(r.floor, strconv.Itoa(slot)), unix.O_RDONLY|unix.O_DIRECT, 0)
					if err != nil {
						b.Fatal(err)
					}
					if _, err := unix.Pread(fd, r.l.mem[slot*size:(slot+1)*size], 0); err != nil {
						b.Fatal(err)
					}
					unix.Close(fd)
				}
			}
		})
	}
}

// BenchmarkLookup4096 asks the driver about 4096 names, every one
// present: the index answers from memory.
func BenchmarkLookup4096(b *testing.B) {
	s := open(b, b.TempDir(), Options{Durability: None})
	d := New(s, DriverOptions{})
	batch := contract.LookupBatch{Keys: names{}}
	data := make([]byte, 4096)
	for i := range 4096 {
		key := "lookup/" + strconv.Itoa(i)
		if s.Seed(key, data) != contract.Ready {
			b.Fatal("seed")
		}
		batch.Names = append(batch.Names, []byte(key))
	}
	dst := make([]contract.Presence, 0, 4096)
	for b.Loop() {
		got, err := d.Lookup(context.Background(), batch, dst[:0])
		if err != nil || len(got) != 4096 || got[4095] != contract.Present {
			b.Fatalf("lookup: %v %v", err, len(got))
		}
	}
}
