"""Bad input from the engine: an exception naming the field, nothing sent.

"Nothing reached the node" is checked on the node's own counters: a
request it saw would count as a refusal, an attempt or a lend.
"""

from __future__ import annotations

import fcntl
import os
from typing import Any, Callable, Iterator

import pytest

import kvshare_node as kv
from conftest import NodeProc, start_kvshare_node, wait

SEEN = ("refusals", "attempts", "lookups", "lends", "disconnects")


@pytest.fixture
def session(kvshare_bin: str, sockdir: str) -> Iterator[tuple[kv.Client, kv.Lend, NodeProc]]:
    node = start_kvshare_node(kvshare_bin, os.path.join(sockdir, "b.sock"), "--max-rows", "8")
    try:
        with kv.connect(node.socket, "py-bad") as c, c.lend(4096, 4, regions=2) as lend:
            yield c, lend, node
    finally:
        node.proc.kill()
        node.proc.wait()


def memfd(size: int, seals: int = 0) -> int:
    fd = os.memfd_create("test", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
    os.ftruncate(fd, size)
    if seals:
        fcntl.fcntl(fd, fcntl.F_ADD_SEALS, seals)
    return fd


def closed_fd() -> int:
    fd = memfd(4096, fcntl.F_SEAL_SHRINK)
    os.close(fd)
    return fd


def pipe_fd() -> int:
    r, w = os.pipe()
    os.close(w)
    return r


LONG = b"n" * (kv.wire.MAX_NAME_BYTES + 1)

CASES: list[tuple[str, Callable[[kv.Client, kv.Lend], Any], type[kv.KVShareError], str]] = [
    ("slot_bytes zero", lambda c, l: c.lend(0, 4), kv.BadLendError, "lend.slot_bytes"),
    ("slot_count zero", lambda c, l: c.lend(4096, 0), kv.BadLendError, "lend.slot_count"),
    ("slot_count over 2^31-1", lambda c, l: c.lend(1, 1 << 31), kv.BadLendError, "lend.slot_count"),
    ("regions zero", lambda c, l: c.lend(4096, 1, 0), kv.BadLendError, "lend.regions"),
    ("slot_bytes not an integer", lambda c, l: c.lend(4096.0, 1), kv.BadLendError, "lend.slot_bytes"),
    ("over max_lend_bytes", lambda c, l: c.lend(1 << 40, 1 << 20), kv.LimitError, "lend.bytes"),
    ("a closed memfd", lambda c, l: c.lend(4096, 1, fd=closed_fd()), kv.BadLendError, "lend.fd"),
    ("not a memfd", lambda c, l: c.lend(4096, 1, fd=pipe_fd()), kv.BadLendError, "lend.fd"),
    ("an unsealed memfd", lambda c, l: c.lend(4096, 1, fd=memfd(4096)), kv.BadLendError, "lend.fd"),
    ("a write-sealed memfd", lambda c, l: c.lend(4096, 1, fd=memfd(4096, fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_WRITE)),
     kv.BadLendError, "lend.fd"),
    ("a memfd smaller than its geometry", lambda c, l: c.lend(4096, 2, fd=memfd(4096, fcntl.F_SEAL_SHRINK)),
     kv.BadLendError, "lend.regions"),
    ("a name too long", lambda c, l: l.publish([(0, [0, 1], [b"ok", LONG])]), kv.BadNamesError,
     "publish.groups[0].names[1]"),
    ("an empty name", lambda c, l: l.fetch([(1, [0], [b""])]), kv.BadNamesError, "fetch.groups[0].names[0]"),
    ("names not one a slot", lambda c, l: l.publish([(0, [0, 1], [b"a"])]), kv.BadNamesError, "publish.groups[0].names"),
    ("a region out of range", lambda c, l: l.publish([(0, [0], [b"a"]), (2, [0], [b"b"])]), kv.OutOfRangeError,
     "publish.groups[1].region"),
    ("a slot out of range", lambda c, l: l.fetch([(1, [3, 4], [b"a", b"b"])]), kv.OutOfRangeError,
     "fetch.groups[0].slots[1]"),
    ("a negative slot", lambda c, l: l.publish([(0, [-1], [b"a"])]), kv.OutOfRangeError, "publish.groups[0].slots[0]"),
    ("a slot fetched twice", lambda c, l: l.fetch([(0, [1], [b"a"]), (0, [2, 1], [b"b", b"c"])]), kv.OutOfRangeError,
     "fetch.groups[1].slots[1]"),
    ("more rows than max_rows", lambda c, l: l.publish([(0, range(4), [b"a"] * 4), (1, range(4), [b"b"] * 4),
                                                        (0, [0], [b"c"])]), kv.LimitError, "publish.rows"),
    ("a lookup over max_rows", lambda c, l: c.lookup([[b"a"] * 9]), kv.LimitError, "lookup.rows"),
    ("a lookup name too long", lambda c, l: c.lookup([[b"a"], [LONG]]), kv.BadNamesError, "lookup.groups[1].names[0]"),
    ("a deadline not positive", lambda c, l: l.publish([(0, [0], [b"a"])], deadline=0), kv.OutOfRangeError,
     "publish.deadline_ns"),
    ("a slot view out of range", lambda c, l: l.slot(2, 0), kv.OutOfRangeError, "region"),
    ("a slot view's slot out of range", lambda c, l: l.slot(0, 4), kv.OutOfRangeError, "slot"),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_bad_input_names_the_field_and_reaches_nothing(session: tuple[kv.Client, kv.Lend, NodeProc],
                                                       case: tuple[str, Callable, type, str]) -> None:
    c, lend, _ = session
    _, call, exc, field = case
    before = c.stats(wait())
    with pytest.raises(exc) as e:
        call(c, lend)
    assert e.value.field == field
    assert not e.value.refused, "the client refused it, not the node"
    after = c.stats(wait())
    assert {k: after[k] for k in SEEN} == {k: before[k] for k in SEEN}, "nothing reached the node"
    # The session goes on: the lend still moves rows.
    lend.publish([(0, [0], [b"still"])]).wait_quiesced(wait())


@pytest.mark.parametrize("engine", ["", "e" * 65])
def test_an_engine_name_out_of_bounds_is_refused_before_dialling(engine: str) -> None:
    with pytest.raises(kv.ProtocolError) as e:
        kv.connect("/nonexistent/socket", engine)
    assert e.value.field == "hello.engine"


def test_a_returned_lend_takes_no_transfer(session: tuple[kv.Client, kv.Lend, NodeProc]) -> None:
    c, _, _ = session
    lend = c.lend(4096, 1)
    lend.return_(wait())
    with pytest.raises(kv.ClosedError):
        lend.publish([(0, [0], [b"a"])])
    with pytest.raises(kv.UnknownLendError):
        lend.return_()


def test_the_callers_memfd_is_lent_and_kept_open(session: tuple[kv.Client, kv.Lend, NodeProc]) -> None:
    c, _, _ = session
    fd = memfd(2 * 4096, fcntl.F_SEAL_SHRINK)
    try:
        with c.lend(4096, 2, fd=fd) as lend:
            lend.slot(0, 1)[:] = b"\x5a" * 4096
            lend.publish([(0, [1], [b"mine"])]).wait_quiesced(wait())
        os.fstat(fd)  # still the caller's
        assert os.pread(fd, 4096, 4096) == b"\x5a" * 4096, "the slots are the caller's memfd's bytes"
    finally:
        os.close(fd)
