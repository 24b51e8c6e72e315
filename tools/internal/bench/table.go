package bench

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// WriteTable prints the report for a terminal: the machine, one table
// per measurement that ran (or its skip line), and every goal with its
// verdict.
func WriteTable(w io.Writer, r *Report) {
	m := r.Machine
	fmt.Fprintf(w, "kvshare bench: %d repetitions in %.0f s; %d CPUs (%s), GOMAXPROCS %d, %s, %s %s/%s; load %s at the start, %s at the end\n",
		r.Reps, r.ElapsedS, m.CPUs, orNone(m.CPUModel), m.GOMAXPROCS, orNone(m.Memory), m.GoVersion, m.GOOS, m.GOARCH, orNone(m.LoadBefore), orNone(m.LoadAfter))
	fmt.Fprintln(w, "Every goal is a ratio to a floor measured in the same run: the median of the repetitions [smallest–largest].")
	if s := r.Settle; s != nil {
		writeSettle(w, s)
	}
	if l := r.Loop; l != nil {
		writeLoop(w, l)
	}
	if c := r.RowCPU; c != nil {
		writeRowCPU(w, c)
	}
	if b := r.Band; b != nil {
		writeBandwidth(w, b)
	}
	if p := r.Pool; p != nil {
		writePool(w, p)
	}
	if l := r.Lookup; l != nil {
		writeLookup(w, l)
	}
	if d := r.Redis; d != nil {
		writeRedis(w, d)
	}
	if n := r.Node; n != nil {
		writeNode(w, n)
	}
	if d := r.Disk; d != nil {
		writeDisk(w, d)
	}
	writeGoals(w, r.Goals)
}

func orNone(s string) string {
	if s == "" {
		return "?"
	}
	return s
}

// sp prints a spread: median [min–max].
func sp(s spread, format string) string {
	if s.N == 0 {
		return "-"
	}
	return fmt.Sprintf(format+" ["+format+"–"+format+"]", s.Median, s.Min, s.Max)
}

func table(w io.Writer) *tabwriter.Writer { return tabwriter.NewWriter(w, 0, 0, 2, ' ', 0) }

func writeSettle(w io.Writer, s *settleReport) {
	fmt.Fprintf(w, "\n1. Submission to settle (outcome known and quiesced): a fake SDK whose data calls sleep %g ms; %d workers, %d rows and %s a call; %s rows.\n",
		s.SDKLatencyMs, s.Workers, s.RowsPerCall, size(s.BytesPerCall), size(s.RowBytes))
	fmt.Fprintln(w, "   The floor: the same SDK calls (a put part: put + exists) by as many bare goroutines, ticks taking turns with kvshare's.")
	fmt.Fprintf(w, "   Beside publishes also the rule floor: the same calls on a scheduler pool of %d workers, in the driver's order (puts on at most %d, a put after four gets).\n",
		s.Workers, max(1, s.Workers-1))
	t := table(w)
	fmt.Fprintln(t, "   shape\tmode\tside\tfetch mean\tp50\tp99\tall mean\tsubmit p99\t1st SDK call p50\tp99\tCPU/submission\tratio (mean)\tratio (p50)\t")
	for _, c := range s.Cases {
		sides := []settleSide{c.Kvshare, c.Floor}
		if c.RuleFloor != nil {
			sides = append(sides, *c.RuleFloor)
		}
		for i, side := range sides {
			name, ratios := "kvshare", sp(c.Ratio, "%.3f")+"\t"+sp(c.RatioP50, "%.3f")
			switch i {
			case floorSide:
				name, ratios = "floor", "\t"
			case ruleFloorSide:
				name, ratios = "rule floor", "\t"
			}
			fmt.Fprintf(t, "   %s\t%s\t%s\t%.2f ms\t%.2f\t%.2f\t%.2f\t%.3f ms\t%.3f ms\t%.3f\t%.3f ms\t%s\t\n", c.Shape, c.Mode, name,
				side.Fetch.MeanMs, side.Fetch.P50Ms, side.Fetch.P99Ms, side.All.MeanMs, side.Submit.P99Ms,
				side.FirstCall.P50Ms, side.FirstCall.P99Ms, side.CPUPerSubmissionMs.Median, ratios)
		}
	}
	t.Flush()
	writeSettleRules(w, s)
}

