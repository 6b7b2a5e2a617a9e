"""One collector per dataset directory: ``OutLock``, an ``flock`` on ``_run/lock`` naming its owner."""

from __future__ import annotations

import fcntl
import json
import os
import socket
import time
from pathlib import Path

from .format import LOCK, RUN_DIR, CollectError
from .processes import process_start_ticks


class OutLock:
    """Exclusive ownership of a dataset directory by one collector: an ``flock`` on ``_run/lock`` (the
    kernel drops it when its process dies, SIGKILL included, so a dead owner's lock is taken over), and
    the owner's pid, host, process start and wall-clock start written in the file for the message a
    second collector gets. The file stays after release (it names the last owner)."""

    def __init__(self, out: Path):
        self.out = Path(out)
        self.fd: int | None = None

    @property
    def path(self) -> Path:
        return self.out / LOCK

    def owner(self) -> dict:
        """The owner the lock file names ({} when unreadable)."""
        try:
            doc = json.loads(self.path.read_text())
            return doc if isinstance(doc, dict) else {}
        except (OSError, UnicodeDecodeError, json.JSONDecodeError):
            return {}

    def acquire(self) -> "OutLock":
        """Take the lock (creating ``_run/``); CollectError naming the owner when another process holds it."""
        if self.fd is not None:
            return self
        try:
            (self.out / RUN_DIR).mkdir(parents=True, exist_ok=True)
            while True:
                fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    os.close(fd)
                    o = self.owner()
                    raise CollectError(
                        f"out: {self.out} is being written by another collector (pid {o.get('pid', '?')} on "
                        f"{o.get('host', '?')}, started {o.get('started_at', '?')}); wait for it to finish or stop "
                        "it (its run resumes with the same command), or pass another out directory") from None
                st = os.fstat(fd)
                try:
                    same = os.stat(self.path).st_ino == st.st_ino
                except FileNotFoundError:
                    same = False
                if same:
                    break
                os.close(fd)            # the file was replaced between open and flock: lock the new one
            doc = {"pid": os.getpid(), "host": socket.gethostname(), "start_ticks": process_start_ticks(os.getpid()),
                   "started_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
            os.ftruncate(fd, 0)
            os.pwrite(fd, json.dumps(doc).encode(), 0)
            os.fsync(fd)
        except OSError as exc:
            raise CollectError(f"out: cannot lock {self.path} ({exc.strerror or exc}); pass a writable "
                               "directory on a filesystem with file locks") from None
        self.fd = fd
        return self

    def renew(self, force: bool = False) -> None:
        """Nothing: the kernel holds an flock for as long as its process lives (a lease's heartbeat)."""

    def release(self) -> None:
        if self.fd is not None:
            os.close(self.fd)        # closing the descriptor drops the flock
            self.fd = None

    def __enter__(self) -> "OutLock":
        return self.acquire()

    def __exit__(self, *exc) -> None:
        self.release()


def lock_for(store):
    """The lock of a dataset's ``store``: an ``OutLock`` (flock) for a directory, a ``storage.lease.LeaseLock``
    for an object store. Both have ``acquire``, ``release`` and ``renew`` (a lease's heartbeat)."""
    if store.local:
        return OutLock(store.root)
    from .storage.lease import LeaseLock
    return LeaseLock(store)
