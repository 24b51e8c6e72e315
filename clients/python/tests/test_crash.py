"""Crashes: an engine SIGKILLed mid-fetch, the node SIGKILLed, a session the node ends.

The node here is module node's test binary (TestHelperNode): its
``hold-get NAME`` holds every read of row NAME inside the store until
``release``, so a fetch stays in flight for as long as a test needs.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable

import pytest

import kvshare_node as kv
from conftest import CLIENT, NodeProc, row_bytes, start_helper_node, wait


# How long the node waits for access to a gone engine's memory to end
# before it keeps the memory as held (node.Config's EngineWait, 10 s by
# default): the tests' bounds on what comes after it allow for it.
ENGINE_WAIT = 10.0


def until(c: kv.Client, what: str, ok: Callable[[dict[str, int]], bool], bound: float) -> dict[str, int]:
    """The node's counters once ok holds; fails after bound seconds.

    The node's counters change on their own (a session ending, memory let
    go), with nothing to be told of: they are polled every 10 ms until then.
    """
    end = time.monotonic() + bound
    while True:
        s = c.stats(wait())
        if ok(s):
            return s
        assert time.monotonic() < end, f"{what}: not within {bound} s: {s}"
        time.sleep(0.01)  # the poll's interval


def round_trip(c: kv.Client, lend: kv.Lend, k: int) -> None:
    """Publish two rows and fetch them back into other slots, every byte checked."""
    names = [f"survivor/{k}/{i}".encode() for i in range(2)]
    for i, n in enumerate(names):
        lend.slot(0, i)[:] = row_bytes(n, 4096)
    a = lend.publish([(0, [0, 1], names)])
    assert a.outcome(wait()).all_ready()
    a.wait_quiesced(wait())
    f = lend.fetch([(0, [2, 3], names)])
    assert f.outcome(wait()).all_ready()
    f.wait_quiesced(wait())
    for i, n in enumerate(names):
        assert bytes(lend.slot(0, 2 + i)) == row_bytes(n, 4096)


def test_engine_killed_mid_fetch_the_node_keeps_its_memory_and_serves_the_other(helper_node: NodeProc) -> None:
    with kv.connect(helper_node.socket, "py-survivor") as survivor, survivor.lend(4096, 4) as lend:
        round_trip(survivor, lend, 0)
        lend.slot(0, 0)[:] = row_bytes(b"victim-get", 4096)
        lend.publish([(0, [0], [b"victim-get"])]).wait_quiesced(wait())
        base = survivor.stats(wait())

        helper_node.do("hold-get victim-get")
        env = dict(os.environ, PYTHONPATH=str(CLIENT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
        victim = subprocess.Popen([sys.executable, str(Path(__file__).with_name("victim_engine.py")),
                                   helper_node.socket, "victim-get"], env=env, stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True)
        try:
            assert victim.stdout is not None
            line = victim.stdout.readline()
            assert line.startswith("fetching "), f"the victim: {line!r} (exit {victim.poll()})"
            victim_bytes = int(line.split()[1])
            helper_node.do("held")
            s = survivor.stats(wait())
            assert s["lent_bytes"] == base["lent_bytes"] + victim_bytes and s["attempts_open"] == 1

            victim.send_signal(signal.SIGKILL)
            assert victim.wait(wait()) == -signal.SIGKILL
        finally:
            if victim.poll() is None:
                victim.kill()
                victim.wait()

        # The survivor is served while the node waits for the dead engine's
        # access to end ...
        round_trip(survivor, lend, 1)
        assert survivor.stats(wait())["lent_bytes"] == base["lent_bytes"] + victim_bytes
        # ... and once it gave up waiting: the session is gone, its lend kept.
        s = until(survivor, "the victim's lend held", lambda s: s["engines"] == 1 and s["held_lends"] == 1,
                  ENGINE_WAIT + wait())
        assert s["held_bytes"] == victim_bytes
        assert s["lent_bytes"] == base["lent_bytes"] + victim_bytes, "the node keeps the victim's lend mapped"
        assert s["attempts_open"] == 1, "the held fetch has not quiesced"
        for k in range(2, 4):
            round_trip(survivor, lend, k)  # served throughout
        assert survivor.stats(wait())["lent_bytes"] == base["lent_bytes"] + victim_bytes, "still kept"

        helper_node.do("release")
        s = until(survivor, "the victim's lend unmapped", lambda s: s["lent_bytes"] == base["lent_bytes"], wait())
        assert s["attempts_open"] == 0 and s["held_lends"] == 0 and s["held_bytes"] == 0
        round_trip(survivor, lend, 4)
    assert helper_node.stop() == 0, "the node shut down holding nothing"


def test_node_killed_every_attempt_in_flight_raises_with_the_evidence(helper_node: NodeProc) -> None:
    c = kv.connect(helper_node.socket, "py-crash")
    lend = c.lend(4096, 8)
    lend.slot(0, 0)[:] = row_bytes(b"crash", 4096)
    lend.publish([(0, [0], [b"crash"])]).wait_quiesced(wait())
    helper_node.do("hold-get crash")
    attempts = [lend.fetch([(0, [1 + k], [b"crash"])]) for k in range(3)]
    helper_node.do("held")
    assert not any(a.done() for a in attempts)

    helper_node.kill()
    for a in attempts:
        with pytest.raises(kv.NodeLostError) as e:
            a.outcome(wait())
        assert e.value.evidence is kv.Evidence.NODE_EXITED, e.value
        a.wait_quiesced(wait())  # the exit is proven: the slots are the engine's again
        assert a.quiesced()
    with pytest.raises(kv.ClosedError):
        c.lookup([[b"crash"]])
    assert c.evidence() is kv.Evidence.NODE_EXITED
    assert lend.state == "cut off" and c.lent() == (1, lend.nbytes)

    # The node restarts at the same path: the client connects again, the
    # old lend freed (its node's exit proven), a fresh one lent.
    restarted = start_helper_node(os.environ.get("KVSHARE_TEST_NODE_BIN") or helper_node.proc.args[0], helper_node.socket)
    try:
        c2 = c.reconnect(wait())
        assert lend.state == "returned" and c.lent() == (0, 0)
        with c2, c2.lend(4096, 4) as fresh:
            round_trip(c2, fresh, 0)
        assert restarted.stop() == 0
    finally:
        if restarted.proc.poll() is None:
            restarted.proc.kill()
            restarted.proc.wait()


def test_a_session_the_node_ends_while_it_lives_proves_nothing(helper_node: NodeProc) -> None:
    c = kv.connect(helper_node.socket, "py-cutoff")
    lend = c.lend(4096, 4)
    lend.slot(0, 0)[:] = row_bytes(b"cut", 4096)
    lend.publish([(0, [0], [b"cut"])]).wait_quiesced(wait())
    helper_node.do("hold-get cut")
    a = lend.fetch([(0, [1], [b"cut"])])
    helper_node.do("held")
    # A frame with a flag set: the node ends the session (goodbye Protocol)
    # while the store still holds the fetch into this engine's slot.
    c._send(bytes.fromhex("00000000080001000100000000000000"))
    # The node's goodbye comes once it gave up waiting for the held fetch's
    # access to end: the bound allows for its engine wait.
    with pytest.raises(kv.NodeLostError) as e:
        a.wait_quiesced(ENGINE_WAIT + wait())  # never quiesces while the node lives
    assert e.value.evidence is kv.Evidence.UNKNOWN
    assert isinstance(c.goodbye, kv.ProtocolError) and isinstance(e.value.goodbye, kv.ProtocolError)
    assert c.held_by_node == (1, lend.nbytes), "the goodbye says what the node keeps"
    try:  # the node may force the outcome before its goodbye: the row is not ready either way
        assert not a.outcome(wait()).all_ready()
    except kv.NodeLostError as lost:
        assert lost.evidence is kv.Evidence.UNKNOWN
    assert not a.quiesced()
    with pytest.raises(kv.NodeLostError):
        lend.return_(timeout=0.05)  # a short wait that must end: the node lives on
    with pytest.raises(kv.NodeLostError):
        lend.slot(0, 1)  # the store may still write it
    assert c.lent() == (1, lend.nbytes), "the cut-off lend stays mapped"
    helper_node.do("release")
    assert helper_node.stop() == 0
    lend.return_(wait())  # the node exited: now it is freed
    assert c.lent() == (0, 0) and a.quiesced()


def test_a_cancelled_fetch_whose_row_started_runs_on_and_quiesces(helper_node: NodeProc) -> None:
    with kv.connect(helper_node.socket, "py-cancel") as c, c.lend(4096, 2) as lend:
        lend.slot(0, 0)[:] = row_bytes(b"cx", 4096)
        lend.publish([(0, [0], [b"cx"])]).wait_quiesced(wait())
        helper_node.do("hold-get cx")
        a = lend.fetch([(0, [1], [b"cx"])])
        helper_node.do("held")
        a.cancel()
        a.cancel()  # idempotent
        # The node reads a session's frames in order: once the lookup is
        # answered, the cancel was taken, well formed, and forced nothing.
        assert list(c.lookup([[b"cx"]], timeout=wait()).rows) == [1]
        assert not a.done(), "a row the store started runs on after a cancel"
        helper_node.do("release")
        assert a.outcome(wait()).statuses == [kv.Status.READY]
        a.wait_quiesced(wait())
        assert bytes(lend.slot(0, 1)) == row_bytes(b"cx", 4096)
        a.cancel()  # after the outcome: nothing
    assert helper_node.stop() == 0


def test_close_says_what_the_node_holds_and_keeps_it(helper_node: NodeProc) -> None:
    c = kv.connect(helper_node.socket, "py-held")
    free = c.lend(4096, 1)
    kept = c.lend(4096, 2)
    kept.slot(0, 0)[:] = row_bytes(b"hx", 4096)
    kept.publish([(0, [0], [b"hx"])]).wait_quiesced(wait())
    helper_node.do("hold-get hx")
    a = kept.fetch([(0, [1], [b"hx"])])
    helper_node.do("held")
    # The return of a lend whose fetch the store holds is answered held
    # once the node's engine wait passed: the bound allows for it.
    report = c.close(ENGINE_WAIT + wait())
    assert report.returned == [free.id]
    assert report.held == {kept.id: kept.nbytes} and report.held_bytes == kept.nbytes
    assert kept.state == "held" and c.lent() == (1, kept.nbytes), "the client keeps the held lend mapped"
    with pytest.raises(kv.HeldError):
        kept.slot(0, 1)  # never to be reused
    assert not a.quiesced()
    helper_node.do("release")
    with kv.connect(helper_node.socket, "py-watch") as w:
        s = until(w, "the held lend unmapped", lambda s: s["lends"] == 0, wait())
        assert s["held_lends"] == 0
    assert helper_node.stop() == 0