// writeSettleRules prints, per case beside publishes, kvshare against
// the rule floor (the goal) and the rule floor against the floor (what
// the rules cost), each of every submission and of the fetches alone.
func writeSettleRules(w io.Writer, s *settleReport) {
	var cases []settleCase
	for _, c := range s.Cases {
		if c.RuleRatio != nil {
			cases = append(cases, c)
		}
	}
	if len(cases) == 0 {
		return
	}
	fmt.Fprintln(w, "   Beside publishes, of every submission's mean settle (and the fetches'): kvshare / rule floor, the goal; rule floor / floor, what the rules cost.")
	t := table(w)
	fmt.Fprintln(t, "   shape\tkvshare / rule floor (mean)\t(p50)\tfetches\trules' cost: rule floor / floor (mean)\tfetches\tkvshare / floor (mean)\t")
	for _, c := range cases {
		fmt.Fprintf(t, "   %s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", c.Shape, sp(*c.RuleRatio, "%.3f"), sp(spreadOr(c.RuleRatioP50), "%.3f"),
			sp(spreadOr(c.RuleFetchRatio), "%.3f"), sp(spreadOr(c.RuleCost), "%.3f"), sp(spreadOr(c.RuleCostFetch), "%.3f"), sp(c.Ratio, "%.3f"))
	}
	t.Flush()
}

func writeLoop(w io.Writer, l *loopReport) {
	fmt.Fprintf(w, "\n2. A busy engine loop (items of %.1f µs on a thread of its own, counted per %g ms window, %.1f s a phase) beside measurement 1's traffic\n",
		l.ItemUs, l.WindowMs, l.PhaseS)
	fmt.Fprintln(w, "   (the three shapes in turn, fetches beside publishes, each at its fixed rate).")
	t := table(w)
	fmt.Fprintln(t, "   beside\tkeep-rate\tstalls > 1 ms per repetition\tsubmissions\tCPU per submission\t")
	fmt.Fprintf(t, "   nothing\t1 (%.0f items/s)\t%v\t\t\t\n", l.AloneRate.Median, l.AloneStalls)
	fmt.Fprintf(t, "   the floor\t%s\t%v\t%v\t%s ms\t\n", sp(l.FloorKeep, "%.3f"), l.FloorStalls, l.FloorSubmissions, sp(l.FloorCPUPerSubmissionMs, "%.3f"))
	fmt.Fprintf(t, "   kvshare\t%s\t%v\t%v\t%s ms\t\n", sp(l.KvshareKeep, "%.3f"), l.KvshareStalls, l.KvshareSubmissions, sp(l.KvshareCPUPerSubmissionMs, "%.3f"))
	t.Flush()
	fmt.Fprintf(w, "   keep-rate kvshare / floor %s; CPU per submission kvshare / floor %s\n", sp(l.KeepRatio, "%.3f"), sp(l.CPURatio, "%.2f"))
}

func writeRowCPU(w io.Writer, c *rowCPUReport) {
	fmt.Fprintf(w, "\n3. CPU and allocation a row of backend + driver over a fake SDK that answers at once, less the fake's own (the same calls straight to it);\n")
	fmt.Fprintf(w, "   %s rows, %d rows a submission, %d submissions a side and repetition.\n", size(c.RowBytes), c.Rows, c.Submissions)
	t := table(w)
	fmt.Fprintln(t, "   direction\tkvshare ns/row\tthe fake's\tkvshare − fake ns/row\tB/row kvshare\tthe fake's\tkvshare − fake B/row\tallocs/row\t")
	for _, x := range c.Cases {
		fmt.Fprintf(t, "   %s\t%.0f\t%.0f\t%s\t%.1f\t%.1f\t%s\t%.4f\t\n", x.Direction, x.KvshareNsPerRow.Median, x.FakeNsPerRow.Median,
			sp(x.NsPerRow, "%.0f"), x.KvshareBytesPerRow.Median, x.FakeBytesPerRow.Median, sp(x.BytesPerRow, "%.1f"), x.AllocsPerRow.Median)
	}
	t.Flush()
}

