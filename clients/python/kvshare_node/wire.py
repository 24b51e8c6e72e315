"""The node protocol's frames, version 1: encoding and decoding.

Written from the protocol document (PROTOCOL.md beside the Go codec) and
checked against its test vectors.  A frame is a 16-byte header
(``u32 body_len``, ``u16 type``, ``u16 flags``, ``u64 request_id``, all
little-endian) and a body of exactly its fields.  :func:`encode` makes a
whole frame of a message; :func:`parse_header` and :func:`decode_body`
read one; every malformed input raises :class:`~kvshare_node.errors.NodeError`
(mostly :class:`~kvshare_node.errors.ProtocolError`) naming the field,
and nothing else.
"""

from __future__ import annotations

import struct
import sys
from array import array
from dataclasses import dataclass, field
from itertools import accumulate
from typing import Sequence, Union

from .errors import BadNamesError, LimitError, NodeError, ProtocolError

VERSION = 1
HEADER_SIZE = 16
PAGE_SIZE = 4096
MAX_ENGINE_NAME = 64
MAX_STR = 0xFFFF
MAX_NAME_BYTES = 512
MAX_DEADLINE_NS = (1 << 63) - 1
# The node's largest frame apart from an outcome's or presence's rows
# (a refused with two full strs): a reader's limit is this plus max_rows.
NODE_BODY_FIXED = 2 + 2 * (2 + MAX_STR)

# Message types (§4).
HELLO, LEND, PUBLISH, FETCH, LOOKUP, CANCEL, RETURN, STATS, CLIENT_GOODBYE = 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09
WELCOME, LENT, ACCEPTED, OUTCOME, QUIESCED, PRESENCE, RETURNED, HELD, STATS_REPLY, NODE_GOODBYE, REFUSED = (
    0x81, 0x82, 0x83, 0x84, 0x85, 0x86, 0x87, 0x88, 0x89, 0x8A, 0xBF)

TYPE_NAMES = {
    HELLO: "hello", WELCOME: "welcome", LEND: "lend", LENT: "lent", PUBLISH: "publish", FETCH: "fetch",
    ACCEPTED: "accepted", OUTCOME: "outcome", QUIESCED: "quiesced", LOOKUP: "lookup", PRESENCE: "presence",
    CANCEL: "cancel", RETURN: "return", RETURNED: "returned", HELD: "held", STATS: "stats",
    STATS_REPLY: "stats-reply", CLIENT_GOODBYE: "client-goodbye", NODE_GOODBYE: "node-goodbye", REFUSED: "refused",
}

# Row statuses of an outcome (§4.4) and presences of a lookup (§4.5).
PENDING, READY, MISS, NOT_READY, DECLINED, FAULT, CANCELLED = range(7)
STATUS_NAMES = ("pending", "ready", "miss", "not-ready", "declined", "fault", "cancelled")
UNKNOWN, PRESENT, ABSENT, IN_FLIGHT = range(4)
PRESENCE_NAMES = ("unknown", "present", "absent", "in-flight")

STATS_COUNTERS = (
    "engines", "attempts", "attempts_open", "rows_pending", "rows_ready", "rows_miss", "rows_not_ready",
    "rows_declined", "rows_fault", "rows_cancelled", "lookups", "lookup_names", "lookup_present", "lends",
    "lent_bytes", "held_lends", "held_bytes", "refusals", "peers_refused", "disconnects", "reclaims",
    "bytes_reclaimed",
)

_HEADER = struct.Struct("<IHHQ")
_U8, _U16, _U32, _U64 = struct.Struct("<B"), struct.Struct("<H"), struct.Struct("<I"), struct.Struct("<Q")
_WELCOME = struct.Struct("<HIIIIQ")
_LEND = struct.Struct("<QII")
_LENT = struct.Struct("<IQ")
_TRANSFER_HEAD = struct.Struct("<IQI")
_GROUP_HEAD = struct.Struct("<II")
_STATS = struct.Struct("<22Q")
_LITTLE = sys.byteorder == "little"


@dataclass(slots=True)
class Hello:
    version: int
    engine: str
    scope: str = ""


