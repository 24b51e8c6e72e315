package bench

import "fmt"

// Report is everything one run measured: the machine, each measurement
// that ran, and every goal's verdict. It is what --json prints.
type Report struct {
	Machine  machine          `json:"machine"`
	Reps     int              `json:"reps"`
	ElapsedS float64          `json:"elapsed_s"`
	Settle   *settleReport    `json:"settle,omitempty"`
	Loop     *loopReport      `json:"engine_loop,omitempty"`
	RowCPU   *rowCPUReport    `json:"row_cpu,omitempty"`
	Band     *bandwidthReport `json:"bandwidth,omitempty"`
	Pool     *poolReport      `json:"real_pool,omitempty"`
	Lookup   *lookupReport    `json:"lookup,omitempty"`
	Redis    *redisReport     `json:"redis,omitempty"`
	Node     *nodeReport      `json:"node,omitempty"`
	Disk     *diskReport      `json:"disk,omitempty"`
	Goals    []goal           `json:"goals"`
}

// goal is one of the benchmark's goals: a ratio (or a figure) measured once
// per repetition, its target, and whether the median meets it.
type goal struct {
	Measurement int     `json:"measurement"`
	Name        string  `json:"name"`
	Value       spread  `json:"value"`
	Target      float64 `json:"target"`
	// AtMost: the value must be at most Target; otherwise at least.
	AtMost bool `json:"at_most"`
	Met    bool `json:"met"`
}

// newGoal judges the median of v against target.
func newGoal(m Measurement, name string, v spread, target float64, atMost bool) goal {
	met := v.N > 0 && v.Median >= target
	if atMost {
		met = v.N > 0 && v.Median <= target
	}
	return goal{Measurement: int(m), Name: name, Value: v, Target: target, AtMost: atMost, Met: met}
}

// Targets of the goals (see the package documentation).
const (
	settleTarget       = 1.10 // 1×256 and 1×4096: kvshare's settle over the floor's (beside publishes, the rule-following floor's)
	settleTargetSpread = 1.15 // 4×256
	keepTarget         = 0.98 // the loop's keep-rate beside kvshare over beside the floor
	rowNsTarget        = 100  // ns a row
	// rowBytesTarget is "~0 B a row": the outcome's Delivered slice, a
	// bool a row that the caller keeps, is the one byte a row no backend
	// can avoid; the rest must round to nothing.
	rowBytesTarget   = 2
	bandwidthTarget  = 0.8     // kvshare's round trip over the copy floor's
	publishTarget    = 0.9     // kvshare's publish over the floor's copy in
	evictTarget      = 1 / 1.2 // a publish whose every put evicts over a plain one: a put that evicts costs at most 1.2×
	poolTarget95     = 0.95    // kvshare's GB/s over the raw loop's
	poolTarget90     = 0.90    // the roundtrip-shaped case's GB/s over the large-call floor's
	lookupTarget     = 1.10    // kvshare's time a lookup over the same store calls'
	lookupNsTarget   = 100     // kvshare's ns a name asked, over memdrv
	redisTarget90    = 0.90    // kvshare's MB/s over the raw pipelined loop's, over Redis
	nodeAddedTarget  = 1.5     // the node's added p50 latency over the socket floor's p50 round trip
	nodeRateTarget   = 0.9     // the node's round-trip rate over the in-process one's
	diskTarget90     = 0.90    // kvshare's MB/s over raw pwrite/pread's, over the disk tier
	diskLookupAtMost = 1.0     // kvshare's time a lookup over a stat of every object file's
)

