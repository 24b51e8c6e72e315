"""The client's exceptions.

Every error of the protocol's table (PROTOCOL.md §8) has one exception
class, named after the Go client's sentinel (``ErrBadLend`` is
:class:`BadLendError`).  The node's refusal of a request raises the class
of its code with ``refused`` true; input the client refuses before
sending anything raises the same class with ``refused`` false, so an
engine handles both alike.  A code this version does not know raises
:class:`UnknownCodeError`, carrying the number: a new code needs no new
client.
"""

from __future__ import annotations

import enum

__all__ = [
    "KVShareError",
    "NodeError",
    "ProtocolError",
    "VersionError",
    "NotAllowedError",
    "BadLendError",
    "LimitError",
    "UnknownLendError",
    "OutOfRangeError",
    "BadNamesError",
    "BusyError",
    "ShuttingDownError",
    "ScopeError",
    "DeadlineError",
    "StoreError",
    "SlowReaderError",
    "BadScopeError",
    "TenantNotAllowedError",
    "TenantLimitError",
    "UnknownCodeError",
    "ClosedError",
    "ForkedError",
    "HeldError",
    "NodeLostError",
    "NoEvidenceError",
    "InvalidScopeError",
    "InvalidPrefixError",
    "InvalidNameError",
    "Evidence",
    "error_for_code",
]


class KVShareError(Exception):
    """The base of every exception this package raises."""


class NodeError(KVShareError):
    """An error of the protocol's table: a refusal, a fault or a goodbye.

    ``code`` is its number (§8), ``field`` the field or limit at fault
    (``"lend.slot_bytes"``, ``"publish.groups[2].slots[7]"``),
    ``message`` a sentence for a person, and ``refused`` whether the node
    said it (false: the client refused before sending anything).
    """

    code: int = 0
    name: str = "unknown"

    def __init__(self, field: str = "", message: str = "", *, refused: bool = False, code: int | None = None) -> None:
        if code is not None:
            self.code = code
        self.field = field
        self.message = message
        self.refused = refused
        who = "refused by the node" if refused else "refused by the client"
        text = f"{self.name} ({who})"
        if field:
            text += f": {field}"
        if message:
            text += f": {message}"
        super().__init__(text)


class ProtocolError(NodeError):
    """A malformed or truncated frame, or a reply out of turn (code 1)."""

    code, name = 1, "protocol"


class VersionError(NodeError):
    """The hello's version is not the node's (code 2)."""

    code, name = 2, "version"


class NotAllowedError(NodeError):
    """The peer's uid is not on the node's allow-list (code 3)."""

    code, name = 3, "not-allowed"


class BadLendError(NodeError):
    """Not a memfd, not sealed against shrinking, a bad geometry (code 4)."""

    code, name = 4, "bad-lend"


class LimitError(NodeError):
    """Over one of the node's limits: frame, attempts, rows, bytes (code 5)."""

    code, name = 5, "limit-exceeded"


class UnknownLendError(NodeError):
    """No lend of the session has that id (code 6)."""

    code, name = 6, "unknown-lend"


class OutOfRangeError(NodeError):
    """A region or slot outside the lend, a slot named twice (code 7)."""

    code, name = 7, "out-of-range"


class BadNamesError(NodeError):
    """An empty name, one over the key rules, a count unlike the rows (code 8)."""

    code, name = 8, "bad-names"


class BusyError(NodeError):
    """The lend is being returned, or the node reclaims: try again (code 9)."""

    code, name = 9, "busy"


class ShuttingDownError(NodeError):
    """The node or the session is ending and takes no new work (code 10)."""

    code, name = 10, "shutting-down"


class ScopeError(NodeError):
    """The node serves no session under the hello's scope (code 11)."""

    code, name = 11, "scope-unsupported"


class DeadlineError(NodeError):
    """The attempt's deadline passed: its outcome was forced (code 12)."""

    code, name = 12, "deadline"


class StoreError(NodeError):
    """The store or its driver refused or failed (code 13)."""

    code, name = 13, "store"


class SlowReaderError(NodeError):
    """The engine stopped reading its replies (code 14)."""

    code, name = 14, "slow-reader"


class BadScopeError(NodeError):
    """The hello's scope is not a scope's canonical text, or a field breaks its rule (code 15)."""

    code, name = 15, "bad-scope"


class TenantNotAllowedError(NodeError):
    """The scope's tenant is not one the peer's credentials may declare (code 16)."""

    code, name = 16, "tenant-not-allowed"


