package drivermetrics

import (
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/drivekit"
	"github.com/kvshare/kvshare/telemetry/internal/observe"
)

// The kit's instruments, as the telemetry README lists them.
var (
	specOps = observe.Spec{Name: "kvshare.driver.ops", Unit: "{operation}",
		Description: "Operations the driver admitted, by direction (put, get)."}
	specOpsOpen = observe.Spec{Name: "kvshare.driver.ops_open", Unit: "{operation}",
		Description: "Operations whose access to lent memory is open now."}
	specOpsUnprovable = observe.Spec{Name: "kvshare.driver.ops_unprovable", Unit: "{operation}",
		Description: "Operations whose access is unprovable now: their memory is kept until a recycle."}
	specRows = observe.Spec{Name: "kvshare.driver.rows", Unit: "{row}",
		Description: "Rows the driver settled, by direction (put, get) and final status."}
	specRowsUnprovable = observe.Spec{Name: "kvshare.driver.rows_unprovable", Unit: "{row}",
		Description: "Rows of operations whose access is unprovable now: their memory is kept until a recycle."}
	specHints = observe.Spec{Name: "kvshare.driver.hints", Unit: "{operation}",
		Description: "Gets admitted with a hint."}
	specParts = observe.Spec{Name: "kvshare.driver.parts", Unit: "{part}",
		Description: "Parts of operations the driver's workers took (a batch cut by rows and bytes per call)."}
	specCalls = observe.Spec{Name: "kvshare.driver.calls", Unit: "{call}",
		Description: "Store calls the driver made."}
	specPanics = observe.Spec{Name: "kvshare.driver.panics", Unit: "{panic}",
		Description: "Store calls that panicked (their rows ended Fault)."}
	specCallsShared = observe.Spec{Name: "kvshare.driver.calls_shared", Unit: "{call}",
		Description: "Store calls that carried the rows of more than one part."}
	specPartsShared = observe.Spec{Name: "kvshare.driver.parts_shared", Unit: "{part}",
		Description: "Parts that had rows in a shared store call."}
	specKeysWriting = observe.Spec{Name: "kvshare.driver.keys_writing", Unit: "{key}",
		Description: "Keys a put of the driver is writing now."}
	specRecycles = observe.Spec{Name: "kvshare.driver.recycles", Unit: "{recycle}",
		Description: "Recycles that ended every access of the driver's store client."}
	specOpsRecycled = observe.Spec{Name: "kvshare.driver.ops_recycled", Unit: "{operation}",
		Description: "Unprovable operations whose access a recycle ended."}
	specRowsRecycled = observe.Spec{Name: "kvshare.driver.rows_recycled", Unit: "{row}",
		Description: "Rows of unprovable operations whose access a recycle ended."}
	specLookups = observe.Spec{Name: "kvshare.driver.lookups", Unit: "{lookup}",
		Description: "Lookups the driver admitted."}
	specLookupNames = observe.Spec{Name: "kvshare.driver.lookup_names", Unit: "{name}",
		Description: "Names the admitted lookups asked about."}
	specLookupsAbandoned = observe.Spec{Name: "kvshare.driver.lookups_abandoned", Unit: "{lookup}",
		Description: "Lookups whose context ended while the store held them (their names answered Unknown)."}
	specLookupsRefused = observe.Spec{Name: "kvshare.driver.lookups_refused", Unit: "{lookup}",
		Description: "Lookups answered Unknown at once because the store held as many as it may."}
	specLookupsInStore = observe.Spec{Name: "kvshare.driver.lookups_in_store", Unit: "{lookup}",
		Description: "Lookups inside the store now."}
)

// StorePrefix begins the name of each of the store's own counters'
// instruments: kvshare.driver.store.<counter name>.
const StorePrefix = "kvshare.driver.store."

// directions are the directions, in the order of [view.ops] and [view.rows].
var directions = [2]contract.Direction{contract.PutDir, contract.GetDir}

// level pairs one up-down counter with its figure in a snapshot.
type level struct {
	i   metric.Int64ObservableUpDownCounter
	get func(*drivekit.Stats) int64
}

// total pairs one counter with its figure in a snapshot.
type total struct {
	i   metric.Int64ObservableCounter
	get func(*drivekit.Stats) int64
}

