package mooncakedrv

import (
	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/mooncakesdk"
)

// verdict is what one per-key answer of the store means for its row: the
// row's status (Pending when another SDK call must decide it), and what
// else the answer proves or leaves open.
type verdict struct {
	status contract.RowStatus
	// unprovable: the transfer may still touch the row's memory, so the
	// operation's access can never be proven ended.
	unprovable bool
	// confirm (put): the store answered 0, which proves nothing; the
	// row's fate is the exists-check's (1 Ready, else NotReady).
	confirm bool
	// leftOpen (put): the end of the put may still run at the master;
	// the driver never puts the key again.
	leftOpen bool
	// reread (get): the lease expired during the transfer; the row is
	// read once more and is Ready only if the reread is whole.
	reread bool
}

// putVerdict maps a batch_put_from answer (the verdict table of
// docs/design/mooncakedrv.md, section "The verdict table").
func putVerdict(code mooncakesdk.Code) verdict {
	switch code {
	case mooncakesdk.OK:
		return verdict{confirm: true}
	case mooncakesdk.NoAvailableHandle:
		return verdict{status: contract.Declined}
	case mooncakesdk.TransferFail:
		return verdict{status: contract.Fault, unprovable: true}
	case mooncakesdk.RPCFail, mooncakesdk.RPCTimeout, mooncakesdk.InternalError:
		return verdict{status: contract.Fault, leftOpen: true}
	}
	// -600 and everything else, a positive answer included (a put answers
	// 0 or a code): Fault, naming the code.
	return verdict{status: contract.Fault}
}

// confirmVerdict maps the exists-check that confirms a put's 0.
func confirmVerdict(exists int32) contract.RowStatus {
	if exists == 1 {
		return contract.Ready
	}
	if exists == 0 {
		return contract.NotReady
	}
	return contract.Fault // the check failed: nothing is proven either way
}

// leftOpenVerdict maps the exists-check of a key left open, which this
// driver never puts again: Ready if a complete object stands behind it,
// else Declined.
func leftOpenVerdict(exists int32) contract.RowStatus {
	if exists == 1 {
		return contract.Ready
	}
	return contract.Declined
}

// getVerdict maps a batch_get_into answer for a row of size bytes (the
// verdict table of docs/design/mooncakedrv.md). Only the whole
// object is Ready: a shorter one landed in the slot's head.
func getVerdict(code mooncakesdk.Code, size int64) verdict {
	if code == mooncakesdk.Code(size) && size > 0 {
		return verdict{status: contract.Ready}
	}
	switch code {
	case mooncakesdk.ObjectNotFound:
		return verdict{status: contract.Miss}
	case mooncakesdk.ReplicaIsNotReady:
		return verdict{status: contract.NotReady}
	case mooncakesdk.LeaseExpired:
		return verdict{reread: true}
	case mooncakesdk.TransferFail:
		return verdict{status: contract.Fault, unprovable: true}
	}
	// A count short of the row (a shorter object, in the slot's head) or
	// past it, -600 (a longer object, nothing written), -900/-901
	// (nothing transferred), 0 and every other code: Fault, naming the
	// code.
	return verdict{status: contract.Fault}
}

// rereadVerdict maps the one reread of a row whose lease expired: Ready
// only if whole, otherwise Fault (never Miss or NotReady: the slot was
// already written by the first read).
func rereadVerdict(code mooncakesdk.Code, size int64) verdict {
	v := getVerdict(code, size)
	if v.status == contract.Ready || v.unprovable {
		return v
	}
	return verdict{status: contract.Fault}
}
