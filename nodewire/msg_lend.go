package nodewire

// Lend lends the node one memfd, carried by the frame (the only frame
// that carries an fd): regions of slot_count slots of slot_bytes bytes,
// laid out as [Stride] says.
type Lend struct {
	SlotBytes uint64
	SlotCount uint32
	Regions   uint32
}

// Lent accepts a lend: its id (non-zero, the node's) and the stride the
// node computed, which the engine checks against its own.
type Lent struct {
	Lend         uint32
	RegionStride uint64
}

// Return asks the node to give a lend back.
type Return struct {
	Lend uint32
}

// Returned answers a return: the node unmapped the lend; the engine may
// free or reuse its memory.
type Returned struct{}

// Held answers a return the node cannot complete: access to Bytes of the
// lend could not be proven ended, so the node keeps its mapping, counted.
// The engine must not reuse that memory.
type Held struct {
	Bytes uint64
}

func (*Lend) Type() Type     { return TypeLend }
func (*Lent) Type() Type     { return TypeLent }
func (*Return) Type() Type   { return TypeReturn }
func (*Returned) Type() Type { return TypeReturned }
func (*Held) Type() Type     { return TypeHeld }

func (m *Lend) AppendBody(b []byte) []byte {
	b = appendU64(b, m.SlotBytes)
	b = appendU32(b, m.SlotCount)
	return appendU32(b, m.Regions)
}

func (m *Lent) AppendBody(b []byte) []byte {
	b = appendU32(b, m.Lend)
	return appendU64(b, m.RegionStride)
}

func (m *Return) AppendBody(b []byte) []byte { return appendU32(b, m.Lend) }

func (*Returned) AppendBody(b []byte) []byte { return b }

func (m *Held) AppendBody(b []byte) []byte { return appendU64(b, m.Bytes) }
