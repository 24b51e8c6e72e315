"""Lends: staging memory the engine shares with the node, and its slots."""

from __future__ import annotations

import logging
from array import array
from itertools import accumulate
from typing import TYPE_CHECKING, Any, Iterable, Sequence, Union

from . import wire
from .attempt import Attempt
from .errors import (
    BadLendError,
    BadNamesError,
    ClosedError,
    Evidence,
    ForkedError,
    HeldError,
    KVShareError,
    LimitError,
    NodeLostError,
    OutOfRangeError,
    ProtocolError,
    UnknownLendError,
)
from .memory import Memory

if TYPE_CHECKING:
    from .client import Client

log = logging.getLogger("kvshare_node")

#: A row's name: bytes, or a str taken as UTF-8.
Names = Union[bytes, bytearray, memoryview, str]
#: A group of a view: a wire.Group, or a (region, slots, names) tuple.
GroupLike = Union[wire.Group, tuple]

_MAX_SLOT_COUNT = (1 << 31) - 1
_MAX_U32 = (1 << 32) - 1
_MAX_BYTES = (1 << 63) - 1


def check_names(names: Sequence[Names], what: str) -> list[bytes]:
    """Names as bytes-like values, each 1 to 512 bytes (the key rules), else BadNamesError."""
    return _names_field(names, what)[0]


def _names_field(names: Sequence[Names], what: str) -> tuple[list[bytes], bytes]:
    """Checked names, and their names field as the wire encodes it."""
    names = names if type(names) is list else list(names)
    lens = list(map(len, names))
    try:
        blob = b"".join(names)  # bytes-like names as they are (str ones fail here)
    except TypeError:
        blob = None
    ends = _ends(lens)
    if blob is None or (ends and ends[-1] != len(blob)):  # str names, or views whose items are not bytes
        names = [n.encode("utf-8") if isinstance(n, str) else bytes(n) for n in names]
        lens = list(map(len, names))
        blob = b"".join(names)
        ends = _ends(lens)
    if lens and (0 in lens or max(lens) > wire.MAX_NAME_BYTES):
        i = next(i for i, n in enumerate(lens) if not 1 <= n <= wire.MAX_NAME_BYTES)
        raise BadNamesError(f"{what}.names[{i}]", f"{lens[i]} bytes, want 1 to {wire.MAX_NAME_BYTES}")
    return names, wire.encode_names(len(names), ends, blob)


def _ends(lens: list[int]) -> array:
    """Where each name ends in the names' blob, as u32s. Names of one
    length (block hashes are) take a range, without a running sum."""
    n = len(lens)
    if n and lens[0] and lens.count(lens[0]) == n:
        return array("I", range(lens[0], lens[0] * n + 1, lens[0]))
    return array("I", accumulate(lens))


def check_slots(slots: Iterable[int], count: int, what: str) -> array:
    """Slot numbers as an array of u32, each below count, else OutOfRangeError."""
    try:
        a = array("I", slots)
    except (TypeError, OverflowError, ValueError):
        a = array("I")
        for j, v in enumerate(slots):
            _int(v, f"{what}.slots[{j}]", 0, count - 1, OutOfRangeError)
            a.append(v)
    if a and max(a) >= count:
        j = next(j for j, v in enumerate(a) if v >= count)
        _int(a[j], f"{what}.slots[{j}]", 0, count - 1, OutOfRangeError)
    return a


def _int(v: Any, what: str, lo: int, hi: int, err: type[KVShareError]) -> int:
    if isinstance(v, bool) or not isinstance(v, int):
        raise err(what, f"{v!r} is not an integer")  # type: ignore[call-arg]
    if not lo <= v <= hi:
        raise err(what, f"{v}, want {lo} to {hi}")  # type: ignore[call-arg]
    return v