class TenantLimitError(NodeError):
    """A request would take its tenant over one of the tenant's limits (code 17)."""

    code, name = 17, "tenant-limit"


class UnknownCodeError(NodeError):
    """A code this version does not define: a failure of unknown kind."""

    name = "unknown-code"

    def __init__(self, field: str = "", message: str = "", *, refused: bool = False, code: int | None = None) -> None:
        self.name = f"code {code}"
        super().__init__(field, message, refused=refused, code=code)


_BY_CODE: dict[int, type[NodeError]] = {
    cls.code: cls
    for cls in (
        ProtocolError,
        VersionError,
        NotAllowedError,
        BadLendError,
        LimitError,
        UnknownLendError,
        OutOfRangeError,
        BadNamesError,
        BusyError,
        ShuttingDownError,
        ScopeError,
        DeadlineError,
        StoreError,
        SlowReaderError,
        BadScopeError,
        TenantNotAllowedError,
        TenantLimitError,
    )
}


def error_for_code(code: int, field: str = "", message: str = "", *, refused: bool = True) -> NodeError:
    """Return the exception of ``code``: its class, or UnknownCodeError."""
    cls = _BY_CODE.get(code)
    if cls is None:
        return UnknownCodeError(field, message, refused=refused, code=code)
    return cls(field, message, refused=refused)


def code_name(code: int) -> str:
    """Return the protocol's name of ``code`` ("bad-lend"), or "code N"."""
    cls = _BY_CODE.get(code)
    return cls.name if cls is not None else f"code {code}"


class ClosedError(KVShareError):
    """The connection to the node is closed (close, the node's goodbye, lost).

    ``goodbye`` is the node's goodbye error when it sent one (a
    :class:`ShuttingDownError`, a :class:`SlowReaderError`, ...), else None.
    """

    def __init__(self, message: str, goodbye: NodeError | None = None) -> None:
        self.goodbye = goodbye
        super().__init__(message)


class ForkedError(ClosedError):
    """A connection or lend inherited by a forked child: refused there."""


class HeldError(KVShareError):
    """The node answered a return with held: it keeps ``bytes`` mapped.

    Access to the lend could not be proven ended; the client keeps its own
    mapping too, and the memory must never be reused.
    """

    def __init__(self, lend: int, nbytes: int) -> None:
        self.lend = lend
        self.bytes = nbytes
        super().__init__(f"lend {lend}: the node keeps {nbytes} bytes mapped (access not proven ended); the client keeps its mapping")


class Evidence(enum.Enum):
    """What the client can prove about the node's process."""

    UNKNOWN = "unknown: keep the slots"
    NODE_EXITED = "the node's process exited"

    def __str__(self) -> str:
        return self.value


class NodeLostError(ClosedError):
    """A call or attempt the end of the connection cut off.

    ``evidence`` says what the client could prove when the error was made:
    :attr:`Evidence.NODE_EXITED` (the node's pidfd became readable: its
    slots are the engine's again) or :attr:`Evidence.UNKNOWN` (keep them).
    ``cause`` says why the connection ended.
    """

    def __init__(self, cause: str, evidence: Evidence, goodbye: NodeError | None = None) -> None:
        self.evidence = evidence
        self.cause = cause
        super().__init__(f"{cause}; evidence: {evidence}", goodbye)


class NoEvidenceError(KVShareError):
    """The client cannot see the node's process exit (no pidfd of it).

    Memory lent to such a node is kept for good once the connection ends.
    """


class InvalidScopeError(KVShareError, ValueError):
    """A scope that breaks a field's rule, or text that is not a scope's
    canonical encoding (Go's ``keys.ErrInvalidScope``).

    ``faults`` lists every broken rule found as (field, reason), in the
    fields' order; ``field`` and ``reason`` are the first's. ``field`` is
    the field's name as the encoding spells it (``"kv_dtype"``), or ""
    when the fault is no one field's (a wrong header, bytes after the end).
    """

    def __init__(self, faults: list[tuple[str, str]]) -> None:
        self.faults = list(faults)
        self.field, self.reason = self.faults[0]
        super().__init__("invalid scope: " + "; ".join(f"{f}: {r}" if f else r for f, r in self.faults))


class InvalidPrefixError(KVShareError, ValueError):
    """A key prefix that breaks the key rules (Go's ``keys.ErrInvalidPrefix``)."""


class InvalidNameError(KVShareError, ValueError):
    """A row name that is empty or over 512 bytes (Go's ``keys.ErrInvalidName``)."""
