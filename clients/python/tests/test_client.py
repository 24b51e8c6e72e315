"""The client against a real ``kvshare node`` process."""

from __future__ import annotations

import json
import os
import select
import signal
import socket
import subprocess
import sys
import threading
import uuid
from pathlib import Path
import time

import pytest

import kvshare_node as kv
from conftest import CLIENT, NodeProc, row_bytes, wait

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
    # Text that is no scope's canonical encoding, sent past the client's
    # own check: the node refuses it (BadScope, the field named).
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(node.socket)
    c = kv.Client(sock, node.socket, "py-scope", None)
    try:
        with pytest.raises(kv.NodeError) as e:
            c._call(kv.wire.Hello(kv.wire.VERSION, "py-scope", "\x00not a scope"), (kv.wire.Welcome,),
                    time.monotonic() + wait())
    finally:
        c.close(wait())
    assert e.value.refused
    assert type(e.value) is type(kv.error_for_code(e.value.code)) is kv.BadScopeError
    assert e.value.field.startswith("hello.scope")


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


# ---- scopes and tenants (issue 45) -----------------------------------------

SCOPE = kv.Scope(model="py/llama-3.1-8b", revision="0e9e39f2", adapter="", kv_dtype="fp16", quantization="",
                 tokens_per_block=16, kv_heads=8, head_dim=128, first_layer=0, layers=32, tp_rank=0, tp_size=1,
                 pp_rank=0, pp_size=1, hash_algorithm="sha256-cbor", hash_seed="0", tenant="acme")


