package gpuroundtrip

import "encoding/binary"

// NameBytes is the length of a block's name.
const NameBytes = 16

// Request is one request's KV blocks: every block of every layer of a
// lender. Its ID stands in for the block hashes an engine would use:
// block b of layer l is named by ID, l and b (see [Request.Name]), so
// two lenders name the same request's blocks alike.
type Request struct {
	ID uint64
}

// Name returns the name of the request's block in layer: the ID, the
// layer and the block, big-endian (8 + 4 + 4 bytes).
func (r Request) Name(layer, block int) []byte {
	return r.appendName(make([]byte, 0, NameBytes), layer, block)
}

func (r Request) appendName(dst []byte, layer, block int) []byte {
	dst = binary.BigEndian.AppendUint64(dst, r.ID)
	dst = binary.BigEndian.AppendUint32(dst, uint32(layer))
	return binary.BigEndian.AppendUint32(dst, uint32(block))
}
