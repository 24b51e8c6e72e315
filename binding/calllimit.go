package binding

// CallLimit returns the most rows, and the bytes of their slots, that one
// driver call of the backend may pin in region: rows is the backend's and
// the driver's caps (Config.MaxRowsPerCall, Config.MaxBytesPerCall,
// Capabilities.MaxRowsPerOp) applied to the region's slot size, bounded
// by the region's slot count (no call pins more slots than the region
// has; with no cap at all, one call may pin the whole region), and bytes
// is rows × SlotBytes. A lease holder uses it to size what one call keeps
// lent until its access ends, which may be long after the outcome. A
// region out of range, or one the backend does not serve, gives 0, 0.
func (b *Backend) CallLimit(region int) (rows int, bytes int64) {
	r, served := b.regions.Region(region)
	if !served {
		return 0, 0
	}
	rows = b.cut.RowsPerCall(r.SlotBytes)
	if rows == 0 || rows > r.SlotCount {
		rows = r.SlotCount
	}
	return rows, int64(rows) * r.SlotBytes
}
