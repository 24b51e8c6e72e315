package mooncake

import (
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/drivekit"
	"github.com/kvshare/kvshare/telemetry/internal/observe"
)

// The driver's instruments, as the telemetry README lists them.
var (
	specRows = observe.Spec{Name: "kvshare.mooncake.rows", Unit: "{row}",
		Description: "Rows the Mooncake driver settled, by direction (put, get) and final status."}
	specKeysLeftOpen = observe.Spec{Name: "kvshare.mooncake.keys_left_open", Unit: "{key}",
		Description: "Keys left open (a put answered RPC_FAIL, RPC_TIMEOUT or INTERNAL_ERROR): the driver never puts them again."}
	specRowsDeclinedLeftOpen = observe.Spec{Name: "kvshare.mooncake.rows_declined_left_open", Unit: "{row}",
		Description: "Put rows declined because their key was left open and holds no complete object."}
	specRowsUnprovable = observe.Spec{Name: "kvshare.mooncake.rows_unprovable", Unit: "{row}",
		Description: "Rows of operations whose access is unprovable now: their memory is kept until a recycle."}
	specRecycles = observe.Spec{Name: "kvshare.mooncake.recycles", Unit: "{recycle}",
		Description: "Recycles that destroyed the store client and ended every access."}
	specRowsRecycled = observe.Spec{Name: "kvshare.mooncake.rows_recycled", Unit: "{row}",
		Description: "Rows of unprovable operations whose access a recycle ended."}
	specSDKCalls = observe.Spec{Name: "kvshare.mooncake.sdk.calls", Unit: "{call}",
		Description: "Batch calls into Mooncake's C ABI (a put part makes two: put-from and its exists-check)."}
	specSDKPanics = observe.Spec{Name: "kvshare.mooncake.sdk.panics", Unit: "{panic}",
		Description: "Panics recovered around Mooncake's C ABI."}
	specSDKCallsShared = observe.Spec{Name: "kvshare.mooncake.sdk.calls_shared", Unit: "{call}",
		Description: "Batch calls that carried the rows of more than one part (parts queued behind busy workers)."}
	specPartsUnprovableShared = observe.Spec{Name: "kvshare.mooncake.parts_unprovable_shared", Unit: "{part}",
		Description: "Parts whose access a shared call made unprovable though no answer for their own rows did."}
)

// directions are the rows' directions, in the order of [view.rows].
var directions = [2]contract.Direction{contract.PutDir, contract.GetDir}

// The store's counters the figures beside the kit's come from, by the
// names mooncakedrv's store reports them under.
const (
	counterKeysLeftOpen          = "keys_left_open"
	counterRowsDeclinedLeftOpen  = "rows_declined_left_open"
	counterSDKCalls              = "sdk_calls"
	counterSDKPanics             = "sdk_panics"
	counterSDKCallsShared        = "sdk_calls_shared"
	counterPartsUnprovableShared = "parts_unprovable_shared"
)

// storeCounters are the store's counters every collection reads: a
// driver whose store reports any of them not is not a Mooncake driver.
var storeCounters = [...]string{counterKeysLeftOpen, counterRowsDeclinedLeftOpen, counterSDKCalls,
	counterSDKPanics, counterSDKCallsShared, counterPartsUnprovableShared}

// figures are the legacy figures of one collection: the kit's Stats and
// the store's counters by name, as mooncakedrv.Stats sums them.
type figures struct {
	kit   drivekit.Stats
	store map[string]int64
}

func read(d Driver) figures {
	f := figures{kit: d.Stats(), store: make(map[string]int64, len(storeCounters))}
	for _, c := range d.Counters(nil) {
		f.store[c.Name] = c.Value
	}
	return f
}