@dataclass(slots=True)
class Welcome:
    version: int
    node_pid: int
    max_frame: int
    max_attempts: int
    max_rows: int
    max_lend_bytes: int


@dataclass(slots=True)
class Lend:
    slot_bytes: int
    slot_count: int
    regions: int


@dataclass(slots=True)
class Lent:
    lend: int
    region_stride: int


@dataclass(slots=True)
class Group:
    """Rows of one region: row r moves slot ``slots[r]`` under ``names[r]``."""

    region: int
    slots: Sequence[int]
    names: Sequence[bytes]
    #: The names field as encoded, when the caller made it already.
    encoded_names: bytes | None = field(default=None, compare=False, repr=False)


@dataclass(slots=True)
class Transfer:
    """A publish (``fetch`` false) or a fetch."""

    fetch: bool
    lend: int
    deadline_ns: int
    groups: list[Group] = field(default_factory=list)


@dataclass(slots=True)
class Accepted:
    pass


@dataclass(slots=True)
class Outcome:
    rows: bytes
    fault_code: int = 0
    fault: str = ""


@dataclass(slots=True)
class Quiesced:
    pass


@dataclass(slots=True)
class Lookup:
    every: bool
    groups: list[list[bytes]]


@dataclass(slots=True)
class Presence:
    rows: bytes
    bound: int


@dataclass(slots=True)
class Cancel:
    attempt: int


@dataclass(slots=True)
class Return:
    lend: int


@dataclass(slots=True)
class Returned:
    pass


@dataclass(slots=True)
class Held:
    bytes: int


@dataclass(slots=True)
class Stats:
    pass


@dataclass(slots=True)
class StatsReply:
    """The node's counters by their names in §4.9."""

    counters: dict[str, int]


@dataclass(slots=True)
class ClientGoodbye:
    reason: str


@dataclass(slots=True)
class NodeGoodbye:
    code: int
    reason: str
    held_bytes: int
    held_lends: int


@dataclass(slots=True)
class Refused:
    code: int
    field: str
    message: str


Message = Union[Hello, Welcome, Lend, Lent, Transfer, Accepted, Outcome, Quiesced, Lookup, Presence, Cancel,
                Return, Returned, Held, Stats, StatsReply, ClientGoodbye, NodeGoodbye, Refused]

_TYPE_OF = {
    Hello: HELLO, Welcome: WELCOME, Lend: LEND, Lent: LENT, Accepted: ACCEPTED, Outcome: OUTCOME,
    Quiesced: QUIESCED, Lookup: LOOKUP, Presence: PRESENCE, Cancel: CANCEL, Return: RETURN, Returned: RETURNED,
    Held: HELD, Stats: STATS, StatsReply: STATS_REPLY, ClientGoodbye: CLIENT_GOODBYE, NodeGoodbye: NODE_GOODBYE,
    Refused: REFUSED,
}


def type_of(m: Message) -> int:
    """Return the frame type of message ``m``."""
    if isinstance(m, Transfer):
        return FETCH if m.fetch else PUBLISH
    return _TYPE_OF[type(m)]


def stride(slot_bytes: int, slot_count: int) -> int:
    """Return the region stride: slot_bytes × slot_count rounded up to 4096."""
    n = slot_bytes * slot_count
    return (n + PAGE_SIZE - 1) // PAGE_SIZE * PAGE_SIZE


# ---- encoding ---------------------------------------------------------------


def _u32s(values: Sequence[int]) -> bytes:
    a = values if isinstance(values, array) and values.typecode == "I" else array("I", values)
    if not _LITTLE:
        a = array("I", a)
        a.byteswap()
    return a.tobytes()


def _str(s: str) -> bytes:
    b = s.encode("utf-8")
    if len(b) > MAX_STR:
        raise ProtocolError("str", f"{len(b)} bytes, over {MAX_STR}")
    return _U16.pack(len(b)) + b


def _names(names: Sequence[bytes]) -> bytes:
    return encode_names(len(names), array("I", accumulate(map(len, names))), b"".join(names))


def encode_names(count: int, ends: array, blob: bytes) -> bytes:
    """The names field of count names ending at ends (a u32 array) in blob."""
    return _U32.pack(count) + _u32s(ends) + blob


