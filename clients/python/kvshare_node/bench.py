"""Measure the Python client against the Go client and against Python's floor.

    python -m kvshare_node.bench [--kvshare BIN] [--rows 64] [--rounds 3]

In one run, against one ``kvshare node`` it starts over its embedded store:

1. **Throughput of 1 MiB rows**: the Python client and the Go client
   (``kvshare roundtrip-engine``, a process of its own) each publish
   ``--rows`` rows of 1 MiB in views of ``--view-rows``, all submitted at
   once, then look every row up and fetch them back; the time from the
   first submission to the last quiescence, rounds alternating between
   the clients. The bytes never pass through Python: the ratio says what
   the client's own frames and waits cost.
2. **The client's own work per 256-row submission**: encoding a publish
   of 256 rows (with the checks of the view ``Lend.publish`` makes, and
   without) and decoding its three replies (accepted, an outcome of 256
   rows, quiesced), beside Python's own send and receive of the same
   bytes over a socketpair, the batches of each interleaved.

It prints a table (medians) and the goals (throughput ≥ 0.9 of Go's;
encode + decode ≤ 1.5 × the socketpair floor), met or not. It measures;
it asserts nothing. ``KVSHARE_BIN`` names the kvshare binary too.
"""

from __future__ import annotations

import argparse
import json
import os
import select
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Callable

from . import wire
from .client import connect
from .lend import Lend

ROW = 1 << 20