func writeBandwidth(w io.Writer, b *bandwidthReport) {
	fmt.Fprintf(w, "\n4. Publish + fetch through the in-memory store (slot → store → slot) against the same two copies with copy;\n")
	fmt.Fprintf(w, "   %d goroutines each side, %s each way a round, views of %d rows; GB/s = 10⁹ B/s; both sides copy into memory already\n", b.Workers, size(b.BytesPerRound), b.ViewRows)
	fmt.Fprintf(w, "   faulted in, of one kind (kvshare's store a bounded one holding the round, taken up front and emptied after each\n")
	fmt.Fprintf(w, "   round; the floor's buffers mapped alike and touched once); evicting: as many fresh rows published into the full\n")
	fmt.Fprintf(w, "   store, every put evicting.\n")
	t := table(w)
	fmt.Fprintln(t, "   row\tkvshare publish\tfetch\tround trip\tcopy in\tcopy out\tround trip\tratio\tpublish / copy in\tevicting\tevicting / publish\tstore faulted in\t")
	for _, c := range b.Cases {
		fmt.Fprintf(t, "   %s\t%.2f GB/s\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%s\t%s\t%.2f\t%s\t%.0f ms (%s)\t\n", size(c.RowBytes), c.KvsharePublishGBs.Median, c.KvshareFetchGBs.Median,
			c.KvshareGBs.Median, c.FloorInGBs.Median, c.FloorOutGBs.Median, c.FloorGBs.Median, sp(c.Ratio, "%.3f"), sp(c.PublishRatio, "%.3f"),
			c.KvshareEvictingGBs.Median, sp(c.EvictingRatio, "%.3f"), c.StorePrefaultMs, c.StorePages)
	}
	t.Flush()
}

func writePool(w io.Writer, p *poolReport) {
	if p.Skipped != "" {
		fmt.Fprintf(w, "\n5. Real pool: %s\n", p.Skipped)
		return
	}
	fmt.Fprintf(w, "\n5. Real pool: %s; keys under %s/v1/…\n", p.Pool, p.KeyPrefix)
	fmt.Fprintf(w, "   %d workers, %d rows and %s a call, calls_in_flight %d, %s each way a round; segment warmed with %s first; only Ready rows count.\n",
		p.Workers, p.RowsPerCall, size(p.BytesPerCall), p.CallsInFlight, size(p.BytesPerRound), size(p.WarmBytes))
	t := table(w)
	fmt.Fprintln(t, "   row\tkvshare put\tget\traw put\tget\tput ratio\tget ratio\tnot Ready kvshare/raw\t")
	for _, c := range p.Cases {
		fmt.Fprintf(t, "   %s\t%.2f GB/s\t%.2f\t%.2f\t%.2f\t%s\t%s\t%d/%d\t\n", size(c.RowBytes), c.KvsharePutGBs.Median, c.KvshareGetGBs.Median,
			c.RawPutGBs.Median, c.RawGetGBs.Median, sp(c.PutRatio, "%.3f"), sp(c.GetRatio, "%.3f"), c.KvshareNotReady, c.RawNotReady)
	}
	t.Flush()
	writePoolShaped(w, p)
}

