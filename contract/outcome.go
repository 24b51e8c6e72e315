package contract

// Outcome is what an attempt delivered: each row's final status and
// whether it was delivered, in view order (groups in order, rows in order
// within a group), and the fault that stopped the attempt, if any. A nil
// Fault with some rows undelivered is normal: rows can be missing, not
// ready or declined without anything going wrong, and each row's status
// says which, so that a lease holder can act per row (ask again soon for
// NotReady, back off for Declined, compute a Miss).
//
// The slices belong to the attempt; treat them as read-only.
type Outcome struct {
	// Delivered is true for each row that arrived (its status is Ready).
	Delivered []bool
	// Rows is each row's final status. A row never handed to a driver is
	// Cancelled; Pending appears only in an outcome forced before the
	// row's verdict came (the backend's Shutdown, or the attempt's
	// deadline), when Fault says so.
	Rows []RowStatus
	// Fault is what stopped the attempt, or nil.
	Fault error
}

// Prefix returns the number of leading delivered rows: how much of the
// view can be reused as a prefix (a KV cache prefix is only as long as its
// first gap). For a view of one group per layer, use [View.ResumeBound].
func (o Outcome) Prefix() int {
	for i, d := range o.Delivered {
		if !d {
			return i
		}
	}
	return len(o.Delivered)
}

// Count returns how many rows ended with status s: Count(Ready) is the
// rows delivered, Count(Miss) those the store does not have.
func (o Outcome) Count(s RowStatus) int {
	n := 0
	for _, r := range o.Rows {
		if r == s {
			n++
		}
	}
	return n
}
