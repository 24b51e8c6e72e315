"""An engine process the crash test SIGKILLs mid-fetch.

Usage: victim_engine.py SOCKET NAME. It lends four 4 KiB slots, fetches
row NAME into slot 2, prints "fetching <lend bytes>" once the node
accepted the fetch, and waits for its stdin to end (it never does: the
test kills it).
"""

import sys

import kvshare_node as kv

c = kv.connect(sys.argv[1], "py-victim")
lend = c.lend(4096, 4)
a = lend.fetch([(0, [2], [sys.argv[2].encode()])])
print(f"fetching {lend.nbytes}", flush=True)
sys.stdin.read()
