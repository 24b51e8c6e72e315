"""Fuzzing the decoder and the client's reader: only the client's own errors.

Seeded ``random`` stands in for a property-test library: random frames,
and the shared vectors mutated (bytes flipped, cut, grown, spliced).
KVSHARE_FUZZ_SEED picks the seed (printed on failure), KVSHARE_FUZZ_N the
number of cases.
"""

from __future__ import annotations

import os
import random
import socket
import struct
import threading
import time

import kvshare_node as kv
from kvshare_node import wire
from conftest import wait
from test_vectors import DOC

SEED = int(os.environ.get("KVSHARE_FUZZ_SEED") or "44")
N = int(os.environ.get("KVSHARE_FUZZ_N") or "20000")
FRAMES = [bytes.fromhex(v["hex"]) for v in DOC["vectors"]]


def mutate(rng: random.Random, b: bytes) -> bytes:
    b = bytearray(b)
    for _ in range(rng.randint(1, 4)):
        op = rng.randrange(6)
        if op == 0 and b:
            b[rng.randrange(len(b))] = rng.randrange(256)
        elif op == 1 and b:
            del b[rng.randrange(len(b)):]
        elif op == 2:
            b[rng.randrange(len(b) + 1):0] = rng.randbytes(rng.randint(1, 16))
        elif op == 3 and len(b) >= 4:
            # a plausible length: the rest of the frame, give or take
            struct.pack_into("<I", b, 0, max(0, len(b) - 16 + rng.randint(-3, 3)))
        elif op == 4 and len(b) >= 16:
            struct.pack_into("<H", b, 4, rng.choice(list(wire.TYPE_NAMES)))
        else:
            b += rng.choice(FRAMES)[16:]
    return bytes(b)


def test_decoding_raises_nothing_but_the_clients_own_error() -> None:
    rng = random.Random(SEED)
    decoded = failed = 0
    for i in range(N):
        frame = mutate(rng, rng.choice(FRAMES)) if i % 4 else rng.randbytes(rng.randint(0, 64))
        try:
            h, m = wire.decode(frame, DOC["max_body"])
        except kv.NodeError as e:
            assert e.code in (1, 5, 8), f"seed {SEED} case {i}: {frame.hex()}: code {e.code}"
            failed += 1
            continue
        except Exception as e:  # noqa: BLE001 - the property under test
            raise AssertionError(f"seed {SEED} case {i}: {frame.hex()}: {type(e).__name__}: {e}") from e
        decoded += 1
        # What decodes encodes back to the same frame: the encoding is canonical.
        assert wire.encode(m, h.request_id) == frame, f"seed {SEED} case {i}: {frame.hex()}"
    assert decoded > N // 100 and failed > N // 2, (decoded, failed)


def fake_node(conn: socket.socket, after_welcome: bytes) -> None:
    """Answer the hello with a welcome, then send the given bytes and close."""
    try:
        hdr = conn.recv(16, socket.MSG_WAITALL)
        n, _, _, rid = struct.unpack("<IHHQ", hdr)
        conn.recv(n, socket.MSG_WAITALL)
        conn.sendall(wire.encode(wire.Welcome(1, os.getpid(), 1 << 20, 8, 64, 1 << 30), rid) + after_welcome)
        conn.shutdown(socket.SHUT_WR)
        while conn.recv(1 << 16):
            pass
    finally:
        conn.close()


def test_the_client_survives_any_bytes_from_the_node(sockdir: str) -> None:
    path = os.path.join(sockdir, "fuzz.sock")
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(path)
    srv.listen(4)
    rng = random.Random(SEED)
    try:
        for i in range(200):
            tail = b"".join(mutate(rng, rng.choice(FRAMES)) for _ in range(rng.randint(1, 4)))
            t = threading.Thread(target=lambda: fake_node(srv.accept()[0], tail))
            t.start()
            c = kv.connect(path, "fuzzed", timeout=wait())
            try:
                # Whatever came, the stream ends: every call raises the
                # client's own error, never another.
                try:
                    c.lookup([[b"a", b"b"]], timeout=wait())
                except (kv.KVShareError, TimeoutError) as e:
                    assert not isinstance(e, TimeoutError), f"seed {SEED} case {i}: {tail.hex()}: hung"
                assert c._wait(lambda: c.ended is not None, time.monotonic() + wait()), f"seed {SEED} case {i}: hung"
            finally:
                c.close(0)
                t.join(wait())
    finally:
        srv.close()