// judge lists every goal the report's measurements bear on.
func (r *Report) judge() {
	r.Goals = nil
	if s := r.Settle; s != nil {
		for _, c := range s.Cases {
			target := settleTarget
			if c.Shape == (shape{4, 256}).String() {
				target = settleTargetSpread
			}
			what, v := "fetch settle, mean / floor's", c.Ratio
			if c.Mode == besidePublishes.String() {
				// Beside publishes the floor that follows the driver's
				// rules is the goal's; the unconstrained floor's ratio
				// and the rules' cost are reported beside it.
				what = "settle of every submission, fetches beside publishes, mean / rule-following floor's"
				v = spreadOr(c.RuleRatio)
			}
			r.Goals = append(r.Goals, newGoal(SettleLatency, c.Shape+" "+what, v, target, true))
		}
	}
	if l := r.Loop; l != nil {
		r.Goals = append(r.Goals, newGoal(EngineLoop, "engine loop keep-rate beside kvshare / beside the floor", l.KeepRatio, keepTarget, false))
		kv := float64(sum(l.KvshareStalls))
		r.Goals = append(r.Goals, newGoal(EngineLoop, "engine loop stalls > 1 ms beside kvshare, all repetitions (target: beside the floor)",
			spread{Median: kv, Min: kv, Max: kv, N: len(l.KvshareStalls)}, float64(sum(l.FloorStalls)), true))
	}
	if rc := r.RowCPU; rc != nil {
		for _, c := range rc.Cases {
			r.Goals = append(r.Goals, newGoal(RowCPU, c.Direction+": CPU ns a row, kvshare − the fake", c.NsPerRow, rowNsTarget, true))
			r.Goals = append(r.Goals, newGoal(RowCPU, c.Direction+": bytes allocated a row, kvshare − the fake", c.BytesPerRow, rowBytesTarget, true))
		}
	}
	if b := r.Band; b != nil {
		for _, c := range b.Cases {
			r.Goals = append(r.Goals, newGoal(Bandwidth, size(c.RowBytes)+" rows: round trip / two copies", c.Ratio, bandwidthTarget, false))
			r.Goals = append(r.Goals, newGoal(Bandwidth, size(c.RowBytes)+" rows: publish / copy in", c.PublishRatio, publishTarget, false))
			r.Goals = append(r.Goals, newGoal(Bandwidth, size(c.RowBytes)+" rows: evicting publish / publish", c.EvictingRatio, evictTarget, false))
		}
	}
	if p := r.Pool; p != nil {
		for _, c := range p.Cases {
			r.Goals = append(r.Goals, newGoal(RealPool, size(c.RowBytes)+" rows: put GB/s / raw loop's", c.PutRatio, poolTarget95, false))
			r.Goals = append(r.Goals, newGoal(RealPool, size(c.RowBytes)+" rows: get GB/s / raw loop's", c.GetRatio, poolTarget95, false))
			large := fmt.Sprintf("large calls' (%d rows a call)", c.LargeCallRows)
			r.Goals = append(r.Goals, newGoal(RealPool, size(c.RowBytes)+" rows: roundtrip-shaped put GB/s / "+large, c.RoundtripPutRatio, poolTarget90, false))
			r.Goals = append(r.Goals, newGoal(RealPool, size(c.RowBytes)+" rows: roundtrip-shaped get GB/s / "+large, c.RoundtripGetRatio, poolTarget90, false))
		}
	}
	if d := r.Redis; d != nil {
		over, how := "Redis", "pipelined"
		if len(d.Nodes) > 0 {
			over, how = "a Redis Cluster", "pipelined a node"
		}
		for _, c := range d.Cases {
			r.Goals = append(r.Goals, newGoal(Redis, size(c.RowBytes)+" rows over "+over+": put MB/s / the same commands "+how, c.PutRatio, redisTarget90, false))
			r.Goals = append(r.Goals, newGoal(Redis, size(c.RowBytes)+" rows over "+over+": get MB/s / the same commands "+how, c.GetRatio, redisTarget90, false))
		}
	}
	if n := r.Node; n != nil {
		for _, c := range n.Latency {
			what := fmt.Sprintf("%d×%s %s through the node: p50 to the outcome less in-process, over the socket floor's p50", c.Rows, size(n.RowBytes), c.Direction)
			r.Goals = append(r.Goals, newGoal(Node, what, c.OutcomeAdded, nodeAddedTarget, true))
		}
		t := n.Throughput
		r.Goals = append(r.Goals, newGoal(Node, size(t.RowBytes)+" rows: publish + fetch GB/s through the node / in-process", t.Ratio, nodeRateTarget, false))
		if p := n.Pool; p != nil {
			for _, c := range p.Cases {
				r.Goals = append(r.Goals, newGoal(Node, size(c.RowBytes)+" rows over the real pool: put GB/s through the node / in-process", c.PutRatio, nodeRateTarget, false))
				r.Goals = append(r.Goals, newGoal(Node, size(c.RowBytes)+" rows over the real pool: get GB/s through the node / in-process", c.GetRatio, nodeRateTarget, false))
			}
		}
	}
	if d := r.Disk; d != nil {
		for _, c := range d.Cases {
			r.Goals = append(r.Goals, newGoal(Disk, size(c.RowBytes)+" rows on disk: publish MB/s / open + pwrite's", c.PutRatio, diskTarget90, false))
			r.Goals = append(r.Goals, newGoal(Disk, size(c.RowBytes)+" rows on disk: fetch MB/s / open + pread's, page cache dropped", c.GetRatio, diskTarget90, false))
		}
		for _, c := range d.Lookup {
			what := fmt.Sprintf("lookup over the disk tier, %d names, %s: kvshare / a stat of each object file", c.Names, c.Mode)
			r.Goals = append(r.Goals, newGoal(Disk, what, c.Ratio, diskLookupAtMost, true))
		}
	}
	if l := r.Lookup; l != nil {
		for _, c := range l.Cases {
			what := c.describe()
			r.Goals = append(r.Goals, newGoal(Lookup, what+": kvshare / the same store calls", c.Ratio, lookupTarget, true))
			if c.Store == lookupMemdrv {
				r.Goals = append(r.Goals, newGoal(Lookup, what+": kvshare ns a name asked", c.KvshareNsPerName, lookupNsTarget, true))
			}
		}
	}
}

func sum(xs []int) int {
	n := 0
	for _, x := range xs {
		n += x
	}
	return n
}
