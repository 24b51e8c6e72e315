package mooncakesdk

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestCodeString(t *testing.T) {
	for code, want := range map[Code]string{
		OK:                  "OK(0)",
		InternalError:       "INTERNAL_ERROR(-1)",
		NoAvailableHandle:   "NO_AVAILABLE_HANDLE(-200)",
		InvalidParams:       "INVALID_PARAMS(-600)",
		InvalidReplica:      "INVALID_REPLICA(-702)",
		ReplicaIsNotReady:   "REPLICA_IS_NOT_READY(-703)",
		ObjectNotFound:      "OBJECT_NOT_FOUND(-704)",
		ObjectAlreadyExists: "OBJECT_ALREADY_EXISTS(-705)",
		ObjectHasLease:      "OBJECT_HAS_LEASE(-706)",
		LeaseExpired:        "LEASE_EXPIRED(-707)",
		TransferFail:        "TRANSFER_FAIL(-800)",
		ChecksumMismatch:    "CHECKSUM_MISMATCH(-801)",
		RPCFail:             "RPC_FAIL(-900)",
		RPCTimeout:          "RPC_TIMEOUT(-901)",
		TenantNotEmpty:      "TENANT_NOT_EMPTY(-1702)",
		-1234:               "Code(-1234)",
		4096:                "Code(4096)",
	} {
		assert.Equal(t, want, code.String())
	}
}

func TestCodeFailed(t *testing.T) {
	assert.False(t, OK.Failed())
	assert.False(t, Code(1<<20).Failed(), "a byte count is not a failure")
	assert.True(t, ObjectNotFound.Failed())
	assert.True(t, InternalError.Failed())
}

func TestCallErrorMatchesErrCallFailed(t *testing.T) {
	err := error(&CallError{Func: "mooncake_store_setup", Code: InvalidParams})
	assert.ErrorIs(t, err, ErrCallFailed)
	assert.NotErrorIs(t, err, ErrSetup)
	assert.Equal(t, "mooncakesdk: mooncake_store_setup answered INVALID_PARAMS(-600)", err.Error())
}