class Lend:
    """Memory lent to the node: one sealed memfd both map shared.

    Laid out as the protocol says (§6): ``regions`` regions, each starting
    at a multiple of :attr:`stride` (slot_bytes × slot_count rounded up to
    4096), of ``slot_count`` slots of ``slot_bytes`` bytes. Write a slot
    before publishing it; read it after a fetch's outcome says ready *and*
    the attempt quiesced. A slot may be reused once every attempt naming
    it quiesced.

    ``state`` is "lent", "returning", "held" (the node keeps it: never
    reuse it), "cut off" (the connection ended first: kept until the
    node's exit is proven) or "returned". Use it as a context manager:
    leaving it returns it.
    """

    def __init__(self, client: "Client", slot_bytes: int, slot_count: int, regions: int, memory: Memory) -> None:
        self._client = client
        self.id = 0
        self.slot_bytes = slot_bytes
        self.slot_count = slot_count
        self.regions = regions
        self.stride = wire.stride(slot_bytes, slot_count)
        self.nbytes = self.stride * regions
        self._memory = memory
        self.state = "lent"
        self._views_alive = False

    def __repr__(self) -> str:
        return (f"<kvshare_node.Lend {self.id}: {self.regions} regions × {self.slot_count} slots × "
                f"{self.slot_bytes} bytes, {self.state}>")

    def __enter__(self) -> "Lend":
        return self

    def __exit__(self, *exc: object) -> None:
        if self.state == "lent" and self._client.ended is None:
            self.return_()

    @classmethod
    def _create(cls, c: "Client", slot_bytes: int, slot_count: int, regions: int, fd: int | None,
                deadline: float | None) -> "Lend":
        _int(slot_bytes, "lend.slot_bytes", 1, _MAX_BYTES, BadLendError)
        _int(slot_count, "lend.slot_count", 1, _MAX_SLOT_COUNT, BadLendError)
        _int(regions, "lend.regions", 1, _MAX_U32, BadLendError)
        size = wire.stride(slot_bytes, slot_count) * regions
        if size > _MAX_BYTES:
            raise BadLendError("lend.regions", f"{size} bytes do not fit in 63 bits")
        w = c._limits()
        if size > w.max_lend_bytes:
            raise LimitError("lend.bytes", f"{size} bytes, over the node's max_lend_bytes of {w.max_lend_bytes}")
        memory = Memory.create(size) if fd is None else Memory.adopt(fd, size)
        lend = cls(c, slot_bytes, slot_count, regions, memory)
        with c._cond:
            c._lends[id(lend)] = lend
        try:
            m = c._call(wire.Lend(slot_bytes, slot_count, regions), (wire.Lent,), deadline, memory.fd,
                        orphan=lend._settle_orphan)
        except NodeLostError:
            lend.state = "cut off"  # the memfd may have reached the node
            raise
        except TimeoutError:
            raise  # _settle_orphan finishes it when the answer comes
        except KVShareError:
            lend._release()  # refused: the node closed its fd and maps nothing
            raise
        assert isinstance(m, wire.Lent)
        lend._take(m)
        return lend

    def _take(self, m: wire.Lent) -> None:
        self.id = m.lend
        if m.region_stride != self.stride:
            self._return_orphan()
            raise ProtocolError("lent.region_stride", f"the node laid lend {m.lend} out with a stride of "
                                f"{m.region_stride} bytes, the client's is {self.stride}; returned")

    def _settle_orphan(self, m: wire.Message | None) -> None:
        """A lend whose caller stopped waiting: return it, or free or keep it."""
        if isinstance(m, wire.Lent):
            self.id = m.lend
            self._return_orphan()
        elif isinstance(m, wire.Refused):
            self._release()
        else:
            self.state = "cut off"

    def _return_orphan(self) -> None:
        """Return a lend no caller holds, without waiting for the answer."""
        self.state = "returning"
        from .client import _Call

        k = _Call((wire.Returned, wire.Held))
        k.orphan = self._settle_return
        try:
            rid = self._client._register(k)
            self._client._send(wire.encode(wire.Return(self.id), rid))
        except (KVShareError, OSError):
            self.state = "cut off"

    def _settle_return(self, m: wire.Message | None) -> None:
        if isinstance(m, wire.Returned):
            self._release()
        elif isinstance(m, wire.Held):
            self.state = "held"
            log.warning("kvshare_node: the node holds lend %d (%d bytes): its memory stays mapped", self.id, m.bytes)
        elif isinstance(m, wire.Refused):
            self.state = "lent"
        else:
            self.state = "cut off"

    def _cut_off(self) -> None:
        """The connection ended (holding the client's lock)."""
        if self.state in ("lent", "returning"):
            self.state = "cut off"
            log.warning("kvshare_node: the connection ended before lend %d was returned: its %d bytes stay mapped "
                        "until the node's exit is proven", self.id, self.nbytes)

    def _release(self) -> None:
        self.state = "returned"
        if not self._memory.release():
            self._views_alive = True
            log.info("kvshare_node: lend %d returned while a slot view of it lives: its mapping goes with the last view",
                     self.id)
        with self._client._cond:
            self._client._lends.pop(id(self), None)

    # ---- slots ------------------------------------------------------------

    def _usable(self, what: str) -> None:
        c = self._client
        if c._forked:
            raise ForkedError(f"{what}: lend {self.id} was inherited by a forked child")
        if self.state == "held":
            raise HeldError(self.id, self.nbytes)
        if self.state == "returned":
            raise ClosedError(f"{what}: lend {self.id} was returned")
        if self.state == "cut off" and c.evidence() is not Evidence.NODE_EXITED:
            raise NodeLostError(f"{what}: lend {self.id} was cut off from its node, which may still move its rows",
                                Evidence.UNKNOWN, c.goodbye)

    def offset(self, region: int, slot: int) -> int:
        """The byte offset of slot ``slot`` of region ``region`` in the memfd."""
        _int(region, "region", 0, self.regions - 1, OutOfRangeError)
        _int(slot, "slot", 0, self.slot_count - 1, OutOfRangeError)
        return region * self.stride + slot * self.slot_bytes

    def slot(self, region: int, slot: int) -> memoryview:
        """The bytes of a slot, shared with the node, as a writable memoryview.

        While a view lives, the mapping cannot be unmapped (``mmap.close()``
        refuses): a lend returned then is unmapped once the last view goes.
        """
        self._usable("slot")
        off = self.offset(region, slot)
        return memoryview(self._memory.map)[off:off + self.slot_bytes]

    def array(self, region: int, slot: int, dtype: Any = "uint8", shape: Sequence[int] | None = None) -> Any:
        """A slot as a numpy array (numpy must be importable)."""
        import numpy  # only when asked for: the client needs nothing outside the standard library

        a = numpy.frombuffer(self.slot(region, slot), dtype=dtype)
        return a if shape is None else a.reshape(shape)

    def region(self, region: int) -> memoryview:
        """The bytes of a whole region (its slots back to back, then padding)."""
        self._usable("region")
        off = self.offset(region, 0)
        return memoryview(self._memory.map)[off:off + self.stride]

    # ---- transfers --------------------------------------------------------

    def publish(self, groups: Iterable[GroupLike], *, deadline: float | None = None,
                timeout: float | None = None) -> Attempt:
        """Publish rows: slot ``slots[r]`` of ``region`` under ``names[r]``.

        ``groups`` holds :class:`~kvshare_node.wire.Group` values or
        ``(region, slots, names)`` tuples. ``deadline`` (seconds) bounds
        the outcome, not the quiescence. Waits up to ``timeout`` for the
        node to accept it; a view the node would refuse (a region or slot
        outside the lend, names empty, over 512 bytes or not one a slot,
        over the node's limits) raises before anything is sent.
        """
        return self._transfer(False, groups, deadline, timeout)

    def fetch(self, groups: Iterable[GroupLike], *, deadline: float | None = None,
              timeout: float | None = None) -> Attempt:
        """Fetch rows into slots (see :meth:`publish`); a slot may be named once."""
        return self._transfer(True, groups, deadline, timeout)

    def _transfer(self, fetch: bool, groups: Iterable[GroupLike], deadline: float | None,
                  timeout: float | None) -> Attempt:
        kind = "fetch" if fetch else "publish"
        c = self._client
        c._check_usable()
        if self.state != "lent":
            self._usable(kind)
            raise UnknownLendError(f"{kind}.lend", f"lend {self.id} is {self.state}")
        view, rows = self._view(kind, fetch, groups)
        w = c._limits()
        if rows > w.max_rows:
            raise LimitError(f"{kind}.rows", f"{rows} rows, over the node's max_rows of {w.max_rows}")
        ns = 0
        if deadline is not None:
            if deadline <= 0:
                raise OutOfRangeError(f"{kind}.deadline_ns", f"{deadline} s: want a positive deadline, or None")
            ns = min(max(1, int(deadline * 1e9)), wire.MAX_DEADLINE_NS)
        from .attempt import _deadline

        return c._submit(wire.Transfer(fetch, self.id, ns, view), rows, _deadline(timeout))

    def _view(self, kind: str, fetch: bool, groups: Iterable[GroupLike]) -> tuple[list[wire.Group], int]:
        view = []
        rows = 0
        seen: dict[int, set[int]] = {}
        for i, g in enumerate(groups):
            what = f"{kind}.groups[{i}]"
            region, slots, names = (g.region, g.slots, g.names) if isinstance(g, wire.Group) else g
            _int(region, f"{what}.region", 0, self.regions - 1, OutOfRangeError)
            slots = check_slots(slots, self.slot_count, what)
            if len(names) != len(slots):
                raise BadNamesError(f"{what}.names", f"{len(names)} names for {len(slots)} slots")
            if fetch:
                taken = seen.setdefault(region, set())
                fresh = set(slots)
                if len(fresh) != len(slots) or not taken.isdisjoint(fresh):
                    for j, s in enumerate(slots):
                        if s in taken:
                            raise OutOfRangeError(f"{what}.slots[{j}]", f"slot {s} of region {region} named twice in a fetch")
                        taken.add(s)
                taken |= fresh
            checked, field = _names_field(names, what)
            view.append(wire.Group(region, slots, checked, field))
            rows += len(slots)
        return view, rows

    # ---- giving it back ---------------------------------------------------

    def return_(self, timeout: float | None = None) -> None:
        """Give the lend back and wait up to ``timeout`` s for the node.

        Returned: the node unmapped it; so does the client (once the last
        slot view is gone). Held: the node could not prove every access
        ended and keeps it mapped: raises HeldError, and the client keeps
        its mapping too, never to be reused. A refusal (busy) leaves it
        lent. A lend cut off by the connection's end is freed only once
        the node's exit is proven: this waits up to ``timeout`` for the
        proof, else raises NodeLostError (or NoEvidenceError) and keeps it.
        """
        c = self._client
        if c._forked:
            raise ForkedError(f"return: lend {self.id} was inherited by a forked child")
        if self.state == "cut off":
            try:
                c.wait_node_exit(timeout)
            except TimeoutError:
                raise NodeLostError(f"return: lend {self.id} was cut off from its node; its {self.nbytes} bytes are "
                                    f"kept mapped", Evidence.UNKNOWN, c.goodbye) from None
            self._release()
            return
        if self.state == "held":
            raise HeldError(self.id, self.nbytes)
        if self.state != "lent":
            raise UnknownLendError("return.lend", f"lend {self.id} is {self.state}")
        self.state = "returning"
        from .attempt import _deadline

        try:
            m = c._call(wire.Return(self.id), (wire.Returned, wire.Held), _deadline(timeout), orphan=self._settle_return)
        except NodeLostError:
            self.state = "cut off"
            raise
        except TimeoutError:
            raise
        except KVShareError:
            self.state = "lent"
            raise
        self._settle_return(m)
        if isinstance(m, wire.Held):
            raise HeldError(self.id, m.bytes)
