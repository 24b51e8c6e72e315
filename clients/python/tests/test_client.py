"""The client against a real ``kvshare node`` process."""

from __future__ import annotations

import os
import select
import signal
import threading
import time

import pytest

import kvshare_node as kv
from conftest import NodeProc, row_bytes, wait

SLOT = 16 << 10


def test_two_engines_share_rows_every_byte_checked(node: NodeProc) -> None:
    names = [f"prefix/{i}".encode() for i in range(12)]
    with kv.connect(node.socket, "py-publisher") as pub, kv.connect(node.socket, "py-fetcher") as fet:
        assert pub.watch.proves and pub.watch.pid == node.pid
        with pub.lend(SLOT, 8, regions=2) as lend:
            assert lend.stride == 8 * SLOT and lend.nbytes == 2 * 8 * SLOT
            for i, n in enumerate(names):
                lend.slot(i // 6, i % 6)[:] = row_bytes(n, SLOT)
            a = lend.publish([(0, range(6), names[:6]), kv.Group(1, list(range(6)), names[6:])], deadline=wait())
            out = a.outcome(wait())
            assert out.statuses == [kv.Status.READY] * 12 and out.fault is None
            a.wait_quiesced(wait())
            assert a.quiesced()

        asked = names[:8] + [b"prefix/never"]
        p = fet.lookup([asked], every=True, timeout=wait())
        assert list(p.rows) == [1] * 8 + [2] and p.bound == 8
        with fet.lend(SLOT, 16) as lend:
            f = lend.fetch([(0, range(9), asked)], timeout=wait())
            out = f.outcome(wait())
            assert out.statuses == [kv.Status.READY] * 8 + [kv.Status.MISS]
            f.wait_quiesced(wait())
            for i, n in enumerate(names[:8]):
                assert bytes(lend.slot(0, i)) == row_bytes(n, SLOT), f"row {n!r}"
            assert bytes(lend.slot(0, 8)) == bytes(SLOT), "a missed row's slot is not touched"


def test_lookup_answers_presence_and_the_bound(node: NodeProc) -> None:
    with kv.connect(node.socket, "py-lookup") as c, c.lend(4096, 2) as lend:
        lend.publish([(0, [0, 1], [b"l/0", b"l/2"])]).wait_quiesced(wait())
        p = c.lookup([[b"l/0", b"l/1", b"l/2"]], timeout=wait())
        assert list(p.rows[:2]) == [1, 2] and p.rows[2] in (0, 1) and p.bound == 1  # not asked: unknown, or asked
        p = c.lookup([[b"l/0", b"l/1", b"l/2"]], every=True, timeout=wait())
        assert list(p.rows) == [1, 2, 1] and p.bound == 1


def test_threads_wait_on_different_attempts_without_a_reader_thread(node: NodeProc) -> None:
    rows = 6
    before = threading.active_count()
    with kv.connect(node.socket, "py-threads") as c, c.lend(4096, rows * 8) as lend:
        assert threading.active_count() == before, "the client started no thread"
        for s in range(rows * 8):
            lend.slot(0, s)[:] = row_bytes(f"t/{s}".encode(), 4096)
        attempts = [lend.publish([(0, range(k * rows, (k + 1) * rows), [f"t/{s}".encode() for s in range(k * rows, (k + 1) * rows)])])
                    for k in range(8)]
        results: dict[int, list[kv.Status]] = {}
        errors: list[BaseException] = []

        def waiter(k: int) -> None:
            try:
                results[k] = attempts[k].outcome(wait()).statuses
                attempts[k].wait_quiesced(wait())
            except BaseException as e:  # noqa: BLE001 - reported below
                errors.append(e)

        threads = [threading.Thread(target=waiter, args=(k,)) for k in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(wait())
        assert not errors
        assert results == {k: [kv.Status.READY] * rows for k in range(8)}
        assert all(a.quiesced() for a in attempts)


def test_done_and_quiesced_never_block_and_fileno_selects(node: NodeProc) -> None:
    with kv.connect(node.socket, "py-poll") as c, c.lend(4096, 1) as lend:
        a = lend.publish([(0, [0], [b"p/0"])])
        while not a.quiesced():  # the engine's step loop: select, then ask
            r, _, _ = select.select([a.fileno()], [], [], wait())
            assert r, "the node's replies never came"
        assert a.done() and a.outcome(0).all_ready()


def test_a_slot_as_a_numpy_array_shares_the_bytes(node: NodeProc) -> None:
    numpy = pytest.importorskip("numpy")
    with kv.connect(node.socket, "py-numpy") as c, c.lend(4096, 2) as lend:
        arr = lend.array(0, 1, dtype=numpy.float16, shape=(32, 64))
        arr[:] = numpy.arange(32 * 64, dtype=numpy.float16).reshape(32, 64)
        assert bytes(lend.slot(0, 1)) == arr.tobytes()
        lend.publish([(0, [1], [b"np/1"])]).wait_quiesced(wait())
        del arr
        f = lend.fetch([(0, [0], [b"np/1"])])
        assert f.outcome(wait()).all_ready()
        f.wait_quiesced(wait())
        got = lend.array(0, 0, dtype=numpy.float16, shape=(32, 64))
        assert (got == numpy.arange(32 * 64, dtype=numpy.float16).reshape(32, 64)).all()


def test_close_returns_lends_and_says_what_a_live_view_keeps(node: NodeProc) -> None:
    c = kv.connect(node.socket, "py-close")
    kept = c.lend(4096, 4)
    free = c.lend(4096, 4)
    view = kept.slot(0, 3)
    view[:4] = b"live"
    report = c.close(wait())
    assert sorted(report.returned) == sorted([kept.id, free.id]) and report.goodbye_sent
    assert report.views_alive == [kept.id], "mmap.close() refused while the view lives"
    assert report.held == {} and report.cut_off == []
    assert bytes(view[:4]) == b"live", "the mapping lives on with its view"
    assert c.lent() == (0, 0)
    with pytest.raises(kv.ClosedError):
        kept.slot(0, 0)
    with pytest.raises(kv.ClosedError):
        c.lookup([[b"x"]])
    with kv.connect(node.socket, "py-after") as other:
        assert other.stats(wait())["lends"] == 0, "the node unmapped both lends"


def test_a_refused_hello_raises_its_codes_exception(node: NodeProc) -> None:
    # Version 1 nodes refuse every scope (ScopeUnsupported); a node that
    # gives scopes a meaning refuses one it cannot parse with a code of
    # its own: either way the refusal is the class of its code.
    with pytest.raises(kv.NodeError) as e:
        kv.connect(node.socket, "py-scope", scope="\x00not a scope", timeout=wait())
    assert e.value.refused
    assert type(e.value) is type(kv.error_for_code(e.value.code))


def test_a_refusal_of_the_node_is_its_codes_exception(node: NodeProc) -> None:
    with kv.connect(node.socket, "py-refused") as c:
        with pytest.raises(kv.UnknownLendError) as e:
            c._call(kv.wire.Return(4242), (kv.wire.Returned, kv.wire.Held), None)
        assert e.value.refused and e.value.code == 6 and e.value.field
        assert c.stats(wait())["refusals"] >= 1, "the session goes on after a refusal"


def test_the_nodes_shutdown_is_a_goodbye_with_its_code(node: NodeProc) -> None:
    c = kv.connect(node.socket, "py-goodbye")
    lend = c.lend(4096, 1)
    node.proc.send_signal(signal.SIGTERM)
    assert c._wait(lambda: c.ended is not None, time.monotonic() + wait()), "the node's goodbye did not come"
    with pytest.raises(kv.ClosedError) as e:
        c.lookup([[b"x"]])
    assert isinstance(c.goodbye, kv.ShuttingDownError), c.ended
    assert isinstance(e.value.goodbye, kv.ShuttingDownError)
    assert node.proc.wait(wait()) == 0, "the node gave everything back"
    assert lend.state == "cut off", "a lend not returned is kept until the node's exit is proven"
    lend.return_(wait())  # the node exited: proven, freed
    assert lend.state == "returned" and c.lent() == (0, 0)


def test_use_after_fork_is_refused_in_the_child(node: NodeProc) -> None:
    with kv.connect(node.socket, "py-fork") as c, c.lend(4096, 1) as lend:
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: every use must raise ForkedError
            code = 0
            for use in (lambda: c.lookup([[b"x"]]), lambda: lend.slot(0, 0), c.poll, c.close,
                        lambda: lend.publish([(0, [0], [b"f"])])):
                try:
                    use()
                    code += 1
                except kv.ForkedError:
                    pass
            os.write(w, bytes([code]))
            os._exit(0)
        os.close(w)
        got = os.read(r, 1)
        os.close(r)
        _, status = os.waitpid(pid, 0)
        assert got == b"\x00", f"{got[0] if got else '?'} uses were not refused in the child"
        assert status == 0
        # The parent's connection is untouched.
        lend.publish([(0, [0], [b"f"])]).wait_quiesced(wait())
