package conformance

import (
	"fmt"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/memdrv"
)

// Verdicts bent over memdrv, one status turned into another: the check
// that stages the status must catch each.

// bentHarness builds memdrv drivers that record to as the verdict of
// every row memdrv ends from.
func bentHarness(from, to contract.RowStatus) Harness {
	return Harness{New: func() (*Subject, error) {
		s := memdrv.NewStore()
		d := memdrv.New(s, quiet(memdrv.Options{}))
		d.OnRowEnd(func(e memdrv.RowEnd) contract.RowStatus {
			if e.Status == from {
				return to
			}
			return e.Status
		})
		return memSubject(d, d, s), nil
	}}
}

// verdictCatches: verdicts bent from one status to another, and
// objects stored with other bytes.
func verdictCatches() []catch {
	var out []catch
	for _, c := range []struct {
		check     string
		from, to  contract.RowStatus
		violation string
	}{
		{"put-round-trip", contract.Ready, contract.Declined, "ended declined, want ready: a put of a fresh key to a store with room is ready"},
		{"absent-key", contract.Miss, contract.NotReady, "ended not-ready, want miss: the key was never stored"},
		{"writer-holds-key/put", contract.NotReady, contract.Miss, "ended miss, want not-ready: another writer holds the key"},
		{"writer-holds-key/get", contract.NotReady, contract.Miss, "ended miss, want not-ready: another writer holds the key"},
		{"long-object", contract.Fault, contract.Ready, "ended ready, want fault: the object"},
		{"full-store", contract.Declined, contract.Fault, "ended fault, want declined: the store is full"},
		{"failed-read", contract.Fault, contract.NotReady, "ended not-ready, want fault: the store failed the read"},
		{"crash/put", contract.Fault, contract.Ready, "ended ready, want fault or cancelled: the store call crashed"},
		{"crash/get", contract.Fault, contract.Ready, "ended ready, want fault or cancelled: the store call crashed"},
		{"verdict-order/get", contract.Miss, contract.Ready, "ended ready, want miss: rows of mixed verdicts"},
		{"verdict-order/put", contract.NotReady, contract.Ready, "ended ready, want not-ready: rows of mixed verdicts"},
	} {
		out = append(out, catch{
			name: "bent/" + c.check, deviant: bentHarness(c.from, c.to), control: memHarness(memdrv.Options{}, false),
			check: c.check, violation: c.violation,
		})
	}
	o := memdrv.Options{MultiSpan: true}
	slot := fmt.Sprint(4096) // Harness.SlotBytes by default
	for _, c := range []struct{ check, violation string }{
		{"put-round-trip", "ended ready, but the object read back differs from the slot at byte 0"},
		{"get-round-trip", "ended ready but its slot differs from the object at byte 0"},
		{"multi-span/put", "the object read back differs from the two spans, in order, at byte " + slot},
		{"multi-span/get", "the two spans, in order, differ from the object at byte 0"}, // staged by a one-span put
	} {
		out = append(out, catch{
			name: "other-bytes/" + c.check, deviant: otherBytesHarness(o), control: memHarness(o, false),
			check: c.check, violation: c.violation,
		})
	}
	return out
}

// otherBytesHarness builds memdrv drivers whose puts end Ready but store
// the object with the first byte of the row's last span flipped.
func otherBytesHarness(o memdrv.Options) Harness {
	return Harness{New: func() (*Subject, error) {
		s := memdrv.NewStore()
		d := memdrv.New(s, quiet(o))
		d.OnRowEnd(func(e memdrv.RowEnd) contract.RowStatus {
			if e.Dir == memdrv.PutDir && e.Status == contract.Ready {
				if obj, ok := s.Object(e.Key); ok {
					at := contract.Row{Spans: e.Spans[:len(e.Spans)-1]}.Bytes()
					obj[at] = ^obj[at]
					s.Set(e.Key, obj)
				}
			}
			return e.Status
		})
		return memSubject(d, d, s), nil
	}}
}
