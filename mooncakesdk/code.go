package mooncakesdk

import "strconv"

// Code is one answer of the store: zero, a byte count, or a negative
// error code from Mooncake's ErrorCode enum. The C ABI writes a put's and
// an exists-check's per-key answers as C int and a get's as int64_t, so
// Code is 64 bits wide and holds every one of them unchanged.
type Code int64

// The store's codes. Names follow Mooncake's ErrorCode enumerators
// (types.h); the comment says what each means to a caller of the batch
// calls.
const (
	OK            Code = 0  // success; a put answers it also for a key that already existed, one another put is writing, and a repeated key's later copies
	InternalError Code = -1 // INTERNAL_ERROR, or the C wrapper's own -1 (NULL argument, escaped exception): indistinguishable

	BufferOverflow Code = -10 // BUFFER_OVERFLOW

	ShardIndexOutOfRange Code = -100 // SHARD_INDEX_OUT_OF_RANGE
	SegmentNotFound      Code = -101 // SEGMENT_NOT_FOUND
	SegmentAlreadyExists Code = -102 // SEGMENT_ALREADY_EXISTS
	ClientNotFound       Code = -103 // CLIENT_NOT_FOUND

	NoAvailableHandle Code = -200 // NO_AVAILABLE_HANDLE: the pool is full (or cannot meet the replica policy)
	InvalidVersion    Code = -300 // INVALID_VERSION
	InvalidKey        Code = -400 // INVALID_KEY
	WriteFail         Code = -500 // WRITE_FAIL

	InvalidParams Code = -600 // INVALID_PARAMS: e.g. a get into a buffer smaller than the object (nothing written)
	IllegalClient Code = -601 // ILLEGAL_CLIENT: e.g. the end of a put overtaken (after the discard timeout) by another client's put

	InvalidWrite               Code = -700  // INVALID_WRITE
	InvalidRead                Code = -701  // INVALID_READ
	InvalidReplica             Code = -702  // INVALID_REPLICA
	ReplicaIsNotReady          Code = -703  // REPLICA_IS_NOT_READY: a put of the key is in flight
	ObjectNotFound             Code = -704  // OBJECT_NOT_FOUND: never stored, or vanished (evicted, its segment's client destroyed or silent past client_ttl)
	ObjectAlreadyExists        Code = -705  // OBJECT_ALREADY_EXISTS: never seen from batch put (it answers 0)
	ObjectHasLease             Code = -706  // OBJECT_HAS_LEASE
	LeaseExpired               Code = -707  // LEASE_EXPIRED: a get's buffer was written, but after the read lease ran out
	ObjectHasReplicationTask   Code = -708  // OBJECT_HAS_REPLICATION_TASK
	ObjectNoReplicationTask    Code = -709  // OBJECT_NO_REPLICATION_TASK
	ReplicaNotFound            Code = -710  // REPLICA_NOT_FOUND
	ReplicaAlreadyExists       Code = -711  // REPLICA_ALREADY_EXISTS
	ReplicaIsGone              Code = -712  // REPLICA_IS_GONE
	ReplicaNotInLocalMemory    Code = -713  // REPLICA_NOT_IN_LOCAL_MEMORY
	ObjectReplicaBusy          Code = -714  // OBJECT_REPLICA_BUSY
	TransferFail               Code = -800  // TRANSFER_FAIL: the transfer may still be running and touching the buffer (over TCP after 30 s, MC_TCP_STATUS_TIMEOUT_SEC)
	ChecksumMismatch           Code = -801  // CHECKSUM_MISMATCH
	RPCFail                    Code = -900  // RPC_FAIL
	RPCTimeout                 Code = -901  // RPC_TIMEOUT
	UnavailableInCurrentStatus Code = -1010 // UNAVAILABLE_IN_CURRENT_STATUS
	UnavailableInCurrentMode   Code = -1011 // UNAVAILABLE_IN_CURRENT_MODE
	NotSupported               Code = -1012 // NOT_SUPPORTED
	TenantQuotaExceeded        Code = -1700 // TENANT_QUOTA_EXCEEDED
	TenantNotRegistered        Code = -1701 // TENANT_NOT_REGISTERED
	TenantNotEmpty             Code = -1702 // TENANT_NOT_EMPTY
)

var codeNames = map[Code]string{
	OK:                         "OK",
	InternalError:              "INTERNAL_ERROR",
	BufferOverflow:             "BUFFER_OVERFLOW",
	ShardIndexOutOfRange:       "SHARD_INDEX_OUT_OF_RANGE",
	SegmentNotFound:            "SEGMENT_NOT_FOUND",
	SegmentAlreadyExists:       "SEGMENT_ALREADY_EXISTS",
	ClientNotFound:             "CLIENT_NOT_FOUND",
	NoAvailableHandle:          "NO_AVAILABLE_HANDLE",
	InvalidVersion:             "INVALID_VERSION",
	InvalidKey:                 "INVALID_KEY",
	WriteFail:                  "WRITE_FAIL",
	InvalidParams:              "INVALID_PARAMS",
	IllegalClient:              "ILLEGAL_CLIENT",
	InvalidWrite:               "INVALID_WRITE",
	InvalidRead:                "INVALID_READ",
	InvalidReplica:             "INVALID_REPLICA",
	ReplicaIsNotReady:          "REPLICA_IS_NOT_READY",
	ObjectNotFound:             "OBJECT_NOT_FOUND",
	ObjectAlreadyExists:        "OBJECT_ALREADY_EXISTS",
	ObjectHasLease:             "OBJECT_HAS_LEASE",
	LeaseExpired:               "LEASE_EXPIRED",
	ObjectHasReplicationTask:   "OBJECT_HAS_REPLICATION_TASK",
	ObjectNoReplicationTask:    "OBJECT_NO_REPLICATION_TASK",
	ReplicaNotFound:            "REPLICA_NOT_FOUND",
	ReplicaAlreadyExists:       "REPLICA_ALREADY_EXISTS",
	ReplicaIsGone:              "REPLICA_IS_GONE",
	ReplicaNotInLocalMemory:    "REPLICA_NOT_IN_LOCAL_MEMORY",
	ObjectReplicaBusy:          "OBJECT_REPLICA_BUSY",
	TransferFail:               "TRANSFER_FAIL",
	ChecksumMismatch:           "CHECKSUM_MISMATCH",
	RPCFail:                    "RPC_FAIL",
	RPCTimeout:                 "RPC_TIMEOUT",
	UnavailableInCurrentStatus: "UNAVAILABLE_IN_CURRENT_STATUS",
	UnavailableInCurrentMode:   "UNAVAILABLE_IN_CURRENT_MODE",
	NotSupported:               "NOT_SUPPORTED",
	TenantQuotaExceeded:        "TENANT_QUOTA_EXCEEDED",
	TenantNotRegistered:        "TENANT_NOT_REGISTERED",
	TenantNotEmpty:             "TENANT_NOT_EMPTY",
}

// String names the code the way Mooncake's logs do, with its number:
// "OBJECT_NOT_FOUND(-704)". A code without a name prints as "Code(-1234)";
// a positive code (a get's byte count) as "Code(4096)".
func (c Code) String() string {
	if name, ok := codeNames[c]; ok && c <= 0 {
		return name + "(" + strconv.FormatInt(int64(c), 10) + ")"
	}
	return "Code(" + strconv.FormatInt(int64(c), 10) + ")"
}

// Failed reports whether the code is one of the store's error codes
// (negative). Zero and byte counts are not failures.
func (c Code) Failed() bool { return c < 0 }
