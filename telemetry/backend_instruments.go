package telemetry

import (
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/telemetry/internal/observe"
)

// The backend's instruments, as the README lists them.
var (
	specAttemptsStarted = observe.Spec{Name: "kvshare.attempt.started", Unit: "{attempt}",
		Description: "Views submitted and accepted (fetches and publishes)."}
	specAttemptsOpen = observe.Spec{Name: "kvshare.attempt.open", Unit: "{attempt}",
		Description: "Attempts not quiesced now: a driver may still touch their slots."}
	specRows = observe.Spec{Name: "kvshare.rows", Unit: "{row}",
		Description: "Rows settled by the backend, by direction (put: publish, get: fetch) and final status."}
	specCallsInFlight = observe.Spec{Name: "kvshare.call.in_flight", Unit: "{call}",
		Description: "Driver calls whose access to the lent memory is open now."}
	specCallsUnprovable = observe.Spec{Name: "kvshare.call.unprovable", Unit: "{call}",
		Description: "Driver calls whose access could not be proven ended, now: their memory is kept until a reclaim gives it back."}
	specReclaims = observe.Spec{Name: "kvshare.reclaim.count", Unit: "{reclaim}",
		Description: "Reclaims whose driver recycle ended every access (Backend.Reclaim, or Config.ReclaimAbove)."}
	specReclaimedBytes = observe.Spec{Name: "kvshare.reclaim.bytes", Unit: "By",
		Description: "Bytes of unprovable calls that reclaims gave back."}
	specOldestCall = observe.Spec{Name: "kvshare.call.oldest_age", Unit: "s",
		Description: "Age of the oldest driver call in flight now; 0 when none is."}
	specLentRows = observe.Spec{Name: "kvshare.lent.rows", Unit: "{row}",
		Description: "Slots a driver may still touch now (calls in flight or unprovable)."}
	specLentBytes = observe.Spec{Name: "kvshare.lent.bytes", Unit: "By",
		Description: "Bytes of the slots a driver may still touch now (calls in flight or unprovable)."}
	specViolation = observe.Spec{Name: "kvshare.violation", Unit: "{violation}",
		Description: "1 once a driver broke the protocol and the backend refuses every submission, else 0."}
)

// backendInstruments are the observable instruments over one
// [contract.Stats].
type backendInstruments struct {
	attemptsStarted metric.Int64ObservableCounter
	attemptsOpen    metric.Int64ObservableUpDownCounter
	rows            metric.Int64ObservableCounter
	callsInFlight   metric.Int64ObservableUpDownCounter
	callsUnprovable metric.Int64ObservableUpDownCounter
	oldestCall      metric.Float64ObservableGauge
	lentRows        metric.Int64ObservableUpDownCounter
	lentBytes       metric.Int64ObservableUpDownCounter
	violation       metric.Int64ObservableGauge
	reclaims        metric.Int64ObservableCounter
	reclaimedBytes  metric.Int64ObservableCounter
}

func newBackendInstruments(m metric.Meter) (*backendInstruments, error) {
	k := observe.NewMaker(m)
	i := &backendInstruments{
		attemptsStarted: k.Counter(specAttemptsStarted),
		attemptsOpen:    k.UpDownCounter(specAttemptsOpen),
		rows:            k.Counter(specRows),
		callsInFlight:   k.UpDownCounter(specCallsInFlight),
		callsUnprovable: k.UpDownCounter(specCallsUnprovable),
		oldestCall:      k.FloatGauge(specOldestCall),
		lentRows:        k.UpDownCounter(specLentRows),
		lentBytes:       k.UpDownCounter(specLentBytes),
		violation:       k.Gauge(specViolation),
		reclaims:        k.Counter(specReclaims),
		reclaimedBytes:  k.Counter(specReclaimedBytes),
	}
	if err := k.Err(); err != nil {
		return nil, err
	}
	return i, nil
}

// all returns the instruments, for RegisterCallback.
func (i *backendInstruments) all() []metric.Observable {
	return []metric.Observable{
		i.attemptsStarted, i.attemptsOpen, i.rows, i.callsInFlight, i.callsUnprovable,
		i.oldestCall, i.lentRows, i.lentBytes, i.violation, i.reclaims, i.reclaimedBytes,
	}
}

// backendView holds the observe options of one registration, built once:
// the caller's attributes, and those plus each direction and final
// status.
type backendView struct {
	plain metric.ObserveOption
	put   [contract.RowStatusCount]metric.ObserveOption
	get   [contract.RowStatusCount]metric.ObserveOption
}

func newBackendView(base []attribute.KeyValue) *backendView {
	v := &backendView{plain: observe.With(base)}
	for s := contract.Ready; s < contract.RowStatusCount; s++ {
		v.put[s] = observe.With(base, observe.Direction.String(contract.PutDir.String()), observe.Status.String(s.String()))
		v.get[s] = observe.With(base, observe.Direction.String(contract.GetDir.String()), observe.Status.String(s.String()))
	}
	return v
}

// observe records one snapshot. Every final status is observed, zeros
// included, so that each series exists from the first collection.
func (i *backendInstruments) observe(o metric.Observer, v *backendView, s contract.Stats) {
	o.ObserveInt64(i.attemptsStarted, s.Attempts, v.plain)
	o.ObserveInt64(i.attemptsOpen, s.AttemptsOpen, v.plain)
	for st := contract.Ready; st < contract.RowStatusCount; st++ {
		o.ObserveInt64(i.rows, s.PublishRows[st], v.put[st])
		o.ObserveInt64(i.rows, s.FetchRows[st], v.get[st])
	}
	o.ObserveInt64(i.callsInFlight, s.CallsInFlight, v.plain)
	o.ObserveInt64(i.callsUnprovable, s.CallsUnprovable, v.plain)
	o.ObserveFloat64(i.oldestCall, s.OldestCall.Seconds(), v.plain)
	o.ObserveInt64(i.lentRows, s.RowsLent, v.plain)
	o.ObserveInt64(i.lentBytes, s.BytesLent, v.plain)
	violated := int64(0)
	if s.Violation != "" {
		violated = 1
	}
	o.ObserveInt64(i.violation, violated, v.plain)
	o.ObserveInt64(i.reclaims, s.Reclaims, v.plain)
	o.ObserveInt64(i.reclaimedBytes, s.BytesReclaimed, v.plain)
}
