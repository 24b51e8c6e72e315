"""Attempts: one publish or fetch the node accepted, and its outcome."""

from __future__ import annotations

import enum
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from . import wire
from .errors import NodeError, NodeLostError, ProtocolError, error_for_code

if TYPE_CHECKING:
    from .client import Client


class Status(enum.IntEnum):
    """What a row of an attempt became (PROTOCOL.md §4.4)."""

    PENDING = wire.PENDING
    READY = wire.READY
    MISS = wire.MISS
    NOT_READY = wire.NOT_READY
    DECLINED = wire.DECLINED
    FAULT = wire.FAULT
    CANCELLED = wire.CANCELLED


@dataclass(frozen=True)
class Outcome:
    """The verdict of each row, in view order, and what stopped the attempt.

    ``rows`` holds one :class:`Status` value a row (as bytes: index it, or
    use :attr:`statuses`); ``fault`` is None, or the error of
    ``fault_code`` (a :class:`~kvshare_node.errors.DeadlineError`, a
    :class:`~kvshare_node.errors.StoreError`, ...).
    """

    rows: bytes
    fault: NodeError | None = None

    @property
    def statuses(self) -> list[Status]:
        return [Status(v) for v in self.rows]

    @property
    def ready(self) -> int:
        """How many rows are ready."""
        return self.rows.count(wire.READY)

    def all_ready(self) -> bool:
        return self.ready == len(self.rows)


class Attempt:
    """A publish or fetch the node accepted.

    Its outcome is known when the node's outcome frame arrives; it
    quiesces when the node's quiesced frame does: only then may its slots
    be reused (written, for a publish's; read, for a fetch's).  Both are
    waited for separately: :meth:`done` and :meth:`quiesced` do not block
    (they read what the node sent), :meth:`outcome` and
    :meth:`wait_quiesced` do, within a timeout.  Any thread may wait on
    any attempt; the waiting threads take turns reading the socket, so no
    background thread is needed.

    If the connection ends first, :meth:`outcome` raises a
    :class:`~kvshare_node.errors.NodeLostError` carrying the evidence, and
    the attempt quiesces only once the node's exit is proven.
    """

    def __init__(self, client: "Client", request_id: int, kind: str, rows: int) -> None:
        self._client = client
        self.id = request_id
        self.kind = kind
        self.rows = rows
        self._accepted = False
        self._refused: NodeError | None = None
        self._outcome: Outcome | None = None
        self._lost: NodeLostError | None = None  # the outcome never came
        self._cut: NodeLostError | None = None  # the connection ended before quiescence
        self._quiesced = False
        self._cancelled = False

    def __repr__(self) -> str:
        return f"<Attempt {self.kind} {self.id}: {self.rows} rows{', quiesced' if self._quiesced else ''}>"

    # The client's reader calls these, holding the client's lock.

    def _deliver(self, m: wire.Message) -> bool:
        if isinstance(m, wire.Refused) and not self._accepted:
            self._refused = error_for_code(m.code, m.field, m.message)
            self._quiesced = True  # a refused attempt touched nothing
            return True
        if isinstance(m, wire.Accepted) and not self._accepted:
            self._accepted = True
            return False
        if isinstance(m, wire.Outcome) and self._accepted and self._outcome is None:
            if len(m.rows) != self.rows:
                raise ProtocolError("outcome: rows", f"{len(m.rows)} rows for {self} of {self.rows}")
            fault = error_for_code(m.fault_code, "", m.fault) if m.fault_code else None
            self._outcome = Outcome(bytes(m.rows), fault)
            return False
        if isinstance(m, wire.Quiesced) and self._outcome is not None and not self._quiesced:
            self._quiesced = True
            return True
        raise ProtocolError(wire.TYPE_NAMES[wire.type_of(m)], f"out of turn for {self}")

    def _lose(self, err: NodeLostError, exited: bool) -> None:
        self._cut = err
        if self._outcome is None and self._refused is None:
            self._lost = err
            self._outcome = Outcome(bytes(self.rows))  # every row pending
        if exited:
            self._quiesced = True

    def _exit_proven(self) -> None:
        self._quiesced = True

    # The engine's side.

    def accepted(self) -> bool:
        return self._accepted

    def done(self) -> bool:
        """Whether the outcome is known (reads what the node sent; never blocks)."""
        if self._outcome is None and self._refused is None:
            self._client.poll()
        return self._outcome is not None or self._refused is not None

    def quiesced(self) -> bool:
        """Whether the node said no store touches the slots any more (never blocks)."""
        if not self._quiesced:
            self._client.poll()
        return self._quiesced

    def outcome(self, timeout: float | None = None) -> Outcome:
        """Wait up to ``timeout`` seconds for the outcome and return it.

        Raises TimeoutError if it has not come, the node's refusal (a
        :class:`~kvshare_node.errors.NodeError`) if the attempt was
        refused, and :class:`~kvshare_node.errors.NodeLostError` if the
        connection ended first (the node may still move the rows unless
        its ``evidence`` is NODE_EXITED). It does not wait for quiescence.
        """
        if not self._client._wait(lambda: self._outcome is not None or self._refused is not None, _deadline(timeout)):
            raise TimeoutError(f"{self}: no outcome within {timeout} s")
        if self._refused is not None:
            raise self._refused
        if self._lost is not None:
            raise self._lost
        assert self._outcome is not None
        return self._outcome

    def wait_quiesced(self, timeout: float | None = None) -> None:
        """Wait up to ``timeout`` seconds for quiescence.

        Raises TimeoutError if it has not come by then. An attempt cut off
        by the connection's end quiesces only once the node's exit is
        proven: until then this raises its NodeLostError once the
        connection has ended (waiting longer would not help while the
        node's fate is unknown; see :meth:`Client.wait_node_exit`).
        """
        c = self._client
        if not c._wait(lambda: self._quiesced or self._cut is not None, _deadline(timeout)):
            raise TimeoutError(f"{self}: not quiesced within {timeout} s")
        if not self._quiesced:
            c.evidence()  # the exit proven now quiesces every attempt cut off
        if not self._quiesced and self._cut is not None:
            raise self._cut

    def cancel(self) -> None:
        """Ask the node to stop the attempt (advisory; never waits for it).

        Rows no store started end cancelled; started ones run on, and
        quiescence still waits for them. After the outcome it does nothing.
        """
        if self._cancelled or self._outcome is not None or self._refused is not None:
            return
        self._cancelled = True
        self._client._cancel(self.id)

    def fileno(self) -> int:
        """The connection's socket, to select on: readable when a reply may wait."""
        return self._client.fileno()


def _deadline(timeout: float | None) -> float | None:
    return None if timeout is None else time.monotonic() + timeout
