"""kvshare_node: the Python client of the kvshare node.

An engine attaches to a node over its Unix socket, lends it staging
memory (a sealed memfd, mapped shared by both), and publishes, fetches
and looks up KV-cache rows through it, under the scope it declares
(:class:`Scope`: model, revision, dtype, layout, tenant); no byte of a
row crosses the socket. Only the standard library is used; numpy only
when present (a slot as an array).

    import kvshare_node

    with kvshare_node.connect("/run/kvshare/node.sock", "vllm-0") as c:
        with c.lend(slot_bytes=256 << 10, slot_count=512, regions=32) as lend:
            lend.slot(0, 7)[:] = kv_bytes
            a = lend.publish([(0, [7], [b"prefix/0"])])
            a.outcome(timeout=5)          # what each row became
            a.wait_quiesced(timeout=5)    # the slots may be reused
"""

from . import wire
from .attempt import Attempt, Outcome, Status
from .client import EXIT_GRACE, Client, CloseReport, Presence, connect
from .errors import (
    BadLendError,
    BadNamesError,
    BadScopeError,
    BusyError,
    ClosedError,
    DeadlineError,
    Evidence,
    ForkedError,
    HeldError,
    InvalidNameError,
    InvalidPrefixError,
    InvalidScopeError,
    KVShareError,
    LimitError,
    NodeError,
    NodeLostError,
    NoEvidenceError,
    NotAllowedError,
    OutOfRangeError,
    ProtocolError,
    ScopeError,
    ShuttingDownError,
    SlowReaderError,
    StoreError,
    TenantLimitError,
    TenantNotAllowedError,
    UnknownCodeError,
    UnknownLendError,
    VersionError,
    error_for_code,
)
from .lend import Lend
from .scope import Scope, unscoped_key
from .wire import Group

__version__ = "0.1.0"

__all__ = [
    "wire", "connect", "Client", "Scope", "unscoped_key", "CloseReport", "Presence", "Lend", "Attempt", "Outcome", "Status", "Group",
    "EXIT_GRACE", "Evidence", "error_for_code",
    "KVShareError", "NodeError", "ProtocolError", "VersionError", "NotAllowedError", "BadLendError", "LimitError",
    "UnknownLendError", "OutOfRangeError", "BadNamesError", "BusyError", "ShuttingDownError", "ScopeError",
    "DeadlineError", "StoreError", "SlowReaderError", "BadScopeError", "TenantNotAllowedError", "TenantLimitError",
    "UnknownCodeError", "ClosedError", "ForkedError",
    "HeldError", "NodeLostError", "NoEvidenceError", "InvalidScopeError", "InvalidPrefixError", "InvalidNameError",
]
