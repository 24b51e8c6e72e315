package hostmem

import (
	"fmt"
	"math"
)

// Geometry is the shape of the memory to map: Regions regions, each of
// SlotCount slots of SlotBytes bytes.
type Geometry struct {
	// SlotBytes is the size of one slot (one row): at least 1.
	SlotBytes int64
	// SlotCount is the number of slots of each region: at least 1.
	SlotCount int
	// Regions is the number of regions; 0 means 1.
	Regions int
}

// check refuses a geometry that cannot be mapped, naming the field, and
// returns the bytes of one region rounded up to whole pages of pageSize,
// and the number of regions.
func (g Geometry) check(pageSize int64) (regionLen int64, regions int, err error) {
	regions = g.Regions
	if regions == 0 {
		regions = 1
	}
	switch {
	case g.SlotBytes <= 0:
		return 0, 0, fmt.Errorf("%w: Geometry.SlotBytes is %d, want at least 1", ErrGeometry, g.SlotBytes)
	case g.SlotCount <= 0:
		return 0, 0, fmt.Errorf("%w: Geometry.SlotCount is %d, want at least 1", ErrGeometry, g.SlotCount)
	case regions < 0:
		return 0, 0, fmt.Errorf("%w: Geometry.Regions is %d, want 0 (one) or more", ErrGeometry, g.Regions)
	case g.SlotBytes > math.MaxInt64/int64(g.SlotCount):
		return 0, 0, fmt.Errorf("%w: Geometry.SlotCount %d × SlotBytes %d overflows", ErrGeometry, g.SlotCount, g.SlotBytes)
	}
	bytes := g.SlotBytes * int64(g.SlotCount)
	if bytes > math.MaxInt64-pageSize {
		return 0, 0, fmt.Errorf("%w: a region of %d bytes overflows when rounded up to whole pages", ErrGeometry, bytes)
	}
	regionLen = (bytes + pageSize - 1) / pageSize * pageSize
	if regionLen > math.MaxInt/int64(regions) || regionLen*int64(regions) > math.MaxInt {
		return 0, 0, fmt.Errorf("%w: Geometry.Regions %d × %d bytes overflows", ErrGeometry, regions, regionLen)
	}
	return regionLen, regions, nil
}
