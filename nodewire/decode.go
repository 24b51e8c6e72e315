package nodewire

import (
	"fmt"
	"math"
	"time"

	"github.com/kvshare/kvshare/contract"
)

// Decode decodes the body of a frame whose header is h. It checks the
// body's structure, not the node's policy: every field present, no byte
// left over, names well formed, values in their kind's range. An error
// is a *[FrameError] naming the field ("publish: group 2: names"), which
// wraps ErrProtocol, or ErrBadNames for names that are empty, decrease
// or differ in count from the rows. The message returned may alias body.
func Decode(h Header, body []byte) (Message, error) {
	r := &fields{b: body}
	name := h.Type.String()
	var m Message
	switch h.Type {
	case TypeHello:
		m = decodeHello(r)
	case TypeWelcome:
		m = decodeWelcome(r)
	case TypeLend:
		m = &Lend{SlotBytes: r.u64("lend: slot_bytes"), SlotCount: r.u32("lend: slot_count"), Regions: r.u32("lend: regions")}
	case TypeLent:
		m = decodeLent(r)
	case TypePublish:
		m = decodeTransfer(r, contract.PutDir, name)
	case TypeFetch:
		m = decodeTransfer(r, contract.GetDir, name)
	case TypeAccepted:
		m = &Accepted{}
	case TypeOutcome:
		m = decodeOutcome(r)
	case TypeQuiesced:
		m = &Quiesced{}
	case TypeLookup:
		m = decodeLookup(r)
	case TypePresence:
		m = decodePresence(r)
	case TypeCancel:
		c := &Cancel{Attempt: r.u64("cancel: attempt")}
		if r.err == nil && c.Attempt == 0 {
			r.fail(CodeProtocol, "cancel: attempt", "0, want a request id")
		}
		m = c
	case TypeReturn:
		m = &Return{Lend: r.u32("return: lend")}
	case TypeReturned:
		m = &Returned{}
	case TypeHeld:
		m = &Held{Bytes: r.u64("held: bytes")}
	case TypeStats:
		m = &Stats{}
	case TypeStatsReply:
		s := &StatsReply{}
		for i, c := range s.counters() {
			*c = r.u64(fmt.Sprintf("stats-reply: counter %d", i))
		}
		m = s
	case TypeClientGoodbye:
		m = &ClientGoodbye{Reason: r.str("client-goodbye: reason")}
	case TypeNodeGoodbye:
		m = decodeNodeGoodbye(r)
	case TypeRefused:
		m = decodeRefused(r)
	default:
		return nil, frameErr(CodeProtocol, "header: type", fmt.Sprintf("unknown type 0x%04x", uint16(h.Type)))
	}
	if err := r.done(name); err != nil {
		return nil, err
	}
	return m, nil
}

func decodeHello(r *fields) *Hello {
	m := &Hello{Version: r.u16("hello: version"), Engine: r.str("hello: engine")}
	if r.err == nil && (len(m.Engine) == 0 || len(m.Engine) > MaxEngineName) {
		r.fail(CodeProtocol, "hello: engine", "%d bytes, want 1 to %d", len(m.Engine), MaxEngineName)
	}
	m.Scope = r.str("hello: scope")
	return m
}

func decodeWelcome(r *fields) *Welcome {
	return &Welcome{
		Version:      r.u16("welcome: version"),
		NodePID:      r.u32("welcome: node_pid"),
		MaxFrame:     r.u32("welcome: max_frame"),
		MaxAttempts:  r.u32("welcome: max_attempts"),
		MaxRows:      r.u32("welcome: max_rows"),
		MaxLendBytes: r.u64("welcome: max_lend_bytes"),
	}
}

func decodeLent(r *fields) *Lent {
	m := &Lent{Lend: r.u32("lent: lend")}
	if r.err == nil && m.Lend == 0 {
		r.fail(CodeProtocol, "lent: lend", "0, want a lend id")
	}
	m.RegionStride = r.u64("lent: region_stride")
	if r.err == nil && (m.RegionStride == 0 || m.RegionStride%PageSize != 0) {
		r.fail(CodeProtocol, "lent: region_stride", "%d, want a positive multiple of %d", m.RegionStride, PageSize)
	}
	return m
}