// writePoolShaped prints the comparison shaped for the store: kvshare
// submitting as `kvshare roundtrip` does against the same rows in large
// calls (the goal), per row size.
func writePoolShaped(w io.Writer, p *poolReport) {
	if p.RoundtripViewRows == 0 {
		return // a report from before the case
	}
	fmt.Fprintf(w, "   Shaped for the store: kvshare as `kvshare roundtrip` submits (views of %d rows from %s at once) against the large-call floor:\n",
		p.RoundtripViewRows, count(p.RoundtripGoroutines, "goroutine"))
	fmt.Fprintf(w, "   the same rows in one call per %d rows (fewer where %s a call caps), each put with its exists-check, on %s.\n",
		p.LargeCallRows, size(p.BytesPerCall), count(p.LargeCallGoroutines, "goroutine"))
	t := table(w)
	fmt.Fprintln(t, "   row\trows a call\tcalls\troundtrip-shaped put\tget\tlarge-call put\tget\tput ratio\tget ratio\tnot Ready roundtrip/large\t")
	for _, c := range p.Cases {
		fmt.Fprintf(t, "   %s\t%d\t%d\t%.2f GB/s\t%.2f\t%.2f\t%.2f\t%s\t%s\t%d/%d\t\n", size(c.RowBytes), c.LargeCallRows, c.LargeCalls,
			c.RoundtripPutGBs.Median, c.RoundtripGetGBs.Median, c.LargePutGBs.Median, c.LargeGetGBs.Median,
			sp(c.RoundtripPutRatio, "%.3f"), sp(c.RoundtripGetRatio, "%.3f"), c.RoundtripNotReady, c.LargeNotReady)
	}
	t.Flush()
}

// count is n and noun, plural unless n is 1.
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

func writeLookup(w io.Writer, l *lookupReport) {
	fmt.Fprintf(w, "\n6. Lookup: Backend.Lookup against the same store calls made directly (memdrv: the driver's own Lookup; Mooncake: the client's\n")
	fmt.Fprintf(w, "   batch_is_exist, and get_size of the first key answering 0 when the client has it), one lookup at a time, blocks of about %g ms.\n", l.BlockMs)
	fmt.Fprintln(w, "   Both sides build the keys. Over Mooncake each case twice: a context that can end (the driver asks on a goroutine of its own,")
	fmt.Fprintln(w, "   the floor's calls the same way) and one that cannot (both ask on the caller's goroutine).")
	for _, line := range wrap("Layout: "+l.Layout, 140) {
		fmt.Fprintf(w, "   %s\n", line)
	}
	if l.Pool != "" {
		fmt.Fprintf(w, "   Real pool: %s; keys under %s/v1/…\n", l.Pool, l.KeyPrefix)
	}
	t := table(w)
	fmt.Fprintln(t, "   store\tnames\tmode\tcontext\tasked\tpresent\tcalls\tget_size\tlookups/block\tkvshare ns/name asked\tfloor's\tkvshare − floor\tkvshare µs/lookup\tfloor's\tratio\t")
	for _, c := range l.Cases {
		fmt.Fprintf(t, "   %s\t%d\t%s\t%s\t%d\t%d\t%d\t%d\t%d\t%s\t%.1f\t%.1f\t%.2f\t%.2f\t%s\t\n", c.Store, c.Names, c.Mode, orDash(c.Context), c.Asked, c.Present, c.Calls, c.SizeCalls,
			c.Lookups, sp(c.KvshareNsPerName, "%.1f"), c.FloorNsPerName.Median, c.OverNsPerName.Median, c.KvshareNsPerName.Median*float64(c.Asked)/1e3,
			c.FloorNsPerName.Median*float64(c.Asked)/1e3, sp(c.Ratio, "%.3f"))
	}
	t.Flush()
	if l.PoolSkipped != "" {
		fmt.Fprintf(w, "   Real pool: %s\n", l.PoolSkipped)
	}
}

