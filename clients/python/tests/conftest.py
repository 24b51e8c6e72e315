"""Fixtures: real node processes for the client's tests.

``kvshare node`` (module tools) serves the ordinary tests: KVSHARE_BIN
names a built binary, else it is built once per session from this
checkout. The node module's test binary serves the tests that need the
node's test control (a read held inside the store): KVSHARE_TEST_NODE_BIN,
else built once. KVSHARE_NODE_STORE, when set, names a store file the
nodes serve (the real-pool tier: a Mooncake pool) instead of the embedded
store. Every bound on a wait is :func:`wait` (10 s × KVSHARE_WAIT_SCALE).
"""

from __future__ import annotations

import faulthandler
import os
import select
import signal
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

import pytest

ROOT = Path(__file__).resolve().parents[3]
CLIENT = Path(__file__).resolve().parents[1]


def wait() -> float:
    """The one bound of every wait in these tests: 10 s × KVSHARE_WAIT_SCALE."""
    return 10.0 * float(os.environ.get("KVSHARE_WAIT_SCALE") or "1")


@pytest.fixture(autouse=True)
def _hung_test_fails() -> Iterator[None]:
    """A test that waits without a bound of its own (a call given no
    timeout) cannot hang the suite: after 30 × wait() the process prints
    every thread's stack and exits."""
    faulthandler.dump_traceback_later(30 * wait(), exit=True)
    yield
    faulthandler.cancel_dump_traceback_later()


def _built(env: str, what: str, cmd: list[str], cwd: Path, tmp: Path) -> str:
    if path := os.environ.get(env):
        return path
    out = tmp / what
    subprocess.run([*cmd, "-o", str(out), "."], cwd=cwd, check=True)
    return str(out)


@pytest.fixture(scope="session")
def kvshare_bin(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The kvshare command (KVSHARE_BIN, else built from this checkout)."""
    return _built("KVSHARE_BIN", "kvshare", ["go", "build"], ROOT / "tools" / "cmd" / "kvshare",
                  tmp_path_factory.mktemp("bin"))


@pytest.fixture(scope="session")
def node_test_bin(tmp_path_factory: pytest.TempPathFactory) -> str:
    """Module node's test binary, whose TestHelperNode is a controllable node."""
    return _built("KVSHARE_TEST_NODE_BIN", "nodetest", ["go", "test", "-c"], ROOT / "node",
                  tmp_path_factory.mktemp("bin"))


def _short_dir() -> str:
    # A socket's path is capped at 108 bytes: keep it short.
    return tempfile.mkdtemp(prefix="kvpy")


@dataclass
class NodeProc:
    """A node process: its socket and process, and (helper nodes) its control."""

    socket: str
    proc: subprocess.Popen
    control: bool = False
    lines: list[str] = field(default_factory=list)

    @property
    def pid(self) -> int:
        return self.proc.pid

    def answer(self) -> str:
        """The node's next line of control ("ok …"), within the tests' bound."""
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        while True:
            r, _, _ = select.select([fd], [], [], wait())
            assert r, "the node process did not answer in time"
            line = self.proc.stdout.readline()
            assert line, f"the node process ended (exit {self.proc.poll()})"
            if line.startswith("node: "):
                return line[len("node: "):].strip()

    def do(self, command: str) -> str:
        """Send a control command; require its "ok" answer."""
        assert self.control and self.proc.stdin is not None
        self.proc.stdin.write(command + "\n")
        self.proc.stdin.flush()
        line = self.answer()
        assert line.startswith("ok "), f"node {command}: {line}"
        return line

    def kill(self) -> None:
        """SIGKILL the node and reap it."""
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(wait())

    def stop(self) -> int:
        """End the node as its operator would; return its exit status."""
        if self.proc.poll() is None:
            if self.control:
                assert self.proc.stdin is not None
                self.proc.stdin.close()
            else:
                self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(wait())


def start_kvshare_node(kvshare_bin: str, socket: str, *flags: str) -> NodeProc:
    """Start ``kvshare node`` at socket and wait until it serves."""
    store = os.environ.get("KVSHARE_NODE_STORE")
    args = [kvshare_bin, "node", "--socket", socket, *(("--store", store) if store else ("--capacity", "128MiB")), *flags]
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    r, _, _ = select.select([proc.stdout], [], [], wait() * 3)  # a pool's store may take a while to open
    line = proc.stdout.readline() if r else ""
    if "serving" not in line:
        proc.kill()
        proc.wait()
        raise AssertionError(f"kvshare node did not serve: {line!r} (exit {proc.poll()})")
    return NodeProc(socket, proc)


def start_helper_node(node_test_bin: str, socket: str) -> NodeProc:
    """Start module node's controllable node (memdrv store) at socket."""
    env = dict(os.environ, KVSHARE_TEST_NODE_SOCKET=socket, KVSHARE_TEST_NODE_STORE="memdrv")
    proc = subprocess.Popen([node_test_bin, "-test.run=^TestHelperNode$", "-test.v=false"], env=env,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    p = NodeProc(socket, proc, control=True)
    assert p.answer() == f"ok ready pid {proc.pid}"
    return p


def _cleanup(p: NodeProc) -> None:
    if p.proc.poll() is None:
        p.proc.kill()
        p.proc.wait()


@pytest.fixture
def sockdir() -> Iterator[str]:
    d = _short_dir()
    yield d
    for f in os.listdir(d):
        os.unlink(os.path.join(d, f))
    os.rmdir(d)


@pytest.fixture
def node(kvshare_bin: str, sockdir: str) -> Iterator[NodeProc]:
    """A ``kvshare node`` serving the embedded store (or KVSHARE_NODE_STORE)."""
    p = start_kvshare_node(kvshare_bin, os.path.join(sockdir, "n.sock"))
    yield p
    _cleanup(p)


#: The tenants of :func:`tenant_node`: name → spec (``kvshare node --tenant``).
#: This process's uid may declare all but "forbidden"; two have limits.
TENANTS = {
    "acme": f"uids={os.getuid()}",
    "forbidden": f"uids={os.getuid() + 1}",
    "capped-lend": f"uids={os.getuid()} max_lent_bytes={16 << 12}",
    "capped-flight": f"uids={os.getuid()} max_bytes_in_flight={3 << 12}",
}


@pytest.fixture
def tenant_node(kvshare_bin: str, sockdir: str) -> Iterator[NodeProc]:
    """A ``kvshare node`` (as :func:`node`) with the tenants of TENANTS."""
    flags = [f for name, spec in TENANTS.items() for f in ("--tenant", f"{spec} tenant={name}")]
    p = start_kvshare_node(kvshare_bin, os.path.join(sockdir, "t.sock"), *flags)
    yield p
    _cleanup(p)


@pytest.fixture
def helper_node(node_test_bin: str, sockdir: str) -> Iterator[NodeProc]:
    """A node with the test control (hold-get, held, release) over memdrv."""
    p = start_helper_node(node_test_bin, os.path.join(sockdir, "h.sock"))
    yield p
    _cleanup(p)


def row_bytes(name: bytes, n: int) -> bytes:
    """The bytes a test writes for row ``name``: distinct per name and offset."""
    seed = (name * (n // len(name) + 1))[:n]
    return bytes((b + i) & 0xFF for i, b in enumerate(seed))
