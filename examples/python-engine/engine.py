"""One engine process of the example: it publishes a prompt's prefix, or
reuses it.

    engine.py publish --socket S --rows N [--row-bytes B] [--layers L]
    engine.py fetch   --socket S --rows N --prompt-rows M [...]

A row is one block of a prompt's KV cache for one layer: region = layer,
slot = block, name = "<prompt>/<layer>/<block>". The publisher "computes"
every block of the first N (writes bytes that depend only on the name),
publishes them and waits until they are ready and quiesced. The fetcher
has a longer prompt of M blocks sharing that prefix: it looks every block
up (one group per layer; the bound is the prefix every layer has), fetches
the blocks present, checks every byte, computes the rest itself and
publishes them in turn. Each prints one line of JSON: what it moved.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time

import kvshare_node as kv


def block(name: bytes, size: int) -> bytes:
    """The bytes of a block as the model would compute them: fixed by its name."""
    return random.Random(name).randbytes(size)


def scope(layers: int) -> kv.Scope:
    """What makes this engine's blocks interchangeable with another's: the
    node makes every key under it, so only an engine of the same model,
    weights, dtype and layout finds these blocks."""
    return kv.Scope(model="example/tiny-llm", revision="1", adapter="", kv_dtype="fp16", quantization="",
                    tokens_per_block=16, kv_heads=8, head_dim=128, first_layer=0, layers=layers,
                    tp_rank=0, tp_size=1, pp_rank=0, pp_size=1, hash_algorithm="name-is-text", hash_seed="",
                    tenant="")


def names(prompt: str, layer: int, blocks: range) -> list[bytes]:
    return [f"{prompt}/{layer}/{b}".encode() for b in blocks]


def publish(lend: kv.Lend, layers: int, blocks: range, prompt: str, row_bytes: int, timeout: float) -> int:
    """Compute blocks into their slots and publish them; return the rows ready."""
    groups = []
    for layer in range(layers):
        ns = names(prompt, layer, blocks)
        for b, n in zip(blocks, ns):
            lend.slot(layer, b)[:] = block(n, row_bytes)
        groups.append((layer, list(blocks), ns))
    a = lend.publish(groups, deadline=timeout)
    out = a.outcome(timeout)
    a.wait_quiesced(timeout)  # only now may the slots be written again
    if not out.all_ready():
        raise SystemExit(f"publish: {out.ready} of {len(out.rows)} rows ready: {out.statuses}")
    return out.ready


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("role", choices=["publish", "fetch"])
    p.add_argument("--socket", required=True)
    p.add_argument("--prompt", default="prompt-a", help="the prompt whose prefix is shared")
    p.add_argument("--rows", type=int, default=24, help="blocks the publisher computes")
    p.add_argument("--prompt-rows", type=int, default=32, help="blocks of the fetcher's longer prompt")
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--row-bytes", type=int, default=64 << 10)
    p.add_argument("--timeout", type=float, default=10.0 * float(os.environ.get("KVSHARE_WAIT_SCALE") or "1"))
    a = p.parse_args()
    slots = max(a.rows, a.prompt_rows)
    report = {"role": a.role, "pid": os.getpid()}
    start = time.monotonic()
    with kv.connect(a.socket, f"py-{a.role}", scope=scope(a.layers), timeout=a.timeout) as c, \
            c.lend(a.row_bytes, slots, regions=a.layers, timeout=a.timeout) as lend:
        if a.role == "publish":
            report["published"] = publish(lend, a.layers, range(a.rows), a.prompt, a.row_bytes, a.timeout)
        else:
            wanted = [names(a.prompt, layer, range(a.prompt_rows)) for layer in range(a.layers)]
            presence = c.lookup(wanted, timeout=a.timeout)
            hit = presence.bound  # every layer has its first `hit` blocks
            f = lend.fetch([(layer, list(range(hit)), wanted[layer][:hit]) for layer in range(a.layers)],
                           deadline=a.timeout)
            out = f.outcome(a.timeout)
            f.wait_quiesced(a.timeout)  # only now may the slots be read
            if not out.all_ready():
                raise SystemExit(f"fetch: {out.ready} of {len(out.rows)} rows ready: {out.statuses}")
            bad = sum(bytes(lend.slot(layer, b)) != block(wanted[layer][b], a.row_bytes)
                      for layer in range(a.layers) for b in range(hit))
            if bad:
                raise SystemExit(f"fetch: {bad} rows differ from what the publisher computed")
            computed = publish(lend, a.layers, range(hit, a.prompt_rows), a.prompt, a.row_bytes, a.timeout)
            report.update(bound=hit, fetched=out.ready, checked_bytes=out.ready * a.row_bytes, computed=computed)
    report["seconds"] = round(time.monotonic() - start, 3)
    print(json.dumps(report), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
