package contract

// Outcome is what an attempt delivered: one flag per row of the view, in
// view order (groups in order, rows in order within a group), and the
// fault that stopped it, if any. A nil Fault with some rows undelivered is
// normal: rows can be missing, not ready or declined without anything
// going wrong.
//
// The Delivered slice belongs to the attempt; treat it as read-only.
type Outcome struct {
	Delivered []bool
	Fault     error
}

// Prefix returns the number of leading delivered rows: how much of the
// view can be reused as a prefix (a KV cache prefix is only as long as its
// first gap).
func (o Outcome) Prefix() int {
	for i, d := range o.Delivered {
		if !d {
			return i
		}
	}
	return len(o.Delivered)
}
