package bench

import (
	"errors"
	"fmt"
	"time"

	"github.com/kvshare/kvshare/binding"
	"github.com/kvshare/kvshare/contract"
)

// Measurement names one of the benchmark's nine measurements.
type Measurement int

// The measurements, numbered as in the package documentation.
const (
	SettleLatency Measurement = iota + 1 // 1: submission to settle
	EngineLoop                           // 2: the busy engine loop
	RowCPU                               // 3: per-row CPU and allocation
	Bandwidth                            // 4: bandwidth against two copies
	RealPool                             // 5: a real Mooncake pool
	Lookup                               // 6: lookup against the same store calls
	Redis                                // 7: a Redis server against the same commands
	Node                                 // 8: the node beside the in-process path
	Disk                                 // 9: the disk tier against raw pwrite/pread
)

// AllMeasurements lists the nine in order.
var AllMeasurements = []Measurement{SettleLatency, EngineLoop, RowCPU, Bandwidth, RealPool, Lookup, Redis, Node, Disk}

func (m Measurement) String() string {
	switch m {
	case SettleLatency:
		return "settle"
	case EngineLoop:
		return "engine loop"
	case RowCPU:
		return "row cpu"
	case Bandwidth:
		return "bandwidth"
	case RealPool:
		return "real pool"
	case Lookup:
		return "lookup"
	case Redis:
		return "redis"
	case Node:
		return "node"
	case Disk:
		return "disk"
	}
	return fmt.Sprintf("measurement %d", int(m))
}

// Options say what to measure and how much. Start from [Defaults] or
// [Short].
type Options struct {
	// Reps is the number of repetitions of every measurement: each goal
	// is the median of one ratio per repetition, with its spread.
	Reps int
	// Only, when not empty, runs just these measurements.
	Only []Measurement

	Settle    settleOptions
	Loop      loopOptions
	RowCPU    rowCPUOptions
	Bandwidth bandwidthOptions
	Pool      poolOptions
	Lookup    lookupOptions
	Redis     redisOptions
	Node      nodeOptions
	Disk      diskOptions

	// Observe, when set, is told of each lender a measurement builds
	// (the kvshare command's --metrics observes them).
	Observe observer
}

// observer is told of a lender once its backend is built: the
// measurement it serves ("settle", "engine loop", "row cpu",
// "bandwidth", "real pool", "lookup", "redis", "node" — its in-process
// lender; the node's backends are its own —, "disk"), its backend and its
// driver. The
// function it returns is called before the lender is given back.
type observer func(lender string, b *binding.Backend, d contract.Driver) (done func())

// settleOptions shape measurement 1 (and the traffic of measurement 2).
type settleOptions struct {
	// Ticks is the number of submissions (ticks of the fixed rate) per
	// shape, mode and side (kvshare or floor) in one repetition.
	Ticks int
	// RowBytes is the size of one row (slot).
	RowBytes int64
	// Latency is what every data call of the fake SDK sleeps.
	Latency time.Duration
	// Workers, RowsPerCall and BytesPerCall are the driver's (and the
	// floor's goroutines and parts).
	Workers      int
	RowsPerCall  int
	BytesPerCall int64
}

// loopOptions shape measurement 2.
type loopOptions struct {
	// Phase is how long the loop runs alone, beside the floor's traffic
	// and beside kvshare's, in each repetition.
	Phase time.Duration
	// Window is the counting window (10 ms); Stall the gap between two
	// items that counts as a stall (1 ms).
	Window, Stall time.Duration
	// Item is how many rounds of mixing one work item does (a few
	// microseconds of CPU).
	Item int
}

// rowCPUOptions shape measurement 3.
type rowCPUOptions struct {
	RowBytes    int64
	Rows        int // rows per submission
	Submissions int // per side and direction in one repetition
}

// bandwidthOptions shape measurement 4.
type bandwidthOptions struct {
	RowSizes []int64
	// Bytes is what one round moves each way (rounded down to whole rows).
	Bytes int64
	// Workers is the in-memory driver's workers and the copy floor's
	// goroutines.
	Workers int
	// ViewRows is the rows of one submitted view.
	ViewRows int
}

