package bench

import "time"

// tiny returns settings that run every measurement in well under a
// second each: the same code paths, a handful of samples.
func tiny() Options {
	o := Defaults()
	o.Reps = 2
	o.Settle.Ticks = 2
	o.Settle.RowBytes = 512
	o.Settle.Latency = 50 * time.Microsecond
	o.Loop.Phase, o.Loop.Window, o.Loop.Item = 40*time.Millisecond, 10*time.Millisecond, 50
	o.RowCPU = rowCPUOptions{RowBytes: 4096, Rows: 64, Submissions: 2}
	o.Bandwidth = bandwidthOptions{RowSizes: []int64{4096, 16384}, Bytes: 64 << 10, Workers: 2, ViewRows: 4}
	o.Pool = poolOptions{RowSizes: []int64{4096, 16384}, Bytes: 64 << 10, ViewRows: 4, RoundtripViewRows: 4, Segment: 1 << 20}
	o.Lookup = lookupOptions{Sizes: []int{1, 8}, Block: time.Millisecond, ObjectBytes: 64}
	o.Redis = redisOptions{MaxMemory: 64 << 20, Beside: true, RowSizes: []int64{4096, 16384}, Bytes: 64 << 10, MinRows: 6, ViewRows: 4}
	o.Node = nodeOptions{Shapes: []int{4, 16}, RowBytes: 512, Samples: 2, Workers: 2, ThroughputRowBytes: 16384, ThroughputBytes: 64 << 10, ViewRows: 4}
	o.Disk = diskOptions{RowSizes: []int64{4096, 16384}, Bytes: 64 << 10, MinRows: 4, ViewRows: 4, LookupNames: 8}
	return o
}

// noSteps is a step function that ignores its steps.
func noSteps(string) {}