func writeRedis(w io.Writer, d *redisReport) {
	if d.Skipped != "" {
		fmt.Fprintf(w, "\n7. Redis: %s\n", d.Skipped)
		return
	}
	fmt.Fprintf(w, "\n7. Redis: %s; keys under %s/{kvshare,floor,plain}/v1/…\n", d.Server, d.KeyPrefix)
	fmt.Fprintf(w, "   %d workers, parts of %d rows and %s, views of %d rows, about %s each way a round; MB/s = 10⁶ B/s of Ready rows.\n",
		d.Workers, d.RowsPerCall, size(d.BytesPerCall), d.ViewRows, size(d.BytesPerRound))
	fmt.Fprintln(w, "   The floor: the driver's commands pipelined on a raw client of the same options (SET NX + STRLEN a row; GET streamed into the slot),")
	fmt.Fprintln(w, "   as many goroutines as workers. Plain (context): single SET / GET on the same client, copying, as many goroutines.")
	cluster := len(d.Nodes) > 0
	if cluster {
		fmt.Fprintf(w, "   A cluster of %d nodes (%s): kvshare and the floor send each part's rows as a pipeline a node, the nodes' at once; plain sends each command to its key's node.\n",
			len(d.Nodes), strings.Join(d.Nodes, ", "))
	}
	t := table(w)
	header := "   row\trows\tkvshare put\tget\tfloor put\tget\tplain put\tget\tput ratio\tget ratio\tnot Ready kvshare/floor/plain\t"
	if cluster {
		header += "parts split\t"
	}
	fmt.Fprintln(t, header)
	for _, c := range d.Cases {
		fmt.Fprintf(t, "   %s\t%d\t%.0f MB/s\t%.0f\t%.0f\t%.0f\t%.0f\t%.0f\t%s\t%s\t%d/%d/%d\t", size(c.RowBytes), c.Rows,
			c.KvsharePutMBs.Median, c.KvshareGetMBs.Median, c.FloorPutMBs.Median, c.FloorGetMBs.Median, c.PlainPutMBs.Median, c.PlainGetMBs.Median,
			sp(c.PutRatio, "%.3f"), sp(c.GetRatio, "%.3f"), c.KvshareNotReady, c.FloorNotReady, c.PlainNotReady)
		if cluster {
			fmt.Fprintf(t, "%d of %d\t", c.PartsSplit, c.Parts)
		}
		fmt.Fprintln(t)
	}
	t.Flush()
	if d.Cluster != nil {
		writeRedisBeside(w, d)
	}
}

// writeRedisBeside prints kvshare over the cluster measured beside the
// server: its MB/s beside one node's, and cluster / one node.
func writeRedisBeside(w io.Writer, d *redisReport) {
	b := d.Cluster
	if b.Skipped != "" {
		fmt.Fprintf(w, "   Cluster beside: %s\n", b.Skipped)
		return
	}
	fmt.Fprintf(w, "   Cluster beside: kvshare over %s; keys under %s/kvshare/v1/…\n", b.Server, b.KeyPrefix)
	fmt.Fprintln(w, "   The same rows and rounds, each repetition's in turn with one node's kvshare round; cluster / one node is the per-node grouping's cost.")
	t := table(w)
	fmt.Fprintln(t, "   row\trows\tone node put\tget\tcluster put\tget\tput cluster/one node\tget cluster/one node\tnot Ready\tparts split\t")
	for i, c := range b.Cases {
		one := d.Cases[i]
		fmt.Fprintf(t, "   %s\t%d\t%.0f MB/s\t%.0f\t%.0f\t%.0f\t%s\t%s\t%d\t%d of %d\t\n", size(c.RowBytes), c.Rows,
			one.KvsharePutMBs.Median, one.KvshareGetMBs.Median, c.PutMBs.Median, c.GetMBs.Median,
			sp(c.PutRatio, "%.3f"), sp(c.GetRatio, "%.3f"), c.NotReady, c.PartsSplit, c.Parts)
	}
	t.Flush()
}