// poolOptions shape measurement 5. It runs only with StorePath or
// MooncakeDir.
type poolOptions struct {
	// StorePath is a store config (TOML) naming a running pool.
	StorePath string
	// MooncakeDir is a Mooncake folder to start a loopback pool from
	// (package pool of mooncakedrv).
	MooncakeDir string
	RowSizes    []int64
	// Bytes is what one round moves each way.
	Bytes int64
	// Segment is the segment size of a pool started from MooncakeDir
	// (each provider's).
	Segment int64
	// Providers is the segment providers of a pool started from
	// MooncakeDir (0: one); Replicas the copies its clients ask every put
	// for (0: one).
	Providers, Replicas int
	// ViewRows is the rows of one submitted view.
	ViewRows int
	// RoundtripViewRows is the rows of one view of the roundtrip-shaped
	// case: `kvshare roundtrip`'s (roundtrip.Defaults).
	RoundtripViewRows int
}

// lookupOptions shape measurement 6.
type lookupOptions struct {
	// Sizes are the names in one view, one case each: 1, or a multiple
	// of 4 (two groups of n/2; the layout is lookupLayout's).
	Sizes []int
	// Block is about how long one side's block of lookups takes in a
	// repetition (calibrated on kvshare, then the same count each side).
	Block time.Duration
	// ObjectBytes is the size of each object stored before the lookups.
	ObjectBytes int64
}

// redisOptions shape measurement 7. It runs only with StorePath or
// Server.
type redisOptions struct {
	// StorePath is a store file ([blob] and [redis]) naming a running
	// server or cluster.
	StorePath string
	// Server is a redis-server binary to start a loopback server from
	// (package redistest of redisdrv), with MaxMemory bytes of maxmemory
	// and the noeviction policy; with Cluster, a loopback three-node
	// Redis Cluster instead, each node so.
	Server    string
	Cluster   bool
	MaxMemory int64
	// Beside, with Server and not Cluster, also starts a three-node
	// cluster from Server and measures kvshare over it in turn with the
	// server's own rounds: the cluster's MB/s beside one node's.
	Beside   bool
	RowSizes []int64
	// Bytes is about what one round moves each way: Bytes/row size rows,
	// and at least MinRows.
	Bytes   int64
	MinRows int
	// ViewRows is the rows of one submitted view.
	ViewRows int
}

// besides reports whether a cluster is measured beside the server.
func (r redisOptions) besides() bool { return r.Server != "" && !r.Cluster && r.Beside }

// rows is the rows of one round at rowBytes a row.
func (r redisOptions) rows(rowBytes int64) int { return max(r.MinRows, int(r.Bytes/rowBytes)) }

// diskOptions shape measurement 9. It runs over the directory of the
// store file StorePath, or with none over a temporary directory.
type diskOptions struct {
	// StorePath is a store file ([blob] and [disk]) naming the directory.
	StorePath string
	RowSizes  []int64
	// Bytes is about what one round moves each way: Bytes/row size rows,
	// and at least MinRows.
	Bytes   int64
	MinRows int
	// ViewRows is the rows of one submitted view.
	ViewRows int
	// LookupNames is the names of the lookup case (a multiple of 4; the
	// layout is lookupLayout's), asked in blocks of about Lookup.Block.
	LookupNames int
}

// rows is the rows of one round at rowBytes a row.
func (d diskOptions) rows(rowBytes int64) int { return max(d.MinRows, int(d.Bytes/rowBytes)) }

// Bounds of measurement 6's settings.
const (
	maxLookupNames  = 1 << 16
	maxLookupObject = 1 << 20
)

