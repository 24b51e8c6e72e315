"""Two Python engine processes share a prompt's prefix through a kvshare node.

    /usr/bin/python3 examples/python-engine/run.py

It starts ``kvshare node`` (the binary KVSHARE_BIN names, else one built
with ``go build`` from this checkout) over its embedded store, runs the
publishing engine, then the fetching one, each a process of its own, and
checks their reports: the fetcher found exactly the published prefix,
fetched it with every byte as the publisher computed it, and computed and
published the rest. Exit status 0 when all of that holds.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
WAIT = 10.0 * float(os.environ.get("KVSHARE_WAIT_SCALE") or "1")
ROWS, PROMPT_ROWS, LAYERS = 24, 32, 4


def kvshare_bin(tmp: str) -> str:
    if path := os.environ.get("KVSHARE_BIN"):
        return path
    out = os.path.join(tmp, "kvshare")
    subprocess.run(["go", "build", "-o", out, "./tools/cmd/kvshare"], cwd=ROOT, check=True)
    return out


def engine(socket: str, role: str) -> dict:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "clients" / "python") + os.pathsep + os.environ.get("PYTHONPATH", ""))
    out = subprocess.run([sys.executable, str(HERE / "engine.py"), role, "--socket", socket, "--rows", str(ROWS),
                          "--prompt-rows", str(PROMPT_ROWS), "--layers", str(LAYERS)],
                         env=env, stdout=subprocess.PIPE, text=True, timeout=6 * WAIT)
    if out.returncode != 0:
        raise SystemExit(f"the {role} engine failed (exit {out.returncode})")
    report = json.loads(out.stdout.strip().splitlines()[-1])
    print(f"{role:8} engine pid {report['pid']}: {json.dumps(report)}")
    return report


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="kvpyex") as tmp:
        socket = os.path.join(tmp, "node.sock")
        node = subprocess.Popen([kvshare_bin(tmp), "node", "--socket", socket, "--capacity", "256MiB"],
                                stdout=subprocess.PIPE, text=True)
        try:
            assert node.stdout is not None
            ready, _, _ = select.select([node.stdout], [], [], WAIT)
            line = node.stdout.readline() if ready else ""
            if "serving" not in line:
                raise SystemExit(f"the node did not start: {line!r}")
            pub = engine(socket, "publish")
            fet = engine(socket, "fetch")
        finally:
            node.terminate()
            node.wait(WAIT)
        problems = []
        if pub["published"] != ROWS * LAYERS:
            problems.append(f"published {pub['published']} rows, want {ROWS * LAYERS}")
        if fet["bound"] != ROWS:
            problems.append(f"the fetcher's bound is {fet['bound']}, want the published prefix {ROWS}")
        if fet["fetched"] != ROWS * LAYERS:
            problems.append(f"fetched {fet['fetched']} rows, want {ROWS * LAYERS}")
        if fet["computed"] != (PROMPT_ROWS - ROWS) * LAYERS:
            problems.append(f"computed {fet['computed']} rows, want {(PROMPT_ROWS - ROWS) * LAYERS}")
        if pub["pid"] in (fet["pid"], node.pid) or fet["pid"] == node.pid:
            problems.append("the engines and the node are not three processes")
        if node.returncode != 0:
            problems.append(f"the node exited {node.returncode}: it did not get everything back")
        for p in problems:
            print("python-engine:", p)
        if problems:
            return 1
        print(f"python-engine: ok: {ROWS} of {PROMPT_ROWS} blocks × {LAYERS} layers shared, "
              f"{fet['checked_bytes']} bytes fetched and checked, the rest computed and published")
        return 0


if __name__ == "__main__":
    sys.exit(main())