// wrap cuts s into lines of at most width bytes at spaces (a longer
// word alone).
func wrap(s string, width int) []string {
	var lines []string
	line := ""
	for _, word := range strings.Fields(s) {
		if line != "" && len(line)+1+len(word) > width {
			lines = append(lines, line)
			line = ""
		}
		if line != "" {
			line += " "
		}
		line += word
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}

func writeGoals(w io.Writer, goals []goal) {
	if len(goals) == 0 {
		return
	}
	met := 0
	for _, g := range goals {
		if g.Met {
			met++
		}
	}
	fmt.Fprintf(w, "\nGoals: %d of %d met\n", met, len(goals))
	t := table(w)
	for _, g := range goals {
		verdict, cmp := "met", "≥"
		if !g.Met {
			verdict = "MISSED"
		}
		if g.AtMost {
			cmp = "≤"
		}
		fmt.Fprintf(t, "   %d\t%s\t%s\t%s %g\t%s\t\n", g.Measurement, g.Name, sp(g.Value, "%.4g"), cmp, g.Target, verdict)
	}
	t.Flush()
}

// Summary is one line: how many goals were met, and which were missed.
func Summary(r *Report) string {
	var missed []string
	for _, g := range r.Goals {
		if !g.Met {
			missed = append(missed, fmt.Sprintf("%d %s", g.Measurement, g.Name))
		}
	}
	if len(missed) == 0 {
		return fmt.Sprintf("all %d goals met", len(r.Goals))
	}
	return fmt.Sprintf("%d of %d goals met; missed: %s", len(r.Goals)-len(missed), len(r.Goals), strings.Join(missed, "; "))
}

func writeNode(w io.Writer, n *nodeReport) {
	fmt.Fprintf(w, "\n8. The node beside the in-process path, one embedded bounded store, %d driver workers each: a publish then a fetch\n", n.Workers)
	fmt.Fprintf(w, "   of %s rows, %d samples a side and repetition, through a node in this process (nodeclient over a Unix socket)\n", size(n.RowBytes), n.Samples)
	fmt.Fprintf(w, "   and through an in-process backend; floor: the same frame over a socketpair, an outcome-sized reply back.\n")
	fmt.Fprintf(w, "   ms p50 / p99 over every sample; added: the node's p50 less in-process, over the floor's p50, per repetition.\n")
	t := table(w)
	fmt.Fprintln(t, "   rows\tway\tin-process outcome\tquiesced\tnode outcome\tquiesced\tsocket floor\tadded outcome / floor\tadded quiesced / floor\t")
	for _, c := range n.Latency {
		fmt.Fprintf(t, "   %d\t%s\t%.3f / %.3f\t%.3f / %.3f\t%.3f / %.3f\t%.3f / %.3f\t%.3f / %.3f\t%s\t%s\t\n", c.Rows, c.Direction,
			c.InProcessOutcome.P50Ms, c.InProcessOutcome.P99Ms, c.InProcessQuiesced.P50Ms, c.InProcessQuiesced.P99Ms,
			c.NodeOutcome.P50Ms, c.NodeOutcome.P99Ms, c.NodeQuiesced.P50Ms, c.NodeQuiesced.P99Ms, c.Floor.P50Ms, c.Floor.P99Ms,
			sp(c.OutcomeAdded, "%.2f"), sp(c.QuiescedAdded, "%.2f"))
	}
	t.Flush()
	c := n.Throughput
	fmt.Fprintf(w, "   throughput, %d rows of %s each way, GB/s = 10⁹ B/s: in-process publish %.2f, fetch %.2f, round trip %.2f;\n", c.Rows, size(c.RowBytes),
		c.InProcessPublish.Median, c.InProcessFetch.Median, c.InProcess.Median)
	fmt.Fprintf(w, "   node publish %.2f, fetch %.2f, round trip %.2f; node / in-process %s\n", c.NodePublish.Median, c.NodeFetch.Median, c.Node.Median, sp(c.Ratio, "%.3f"))
	p := n.Pool
	if p == nil {
		fmt.Fprintf(w, "   real pool: %s\n", n.PoolSkipped)
		return
	}
	fmt.Fprintf(w, "   over the real pool (%s), %d driver workers, measurement 5's rounds in views of %d rows, all at once:\n", p.Pool, p.Workers, p.ViewRows)
	fmt.Fprintf(w, "   through the node, and in process through a view of the same driver; GB/s of Ready rows, median [spread]\n")
	t = table(w)
	fmt.Fprintln(t, "   row\trows\tin-process put\tget\tnode put\tget\tput node / in-process\tget node / in-process\tnot Ready (in-process, node)\t")
	for _, c := range p.Cases {
		fmt.Fprintf(t, "   %s\t%d\t%.2f\t%.2f\t%.2f\t%.2f\t%s\t%s\t%d, %d\t\n", size(c.RowBytes), c.Rows,
			c.InProcessPutGBs.Median, c.InProcessGetGBs.Median, c.NodePutGBs.Median, c.NodeGetGBs.Median,
			sp(c.PutRatio, "%.3f"), sp(c.GetRatio, "%.3f"), c.InProcessNotReady, c.NodeNotReady)
	}
	t.Flush()
}

// orDash is s, or "–" when s is empty.
func orDash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}
