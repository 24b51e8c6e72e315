package contract

import "fmt"

// RowStatus is a driver's verdict on one row of a call. Pending is the only
// status that changes; every other one is final.
type RowStatus uint8

const (
	// Pending: the row has no verdict yet.
	Pending RowStatus = iota
	// Ready: for a get, the whole object is in the slot. For a put, a
	// complete, readable object stands behind the key (it may be one an
	// earlier writer stored); a store's "already exists" alone never
	// counts.
	Ready
	// Miss: no object has the key. A get has not touched the slot.
	Miss
	// NotReady: the store holds the key without a readable complete
	// replica (a get has not touched the slot), or another put of this
	// driver is still writing the key. RPC, transfer and integrity
	// failures are Fault, never NotReady.
	NotReady
	// Declined: the store refused the row on its own terms (pool full),
	// or this driver will never write that key again, because an earlier
	// put of its own may still hold it.
	Declined
	// Fault: anything else went wrong. A get's slot may have been
	// written, so its contents are undefined.
	Fault
	// Cancelled: the row never ran. Nothing touched its memory on its
	// behalf.
	Cancelled

	// RowStatusCount is the number of statuses, for arrays indexed by
	// status and for loops over them:
	// for s := Ready; s < RowStatusCount; s++.
	RowStatusCount RowStatus = Cancelled + 1
)

var rowStatusNames = [...]string{"pending", "ready", "miss", "not-ready", "declined", "fault", "cancelled"}

// String returns the status in lower case ("not-ready").
func (s RowStatus) String() string {
	if int(s) < len(rowStatusNames) {
		return rowStatusNames[s]
	}
	return fmt.Sprintf("RowStatus(%d)", uint8(s))
}

// Final reports whether s is a verdict (anything but Pending) of a known
// value.
func (s RowStatus) Final() bool { return s > Pending && s <= Cancelled }

// Access is what an operation can say about its access to the memory of
// its rows.
type Access uint8

const (
	// Open: the store may still read or write the rows' memory.
	Open Access = iota
	// Ended: proven that the store will never touch the memory again on
	// this operation's behalf.
	Ended
	// Unprovable: the driver can never prove the access ended (a transfer
	// may still be running after the store gave up on it). Terminal: the
	// memory must be kept for good.
	Unprovable
)

// String returns "open", "ended" or "unprovable".
func (a Access) String() string {
	switch a {
	case Open:
		return "open"
	case Ended:
		return "ended"
	case Unprovable:
		return "unprovable"
	}
	return fmt.Sprintf("Access(%d)", uint8(a))
}

// OpState is a snapshot of an [Operation]: one status per row of the batch,
// in batch order, and the access state.
type OpState struct {
	Rows   []RowStatus
	Access Access
}

// Settled reports whether every row has a final verdict.
func (s OpState) Settled() bool {
	for _, r := range s.Rows {
		if !r.Final() {
			return false
		}
	}
	return true
}
