package mooncakedrv

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/mooncakesdk"
)

// The verdict table (docs/design/mooncakedrv.md, section "The verdict
// table"), one case per row.
func TestPutVerdict(t *testing.T) {
	cases := []struct {
		code mooncakesdk.Code
		want verdict
	}{
		{mooncakesdk.OK, verdict{confirm: true}},
		{mooncakesdk.NoAvailableHandle, verdict{status: contract.Declined}},
		{mooncakesdk.InvalidParams, verdict{status: contract.Fault}},
		{mooncakesdk.TransferFail, verdict{status: contract.Fault, unprovable: true}},
		{mooncakesdk.RPCFail, verdict{status: contract.Fault, leftOpen: true}},
		{mooncakesdk.RPCTimeout, verdict{status: contract.Fault, leftOpen: true}},
		{mooncakesdk.InternalError, verdict{status: contract.Fault, leftOpen: true}},
		{mooncakesdk.ChecksumMismatch, verdict{status: contract.Fault}},
		{mooncakesdk.ObjectAlreadyExists, verdict{status: contract.Fault}},
		{mooncakesdk.TenantQuotaExceeded, verdict{status: contract.Fault}},
		{mooncakesdk.Code(-12345), verdict{status: contract.Fault}},
		{mooncakesdk.Code(4096), verdict{status: contract.Fault}},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, putVerdict(c.code), "put answered %v", c.code)
	}
}

func TestGetVerdict(t *testing.T) {
	const size = 4096
	cases := []struct {
		code mooncakesdk.Code
		want verdict
	}{
		{mooncakesdk.Code(size), verdict{status: contract.Ready}},
		{mooncakesdk.Code(size - 1), verdict{status: contract.Fault}}, // a shorter object: in the slot's head
		{mooncakesdk.Code(1), verdict{status: contract.Fault}},
		{mooncakesdk.Code(size + 1), verdict{status: contract.Fault}}, // no store answers more than the buffer
		{mooncakesdk.OK, verdict{status: contract.Fault}},
		{mooncakesdk.InvalidParams, verdict{status: contract.Fault}}, // a longer object: nothing written
		{mooncakesdk.ObjectNotFound, verdict{status: contract.Miss}},
		{mooncakesdk.ReplicaIsNotReady, verdict{status: contract.NotReady}},
		{mooncakesdk.LeaseExpired, verdict{reread: true}},
		{mooncakesdk.TransferFail, verdict{status: contract.Fault, unprovable: true}},
		{mooncakesdk.RPCFail, verdict{status: contract.Fault}},
		{mooncakesdk.RPCTimeout, verdict{status: contract.Fault}},
		{mooncakesdk.InvalidReplica, verdict{status: contract.Fault}},
		{mooncakesdk.ChecksumMismatch, verdict{status: contract.Fault}},
		{mooncakesdk.InternalError, verdict{status: contract.Fault}},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, getVerdict(c.code, size), "get answered %v", c.code)
	}
	// 0 bytes read proves nothing arrived, even for a row of 0 bytes.
	assert.Equal(t, verdict{status: contract.Fault}, getVerdict(mooncakesdk.OK, 0))
}

func TestRereadVerdict(t *testing.T) {
	const size = 4096
	cases := []struct {
		code mooncakesdk.Code
		want verdict
	}{
		{mooncakesdk.Code(size), verdict{status: contract.Ready}},
		{mooncakesdk.LeaseExpired, verdict{status: contract.Fault}},   // never a second reread
		{mooncakesdk.ObjectNotFound, verdict{status: contract.Fault}}, // the slot was written already
		{mooncakesdk.ReplicaIsNotReady, verdict{status: contract.Fault}},
		{mooncakesdk.Code(size / 2), verdict{status: contract.Fault}},
		{mooncakesdk.TransferFail, verdict{status: contract.Fault, unprovable: true}},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, rereadVerdict(c.code, size), "reread answered %v", c.code)
	}
}

func TestConfirmAndLeftOpenVerdicts(t *testing.T) {
	assert.Equal(t, contract.Ready, confirmVerdict(1))
	assert.Equal(t, contract.NotReady, confirmVerdict(0))
	assert.Equal(t, contract.Fault, confirmVerdict(int32(mooncakesdk.RPCFail)))
	assert.Equal(t, contract.Ready, leftOpenVerdict(1))
	assert.Equal(t, contract.Declined, leftOpenVerdict(0))
	assert.Equal(t, contract.Declined, leftOpenVerdict(int32(mooncakesdk.RPCTimeout)))
}

func TestLedgerNeverForgets(t *testing.T) {
	var l ledger
	batchKeys := "kv/v1/abkv/v1/cd" // a batch's keys share one buffer
	key := batchKeys[:8]
	assert.False(t, l.has(key))
	assert.True(t, l.add(key))
	assert.True(t, l.has("kv/v1/ab"))
	assert.False(t, l.add("kv/v1/ab"))
	assert.Equal(t, 1, l.len())
	for k := range l.keys {
		assert.NotSame(t, unsafe.StringData(batchKeys), unsafe.StringData(k), "the ledger keeps its own copy, never the batch's buffer")
	}
}