// Defaults returns the settings of a full run: measurements 1–4 take
// about a minute and a half on a 2-core machine, 6 about ten seconds
// (twenty with a loopback pool).
func Defaults() Options {
	return Options{
		Reps: 7,
		Settle: settleOptions{
			Ticks:        50,
			RowBytes:     4 << 10,
			Latency:      time.Millisecond,
			Workers:      4,
			RowsPerCall:  256,
			BytesPerCall: 128 << 20,
		},
		Loop:      loopOptions{Phase: time.Second, Window: 10 * time.Millisecond, Stall: time.Millisecond, Item: 400},
		RowCPU:    rowCPUOptions{RowBytes: 64 << 10, Rows: 1024, Submissions: 20},
		Bandwidth: bandwidthOptions{RowSizes: rowSizes, Bytes: 128 << 20, Workers: 2, ViewRows: 64},
		Pool:      poolOptions{RowSizes: rowSizes, Bytes: 128 << 20, Segment: 1 << 30, ViewRows: 64, RoundtripViewRows: 64},
		Lookup:    lookupOptions{Sizes: []int{1, 256, 4096}, Block: 50 * time.Millisecond, ObjectBytes: 4 << 10},
		Redis:     redisOptions{MaxMemory: 2 << 30, Beside: true, RowSizes: rowSizes, Bytes: 64 << 20, MinRows: 16, ViewRows: 64},
		Node:      nodeOptions{Shapes: []int{256, 4096}, RowBytes: 4 << 10, Samples: 20, Workers: 2, ThroughputRowBytes: 1 << 20, ThroughputBytes: 128 << 20, ViewRows: 64},
		Disk:      diskOptions{RowSizes: diskRowSizes, Bytes: 128 << 20, MinRows: 16, ViewRows: 64, LookupNames: 4096},
	}
}

// rowSizes are the row sizes of measurements 4, 5 and 7.
var rowSizes = []int64{64 << 10, 256 << 10, 1 << 20, 4 << 20}

// diskRowSizes are the row sizes of measurement 9.
var diskRowSizes = []int64{64 << 10, 256 << 10, 1 << 20}

// Short returns settings for a quick look (the mage bench target): the
// same shapes, fewer repetitions and samples, a few seconds each.
func Short() Options {
	o := Defaults()
	o.Reps = 3
	o.Settle.Ticks = 10
	o.Loop.Phase = 300 * time.Millisecond
	o.RowCPU.Submissions = 5
	o.Bandwidth.Bytes = 32 << 20
	o.Pool.Bytes = 32 << 20
	o.Lookup.Block = 10 * time.Millisecond
	o.Redis.Bytes = 32 << 20
	o.Node.Samples = 8
	o.Node.ThroughputBytes = 32 << 20
	o.Disk.Bytes = 32 << 20
	return o
}

// runs reports whether m is to be measured.
func (o Options) runs(m Measurement) bool {
	if len(o.Only) == 0 {
		return true
	}
	for _, x := range o.Only {
		if x == m {
			return true
		}
	}
	return false
}

// poolGiven reports whether measurements 5 and 6 have a pool to run
// against.
func (o Options) poolGiven() bool { return o.Pool.StorePath != "" || o.Pool.MooncakeDir != "" }

// redisGiven reports whether measurement 7 has a server to run against.
func (o Options) redisGiven() bool { return o.Redis.StorePath != "" || o.Redis.Server != "" }

