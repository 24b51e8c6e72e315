package nodewire

import "math"

// maxNodeBodyFixed is the body of the largest frame the node sends
// whatever its limits: a refused with two strs of 65,535 bytes.
const maxNodeBodyFixed = 2 + 2*(2+math.MaxUint16)

// NodeBodyLimit returns the least body limit with which an engine reads
// every frame a node whose welcome says maxRows can send: the larger of
// a full refused and an outcome of maxRows rows with a full fault.
// Before the welcome, pass 0.
func NodeBodyLimit(maxRows uint32) uint32 {
	return uint32(min(uint64(maxNodeBodyFixed)+uint64(maxRows), math.MaxUint32))
}
