"""Watching the node's process: the pidfd that proves its exit (§7 rule 8)."""

from __future__ import annotations

import os
import select
import socket
import struct
import threading

SO_PEERPIDFD = getattr(socket, "SO_PEERPIDFD", 77)
SO_PEERCRED = getattr(socket, "SO_PEERCRED", 17)
_UCRED = struct.Struct("3i")


class Watch:
    """A pidfd of the node's process, taken at connect.

    ``pid`` is the node's pid as this process sees it (0 if unknown),
    ``via`` how the pidfd was taken or why there is none; ``proves`` is
    false without one: the node's exit can then never be proven.
    """

    def __init__(self, pid: int = 0, via: str = "no pidfd: the node did not welcome the client", fd: int = -1) -> None:
        self.pid = pid
        self.via = via
        self._fd = fd
        self._exited = False
        self._lock = threading.Lock()

    @property
    def proves(self) -> bool:
        return self._fd >= 0 or self._exited

    @classmethod
    def peer(cls, sock: socket.socket, node_pid: int, use_peer_pidfd: bool = True) -> "Watch":
        """Take a pidfd of the process at the other end of ``sock``.

        Only if that process is ``node_pid`` (the welcome's) and not this
        one: first ``SO_PEERPIDFD``, else ``pidfd_open`` of the
        ``SO_PEERCRED`` pid, kept only if the connection is still open and
        its peer's pid unchanged once it is taken.
        """
        try:
            pid, _, _ = _UCRED.unpack(sock.getsockopt(socket.SOL_SOCKET, SO_PEERCRED, _UCRED.size))
        except OSError as e:
            return cls(0, f"no pidfd: SO_PEERCRED: {e}")
        if pid == 0:
            return cls(0, "no pidfd: the node's pid is not visible from this PID namespace")
        if pid == os.getpid():
            return cls(pid, "no pidfd: the node runs in this process")
        if pid != node_pid:
            return cls(pid, f"no pidfd: the socket's peer is pid {pid}, the node says it is pid {node_pid}")
        if use_peer_pidfd:
            try:
                fd = sock.getsockopt(socket.SOL_SOCKET, SO_PEERPIDFD)
            except OSError:
                pass
            else:
                os.set_inheritable(fd, False)
                return cls(pid, "SO_PEERPIDFD", fd)
        try:
            fd = os.pidfd_open(pid)
        except OSError as e:
            return cls(pid, f"no pidfd: pidfd_open({pid}): {e}")
        os.set_inheritable(fd, False)
        try:
            again, _, _ = _UCRED.unpack(sock.getsockopt(socket.SOL_SOCKET, SO_PEERCRED, _UCRED.size))
        except OSError:
            again = -1
        if again != pid or _hung_up(sock):
            os.close(fd)
            return cls(pid, f"no pidfd: the connection to pid {pid} ended while its pidfd was taken")
        return cls(pid, "pidfd_open of the SO_PEERCRED pid", fd)

    def exited_within(self, timeout: float | None) -> bool:
        """Whether the node's process exited, waiting up to ``timeout`` s."""
        with self._lock:
            if self._exited:
                return True
            fd = self._fd
        if fd < 0:
            return False
        try:
            readable, _, _ = select.select([fd], [], [], timeout)
        except (OSError, ValueError):
            return False
        if readable:
            with self._lock:
                self._exited = True
            return True
        return False

    def close(self) -> None:
        """Let the pidfd go (after the exit is proven, or at the end)."""
        with self._lock:
            fd, self._fd = self._fd, -1
        if fd >= 0:
            os.close(fd)


def _hung_up(sock: socket.socket) -> bool:
    p = select.poll()
    p.register(sock, getattr(select, "POLLRDHUP", 0x2000))
    for _, ev in p.poll(0):
        if ev & (getattr(select, "POLLRDHUP", 0x2000) | select.POLLHUP | select.POLLERR):
            return True
    return False
