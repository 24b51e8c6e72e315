package nodewire

import (
	"fmt"
	"math"
)

// PageSize is the unit regions of a lend are rounded up to, whatever the
// page size of the machine.
const PageSize = 4096

// Stride returns the distance in bytes between the starts of two regions
// of a lend of slotCount slots of slotBytes bytes each:
// slotBytes × slotCount rounded up to a multiple of [PageSize]. Slot j of
// region i starts at i × stride + j × slotBytes. It fails, with an error
// wrapping [ErrBadLend], for a size or count that is not positive, or a
// stride beyond int64.
func Stride(slotBytes int64, slotCount int) (int64, error) {
	if slotBytes <= 0 {
		return 0, frameErr(CodeBadLend, "lend: slot_bytes", fmt.Sprintf("%d, want > 0", slotBytes))
	}
	if slotCount <= 0 {
		return 0, frameErr(CodeBadLend, "lend: slot_count", fmt.Sprintf("%d, want > 0", slotCount))
	}
	if slotBytes > (math.MaxInt64-(PageSize-1))/int64(slotCount) {
		return 0, frameErr(CodeBadLend, "lend: slot_bytes", fmt.Sprintf("%d × %d slots overflows", slotBytes, slotCount))
	}
	n := slotBytes * int64(slotCount)
	return (n + PageSize - 1) &^ (PageSize - 1), nil
}

// LendSize returns the least size in bytes of a lend's file: regions ×
// [Stride]. It fails as Stride does, and for regions that are not
// positive or a size beyond int64.
func LendSize(slotBytes int64, slotCount, regions int) (int64, error) {
	stride, err := Stride(slotBytes, slotCount)
	if err != nil {
		return 0, err
	}
	if regions <= 0 {
		return 0, frameErr(CodeBadLend, "lend: regions", fmt.Sprintf("%d, want > 0", regions))
	}
	if stride > math.MaxInt64/int64(regions) {
		return 0, frameErr(CodeBadLend, "lend: regions", fmt.Sprintf("%d regions of %d bytes overflows", regions, stride))
	}
	return stride * int64(regions), nil
}
