package bench

import (
	"bytes"
	"encoding/json"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// One tiny run of measurements 1–4, 6, 8 and 9 (and 5's and 7's skip lines), shared by
// the tests that read a whole report.
func tinyReport(t *testing.T) *Report {
	t.Helper()
	var done, total []int
	rep, err := Run(t.Context(), tiny(), func(d, n int, _ string) { done, total = append(done, d), append(total, n) }, nil)
	require.NoError(t, err)
	require.NotEmpty(t, done)
	assert.Equal(t, total[0], done[len(done)-1], "progress ends at its total")
	assert.Equal(t, units(tiny()), total[0])
	for i := 1; i < len(done); i++ {
		assert.GreaterOrEqual(t, done[i], done[i-1], "progress never goes back")
	}
	return rep
}

func TestRunMeasuresAllButFiveAndSevenAndSaysWhyNot(t *testing.T) {
	rep := tinyReport(t)
	require.NotNil(t, rep.Settle)
	require.NotNil(t, rep.Loop)
	require.NotNil(t, rep.RowCPU)
	require.NotNil(t, rep.Band)
	require.NotNil(t, rep.Pool)
	assert.Equal(t, skippedPool, rep.Pool.Skipped)
	assert.Empty(t, rep.Pool.Cases)
	require.NotNil(t, rep.Lookup)
	assert.Equal(t, skippedPool, rep.Lookup.PoolSkipped)
	require.NotNil(t, rep.Redis)
	assert.Equal(t, skippedRedis, rep.Redis.Skipped)
	assert.Empty(t, rep.Redis.Cases)
	assert.Equal(t, 2, rep.Reps)
	assert.Positive(t, rep.Machine.CPUs)
	assert.NotEmpty(t, rep.Machine.GoVersion)

	// Every goal of 1–4, 6, 8 and 9: 6 settle cases, 2 loop, 2×2 row cpu, 2
	// sizes × (round trip, publish, evicting publish); 6: 2 sizes × 2
	// modes over memdrv (ratio and ns a name) and over the fake SDK
	// (ratio, with a context that can end and one that cannot); 8: 2 shapes × 2 directions of added latency, and the
	// throughput; 9: 2 sizes × 2 ways, and 2 lookup modes.
	assert.Len(t, rep.Goals, 6+2+4+2*3+2*2*2+2*2*2+2*2+1+2*2+2)
	require.NotNil(t, rep.Disk)
	assert.Len(t, rep.Disk.Cases, 2)
	for _, c := range rep.Band.Cases {
		assert.Positive(t, c.KvshareEvictingGBs.Median, "a publish into the full store, every put evicting")
		assert.Equal(t, 2, c.EvictingRatio.N, "one figure per repetition")
	}
	for _, g := range rep.Goals {
		assert.NotEmpty(t, g.Name)
		assert.Equal(t, 2, g.Value.N, "%s: one figure per repetition", g.Name)
	}

	// Shapes of the other measurements.
	l := rep.Loop
	assert.Len(t, l.FloorStalls, 2)
	assert.Len(t, l.Trace.Alone, 4, "40 ms in 10 ms windows")
	assert.Positive(t, l.AloneRate.Median)
	assert.Positive(t, l.FloorSubmissions[0])
	require.Len(t, rep.RowCPU.Cases, 2)
	assert.Equal(t, "fetch", rep.RowCPU.Cases[0].Direction)
	c := rep.RowCPU.Cases[1]
	assert.InDelta(t, c.KvshareNsPerRow.Median-c.FakeNsPerRow.Median, c.NsPerRow.Median, max(1, 0.5*c.KvshareNsPerRow.Max),
		"the difference of the sides, repetition by repetition")
	require.Len(t, rep.Band.Cases, 2)
	for _, c := range rep.Band.Cases {
		assert.Positive(t, c.FloorGBs.Median)
		assert.Positive(t, c.Ratio.Median)
		assert.Equal(t, int(64<<10/c.RowBytes), c.Rows)
	}
}

func TestOnlyRunsWhatItNames(t *testing.T) {
	o := tiny()
	o.Only = []Measurement{RealPool}
	rep, err := Run(t.Context(), o, nil, nil)
	require.NoError(t, err)
	assert.Nil(t, rep.Settle)
	assert.Nil(t, rep.Band)
	require.NotNil(t, rep.Pool)
	assert.Equal(t, skippedPool, rep.Pool.Skipped)
	assert.Empty(t, rep.Goals)

	var out bytes.Buffer
	WriteTable(&out, rep)
	assert.Contains(t, out.String(), "5. Real pool: "+skippedPool+"\n")
}

func TestReportJSONSchema(t *testing.T) {
	rep := tinyReport(t)
	b, err := json.Marshal(rep)
	require.NoError(t, err)
	var doc map[string]any
	require.NoError(t, json.Unmarshal(b, &doc))
	for _, k := range []string{"machine", "reps", "elapsed_s", "settle", "engine_loop", "row_cpu", "bandwidth", "real_pool", "lookup", "redis", "node", "goals"} {
		assert.Contains(t, doc, k)
	}
	settle := doc["settle"].(map[string]any)
	c0 := settle["cases"].([]any)[0].(map[string]any)
	for _, k := range []string{"shape", "mode", "rows", "period_ms", "kvshare", "floor", "ratio", "ratio_p50", "fetch_ratio", "reps"} {
		assert.Contains(t, c0, k)
	}
	for _, k := range []string{"rule_floor", "rule_ratio", "rule_ratio_p50", "rule_fetch_ratio", "rule_cost", "rule_cost_fetch"} {
		assert.NotContains(t, c0, k, "fetches alone have no rule-following floor")
	}
	c1 := settle["cases"].([]any)[1].(map[string]any)
	assert.Equal(t, "fetch+publish", c1["mode"])
	for _, k := range []string{"ratio", "ratio_p50", "fetch_ratio", "floor", "rule_floor", "rule_ratio", "rule_ratio_p50", "rule_fetch_ratio", "rule_cost", "rule_cost_fetch"} {
		assert.Contains(t, c1, k)
	}
	for _, k := range []string{"median", "min", "max", "n"} {
		assert.Contains(t, c1["rule_ratio"], k)
		assert.Contains(t, c1["rule_cost"], k)
	}
	for _, k := range []string{"fetch_settle", "all_settle", "submit_call", "first_sdk_call", "cpu_per_submission_ms"} {
		assert.Contains(t, c1["rule_floor"], k)
	}
	for _, k := range []string{"kvshare_mean_ms", "floor_mean_ms", "ratio", "rule_floor_mean_ms", "rule_ratio", "rule_cost"} {
		assert.Contains(t, c1["reps"].([]any)[0], k)
	}
	side := c0["kvshare"].(map[string]any)
	for _, k := range []string{"fetch_settle", "all_settle", "submit_call", "first_sdk_call", "cpu_per_submission_ms"} {
		assert.Contains(t, side, k)
	}
	for _, k := range []string{"mean_ms", "p50_ms", "p99_ms", "max_ms", "n"} {
		assert.Contains(t, side["fetch_settle"], k)
	}
	for _, k := range []string{"median", "min", "max", "n"} {
		assert.Contains(t, c0["ratio"], k)
	}
	loop := doc["engine_loop"].(map[string]any)
	for _, k := range []string{"floor_keep", "kvshare_keep", "keep_ratio", "floor_stalls", "kvshare_stalls", "cpu_ratio", "trace"} {
		assert.Contains(t, loop, k)
	}
	g := doc["goals"].([]any)[0].(map[string]any)
	for _, k := range []string{"measurement", "name", "value", "target", "at_most", "met"} {
		assert.Contains(t, g, k)
	}
	assert.Equal(t, map[string]any{"skipped": skippedPool}, doc["real_pool"])
	assert.Equal(t, map[string]any{"skipped": skippedRedis}, doc["redis"])
	lookup := doc["lookup"].(map[string]any)
	for _, k := range []string{"layout", "block_ms", "pool_skipped", "cases"} {
		assert.Contains(t, lookup, k)
	}
	lc := lookup["cases"].([]any)[0].(map[string]any)
	for _, k := range []string{"store", "names", "groups", "mode", "asked", "present", "calls", "size_calls", "lookups_per_block",
		"kvshare_ns_per_name", "floor_ns_per_name", "over_ns_per_name", "ratio"} {
		assert.Contains(t, lc, k)
	}

	var back Report
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Equal(t, *rep.Settle, *back.Settle, "the report survives a round trip")
	assert.Equal(t, *rep.Lookup, *back.Lookup)
}

func TestTableNamesEveryMeasurementAndGoal(t *testing.T) {
	rep := tinyReport(t)
	var out bytes.Buffer
	WriteTable(&out, rep)
	s := out.String()
	for _, want := range []string{"kvshare bench: 2 repetitions", "\n1. Submission to settle", "\n2. A busy engine loop",
		"\n3. CPU and allocation a row", "\n4. Publish + fetch", "\n5. Real pool: skipped", "\n6. Lookup: ", "   Real pool: skipped", "\n7. Redis: skipped", "\nGoals: "} {
		assert.Contains(t, s, want)
	}
	for _, g := range rep.Goals {
		assert.Contains(t, s, g.Name)
	}
	assert.Contains(t, Summary(rep), "goals met")

	// Measurement 1 beside publishes: the rule floor's row, and per case
	// the goal's ratio and what the rules cost.
	assert.Contains(t, s, "   Beside publishes also the rule floor: the same calls on a scheduler pool of 4 workers, in the driver's order (puts on at most 3, a put after four gets).\n")
	assert.Contains(t, s, "kvshare / rule floor, the goal; rule floor / floor, what the rules cost.\n")
	for _, c := range rep.Settle.Cases {
		if c.Mode != besidePublishes.String() {
			continue
		}
		assert.Regexp(t, `\n   `+c.Shape+` +fetch\+publish +rule floor +[0-9.]+ ms`, s)
		assert.Regexp(t, `\n   `+c.Shape+` +`+regexp.QuoteMeta(sp(*c.RuleRatio, "%.3f"))+` +\S+ \S+ +\S+ \S+ +`+regexp.QuoteMeta(sp(*c.RuleCost, "%.3f"))+` `, s)
	}
}

func TestGoalVerdicts(t *testing.T) {
	assert.True(t, newGoal(SettleLatency, "x", spread{Median: 1.1, N: 1}, 1.1, true).Met)
	assert.False(t, newGoal(SettleLatency, "x", spread{Median: 1.11, N: 1}, 1.1, true).Met)
	assert.True(t, newGoal(Bandwidth, "x", spread{Median: 0.8, N: 1}, 0.8, false).Met)
	assert.False(t, newGoal(Bandwidth, "x", spread{Median: 0.79, N: 1}, 0.8, false).Met)
	assert.False(t, newGoal(Bandwidth, "x", spread{}, 0, false).Met, "nothing measured meets nothing")

	r := &Report{Settle: &settleReport{Cases: []settleCase{{Shape: "4x256", Mode: "fetch", Ratio: spread{Median: 1.12, N: 1}}}}}
	r.judge()
	require.Len(t, r.Goals, 1)
	assert.InDelta(t, 1.15, r.Goals[0].Target, 1e-12, "4×256 has the looser target")
	assert.True(t, r.Goals[0].Met)

	// Beside publishes the goal is kvshare over the rule-following
	// floor, whatever its ratio to the unconstrained one.
	r = &Report{Settle: &settleReport{Cases: []settleCase{
		{Shape: "1x4096", Mode: "fetch+publish", Ratio: spread{Median: 1.34, N: 1}, RuleRatio: &spread{Median: 1.05, N: 1}, RuleCost: &spread{Median: 1.3, N: 1}},
		{Shape: "1x256", Mode: "fetch+publish", Ratio: spread{Median: 1.02, N: 1}, RuleRatio: &spread{Median: 1.12, N: 1}},
	}}}
	r.judge()
	require.Len(t, r.Goals, 2, "what the rules cost is reported, not a goal")
	assert.Equal(t, spread{Median: 1.05, N: 1}, r.Goals[0].Value)
	assert.Contains(t, r.Goals[0].Name, "rule-following floor")
	assert.True(t, r.Goals[0].Met)
	assert.False(t, r.Goals[1].Met, "1.12 over the rule-following floor misses 1.10")
	assert.Contains(t, Summary(r), "1 of 2 goals met; missed: 1 1x256 settle of every submission, fetches beside publishes, mean / rule-following floor's")
}