// instruments are the observable instruments over one collection's figures.
type instruments struct {
	rows                 metric.Int64ObservableCounter
	keysLeftOpen         metric.Int64ObservableUpDownCounter
	rowsDeclinedLeftOpen metric.Int64ObservableCounter
	rowsUnprovable       metric.Int64ObservableUpDownCounter
	sdkCalls             metric.Int64ObservableCounter
	sdkPanics            metric.Int64ObservableCounter
	sdkCallsShared       metric.Int64ObservableCounter
	partsUnprovShared    metric.Int64ObservableCounter
	recycles             metric.Int64ObservableCounter
	rowsRecycled         metric.Int64ObservableCounter
}

func newInstruments(m metric.Meter) (*instruments, error) {
	k := observe.NewMaker(m)
	i := &instruments{
		rows:                 k.Counter(specRows),
		keysLeftOpen:         k.UpDownCounter(specKeysLeftOpen),
		rowsDeclinedLeftOpen: k.Counter(specRowsDeclinedLeftOpen),
		rowsUnprovable:       k.UpDownCounter(specRowsUnprovable),
		sdkCalls:             k.Counter(specSDKCalls),
		sdkPanics:            k.Counter(specSDKPanics),
		sdkCallsShared:       k.Counter(specSDKCallsShared),
		partsUnprovShared:    k.Counter(specPartsUnprovableShared),
		recycles:             k.Counter(specRecycles),
		rowsRecycled:         k.Counter(specRowsRecycled),
	}
	if err := k.Err(); err != nil {
		return nil, err
	}
	return i, nil
}

// all returns the instruments, for RegisterCallback.
func (i *instruments) all() []metric.Observable {
	return []metric.Observable{i.rows, i.keysLeftOpen, i.rowsDeclinedLeftOpen, i.rowsUnprovable, i.sdkCalls, i.sdkPanics,
		i.sdkCallsShared, i.partsUnprovShared, i.recycles, i.rowsRecycled}
}

// view holds the observe options of one registration, built once: the
// caller's attributes, and those plus each direction and final status.
type view struct {
	plain metric.ObserveOption
	rows  [2][contract.RowStatusCount]metric.ObserveOption
}

func newView(base []attribute.KeyValue) *view {
	v := &view{plain: observe.With(base)}
	for d, dir := range directions {
		for s := contract.Ready; s < contract.RowStatusCount; s++ {
			v.rows[d][s] = observe.With(base, observe.Direction.String(dir.String()), observe.Status.String(s.String()))
		}
	}
	return v
}

// observe records one snapshot; every direction and final status is
// observed, zeros included.
// A panic in the SDK counts as mooncakedrv.Stats.Panics did: those the
// store recovered plus those the kit did.
func (i *instruments) observe(o metric.Observer, v *view, f figures) {
	s, c := &f.kit, f.store
	for d, byStatus := range [2]*[contract.RowStatusCount]int64{&s.PutRows, &s.GetRows} {
		for st := contract.Ready; st < contract.RowStatusCount; st++ {
			o.ObserveInt64(i.rows, byStatus[st], v.rows[d][st])
		}
	}
	o.ObserveInt64(i.keysLeftOpen, c[counterKeysLeftOpen], v.plain)
	o.ObserveInt64(i.rowsDeclinedLeftOpen, c[counterRowsDeclinedLeftOpen], v.plain)
	o.ObserveInt64(i.rowsUnprovable, s.RowsUnprovable, v.plain)
	o.ObserveInt64(i.sdkCalls, c[counterSDKCalls], v.plain)
	o.ObserveInt64(i.sdkPanics, c[counterSDKPanics]+s.Panics, v.plain)
	o.ObserveInt64(i.sdkCallsShared, c[counterSDKCallsShared], v.plain)
	o.ObserveInt64(i.partsUnprovShared, c[counterPartsUnprovableShared], v.plain)
	o.ObserveInt64(i.recycles, s.Recycles, v.plain)
	o.ObserveInt64(i.rowsRecycled, s.RowsRecycled, v.plain)
}
