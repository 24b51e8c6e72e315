package nodemetrics

import (
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/kvshare/kvshare/node"
	"github.com/kvshare/kvshare/telemetry/internal/observe"
)

// The node's instruments, as the telemetry README lists them.
var (
	specEngines = observe.Spec{Name: "kvshare.node.engines", Unit: "{engine}",
		Description: "Engines attached to the node now."}
	specAttached = observe.Spec{Name: "kvshare.node.attached", Unit: "{session}",
		Description: "Sessions the node welcomed since it started."}
	specAttachRefused = observe.Spec{Name: "kvshare.node.attach.refused", Unit: "{connection}",
		Description: "Connections refused before a word was read: the peer's user id is not allowed to attach."}
	specLends = observe.Spec{Name: "kvshare.node.lends", Unit: "{lend}",
		Description: "Lends the node maps now (held ones included)."}
	specLentBytes = observe.Spec{Name: "kvshare.node.lent.bytes", Unit: "By",
		Description: "Bytes of engines' memory the node maps now (held ones included)."}
	specAttemptOpen = observe.Spec{Name: "kvshare.node.attempt.open", Unit: "{attempt}",
		Description: "Publishes and fetches accepted and not quiesced: in flight, their memory still lent to the store."}
	specHeldLends = observe.Spec{Name: "kvshare.node.held.lends", Unit: "{lend}",
		Description: "Lends the node keeps because their engine returned or left them while access could not be proven ended."}
	specHeldBytes = observe.Spec{Name: "kvshare.node.held.bytes", Unit: "By",
		Description: "Bytes of the lends the node keeps until access is proven ended (a reclaim, or the store letting go)."}
	specAttempts = observe.Spec{Name: "kvshare.node.attempts", Unit: "{attempt}",
		Description: "Publishes and fetches the node accepted."}
	specRefusals = observe.Spec{Name: "kvshare.node.refusals", Unit: "{request}",
		Description: "Requests the node refused, every code."}
	specReclaims = observe.Spec{Name: "kvshare.node.reclaims", Unit: "{reclaim}",
		Description: "Reclaims that ended every access of the lends they won back."}
	specReclaimBytes = observe.Spec{Name: "kvshare.node.reclaim.bytes", Unit: "By",
		Description: "Bytes reclaims gave back."}

	specEngineSessions = observe.Spec{Name: "kvshare.node.engine.sessions", Unit: "{session}",
		Description: "Sessions attached now under the engine's declared name."}
	specEngineLends = observe.Spec{Name: "kvshare.node.engine.lends", Unit: "{lend}",
		Description: "The engine's lends the node maps now."}
	specEngineLentBytes = observe.Spec{Name: "kvshare.node.engine.lent.bytes", Unit: "By",
		Description: "Bytes the engine lends the node now."}
	specEngineAttemptOpen = observe.Spec{Name: "kvshare.node.engine.attempt.open", Unit: "{attempt}",
		Description: "The engine's publishes and fetches in flight."}
	specEngineHeldBytes = observe.Spec{Name: "kvshare.node.engine.held.bytes", Unit: "By",
		Description: "Bytes of the engine's lends the node keeps until access is proven ended."}

	specTenantSessions = observe.Spec{Name: "kvshare.node.tenant.sessions", Unit: "{session}",
		Description: "Sessions attached now whose scope declared the tenant."}
	specTenantLentBytes = observe.Spec{Name: "kvshare.node.tenant.lent.bytes", Unit: "By",
		Description: "Bytes the tenant's sessions lend the node now, those kept for engines that left included: against its lent-bytes limit."}
	specTenantFlightBytes = observe.Spec{Name: "kvshare.node.tenant.inflight.bytes", Unit: "By",
		Description: "Slot bytes of the tenant's publishes and fetches not quiesced: against its bytes-in-flight limit."}
	specTenantAttemptOpen = observe.Spec{Name: "kvshare.node.tenant.attempt.open", Unit: "{attempt}",
		Description: "The tenant's publishes and fetches not quiesced: against its attempts-in-flight limit."}
	specTenantRefusals = observe.Spec{Name: "kvshare.node.tenant.refusals", Unit: "{request}",
		Description: "Requests a limit of the tenant refused, by limit."}
	specTenantDenied = observe.Spec{Name: "kvshare.node.tenant.denied", Unit: "{session}",
		Description: "Hellos refused because the peer may not declare the tenant."}
)

// instruments are the node's instruments.
type instruments struct {
	engines, lends, lentBytes, attemptOpen, heldLends, heldBytes        metric.Int64ObservableUpDownCounter
	attached, attachRefused, attempts, refusals, reclaims, reclaimBytes metric.Int64ObservableCounter

	engineSessions, engineLends, engineLentBytes, engineAttemptOpen, engineHeldBytes metric.Int64ObservableUpDownCounter

	tenantSessions, tenantLentBytes, tenantFlightBytes, tenantAttemptOpen metric.Int64ObservableUpDownCounter
	tenantRefusals, tenantDenied                                          metric.Int64ObservableCounter
}