func decodeTransfer(r *fields, dir contract.Direction, name string) *Transfer {
	m := &Transfer{Dir: dir, Lend: r.u32(name + ": lend")}
	d := r.u64(name + ": deadline_ns")
	if d > math.MaxInt64 {
		r.fail(CodeProtocol, name+": deadline_ns", "%d over 2^63-1", d)
	}
	m.Deadline = time.Duration(d)
	// A group takes at least 12 bytes (region, rows, names count).
	n := r.count(name+": groups", 12)
	if r.err != nil || n == 0 {
		return m
	}
	m.Groups = make([]Group, n)
	for i := range m.Groups {
		g := &m.Groups[i]
		field := fmt.Sprintf("%s: group %d", name, i)
		g.Region = r.u32(field + ": region")
		g.Slots = r.u32s(field + ": slots")
		g.Names = r.names(field + ": names")
		if r.err != nil {
			return m
		}
		if len(g.Names) != len(g.Slots) {
			r.fail(CodeBadNames, field+": names", "%d names for %d rows", len(g.Names), len(g.Slots))
			return m
		}
	}
	return m
}

func decodeOutcome(r *fields) *Outcome {
	m := &Outcome{Rows: u8sOf(r, "outcome: rows", contract.Cancelled)}
	m.FaultCode = Code(r.u16("outcome: fault_code"))
	m.Fault = r.str("outcome: fault")
	if r.err == nil && m.FaultCode == 0 && m.Fault != "" {
		r.fail(CodeProtocol, "outcome: fault", "text without a fault_code")
	}
	return m
}

func decodeLookup(r *fields) *Lookup {
	every := r.u8("lookup: every")
	if r.err == nil && every > 1 {
		r.fail(CodeProtocol, "lookup: every", "%d, want 0 or 1", every)
	}
	m := &Lookup{Every: every == 1}
	// A group takes at least 4 bytes (its names count).
	n := r.count("lookup: groups", 4)
	if r.err != nil || n == 0 {
		return m
	}
	m.Groups = make([][][]byte, n)
	for i := range m.Groups {
		m.Groups[i] = r.names(fmt.Sprintf("lookup: group %d: names", i))
	}
	return m
}

func decodePresence(r *fields) *Presence {
	m := &Presence{Rows: u8sOf(r, "presence: rows", contract.InFlight)}
	m.Bound = r.u32("presence: bound")
	if r.err == nil && uint64(m.Bound) > uint64(len(m.Rows)) {
		r.fail(CodeProtocol, "presence: bound", "%d over %d rows", m.Bound, len(m.Rows))
	}
	return m
}

func decodeNodeGoodbye(r *fields) *NodeGoodbye {
	m := &NodeGoodbye{Code: Code(r.u16("node-goodbye: code"))}
	if r.err == nil && m.Code == 0 {
		r.fail(CodeProtocol, "node-goodbye: code", "0, want a code")
	}
	m.Reason = r.str("node-goodbye: reason")
	m.HeldBytes = r.u64("node-goodbye: held_bytes")
	m.HeldLends = r.u32("node-goodbye: held_lends")
	return m
}

func decodeRefused(r *fields) *Refused {
	m := &Refused{Code: Code(r.u16("refused: code"))}
	if r.err == nil && m.Code == 0 {
		r.fail(CodeProtocol, "refused: code", "0, want a code")
	}
	m.Field = r.str("refused: field")
	m.Message = r.str("refused: message")
	return m
}

// u8sOf reads an array of u8 values of type T, each at most max.
func u8sOf[T ~uint8](r *fields, field string, max T) []T {
	p := r.u8s(field, uint8(max))
	if p == nil {
		return nil
	}
	vs := make([]T, len(p))
	for i, v := range p {
		vs[i] = T(v)
	}
	return vs
}
