"""An engine process under a scope, for the two-engine scope tests.

Usage: scoped_engine.py SOCKET publish|fetch SCOPE NAME... (SCOPE: the
canonical text, or "" for none). publish writes each name's bytes
(conftest.row_bytes) into a slot and publishes them all; fetch fills its
slots with poison bytes, looks every name up and fetches them all. Each
prints one line of JSON: the rows' statuses, and for fetch the lookup's
answer and, per slot, whether it holds the name's bytes or its poison.
"""

import json
import sys

import kvshare_node as kv
from conftest import row_bytes, wait

SLOT = 4096
POISON = b"\xa5" * SLOT

sock, role, scope, names = sys.argv[1], sys.argv[2], sys.argv[3], [n.encode() for n in sys.argv[4:]]
with kv.connect(sock, f"py-scoped-{role}", scope=scope, timeout=wait()) as c, c.lend(SLOT, len(names)) as lend:
    slots = list(range(len(names)))
    out: dict = {}
    if role == "publish":
        for s, n in zip(slots, names):
            lend.slot(0, s)[:] = row_bytes(n, SLOT)
        a = lend.publish([(0, slots, names)], deadline=wait(), timeout=wait())
    else:
        for s in slots:
            lend.slot(0, s)[:] = POISON
        out["presence"] = list(c.lookup([names], every=True, timeout=wait()).rows)
        a = lend.fetch([(0, slots, names)], deadline=wait(), timeout=wait())
    out["statuses"] = [s.name for s in a.outcome(wait()).statuses]
    a.wait_quiesced(wait())
    if role == "fetch":
        out["equal"] = [bytes(lend.slot(0, s)) == row_bytes(n, SLOT) for s, n in zip(slots, names)]
        out["poison"] = [bytes(lend.slot(0, s)) == POISON for s in slots]
print(json.dumps(out), flush=True)