def encode_body(m: Message) -> bytes:
    """Return the body of message ``m`` (its fields, in order)."""
    if isinstance(m, Transfer):
        parts = [_TRANSFER_HEAD.pack(m.lend, m.deadline_ns, len(m.groups))]
        for g in m.groups:
            parts.append(_GROUP_HEAD.pack(g.region, len(g.slots)))
            parts.append(_u32s(g.slots))
            parts.append(g.encoded_names if g.encoded_names is not None else _names(g.names))
        return b"".join(parts)
    if isinstance(m, Hello):
        return _U16.pack(m.version) + _str(m.engine) + _str(m.scope)
    if isinstance(m, Welcome):
        return _WELCOME.pack(m.version, m.node_pid, m.max_frame, m.max_attempts, m.max_rows, m.max_lend_bytes)
    if isinstance(m, Lend):
        return _LEND.pack(m.slot_bytes, m.slot_count, m.regions)
    if isinstance(m, Lent):
        return _LENT.pack(m.lend, m.region_stride)
    if isinstance(m, (Accepted, Quiesced, Returned, Stats)):
        return b""
    if isinstance(m, Outcome):
        return _U32.pack(len(m.rows)) + bytes(m.rows) + _U16.pack(m.fault_code) + _str(m.fault)
    if isinstance(m, Lookup):
        return _U8.pack(1 if m.every else 0) + _U32.pack(len(m.groups)) + b"".join(_names(g) for g in m.groups)
    if isinstance(m, Presence):
        return _U32.pack(len(m.rows)) + bytes(m.rows) + _U32.pack(m.bound)
    if isinstance(m, Cancel):
        return _U64.pack(m.attempt)
    if isinstance(m, Return):
        return _U32.pack(m.lend)
    if isinstance(m, Held):
        return _U64.pack(m.bytes)
    if isinstance(m, StatsReply):
        return _STATS.pack(*(m.counters.get(k, 0) for k in STATS_COUNTERS))
    if isinstance(m, ClientGoodbye):
        return _str(m.reason)
    if isinstance(m, NodeGoodbye):
        return _U16.pack(m.code) + _str(m.reason) + _U64.pack(m.held_bytes) + _U32.pack(m.held_lends)
    if isinstance(m, Refused):
        return _U16.pack(m.code) + _str(m.field) + _str(m.message)
    raise TypeError(f"not a message of the protocol: {type(m).__name__}")


def encode(m: Message, request_id: int) -> bytes:
    """Return the whole frame of message ``m`` under ``request_id``."""
    body = encode_body(m)
    return _HEADER.pack(len(body), type_of(m), 0, request_id) + body


# ---- decoding ---------------------------------------------------------------


@dataclass(slots=True)
class Header:
    body_len: int
    type: int
    flags: int
    request_id: int


def parse_header(b: bytes | bytearray | memoryview, max_body: int) -> Header:
    """Parse and check a frame's 16-byte header against ``max_body``."""
    if len(b) < HEADER_SIZE:
        raise ProtocolError("header", f"{len(b)} bytes, want {HEADER_SIZE}")
    n, t, flags, req = _HEADER.unpack_from(b, 0)
    if t not in TYPE_NAMES:
        raise ProtocolError("header: type", f"unknown type 0x{t:04x}")
    if flags:
        raise ProtocolError("header: flags", f"0x{flags:04x} set, none defined")
    if t == NODE_GOODBYE and req != 0:
        raise ProtocolError("header: request", f"{req} on a node-goodbye, want 0")
    if t != NODE_GOODBYE and req == 0:
        raise ProtocolError("header: request", f"0 on a {TYPE_NAMES[t]}, want non-zero")
    if n > max_body:
        raise LimitError("header: body_len", f"{n} bytes over the limit of {max_body}")
    return Header(n, t, flags, req)


# The byte values 0..top, for each top: what a u8 array may hold.
_UP_TO = {top: bytes(range(top + 1)) for top in (CANCELLED, IN_FLIGHT)}