def scoped_engine(node: NodeProc, role: str, scope: kv.Scope | None, names: list[bytes]) -> dict:
    """Run tests/scoped_engine.py as an engine process; return its JSON line."""
    env = dict(os.environ, PYTHONPATH=str(CLIENT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    p = subprocess.run([sys.executable, str(Path(__file__).with_name("scoped_engine.py")), node.socket, role,
                        scope.encode() if scope is not None else "", *(n.decode() for n in names)],
                       env=env, capture_output=True, text=True, timeout=3 * wait())
    assert p.returncode == 0, f"the {role} engine: exit {p.returncode}: {p.stderr}"
    return json.loads(p.stdout)


def test_engines_share_rows_only_under_an_equal_scope(tenant_node: NodeProc) -> None:
    names = [f"scoped/{uuid.uuid4().hex}/{i}".encode() for i in range(4)]
    assert scoped_engine(tenant_node, "publish", SCOPE, names)["statuses"] == ["READY"] * 4

    same = scoped_engine(tenant_node, "fetch", kv.Scope.parse(SCOPE.encode()), names)
    assert same["presence"] == [kv.wire.PRESENT] * 4
    assert same["statuses"] == ["READY"] * 4 and same["equal"] == [True] * 4

    others = {
        "kv_dtype": SCOPE.replace(kv_dtype="fp8_e4m3"),
        "revision": SCOPE.replace(revision="0e9e39f3"),
        "tenant": SCOPE.replace(tenant=""),
        "layout": SCOPE.replace(tokens_per_block=32),
        "tp shard": SCOPE.replace(tp_rank=1, tp_size=2),
        "no scope": None,
    }
    for what, other in others.items():
        got = scoped_engine(tenant_node, "fetch", other, names)
        assert got["presence"] == [kv.wire.ABSENT] * 4, what
        assert got["statuses"] == ["MISS"] * 4, what
        assert got["poison"] == [True] * 4, f"{what}: a fetch under another scope wrote a slot"


def test_a_bad_scope_is_refused_before_dialling() -> None:
    nowhere = "/nonexistent/kvshare.sock"  # dialling it would raise FileNotFoundError
    with pytest.raises(kv.BadScopeError) as e:
        kv.connect(nowhere, "py-bad-scope", scope=SCOPE.replace(tp_rank=2, tp_size=2))
    assert not e.value.refused and e.value.field == "hello.scope.tp_rank"
    assert isinstance(e.value.__cause__, kv.InvalidScopeError)
    with pytest.raises(kv.BadScopeError) as e:
        kv.connect(nowhere, "py-bad-scope", scope=SCOPE.encode().replace("4:fp16", "04:fp16"))
    assert not e.value.refused and e.value.field == "hello.scope.kv_dtype"
    with pytest.raises(kv.BadScopeError) as e:
        kv.connect(nowhere, "py-bad-scope", scope=b"kvscope1;")  # type: ignore[arg-type]
    assert e.value.field == "hello.scope"


def test_a_scope_as_its_text_is_the_same_scope(tenant_node: NodeProc) -> None:
    names = [f"text/{uuid.uuid4().hex}".encode()]
    with kv.connect(tenant_node.socket, "py-scope-obj", scope=SCOPE) as a, a.lend(4096, 1) as lend:
        assert a.scope == SCOPE
        lend.publish([(0, [0], names)]).wait_quiesced(wait())
        with kv.connect(tenant_node.socket, "py-scope-text", scope=SCOPE.encode()) as b:
            assert b.scope == SCOPE
            assert list(b.lookup([names], every=True, timeout=wait()).rows) == [kv.wire.PRESENT]


def test_a_tenant_the_peer_may_not_declare_is_refused(tenant_node: NodeProc) -> None:
    for tenant in ("forbidden", "nobody-configured-me"):
        with pytest.raises(kv.TenantNotAllowedError) as e:
            kv.connect(tenant_node.socket, "py-tenant", scope=SCOPE.replace(tenant=tenant), timeout=wait())
        assert e.value.refused and e.value.field == "hello.scope.tenant" and tenant in e.value.message
    with kv.connect(tenant_node.socket, "py-tenant", scope=SCOPE, timeout=wait()) as c:
        assert c.stats(wait())["engines"] == 1, "the refused peers never attached"


def test_a_lend_over_the_tenants_limit_is_refused_and_takes_nothing(tenant_node: NodeProc) -> None:
    capped = SCOPE.replace(tenant="capped-lend")  # max_lent_bytes: 16 × 4096
    with kv.connect(tenant_node.socket, "py-cap-1", scope=capped) as one, \
            kv.connect(tenant_node.socket, "py-cap-2", scope=capped) as two:
        first = one.lend(4096, 8)
        second = two.lend(4096, 8)  # the limit exactly, over two sessions
        before, lent = one.stats(wait()), two.lent()
        with pytest.raises(kv.TenantLimitError) as e:
            two.lend(4096, 1)
        assert e.value.refused and e.value.field == "tenant.lent_bytes" and "capped-lend" in e.value.message
        after = one.stats(wait())
        assert (after["lends"], after["lent_bytes"]) == (before["lends"], before["lent_bytes"]), "nothing mapped"
        assert two.lent() == lent, "the refused lend's memory was freed by the client"
        with kv.connect(tenant_node.socket, "py-other", scope=SCOPE) as other, other.lend(4096, 8):
            pass  # another tenant's limits are its own
        first.return_(wait())
        two.lend(4096, 8).return_(wait())  # below the limit again: served
        second.return_(wait())


def test_a_transfer_over_the_tenants_bytes_in_flight_is_refused_whole(tenant_node: NodeProc) -> None:
    capped = SCOPE.replace(tenant="capped-flight")  # max_bytes_in_flight: 3 × 4096
    names = [f"flight/{uuid.uuid4().hex}/{i}".encode() for i in range(4)]
    with kv.connect(tenant_node.socket, "py-flight", scope=capped) as c, c.lend(4096, 4) as lend:
        for i, n in enumerate(names):
            lend.slot(0, i)[:] = row_bytes(n, 4096)
        with pytest.raises(kv.TenantLimitError) as e:
            lend.publish([(0, range(4), names)], timeout=wait())
        assert e.value.refused and e.value.field == "tenant.bytes_in_flight" and "capped-flight" in e.value.message
        assert list(c.lookup([names], every=True, timeout=wait()).rows) == [kv.wire.ABSENT] * 4, "no row published"
        a = lend.publish([(0, range(3), names[:3])], timeout=wait())  # the limit exactly: served
        assert a.outcome(wait()).all_ready()
        a.wait_quiesced(wait())
        assert list(c.lookup([names], every=True, timeout=wait()).rows) == [kv.wire.PRESENT] * 3 + [kv.wire.ABSENT]
