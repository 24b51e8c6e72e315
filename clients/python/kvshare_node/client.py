"""The engine's session with a node: one Unix stream socket."""

from __future__ import annotations

import array
import itertools
import logging
import os
import select
import socket
import threading
import time
import weakref
from dataclasses import dataclass, field
from typing import Callable, Iterable, Sequence

from . import wire
from .attempt import Attempt, _deadline
from .errors import (
    BadScopeError,
    ClosedError,
    Evidence,
    ForkedError,
    InvalidScopeError,
    KVShareError,
    LimitError,
    NodeError,
    NodeLostError,
    NoEvidenceError,
    ProtocolError,
    VersionError,
    error_for_code,
)
from .evidence import Watch
from .lend import Lend, Names, check_names
from .scope import Scope

log = logging.getLogger("kvshare_node")

#: How long, when the stream ends without the node's goodbye, the client
#: waits for the node's process to exit before it fails what is open, so
#: that the errors can already say NODE_EXITED (a crashing process closes
#: its sockets a moment before its exit shows on its pidfd).
EXIT_GRACE = 0.1

_RECV_BYTES = 1 << 18

# Every client of this process, to refuse use in a forked child.
_clients: "weakref.WeakSet[Client]" = weakref.WeakSet()


def _after_fork_in_child() -> None:
    for c in list(_clients):
        c._forked = True


os.register_at_fork(after_in_child=_after_fork_in_child)


@dataclass(frozen=True)
class Presence:
    """A lookup's answer: one value a name, in lookup order, and the bound.

    ``rows`` holds 0 unknown, 1 present, 2 absent, 3 in-flight a name;
    ``bound`` is the least over the groups of each group's present prefix.
    """

    rows: bytes
    bound: int

    def present(self) -> int:
        return self.rows.count(wire.PRESENT)


@dataclass
class CloseReport:
    """What :meth:`Client.close` gave back and what stays held.

    ``returned``: lends the node unmapped (the client unmapped them too,
    or will once the last slot view of each is gone: ``views_alive``).
    ``held``: lend id → bytes the node keeps mapped (access not proven
    ended); the client keeps them mapped too. ``cut_off``: lends whose
    connection ended before they were returned (kept until the node's
    exit is proven). ``goodbye_sent``: whether the goodbye was written.
    """

    returned: list[int] = field(default_factory=list)
    held: dict[int, int] = field(default_factory=dict)
    cut_off: list[int] = field(default_factory=list)
    views_alive: list[int] = field(default_factory=list)
    goodbye_sent: bool = False

    @property
    def held_bytes(self) -> int:
        return sum(self.held.values())


class _Call:
    """A request answered by one frame (hello, lend, lookup, return, stats)."""

    def __init__(self, want: tuple[type, ...]) -> None:
        self.want = want
        self.reply: wire.Message | None = None
        self.error: KVShareError | None = None
        self.orphan: Callable[[wire.Message | None], None] | None = None

    def _deliver(self, m: wire.Message) -> bool:
        if isinstance(m, wire.Refused):
            self.error = error_for_code(m.code, m.field, m.message)
        elif isinstance(m, self.want):
            self.reply = m
        else:
            raise ProtocolError(wire.TYPE_NAMES[wire.type_of(m)], "a reply of the wrong kind")
        if self.orphan is not None:
            self.orphan(m)
        return True

    def _lose(self, err: NodeLostError, exited: bool) -> None:
        self.error = err
        if self.orphan is not None:
            self.orphan(None)

    @property
    def answered(self) -> bool:
        return self.reply is not None or self.error is not None