class _Fields:
    """Reads a body's fields in order; every failure names the field."""

    __slots__ = ("b", "off")

    def __init__(self, b: bytes) -> None:
        self.b = b
        self.off = 0

    def take(self, what: str, n: int) -> bytes:
        left = len(self.b) - self.off
        if n > left:
            raise ProtocolError(what, f"truncated: {n} bytes wanted at offset {self.off}, {left} left")
        p = self.b[self.off:self.off + n]
        self.off += n
        return p

    def unpack(self, what: str, s: struct.Struct) -> tuple:
        return s.unpack(self.take(what, s.size))

    def u8(self, what: str) -> int:
        return self.unpack(what, _U8)[0]

    def u16(self, what: str) -> int:
        return self.unpack(what, _U16)[0]

    def u32(self, what: str) -> int:
        return self.unpack(what, _U32)[0]

    def u64(self, what: str) -> int:
        return self.unpack(what, _U64)[0]

    def str(self, what: str) -> str:
        p = self.take(what, self.u16(what))
        try:
            return p.decode("utf-8")
        except UnicodeDecodeError:
            raise ProtocolError(what, "not valid UTF-8") from None

    def count(self, what: str, width: int) -> int:
        n = self.u32(what)
        left = len(self.b) - self.off
        if n * width > left:
            raise ProtocolError(what, f"truncated: count {n} of {width}-byte elements, {left} bytes left")
        return n

    def u32s(self, what: str) -> array:
        n = self.count(what, 4)
        a = array("I")
        a.frombytes(self.take(what, 4 * n))
        if not _LITTLE:
            a.byteswap()
        return a

    def u8s(self, what: str, top: int) -> bytes:
        p = self.take(what, self.count(what, 1))
        if p.translate(None, _UP_TO[top]):  # what is left is over top
            i = next(i for i, v in enumerate(p) if v > top)
            raise ProtocolError(what, f"value {p[i]} of row {i} over {top}")
        return p

    def names(self, what: str) -> list[bytes]:
        n = self.count(what, 4)
        if n == 0:
            return []
        ends = array("I")
        ends.frombytes(self.take(what, 4 * n))
        if not _LITTLE:
            ends.byteswap()
        prev = 0
        for i, end in enumerate(ends):
            if end <= prev:
                if end == prev:
                    raise BadNamesError(what, f"name {i} empty (end {end})")
                raise BadNamesError(what, f"end {end} < previous {prev}")
            prev = end
        blob = self.take(what, prev)
        starts = [0, *ends[:-1]]
        return [blob[s:e] for s, e in zip(starts, ends)]

    def done(self, what: str) -> None:
        if self.off != len(self.b):
            raise ProtocolError(what, f"{len(self.b) - self.off} bytes left over after the last field")


_EMPTY: dict[int, type] = {ACCEPTED: Accepted, QUIESCED: Quiesced, RETURNED: Returned, STATS: Stats}


