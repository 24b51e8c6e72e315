package mooncakedrv

import (
	"errors"
	"fmt"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/mooncakesdk"
)

// The fault matrix's rule: what the verdict table (docs/design/mooncakedrv.md,
// section "The verdict table") says a row's verdict and an operation's access
// must be, given what the store answered for each of its keys. It is
// written apart from verdict.go on purpose, as a table of the design
// record's sentences, so that the real store's answers check the
// driver's mapping rather than repeat it.

// ruleRow is what the rule decides for one row: the status it must end
// with, whether its answers leave a transfer that may still run
// (unprovable), and whether its part's calls failed as a whole (then
// every row of the part is Fault).
type ruleRow struct {
	status     contract.RowStatus
	unprovable bool
	wholeCall  bool
	why        string // the answers, for messages and the matrix
}

// wholeCallUnprovable: a whole-call failure leaves the access unprovable
// unless it reached nothing (an argument error, a destroyed client).
func wholeCallUnprovable(err error) bool {
	return !errors.Is(err, mooncakesdk.ErrInvalidArgument) && !errors.Is(err, mooncakesdk.ErrClosed)
}

// rulePut decides a put row from its key's answers: the put, then the
// exists-check confirming a 0. No answer: the row never reached the
// store (Cancelled).
func rulePut(ans []sdkAnswer) ruleRow {
	if len(ans) == 0 {
		return ruleRow{status: contract.Cancelled, why: "no call"}
	}
	first := ans[0]
	if first.err != nil {
		return ruleRow{status: contract.Fault, unprovable: wholeCallUnprovable(first.err), wholeCall: true, why: first.kind.String() + " failed"}
	}
	if first.kind == kindExists { // a key left open: the exists-check alone decides
		if first.code == 1 {
			return ruleRow{status: contract.Ready, why: "left open, exists 1"}
		}
		return ruleRow{status: contract.Declined, why: fmt.Sprintf("left open, exists %d", first.code)}
	}
	why := "put " + codeName(first.code)
	switch mooncakesdk.Code(first.code) {
	case mooncakesdk.OK:
		if len(ans) < 2 || ans[1].kind != kindExists {
			return ruleRow{status: contract.Fault, why: why + ", no exists-check"}
		}
		e := ans[1]
		switch {
		case e.err != nil:
			return ruleRow{status: contract.Fault, unprovable: wholeCallUnprovable(e.err), wholeCall: true, why: why + ", exists failed"}
		case e.code == 1:
			return ruleRow{status: contract.Ready, why: why + ", exists 1"}
		case e.code == 0:
			return ruleRow{status: contract.NotReady, why: why + ", exists 0"}
		}
		return ruleRow{status: contract.Fault, why: fmt.Sprintf("%s, exists %s", why, codeName(e.code))}
	case mooncakesdk.NoAvailableHandle:
		return ruleRow{status: contract.Declined, why: why}
	case mooncakesdk.TransferFail:
		return ruleRow{status: contract.Fault, unprovable: true, why: why}
	}
	return ruleRow{status: contract.Fault, why: why} // -900/-901/-1 leave the key open; others too are Fault
}

// ruleGet decides a get row of size bytes from its key's answers: the
// get, and a reread after LEASE_EXPIRED.
func ruleGet(ans []sdkAnswer, size int64) ruleRow {
	if len(ans) == 0 {
		return ruleRow{status: contract.Cancelled, why: "no call"}
	}
	r := getRule(ans[0], size)
	if mooncakesdk.Code(ans[0].code) != mooncakesdk.LeaseExpired || ans[0].err != nil {
		return r
	}
	if len(ans) < 2 {
		return ruleRow{status: contract.Fault, why: r.why + ", no reread"}
	}
	again := getRule(ans[1], size)
	again.why = r.why + ", reread " + again.why
	if again.status != contract.Ready && !again.unprovable {
		again.status = contract.Fault // the slot was written by the first read
	}
	return again
}

// getRule decides a row of size bytes from one get answer.
func getRule(a sdkAnswer, size int64) ruleRow {
	if a.err != nil {
		return ruleRow{status: contract.Fault, unprovable: wholeCallUnprovable(a.err), wholeCall: true, why: "get failed"}
	}
	c := mooncakesdk.Code(a.code)
	why := "get " + codeName(a.code)
	switch {
	case a.code == size && size > 0:
		return ruleRow{status: contract.Ready, why: "get whole"}
	case a.code > 0:
		return ruleRow{status: contract.Fault, why: fmt.Sprintf("get short (%d bytes)", a.code)}
	case c == mooncakesdk.ObjectNotFound:
		return ruleRow{status: contract.Miss, why: why}
	case c == mooncakesdk.ReplicaIsNotReady:
		return ruleRow{status: contract.NotReady, why: why}
	case c == mooncakesdk.LeaseExpired:
		return ruleRow{status: contract.Pending, why: why}
	case c == mooncakesdk.TransferFail:
		return ruleRow{status: contract.Fault, unprovable: true, why: why}
	}
	return ruleRow{status: contract.Fault, why: why}
}

// ruleOp decides an operation (one part: one put or get call and what
// follows it) from its rows' rules: a whole-call failure makes every
// row Fault; the access is Unprovable if any row's answers leave a
// transfer that may still run, else Ended.
func ruleOp(rows []ruleRow) (statuses []contract.RowStatus, access contract.Access) {
	whole, unprovable := false, false
	for _, r := range rows {
		whole = whole || r.wholeCall
		unprovable = unprovable || r.unprovable
	}
	for _, r := range rows {
		s := r.status
		if whole {
			s = contract.Fault
		}
		statuses = append(statuses, s)
	}
	if unprovable {
		return statuses, contract.Unprovable
	}
	return statuses, contract.Ended
}

// codeName names a store answer: a failing code by its name, 0 and
// byte counts as numbers.
func codeName(code int64) string {
	if code < 0 {
		return mooncakesdk.Code(code).String()
	}
	return fmt.Sprint(code)
}

// String is the call's name.
func (k sdkKind) String() string { return string(k) }
