package nodewire

import "fmt"

// Version is the protocol version this package speaks.
const Version = 1

// Type is a frame's message type. Types an engine sends are 0x01–0x3F;
// types the node sends are 0x81–0xBF (the high bit set).
type Type uint16

// The message types of version 1.
const (
	TypeHello         Type = 0x01
	TypeLend          Type = 0x02
	TypePublish       Type = 0x03
	TypeFetch         Type = 0x04
	TypeLookup        Type = 0x05
	TypeCancel        Type = 0x06
	TypeReturn        Type = 0x07
	TypeStats         Type = 0x08
	TypeClientGoodbye Type = 0x09

	TypeWelcome     Type = 0x81
	TypeLent        Type = 0x82
	TypeAccepted    Type = 0x83
	TypeOutcome     Type = 0x84
	TypeQuiesced    Type = 0x85
	TypePresence    Type = 0x86
	TypeReturned    Type = 0x87
	TypeHeld        Type = 0x88
	TypeStatsReply  Type = 0x89
	TypeNodeGoodbye Type = 0x8A
	TypeRefused     Type = 0xBF
)

var typeNames = map[Type]string{
	TypeHello:         "hello",
	TypeLend:          "lend",
	TypePublish:       "publish",
	TypeFetch:         "fetch",
	TypeLookup:        "lookup",
	TypeCancel:        "cancel",
	TypeReturn:        "return",
	TypeStats:         "stats",
	TypeClientGoodbye: "client-goodbye",
	TypeWelcome:       "welcome",
	TypeLent:          "lent",
	TypeAccepted:      "accepted",
	TypeOutcome:       "outcome",
	TypeQuiesced:      "quiesced",
	TypePresence:      "presence",
	TypeReturned:      "returned",
	TypeHeld:          "held",
	TypeStatsReply:    "stats-reply",
	TypeNodeGoodbye:   "node-goodbye",
	TypeRefused:       "refused",
}

// String returns the type's name in lower case ("client-goodbye"), or
// "type 0x0042" for a type version 1 does not define.
func (t Type) String() string {
	if s, ok := typeNames[t]; ok {
		return s
	}
	return fmt.Sprintf("type 0x%04x", uint16(t))
}

// Known reports whether version 1 defines t.
func (t Type) Known() bool {
	_, ok := typeNames[t]
	return ok
}

// FromNode reports whether t is a type the node sends (0x81–0xBF).
func (t Type) FromNode() bool { return t&0x80 != 0 }

// CarriesFD reports whether a frame of type t must carry a file
// descriptor: only a lend does, and every other frame must carry none.
func (t Type) CarriesFD() bool { return t == TypeLend }