def connect(path: str, engine: str, *, scope: Scope | str | None = None, timeout: float | None = 10.0) -> "Client":
    """Connect to the node at ``path`` as ``engine`` and wait for its welcome.

    ``engine`` names the engine in the node's logs and counters (1 to 64
    bytes of UTF-8). ``scope`` is the :class:`~kvshare_node.scope.Scope`
    every key of the session is made under; a str must be a scope's
    canonical encoding (:meth:`Scope.encode`); None or "" declare none (the
    node serves the session under its own prefix, unless it requires a
    scope). A scope that breaks a rule raises
    :class:`~kvshare_node.errors.BadScopeError` with ``refused`` false and
    the field (``hello.scope.tp_rank``) before anything is dialled. A node
    that refuses the hello raises its refusal (:class:`BadScopeError`,
    :class:`TenantNotAllowedError`, :class:`VersionError`,
    :class:`~kvshare_node.errors.ScopeError`, ...; a code this client does
    not know, :class:`~kvshare_node.errors.UnknownCodeError`).
    """
    n = len(engine.encode("utf-8"))
    if not 1 <= n <= wire.MAX_ENGINE_NAME:
        raise ProtocolError("hello.engine", f"{n} bytes, want 1 to {wire.MAX_ENGINE_NAME}")
    declared = _declared_scope(scope)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.settimeout(timeout)
        sock.connect(path)
        sock.settimeout(None)
    except OSError:
        sock.close()
        raise
    c = Client(sock, path, engine, declared)
    try:
        c._hello(_deadline(timeout))
    except BaseException:
        c._end("the hello was not answered", None, crash_like=False)
        raise
    return c


def _declared_scope(scope: Scope | str | None) -> Scope | None:
    """The scope a hello declares, checked: BadScopeError (not refused by
    the node) naming the field when it breaks a rule."""
    try:
        if isinstance(scope, Scope):
            scope.validate()
            return scope
        if scope is None or scope == "":
            return None
        if isinstance(scope, str):
            return Scope.parse(scope)
    except InvalidScopeError as e:
        raise BadScopeError("hello.scope" + (f".{e.field}" if e.field else ""), str(e)) from e
    raise BadScopeError("hello.scope", f"a {type(scope).__name__}, want a Scope, its canonical text, or None")


