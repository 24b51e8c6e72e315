"""A lend's memory: a sealed memfd and this process's shared mapping of it."""

from __future__ import annotations

import errno
import fcntl
import mmap
import os

from .errors import BadLendError

F_SEAL_FUTURE_WRITE = getattr(fcntl, "F_SEAL_FUTURE_WRITE", 0x0010)

# The seals of a memfd the client creates: F_SEAL_SHRINK is what the node
# requires (a file shrunk under its mapping would kill it with SIGBUS),
# F_SEAL_GROW keeps the size the layout, F_SEAL_SEAL makes the set final
# (nobody holding the fd can add a write seal later).
SEALS = fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_SEAL


class Memory:
    """The memfd of one lend and the client's ``MAP_SHARED`` mapping of it."""

    def __init__(self, fd: int, size: int) -> None:
        self.fd = fd
        self.size = size
        self.map = mmap.mmap(fd, size, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
        self.released = False

    @classmethod
    def create(cls, size: int, name: str = "kvshare-lend") -> "Memory":
        """Create a memfd of ``size`` bytes (close-on-exec), sealed, mapped."""
        fd = os.memfd_create(name, os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
        try:
            os.ftruncate(fd, size)
            fcntl.fcntl(fd, fcntl.F_ADD_SEALS, SEALS)
            return cls(fd, size)
        except BaseException:
            os.close(fd)
            raise

    @classmethod
    def adopt(cls, fd: int, size: int) -> "Memory":
        """Check the caller's memfd ``fd`` and map ``size`` bytes of a copy of it.

        The fd must be open, a memfd, sealed against shrinking, not sealed
        against writing, and at least ``size`` bytes: else BadLendError
        naming ``lend.fd`` (or ``lend.regions`` for the size). The caller
        keeps its own fd; the client maps a duplicate (close-on-exec).
        """
        try:
            st = os.fstat(fd)
        except OSError as e:
            raise BadLendError("lend.fd", f"fd {fd} is not open: {e.strerror}") from None
        try:
            seals = fcntl.fcntl(fd, fcntl.F_GET_SEALS)
        except OSError as e:
            if e.errno == errno.EINVAL:
                raise BadLendError("lend.fd", f"fd {fd} is not a memfd (it takes no seals)") from None
            raise BadLendError("lend.fd", f"fd {fd}: F_GET_SEALS: {e.strerror}") from None
        if not seals & fcntl.F_SEAL_SHRINK:
            raise BadLendError("lend.fd", f"memfd {fd} is not sealed against shrinking (F_SEAL_SHRINK): the node never maps it")
        if seals & (fcntl.F_SEAL_WRITE | F_SEAL_FUTURE_WRITE):
            raise BadLendError("lend.fd", f"memfd {fd} is sealed against writing: fetches write its slots")
        if st.st_size < size:
            raise BadLendError("lend.regions", f"memfd {fd} has {st.st_size} bytes, the geometry needs {size}")
        dup = os.dup(fd)
        try:
            return cls(dup, size)
        except BaseException:
            os.close(dup)
            raise

    def release(self) -> bool:
        """Unmap and close; False when a view of it is still alive.

        ``mmap.close()`` refuses while a memoryview or array of the mapping
        lives; the memfd is closed all the same, and the mapping goes when
        the last view does (the views hold it).
        """
        if self.released:
            return True
        self.released = True
        os.close(self.fd)
        try:
            self.map.close()
        except BufferError:
            return False
        return True
