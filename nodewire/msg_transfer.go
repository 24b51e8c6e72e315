package nodewire

import (
	"time"

	"github.com/kvshare/kvshare/contract"
)

// Transfer is a publish (Dir contract.PutDir: slots to the store) or a
// fetch (contract.GetDir: the store to slots) of rows of one lend. The
// node answers Accepted or Refused, then Outcome, then Quiesced.
type Transfer struct {
	Dir  contract.Direction
	Lend uint32
	// Deadline is relative to the node's receipt of the frame; 0 is none.
	// A negative one (already passed) is sent as 1 ns.
	Deadline time.Duration
	Groups   []Group
}

// Group is a run of rows in one region of the lend: a slot and a name
// per row (names are non-empty).
type Group struct {
	Region uint32
	Slots  []uint32
	Names  [][]byte
}

// Accepted answers a publish or fetch the node took: from now on the
// request id names the attempt.
type Accepted struct{}

// Outcome is an attempt's outcome: each row's status, in view order, and
// the fault that stopped it (FaultCode 0 and Fault "" for none).
type Outcome struct {
	Rows      []contract.RowStatus
	FaultCode Code
	Fault     string
}

// Quiesced says access to the attempt's slots ended: the engine may
// reuse them. It is never sent when that cannot be proven.
type Quiesced struct{}

// Cancel asks the node to stop an attempt (named by its request id). It
// has no reply: the attempt's outcome says what was cancelled.
type Cancel struct {
	Attempt uint64
}

// Type returns TypePublish for a put, TypeFetch for a get, 0 otherwise.
func (m *Transfer) Type() Type {
	switch m.Dir {
	case contract.PutDir:
		return TypePublish
	case contract.GetDir:
		return TypeFetch
	}
	return 0
}

func (*Accepted) Type() Type { return TypeAccepted }
func (*Outcome) Type() Type  { return TypeOutcome }
func (*Quiesced) Type() Type { return TypeQuiesced }
func (*Cancel) Type() Type   { return TypeCancel }

func (m *Transfer) AppendBody(b []byte) []byte {
	b = appendU32(b, m.Lend)
	d := m.Deadline
	if d < 0 {
		d = 1
	}
	b = appendU64(b, uint64(d))
	b = appendU32(b, uint32(len(m.Groups)))
	for _, g := range m.Groups {
		b = appendU32(b, g.Region)
		b = appendU32s(b, g.Slots)
		b = appendNames(b, g.Names)
	}
	return b
}

func (*Accepted) AppendBody(b []byte) []byte { return b }

func (m *Outcome) AppendBody(b []byte) []byte {
	b = appendU8s(b, m.Rows)
	b = appendU16(b, uint16(m.FaultCode))
	return appendStr(b, m.Fault)
}

func (*Quiesced) AppendBody(b []byte) []byte { return b }

func (m *Cancel) AppendBody(b []byte) []byte { return appendU64(b, m.Attempt) }