func makeInstruments(k *observe.Maker) instruments {
	return instruments{
		engines: k.UpDownCounter(specEngines), lends: k.UpDownCounter(specLends), lentBytes: k.UpDownCounter(specLentBytes),
		attemptOpen: k.UpDownCounter(specAttemptOpen), heldLends: k.UpDownCounter(specHeldLends), heldBytes: k.UpDownCounter(specHeldBytes),
		attached: k.Counter(specAttached), attachRefused: k.Counter(specAttachRefused), attempts: k.Counter(specAttempts),
		refusals: k.Counter(specRefusals), reclaims: k.Counter(specReclaims), reclaimBytes: k.Counter(specReclaimBytes),
		engineSessions: k.UpDownCounter(specEngineSessions), engineLends: k.UpDownCounter(specEngineLends),
		engineLentBytes: k.UpDownCounter(specEngineLentBytes), engineAttemptOpen: k.UpDownCounter(specEngineAttemptOpen),
		engineHeldBytes: k.UpDownCounter(specEngineHeldBytes),
		tenantSessions:  k.UpDownCounter(specTenantSessions), tenantLentBytes: k.UpDownCounter(specTenantLentBytes),
		tenantFlightBytes: k.UpDownCounter(specTenantFlightBytes), tenantAttemptOpen: k.UpDownCounter(specTenantAttemptOpen),
		tenantRefusals: k.Counter(specTenantRefusals), tenantDenied: k.Counter(specTenantDenied),
	}
}

func (is instruments) all() []metric.Observable {
	return []metric.Observable{is.engines, is.lends, is.lentBytes, is.attemptOpen, is.heldLends, is.heldBytes,
		is.attached, is.attachRefused, is.attempts, is.refusals, is.reclaims, is.reclaimBytes,
		is.engineSessions, is.engineLends, is.engineLentBytes, is.engineAttemptOpen, is.engineHeldBytes,
		is.tenantSessions, is.tenantLentBytes, is.tenantFlightBytes, is.tenantAttemptOpen, is.tenantRefusals, is.tenantDenied}
}

// engineFigures are one declared name's figures: every session of it
// attached now, summed.
type engineFigures struct {
	sessions, lends, lentBytes, attemptsOpen, heldBytes int64
}

// observe observes one snapshot: the node's figures with the caller's
// attributes (with), each engine's with theirs and engine=<name>.
func (is instruments) observe(o metric.Observer, s node.Stats, base []attribute.KeyValue, with metric.ObserveOption) {
	for _, f := range []struct {
		i metric.Int64Observable
		v int64
	}{
		{is.engines, s.Engines}, {is.lends, s.Lends}, {is.lentBytes, s.LentBytes}, {is.attemptOpen, s.AttemptsOpen},
		{is.heldLends, s.HeldLends}, {is.heldBytes, s.HeldBytes},
		{is.attached, s.Attached}, {is.attachRefused, s.PeersRefused}, {is.attempts, s.Attempts},
		{is.refusals, s.Refused()}, {is.reclaims, s.Reclaims}, {is.reclaimBytes, s.BytesReclaimed},
	} {
		o.ObserveInt64(f.i, f.v, with)
	}
	byName := map[string]*engineFigures{}
	var order []string
	for _, e := range s.PerEngine {
		f, ok := byName[e.Engine]
		if !ok {
			f = &engineFigures{}
			byName[e.Engine] = f
			order = append(order, e.Engine)
		}
		f.sessions++
		f.lends += e.Lends
		f.lentBytes += e.LentBytes
		f.attemptsOpen += e.AttemptsOpen
		f.heldBytes += e.HeldBytes
	}
	for _, name := range order {
		f := byName[name]
		w := observe.With(base, Engine.String(name))
		o.ObserveInt64(is.engineSessions, f.sessions, w)
		o.ObserveInt64(is.engineLends, f.lends, w)
		o.ObserveInt64(is.engineLentBytes, f.lentBytes, w)
		o.ObserveInt64(is.engineAttemptOpen, f.attemptsOpen, w)
		o.ObserveInt64(is.engineHeldBytes, f.heldBytes, w)
	}
	for _, ts := range s.PerTenant {
		w := observe.With(base, Tenant.String(ts.Tenant))
		o.ObserveInt64(is.tenantSessions, ts.Sessions, w)
		o.ObserveInt64(is.tenantLentBytes, ts.LentBytes, w)
		o.ObserveInt64(is.tenantFlightBytes, ts.BytesInFlight, w)
		o.ObserveInt64(is.tenantAttemptOpen, ts.AttemptsInFlight, w)
		o.ObserveInt64(is.tenantDenied, ts.NotAllowed, w)
		for _, limit := range []string{node.LimitLentBytes, node.LimitBytesInFlight, node.LimitAttemptsInFlight} {
			o.ObserveInt64(is.tenantRefusals, ts.Refused[limit], observe.With(base, Tenant.String(ts.Tenant), Limit.String(limit)))
		}
	}
}