// kit is the instruments over one drivekit.Stats.
type kit struct {
	ops, rows metric.Int64ObservableCounter
	totals    []total
	levels    []level
}

func newKit(k *observe.Maker) *kit {
	return &kit{
		ops:  k.Counter(specOps),
		rows: k.Counter(specRows),
		totals: []total{
			{k.Counter(specHints), func(s *drivekit.Stats) int64 { return s.Hints }},
			{k.Counter(specParts), func(s *drivekit.Stats) int64 { return s.Parts }},
			{k.Counter(specCalls), func(s *drivekit.Stats) int64 { return s.Calls }},
			{k.Counter(specPanics), func(s *drivekit.Stats) int64 { return s.Panics }},
			{k.Counter(specCallsShared), func(s *drivekit.Stats) int64 { return s.CallsShared }},
			{k.Counter(specPartsShared), func(s *drivekit.Stats) int64 { return s.PartsShared }},
			{k.Counter(specRecycles), func(s *drivekit.Stats) int64 { return s.Recycles }},
			{k.Counter(specOpsRecycled), func(s *drivekit.Stats) int64 { return s.OpsRecycled }},
			{k.Counter(specRowsRecycled), func(s *drivekit.Stats) int64 { return s.RowsRecycled }},
			{k.Counter(specLookups), func(s *drivekit.Stats) int64 { return s.Lookups }},
			{k.Counter(specLookupNames), func(s *drivekit.Stats) int64 { return s.LookupNames }},
			{k.Counter(specLookupsAbandoned), func(s *drivekit.Stats) int64 { return s.LookupsAbandoned }},
			{k.Counter(specLookupsRefused), func(s *drivekit.Stats) int64 { return s.LookupsRefused }},
		},
		levels: []level{
			{k.UpDownCounter(specOpsOpen), func(s *drivekit.Stats) int64 { return s.OpsOpen }},
			{k.UpDownCounter(specOpsUnprovable), func(s *drivekit.Stats) int64 { return s.OpsUnprovable }},
			{k.UpDownCounter(specRowsUnprovable), func(s *drivekit.Stats) int64 { return s.RowsUnprovable }},
			{k.UpDownCounter(specKeysWriting), func(s *drivekit.Stats) int64 { return s.KeysWriting }},
			{k.UpDownCounter(specLookupsInStore), func(s *drivekit.Stats) int64 { return s.LookupsInStore }},
		},
	}
}

// all returns the instruments, for RegisterCallback.
func (i *kit) all() []metric.Observable {
	out := []metric.Observable{i.ops, i.rows}
	for _, t := range i.totals {
		out = append(out, t.i)
	}
	for _, l := range i.levels {
		out = append(out, l.i)
	}
	return out
}

// view holds the observe options of one registration, built once: the
// caller's attributes and the driver's name, and those plus each
// direction and final status.
type view struct {
	plain metric.ObserveOption
	ops   [2]metric.ObserveOption
	rows  [2][contract.RowStatusCount]metric.ObserveOption
}

func newView(base []attribute.KeyValue) *view {
	v := &view{plain: observe.With(base)}
	for d, dir := range directions {
		v.ops[d] = observe.With(base, observe.Direction.String(dir.String()))
		for s := contract.Ready; s < contract.RowStatusCount; s++ {
			v.rows[d][s] = observe.With(base, observe.Direction.String(dir.String()), observe.Status.String(s.String()))
		}
	}
	return v
}

// observe records one snapshot; every direction and final status is
// observed, zeros included.
func (i *kit) observe(o metric.Observer, v *view, s *drivekit.Stats) {
	for d, n := range [2]int64{s.PutOps, s.GetOps} {
		o.ObserveInt64(i.ops, n, v.ops[d])
	}
	for d, byStatus := range [2]*[contract.RowStatusCount]int64{&s.PutRows, &s.GetRows} {
		for st := contract.Ready; st < contract.RowStatusCount; st++ {
			o.ObserveInt64(i.rows, byStatus[st], v.rows[d][st])
		}
	}
	for _, t := range i.totals {
		o.ObserveInt64(t.i, t.get(s), v.plain)
	}
	for _, l := range i.levels {
		o.ObserveInt64(l.i, l.get(s), v.plain)
	}
}