def _rows(lend: Lend, seed: int, rows: int) -> None:
    block = (seed.to_bytes(8, "little") * (ROW // 8))
    for i in range(rows):
        v = lend.slot(0, i)
        v[:] = block
        v[:8] = i.to_bytes(8, "little")


def _names(seed: int, rows: int) -> list[bytes]:
    return [seed.to_bytes(8, "big") + i.to_bytes(8, "big") for i in range(rows)]


def python_round(socket_path: str, seed: int, rows: int, view_rows: int) -> tuple[float, float]:
    """Publish then look up and fetch rows of 1 MiB; seconds of each phase."""
    names = _names(seed, rows)
    views = [[(0, list(range(s, min(s + view_rows, rows))), names[s:s + view_rows])] for s in range(0, rows, view_rows)]
    with connect(socket_path, "bench-python") as c:
        with c.lend(ROW, rows) as lend:
            _rows(lend, seed, rows)
            start = time.perf_counter()
            attempts = [lend.publish(v) for v in views]
            for a in attempts:
                a.wait_quiesced()
                assert a.outcome().all_ready(), "a publish was not ready"
            put = time.perf_counter() - start
        with c.lend(ROW, rows) as lend:
            start = time.perf_counter()
            present = []
            for v in views:
                p = c.lookup([v[0][2]], every=True)
                keep = [i for i, x in enumerate(p.rows) if x == wire.PRESENT]
                present.append([(0, [v[0][1][i] for i in keep], [v[0][2][i] for i in keep])])
            attempts = [lend.fetch(v) for v in present]
            for a in attempts:
                a.wait_quiesced()
                assert a.outcome().all_ready(), "a fetch was not ready"
            get = time.perf_counter() - start
            first = lend.slot(0, rows - 1)
            assert bytes(first[:8]) == (rows - 1).to_bytes(8, "little") and bytes(first[8:16]) == seed.to_bytes(8, "little")
            del first
    return put, get


def go_round(kvshare: str, socket_path: str, seed: int, rows: int, view_rows: int) -> tuple[float, float]:
    """The Go client's publish and fetch phases (kvshare roundtrip-engine)."""
    out = []
    for role in ("publish", "fetch"):
        r = subprocess.run([kvshare, "roundtrip-engine", "--socket", socket_path, "--role", role, "--rows", str(rows),
                            "--row-bytes", str(ROW), "--view-rows", str(view_rows), "--seed", str(seed)],
                           stdout=subprocess.PIPE, text=True, check=True)
        rep = json.loads(r.stdout.strip().splitlines()[-1])
        moved = rep["moved"]
        assert moved["Delivered"] == rows, f"the Go {role} moved {moved['Delivered']} of {rows} rows"
        out.append(moved["Elapsed"] / 1e9)
    return out[0], out[1]


def _medians_ns(fs: list[Callable[[], None]], n: int, batches: int = 15) -> list[float]:
    """Nanoseconds per call of each f: the median of batches of n calls,
    the functions' batches interleaved so that a load on the machine
    weighs on each alike."""
    samples: list[list[float]] = [[] for _ in fs]
    for _ in range(batches):
        for f, got in zip(fs, samples):
            start = time.perf_counter_ns()
            for _ in range(n):
                f()
            got.append((time.perf_counter_ns() - start) / n)
    return [statistics.median(s) for s in samples]


def codec_vs_socketpair(rows: int = 256, n: int = 200) -> tuple[float, float, float]:
    """Nanoseconds per submission: the client's checks + encode + decode, its
    encode + decode alone, and the floor."""
    names = [f"bench/{i:06d}/layer-00".encode() for i in range(rows)]

    class _Lend(Lend):  # the view's checks and encoding, without a node
        def __init__(self) -> None:
            self.regions, self.slot_count, self.id = 1, rows, 1

    lend = _Lend()
    group = [(0, list(range(rows)), names)]
    replies = (wire.encode(wire.Accepted(), 7) + wire.encode(wire.Outcome(bytes([wire.READY]) * rows), 7)
               + wire.encode(wire.Quiesced(), 7))

    def decode() -> None:
        off = 0
        while off < len(replies):
            h = wire.parse_header(memoryview(replies)[off:off + wire.HEADER_SIZE], 1 << 20)
            end = off + wire.HEADER_SIZE + h.body_len
            wire.decode_body(h.type, replies[off + wire.HEADER_SIZE:end])
            off = end

    def client() -> None:  # what Lend.publish does before it sends, and the replies' decoding
        view, _ = lend._view("publish", False, group)
        body = wire.encode_body(wire.Transfer(False, 1, 0, view))
        wire._HEADER.pack(len(body), wire.PUBLISH, 0, 7) + body
        decode()

    slots = list(range(rows))

    def codec() -> None:  # the frames alone: no check of the view
        wire.encode(wire.Transfer(False, 1, 0, [wire.Group(0, slots, names)]), 7)
        decode()

    request = wire.encode(wire.Transfer(False, 1, 0, [wire.Group(0, list(range(rows)), names)]), 7)
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)

    def floor() -> None:
        a.sendall(request)
        got = 0
        while got < len(request):
            got += len(b.recv(1 << 16))
        b.sendall(replies)
        got = 0
        while got < len(replies):
            got += len(a.recv(1 << 16))

    try:
        _medians_ns([client, codec, floor], n // 4, 1)  # unmeasured: warm
        mine, frames, base = _medians_ns([client, codec, floor], n)
        return mine, frames, base
    finally:
        a.close()
        b.close()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--kvshare", default=os.environ.get("KVSHARE_BIN", ""), help="the kvshare binary (KVSHARE_BIN)")
    p.add_argument("--rows", type=int, default=64, help="rows of 1 MiB a phase moves")
    p.add_argument("--view-rows", type=int, default=16)
    p.add_argument("--rounds", type=int, default=3, help="rounds of each client, alternating")
    p.add_argument("--capacity", default="1GiB", help="the node's embedded store")
    a = p.parse_args(argv)
    if not a.kvshare:
        p.error("--kvshare BIN or KVSHARE_BIN is required")
    print(f"kvshare_node.bench: python {sys.version.split()[0]}, load average {os.getloadavg()[0]:.2f} "
          f"{os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}, {os.cpu_count()} CPUs")
    with tempfile.TemporaryDirectory(prefix="kvbench") as tmp:
        sock = os.path.join(tmp, "node.sock")
        node = subprocess.Popen([a.kvshare, "node", "--socket", sock, "--capacity", a.capacity],
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        try:
            assert node.stdout is not None
            ready, _, _ = select.select([node.stdout], [], [], 30)
            if not ready or "serving" not in node.stdout.readline():
                raise SystemExit("kvshare_node.bench: the node did not start")
            py_round = lambda s: python_round(sock, s, a.rows, a.view_rows)  # noqa: E731
            go = lambda s: go_round(a.kvshare, sock, s, a.rows, a.view_rows)  # noqa: E731
            py_round(1000)  # unmeasured: the store's first touch of its memory
            go(1001)
            res: dict[str, list[tuple[float, float]]] = {"python": [], "go": []}
            for r in range(a.rounds):
                first, second = (("python", py_round), ("go", go)) if r % 2 == 0 else (("go", go), ("python", py_round))
                for name, f in (first, second):
                    res[name].append(f(2000 + 10 * r + (name == "go")))
        finally:
            node.terminate()
            node.wait(30)
    mib = a.rows * ROW / 1e9
    table = {}
    for name, rounds in res.items():
        put = statistics.median(x[0] for x in rounds)
        get = statistics.median(x[1] for x in rounds)
        table[name] = (mib / put, mib / get)
    print(f"1 MiB rows, {a.rows} a phase in views of {a.view_rows}, median of {a.rounds} rounds (GB/s):")
    print(f"  {'client':8} {'publish':>9} {'fetch':>9}")
    for name, (put, get) in table.items():
        print(f"  {name:8} {put:9.2f} {get:9.2f}")
    rp, rg = table["python"][0] / table["go"][0], table["python"][1] / table["go"][1]
    print(f"  python / go: publish {rp:.2f}, fetch {rg:.2f} (goal ≥ 0.9: {'met' if min(rp, rg) >= 0.9 else 'missed'})")
    mine, frames, floor = codec_vs_socketpair()
    print(f"256-row submission, median µs: socketpair send + recv of the same bytes {floor / 1000:.1f}; "
          f"the client's encode + decode {frames / 1000:.1f} ({frames / floor:.2f}×, goal ≤ 1.5: "
          f"{'met' if frames / floor <= 1.5 else 'missed'}); with the checks of the view before it "
          f"{mine / 1000:.1f} ({mine / floor:.2f}×)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