class Client:
    """An engine's session with a node (see :func:`connect`).

    Thread-safe and synchronous: every method may be called from any
    thread; a call that waits for the node reads the socket itself, one
    thread at a time, and hands each frame to the request it answers, so
    several threads may wait on different attempts with no background
    thread. Read replies promptly: a node whose replies to this session
    pile up ends it (slow reader); :meth:`poll` reads what has come
    without blocking, and :meth:`fileno` is the socket to select on.

    Use it as a context manager: leaving it closes the session
    (:meth:`close`), giving back the lends it can.
    """

    def __init__(self, sock: socket.socket, path: str, engine: str, scope: Scope | None) -> None:
        self._sock = sock
        self._fd = sock.fileno()
        self.path = path
        self.engine = engine
        #: The session's scope (None: none declared).
        self.scope = scope
        self.welcome: wire.Welcome | None = None
        self.watch = Watch()
        self._ids = itertools.count(1)
        self._cond = threading.Condition(threading.RLock())
        self._send_lock = threading.Lock()
        self._reading = False
        self._rbuf = bytearray()
        self._max_read = wire.NODE_BODY_FIXED
        self._pending: dict[int, Attempt | _Call] = {}
        self._ended: str | None = None
        self._goodbye: NodeError | None = None
        self._held_by_goodbye: tuple[int, int] | None = None
        self._closing = False
        self._exited = False
        self._cut_off: list[Attempt] = []
        self._lends: dict[int, Lend] = {}
        self._forked = False
        _clients.add(self)

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        state = f"ended: {self._ended}" if self._ended else "open"
        return f"<kvshare_node.Client {self.engine!r} at {self.path}: {state}>"

    # ---- the session ------------------------------------------------------

    def _hello(self, deadline: float | None) -> None:
        m = self._call(wire.Hello(wire.VERSION, self.engine, self.scope.encode() if self.scope is not None else ""), (wire.Welcome,), deadline)
        assert isinstance(m, wire.Welcome)
        if m.version != wire.VERSION:
            raise VersionError("welcome.version", f"the node speaks version {m.version}, the client {wire.VERSION}")
        self.welcome = m
        self._max_read = wire.NODE_BODY_FIXED + m.max_rows
        self.watch = Watch.peer(self._sock, m.node_pid)
        if not self.watch.proves:
            log.info("kvshare_node: the node's exit cannot be proven (%s): memory lent to it is kept for good if the connection ends", self.watch.via)

    def _check_usable(self) -> None:
        if self._forked:
            raise ForkedError("this connection was inherited by a forked child: connect again in the child")
        if self._ended is not None:
            raise ClosedError(f"the connection to the node ended: {self._ended}", self._goodbye)
        if self._closing:
            raise ClosedError("the connection is being closed by the engine")

    def fileno(self) -> int:
        """The socket's fd: select on it for readability, then :meth:`poll`."""
        return self._fd

    @property
    def ended(self) -> str | None:
        """Why the connection ended, or None while it is open."""
        return self._ended

    @property
    def goodbye(self) -> NodeError | None:
        """The node's goodbye as its code's error, if it sent one."""
        return self._goodbye

    @property
    def held_by_node(self) -> tuple[int, int] | None:
        """What the node's goodbye said it still holds of this session's
        lends, (lends, bytes); None without a goodbye. Informative only:
        a lend cut off stays the node's until its exit is proven."""
        return self._held_by_goodbye

    def poll(self) -> None:
        """Read and hand out whatever the node sent, without blocking."""
        if self._forked:
            raise ForkedError("this connection was inherited by a forked child: connect again in the child")
        self._wait(lambda: False, time.monotonic())

    def stats(self, timeout: float | None = None) -> dict[str, int]:
        """The node's counters (PROTOCOL.md §4.9), by name."""
        m = self._call(wire.Stats(), (wire.StatsReply,), _deadline(timeout))
        assert isinstance(m, wire.StatsReply)
        return m.counters

    def lookup(self, groups: Iterable[Sequence[Names]], *, every: bool = False, timeout: float | None = None) -> Presence:
        """Ask which names the store holds (no lend needed).

        ``groups`` is a list of groups, each a list of names (bytes, or str
        as UTF-8). With ``every`` false the node asks about a group only up
        to its first name not present (and later groups up to the least
        such prefix); the others read unknown.
        """
        self._check_usable()
        gs = [check_names(list(g), f"lookup.groups[{i}]") for i, g in enumerate(groups)]
        w = self._limits()
        if (n := sum(map(len, gs))) > w.max_rows:
            raise LimitError("lookup.rows", f"{n} names, over the node's max_rows of {w.max_rows}")
        m = self._call(wire.Lookup(every, gs), (wire.Presence,), _deadline(timeout))
        assert isinstance(m, wire.Presence)
        if len(m.rows) != n:
            self._end(f"the node broke the protocol: a lookup of {n} names answered with {len(m.rows)}", None, crash_like=False)
            raise ProtocolError("presence.rows", f"{len(m.rows)} values for {n} names")
        return Presence(bytes(m.rows), m.bound)

    def lend(self, slot_bytes: int, slot_count: int, regions: int = 1, *, fd: int | None = None,
             timeout: float | None = None) -> Lend:
        """Lend the node ``regions`` regions of ``slot_count`` slots of ``slot_bytes``.

        Without ``fd`` the client creates the memfd (close-on-exec, sealed
        against shrinking and growing); with ``fd``, the caller's memfd is
        checked (open, a memfd, sealed against shrinking, not against
        writing, large enough) and a duplicate lent. A bad geometry raises
        :class:`~kvshare_node.errors.BadLendError` naming the field before
        anything reaches the node; the node's refusal raises its code's
        error. See :class:`Lend` for the slots.
        """
        self._check_usable()
        return Lend._create(self, slot_bytes, slot_count, regions, fd, _deadline(timeout))

    def lent(self) -> tuple[int, int]:
        """The lends whose memory the client maps now, and their bytes.

        Lends in use and lends it keeps because it cannot prove the node
        let go of them (held, or cut off by the connection's end).
        """
        with self._cond:
            lends = [l for l in self._lends.values() if not l._memory.released]
        return len(lends), sum(l.nbytes for l in lends)

    def close(self, timeout: float | None = 10.0) -> CloseReport:
        """Return what it can, say goodbye, close; report what stays held.

        Every lend still lent is returned first (waiting up to ``timeout``
        in all): returned ones are unmapped (or, while a slot view of one
        is alive — ``mmap.close()`` refuses then — closed and left to go
        with the last view); held ones stay mapped, never to be reused.
        Attempts not quiesced by then never quiesce for the client.
        """
        report = CloseReport()
        if self._forked:
            raise ForkedError("this connection was inherited by a forked child: close it in the parent")
        deadline = _deadline(timeout)
        for lend in list(self._lends.values()):
            if lend.state == "lent" and self._ended is None:
                try:
                    lend.return_(timeout=None if deadline is None else max(0.0, deadline - time.monotonic()))
                except KVShareError as e:
                    log.warning("kvshare_node: close: return of lend %d: %s", lend.id, e)
                except TimeoutError as e:
                    log.warning("kvshare_node: close: return of lend %d: %s", lend.id, e)
            if lend.state == "returned":
                report.returned.append(lend.id)
                if lend._views_alive:
                    report.views_alive.append(lend.id)
            elif lend.state == "held":
                report.held[lend.id] = lend.nbytes
            elif lend.state == "cut off":
                report.cut_off.append(lend.id)
        with self._cond:
            first = not self._closing and self._ended is None
            self._closing = True
        if first:
            try:
                self._send(wire.encode(wire.ClientGoodbye("closed by the engine"), next(self._ids)))
                report.goodbye_sent = True
            except OSError:
                pass
            self._end("closed by the engine", None, crash_like=False)
        self._sock.close()
        return report

    # ---- the node's exit --------------------------------------------------

    def evidence(self) -> Evidence:
        """What the client can prove about the node's process now (never blocks)."""
        if self._exited or self.watch.exited_within(0):
            self._proven()
            return Evidence.NODE_EXITED
        return Evidence.UNKNOWN

    def wait_node_exit(self, timeout: float | None = None) -> None:
        """Wait up to ``timeout`` s for the node's process to exit.

        On return the exit is proven: every attempt the connection's end
        cut off quiesces, and lends cut off may be returned (freed).
        Raises NoEvidenceError when the client has no pidfd of the node,
        TimeoutError when it did not exit in time.
        """
        if self._exited:
            return
        if not self.watch.proves:
            raise NoEvidenceError(f"the exit of the node (pid {self.watch.pid}) cannot be proven: {self.watch.via}")
        if not self.watch.exited_within(timeout):
            raise TimeoutError(f"the node (pid {self.watch.pid}) did not exit within {timeout} s")
        self._proven()

    def _proven(self) -> None:
        with self._cond:
            if self._exited:
                return
            self._exited = True
            cut, self._cut_off = self._cut_off, []
            for a in cut:
                a._exit_proven()
            self._cond.notify_all()
        self.watch.close()

    def reconnect(self, timeout: float | None = 10.0) -> "Client":
        """Connect again after the node ended: a new session, same engine.

        The old node's exit must be proven first (the old lends' slots are
        never reused before); then the lends cut off are freed, and the
        new node (a restart at the same path) is dialled until it answers
        within ``timeout``. Raises NoEvidenceError or TimeoutError.
        """
        deadline = _deadline(timeout)
        self.wait_node_exit(timeout)
        for lend in list(self._lends.values()):
            if lend.state == "cut off":
                lend.return_(timeout=0)
        while True:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            try:
                return connect(self.path, self.engine, scope=self.scope, timeout=left)
            except (FileNotFoundError, ConnectionRefusedError):
                if deadline is not None and time.monotonic() >= deadline:
                    raise TimeoutError(f"no node answered at {self.path} within {timeout} s") from None
                time.sleep(0.01)  # the node is starting: its socket is not there yet

    # ---- requests ---------------------------------------------------------

    def _limits(self) -> wire.Welcome:
        assert self.welcome is not None, "welcomed at connect"
        return self.welcome

    def _register(self, r: Attempt | _Call | None) -> int:
        """A new request id, with r waiting for its replies."""
        self._check_usable()
        rid = next(self._ids)
        if r is not None:
            if isinstance(r, Attempt):
                r.id = rid
            with self._cond:
                self._check_usable()
                self._pending[rid] = r
        return rid

    def _call(self, m: wire.Message, want: tuple[type, ...], deadline: float | None, fd: int = -1,
              orphan: Callable[[wire.Message | None], None] | None = None) -> wire.Message:
        """Send m, wait for its one reply; raise its refusal, or TimeoutError."""
        k = _Call(want)
        rid = self._register(k)
        try:
            self._send(wire.encode(m, rid), fd)
        except OSError as e:
            self._fail_send(rid, e)
        if not self._wait(lambda: k.answered, deadline):
            with self._cond:
                if not k.answered:
                    k.orphan = orphan
                    raise TimeoutError(f"{wire.TYPE_NAMES[wire.type_of(m)]}: the node did not answer in time")
        if k.error is not None:
            raise k.error
        assert k.reply is not None
        return k.reply

    def _submit(self, t: wire.Transfer, rows: int, deadline: float | None) -> Attempt:
        """Send a publish or fetch and wait for its acceptance."""
        kind = "fetch" if t.fetch else "publish"
        w = self._limits()
        a = Attempt(self, 0, kind, rows)
        frame_body = wire.encode_body(t)
        if len(frame_body) > w.max_frame:
            raise LimitError(kind, f"a frame body of {len(frame_body)} bytes, over the node's max_frame of {w.max_frame}")
        rid = self._register(a)
        try:
            self._send(wire._HEADER.pack(len(frame_body), wire.FETCH if t.fetch else wire.PUBLISH, 0, rid) + frame_body)
        except OSError as e:
            self._fail_send(rid, e)
        if not self._wait(lambda: a._accepted or a._refused is not None or a._lost is not None, deadline):
            a.cancel()
            e = TimeoutError(f"{a}: the node did not accept it in time; cancelled (wait for it to quiesce before reusing its slots)")
            e.attempt = a  # type: ignore[attr-defined]
            raise e
        if a._refused is not None:
            raise a._refused
        if a._lost is not None:
            raise a._lost
        return a

    def _cancel(self, attempt: int) -> None:
        if self._forked or self._ended is not None or self._closing:
            return
        try:
            self._send(wire.encode(wire.Cancel(attempt), next(self._ids)))
        except OSError:
            pass  # the reader sees the end

    def _send(self, frame: bytes, fd: int = -1) -> None:
        """Write one whole frame; a lend's fd rides with its first byte."""
        with self._send_lock:
            if fd >= 0:
                anc = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [fd]).tobytes())]
                sent = self._sock.sendmsg([frame], anc)
                if sent < len(frame):
                    self._sock.sendall(frame[sent:])
            else:
                self._sock.sendall(frame)

    def _fail_send(self, rid: int, e: OSError) -> None:
        """A write failed: the node's goodbye may wait in the receive queue."""
        self._wait(lambda: self._ended is not None, _deadline(1.0))
        if self._ended is None:
            self._end(f"writing to the node failed: {e}", None, crash_like=True)

    # ---- reading ----------------------------------------------------------

    def _wait(self, pred: Callable[[], bool], deadline: float | None) -> bool:
        """Read frames until pred() holds, the stream ends, or the deadline.

        One thread at a time reads; the others wait to be woken by it.
        With a deadline already past, it reads what has come once.
        Returns pred()'s final value.
        """
        tried = False
        with self._cond:
            while not pred():
                if self._ended is not None or self._forked:
                    return pred()
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0 and tried:
                    return False
                tried = True
                if self._reading:
                    if left is not None and left <= 0:
                        return False
                    self._cond.wait(left)
                    continue
                self._reading = True
                self._cond.release()
                frames: list[tuple[wire.Header, wire.Message]] = []
                failure: tuple[str, NodeError | None, bool] | None = None
                try:
                    failure = self._read(frames, max(0.0, left) if left is not None else None)
                finally:
                    self._cond.acquire()
                    self._reading = False
                    self._cond.notify_all()
                for h, m in frames:
                    try:
                        self._dispatch(h, m)
                    except NodeError as e:
                        failure = (f"the node broke the protocol: {e}", None, False)
                        break
                    if self._ended is not None:
                        break
                if failure is not None and self._ended is None:
                    self._cond.release()
                    try:
                        self._end(*failure)
                    finally:
                        self._cond.acquire()
            return True

    def _read(self, frames: list, timeout: float | None) -> tuple[str, NodeError | None, bool] | None:
        """Read what comes within timeout into frames; say why the stream ended."""
        try:
            readable, _, _ = select.select([self._fd], [], [], timeout)
        except (OSError, ValueError) as e:
            return (f"the socket failed: {e}", None, True)
        if not readable:
            return None
        try:
            data, anc, flags, _ = self._sock.recvmsg(_RECV_BYTES, socket.CMSG_SPACE(4))
        except OSError as e:
            return (f"reading from the node failed: {e}", None, True)
        if anc or flags & socket.MSG_CTRUNC:
            for level, kind, payload in anc:
                if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                    for fd in array.array("i", payload[: len(payload) - len(payload) % 4]):
                        os.close(fd)
            return ("the node sent a file descriptor, which no reply carries", None, False)
        if not data:
            if self._rbuf:
                return (f"the stream ended inside a frame ({len(self._rbuf)} bytes)", None, True)
            return ("the node closed the connection without a goodbye", None, True)
        buf = self._rbuf
        buf += data
        off = 0
        try:
            while len(buf) - off >= wire.HEADER_SIZE:
                h = wire.parse_header(memoryview(buf)[off:off + wire.HEADER_SIZE], self._max_read)
                end = off + wire.HEADER_SIZE + h.body_len
                if len(buf) < end:
                    break
                frames.append((h, wire.decode_body(h.type, bytes(buf[off + wire.HEADER_SIZE:end]))))
                off = end
        except NodeError as e:
            return (f"the node sent a frame the client cannot accept: {e}", None, False)
        finally:
            del buf[:off]
        return None

    def _dispatch(self, h: wire.Header, m: wire.Message) -> None:
        """Hand frame m to its request (holding the lock)."""
        if h.type < 0x80:
            raise ProtocolError("header: type", f"{wire.TYPE_NAMES[h.type]} is the engine's to send")
        if isinstance(m, wire.NodeGoodbye):
            self._goodbye = error_for_code(m.code, "node-goodbye", m.reason)
            self._held_by_goodbye = (m.held_lends, m.held_bytes)
            self._cond.release()
            try:
                self._end(f"the node said goodbye ({self._goodbye.name}: {m.reason}; it holds {m.held_bytes} bytes of "
                          f"{m.held_lends} lends)", self._goodbye, crash_like=False)
            finally:
                self._cond.acquire()
            return
        r = self._pending.get(h.request_id)
        if r is None:
            raise ProtocolError("header: request", f"{h.request_id} answers no request in flight")
        if r._deliver(m):
            del self._pending[h.request_id]

    def _end(self, why: str, goodbye: NodeError | None, crash_like: bool) -> None:
        """The connection ended: fail what is open with the evidence there is.

        Called without the lock held.
        """
        with self._cond:
            if self._ended is not None:
                return
            self._ended = why
            if goodbye is not None:
                self._goodbye = goodbye
        try:
            self._sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        exited = False
        if self.watch.proves:
            exited = self.watch.exited_within(EXIT_GRACE if crash_like and not self._closing else 0)
        with self._cond:
            pending, self._pending = self._pending, {}
            err = NodeLostError(f"the connection to the node ended: {why}",
                                Evidence.NODE_EXITED if exited or self._exited else Evidence.UNKNOWN, self._goodbye)
            for r in pending.values():
                r._lose(err, exited or self._exited)
                if isinstance(r, Attempt) and not r._quiesced:
                    self._cut_off.append(r)
            for lend in self._lends.values():
                lend._cut_off()
            self._cond.notify_all()
        if exited:
            self._proven()