def decode_body(t: int, body: bytes) -> Message:
    """Decode the body of a frame of type ``t`` (its header checked)."""
    if t in _EMPTY:
        if len(body):
            raise ProtocolError(TYPE_NAMES[t], f"{len(body)} bytes left over after the last field")
        return _EMPTY[t]()
    if t == OUTCOME and len(body) >= 8 and body[-2:] == b"\0\0":
        # The common outcome, with no fault text: u32 rows, the statuses,
        # u16 fault_code, an empty str.
        n = _U32.unpack_from(body, 0)[0]
        if len(body) == n + 8:
            rows = bytes(body[4:4 + n])
            if not rows.translate(None, _UP_TO[CANCELLED]):
                return Outcome(rows, _U16.unpack_from(body, 4 + n)[0], "")
    r = _Fields(bytes(body))
    name = TYPE_NAMES.get(t)
    if name is None:
        raise ProtocolError("header: type", f"unknown type 0x{t:04x}")
    m: Message
    if t in (PUBLISH, FETCH):
        m = _decode_transfer(r, t == FETCH, name)
    elif t == OUTCOME:
        rows = r.u8s("outcome: rows", CANCELLED)
        code = r.u16("outcome: fault_code")
        fault = r.str("outcome: fault")
        if code == 0 and fault:
            raise ProtocolError("outcome: fault", "text without a fault_code")
        m = Outcome(rows, code, fault)
    elif t == HELLO:
        version = r.u16("hello: version")
        engine = r.str("hello: engine")
        if not 1 <= len(engine.encode()) <= MAX_ENGINE_NAME:
            raise ProtocolError("hello: engine", f"{len(engine.encode())} bytes, want 1 to {MAX_ENGINE_NAME}")
        m = Hello(version, engine, r.str("hello: scope"))
    elif t == WELCOME:
        m = Welcome(*r.unpack("welcome", _WELCOME))
    elif t == LEND:
        m = Lend(r.u64("lend: slot_bytes"), r.u32("lend: slot_count"), r.u32("lend: regions"))
    elif t == LENT:
        lend = r.u32("lent: lend")
        if lend == 0:
            raise ProtocolError("lent: lend", "0, want a lend id")
        s = r.u64("lent: region_stride")
        if s == 0 or s % PAGE_SIZE:
            raise ProtocolError("lent: region_stride", f"{s}, want a positive multiple of {PAGE_SIZE}")
        m = Lent(lend, s)
    elif t == LOOKUP:
        every = r.u8("lookup: every")
        if every > 1:
            raise ProtocolError("lookup: every", f"{every}, want 0 or 1")
        n = r.count("lookup: groups", 4)
        m = Lookup(every == 1, [r.names(f"lookup: group {i}: names") for i in range(n)])
    elif t == PRESENCE:
        rows = r.u8s("presence: rows", IN_FLIGHT)
        bound = r.u32("presence: bound")
        if bound > len(rows):
            raise ProtocolError("presence: bound", f"{bound} over {len(rows)} rows")
        m = Presence(rows, bound)
    elif t == CANCEL:
        a = r.u64("cancel: attempt")
        if a == 0:
            raise ProtocolError("cancel: attempt", "0, want a request id")
        m = Cancel(a)
    elif t == RETURN:
        m = Return(r.u32("return: lend"))
    elif t == HELD:
        m = Held(r.u64("held: bytes"))
    elif t == STATS_REPLY:
        values = [r.u64(f"stats-reply: counter {i}") for i in range(len(STATS_COUNTERS))]
        m = StatsReply(dict(zip(STATS_COUNTERS, values)))
    elif t == CLIENT_GOODBYE:
        m = ClientGoodbye(r.str("client-goodbye: reason"))
    elif t == NODE_GOODBYE:
        code = r.u16("node-goodbye: code")
        if code == 0:
            raise ProtocolError("node-goodbye: code", "0, want a code")
        m = NodeGoodbye(code, r.str("node-goodbye: reason"), r.u64("node-goodbye: held_bytes"),
                        r.u32("node-goodbye: held_lends"))
    else:  # REFUSED
        code = r.u16("refused: code")
        if code == 0:
            raise ProtocolError("refused: code", "0, want a code")
        m = Refused(code, r.str("refused: field"), r.str("refused: message"))
    r.done(name)
    return m


def _decode_transfer(r: _Fields, fetch: bool, name: str) -> Transfer:
    lend = r.u32(f"{name}: lend")
    deadline = r.u64(f"{name}: deadline_ns")
    if deadline > MAX_DEADLINE_NS:
        raise ProtocolError(f"{name}: deadline_ns", f"{deadline} over 2^63-1")
    m = Transfer(fetch, lend, deadline)
    for i in range(r.count(f"{name}: groups", 12)):
        what = f"{name}: group {i}"
        region = r.u32(f"{what}: region")
        slots = r.u32s(f"{what}: slots")
        names = r.names(f"{what}: names")
        if len(names) != len(slots):
            raise BadNamesError(f"{what}: names", f"{len(names)} names for {len(slots)} rows")
        m.groups.append(Group(region, list(slots), names))
    return m


def decode(frame: bytes | bytearray | memoryview, max_body: int) -> tuple[Header, Message]:
    """Decode one whole frame (header and body, nothing more)."""
    h = parse_header(frame, max_body)
    if len(frame) != HEADER_SIZE + h.body_len:
        raise ProtocolError("header: body_len", f"{h.body_len}, but the frame has {len(frame) - HEADER_SIZE} body bytes")
    return h, decode_body(h.type, frame[HEADER_SIZE:])

