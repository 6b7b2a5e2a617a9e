"""One collector per dataset on an object store: a lease, since there is no ``flock`` there.

``_run/lock`` is created once (create-only) naming its owner (pid, host, start) and when it last renewed
it; the owner renews it (replace-if-unchanged) at least every ``ttl_s / 4`` seconds while it runs and
deletes it when it stops. A second collector finding a lease renewed less than ``ttl_s`` ago is refused
with the owner's name; an older one belongs to a collector that died (SIGKILL, a lost node), and is
taken over by replacing exactly that version of it, so of two collectors racing for it one wins. The
manifest's own conditional commit is the fence: a collector that lost its lease (paused past ``ttl_s``)
fails its next commit instead of writing over the new owner's.
"""

from __future__ import annotations

import json
import os
import socket
import time

from ..format import LOCK, CollectError
from .conditions import Conflict
from .store import StoreConflict

LEASE_TTL_S = 60.0


class LeaseLock:
    """The lease of the dataset in ``store`` (an ``objects.ObjectStore``); ``OutLock``'s interface plus ``renew``."""

    def __init__(self, store, ttl_s: float = LEASE_TTL_S):
        self.store, self.ttl_s = store, ttl_s
        self.token = None
        self.renewed = 0.0

    def _doc(self) -> bytes:
        now = time.time()
        self.renewed = time.monotonic()
        return json.dumps({"pid": os.getpid(), "host": socket.gethostname(), "ttl_s": self.ttl_s, "renewed_at": now,
                           "started_at": self._started or time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}).encode()

    _started = None

    def acquire(self) -> "LeaseLock":
        if self.token is not None:
            return self
        cond, key = self.store.conditions, self.store._key(LOCK)
        self._started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        try:
            self.token = cond.create(key, self._doc())
            return self
        except Conflict:
            pass
        try:
            data, token = cond.get(key)
            owner = json.loads(data)
        except FileNotFoundError:
            return self.acquire()                      # released meanwhile: try again
        except ValueError:
            owner, token = {}, token
        age = time.time() - float(owner.get("renewed_at", 0))
        if age < float(owner.get("ttl_s", self.ttl_s)):
            raise CollectError(f"out: {self.store.uri} is being written by another collector (pid {owner.get('pid', '?')} "
                               f"on {owner.get('host', '?')}, started {owner.get('started_at', '?')}, lease renewed "
                               f"{age:.0f} s ago); wait for it to finish or stop it (its run resumes with the same "
                               "command), or pass another out directory")
        try:
            self.token = cond.replace(key, self._doc(), token)      # a dead owner's lease: take exactly that one
        except Conflict:
            raise CollectError(f"out: another collector took over {self.store.uri} at the same moment; pass another "
                               "out directory or wait for it") from None
        return self

    def renew(self, force: bool = False) -> None:
        """Renew the lease when a quarter of its time has passed (StoreConflict when it was taken over)."""
        if self.token is None or (not force and time.monotonic() - self.renewed < self.ttl_s / 4):
            return
        try:
            self.token = self.store.conditions.replace(self.store._key(LOCK), self._doc(), self.token)
        except (Conflict, FileNotFoundError):
            self.token = None
            raise StoreConflict(f"out: this run's lease on {self.store.uri} was taken over by another collector; "
                                "this run stops without writing") from None

    def release(self) -> None:
        if self.token is not None:
            try:
                self.store.conditions.delete(self.store._key(LOCK), self.token)
            except (Conflict, FileNotFoundError):
                pass
            self.token = None

    def __enter__(self) -> "LeaseLock":
        return self.acquire()

    def __exit__(self, *exc) -> None:
        self.release()