// Validate names the first setting out of range.
func (o Options) Validate() error {
	var errs []error
	check := func(ok bool, format string, args ...any) {
		if !ok {
			errs = append(errs, fmt.Errorf("bench: "+format, args...))
		}
	}
	check(o.Reps > 0, "reps is %d, want > 0", o.Reps)
	for _, m := range o.Only {
		check(m >= SettleLatency && m <= Disk, "no measurement %d (1–%d)", int(m), len(AllMeasurements))
	}
	s := o.Settle
	check(s.Ticks > 0 && s.RowBytes > 0 && s.Latency >= 0 && s.Workers > 0 && s.RowsPerCall > 0 && s.BytesPerCall > 0,
		"settle settings out of range: %+v", s)
	l := o.Loop
	check(l.Phase > 0 && l.Window > 0 && l.Stall > 0 && l.Item > 0 && l.Phase >= l.Window, "loop settings out of range: %+v", l)
	r := o.RowCPU
	check(r.RowBytes > 0 && r.Rows > 0 && r.Submissions > 0, "row cpu settings out of range: %+v", r)
	b := o.Bandwidth
	check(len(b.RowSizes) > 0 && b.Workers > 0 && b.ViewRows > 0, "bandwidth settings out of range: %+v", b)
	for _, rs := range b.RowSizes {
		check(rs > 0 && b.Bytes >= rs, "bandwidth: row size %d must be > 0 and at most bytes per round %d", rs, b.Bytes)
	}
	p := o.Pool
	check(p.StorePath == "" || p.MooncakeDir == "", "give a store config or a Mooncake folder, not both")
	check(len(p.RowSizes) > 0 && p.ViewRows > 0 && p.RoundtripViewRows > 0 && p.Segment >= 0 && p.Providers >= 0 && p.Replicas >= 0, "real pool settings out of range: %+v", p)
	for _, rs := range p.RowSizes {
		check(rs > 0 && p.Bytes >= rs, "real pool: row size %d must be > 0 and at most bytes per round %d", rs, p.Bytes)
	}
	k := o.Lookup
	check(len(k.Sizes) > 0 && k.Block > 0 && k.ObjectBytes > 0 && k.ObjectBytes <= maxLookupObject, "lookup settings out of range: %+v", k)
	for _, n := range k.Sizes {
		check(n == 1 || (n >= 4 && n%4 == 0 && n <= maxLookupNames), "lookup: %d names: want 1, or a multiple of 4 from 4 to %d", n, maxLookupNames)
	}
	d := o.Redis
	check(d.StorePath == "" || d.Server == "", "give a Redis store file or a redis-server binary, not both")
	check(!d.Cluster || d.Server != "", "redis: a cluster is started from a redis-server binary: give one with it")
	check(len(d.RowSizes) > 0 && d.ViewRows > 0 && d.MinRows > 0 && d.MaxMemory >= 0 && d.Bytes > 0, "redis settings out of range: %+v", d)
	for _, rs := range d.RowSizes {
		check(rs > 0 && rs <= maxRedisRow, "redis: row size %d must be > 0 and at most %d (a Redis value's limit, 512 MiB)", rs, int64(maxRedisRow))
	}
	nd := o.Node
	check(len(nd.Shapes) > 0 && nd.RowBytes > 0 && nd.Samples > 0 && nd.Workers > 0 && nd.ViewRows > 0 && nd.ThroughputRowBytes > 0 && nd.ThroughputBytes >= nd.ThroughputRowBytes,
		"node settings out of range: %+v", nd)
	for _, rows := range nd.Shapes {
		check(rows > 0 && rows <= maxNodeRows, "node: a shape of %d rows: want 1 to %d (a node's default max_rows)", rows, maxNodeRows)
	}
	dk := o.Disk
	check(len(dk.RowSizes) > 0 && dk.Bytes > 0 && dk.MinRows > 0 && dk.ViewRows > 0, "disk settings out of range: %+v", dk)
	for _, rs := range dk.RowSizes {
		check(rs > 0 && rs <= maxDiskRow, "disk: row size %d must be > 0 and at most %d", rs, int64(maxDiskRow))
	}
	check(dk.LookupNames >= 4 && dk.LookupNames%4 == 0 && dk.LookupNames <= maxLookupNames,
		"disk: lookup of %d names: want a multiple of 4 from 4 to %d", dk.LookupNames, maxLookupNames)
	return errors.Join(errs...)
}

// maxDiskRow is measurement 9's largest row.
const maxDiskRow = 1 << 30

// maxNodeRows is the rows of one submission a node takes by default.
const maxNodeRows = 8192

// maxRedisRow is the largest value Redis stores (proto-max-bulk-len).
const maxRedisRow = 512 << 20
