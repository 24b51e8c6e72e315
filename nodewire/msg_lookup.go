package nodewire

import "github.com/kvshare/kvshare/contract"

// Lookup asks which names the store holds, in groups (one per layer,
// say). Every asks about every row; without it the node may stop asking
// a group after its first row that is not Present.
type Lookup struct {
	Every  bool
	Groups [][][]byte
}

// Presence answers a lookup: each name's presence, in lookup order, and
// the bound: the minimum over groups of each group's Present prefix.
type Presence struct {
	Rows  []contract.Presence
	Bound uint32
}

func (*Lookup) Type() Type   { return TypeLookup }
func (*Presence) Type() Type { return TypePresence }

func (m *Lookup) AppendBody(b []byte) []byte {
	every := uint8(0)
	if m.Every {
		every = 1
	}
	b = appendU8(b, every)
	b = appendU32(b, uint32(len(m.Groups)))
	for _, g := range m.Groups {
		b = appendNames(b, g)
	}
	return b
}

func (m *Presence) AppendBody(b []byte) []byte {
	b = appendU8s(b, m.Rows)
	return appendU32(b, m.Bound)
}
