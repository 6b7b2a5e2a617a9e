"""Test doubles of the fleet's parts, importable by Ray workers (so a shard class defined here runs on any
node of a cluster that has the package): shards that fail on request, and a fleet that pins a shard's
first actor to a node. Production classes carry no fault hooks; tests pass these through the public
``shard_cls=`` parameter of ``ShardFleet`` / ``collect`` or use the fleet subclass.

* ``FaultyShardCore.with_faults({shard: fault}, once_dir=None)``: a ShardCore subclass whose shard
  ``shard`` (its index, ``world_offset // num_worlds``) fails as ``fault`` says: ``{"crash_at_seq": n}``
  (its process exits at once, ``os._exit``, when asked to step to ``n``: Ray sees the actor die),
  ``{"hang_at_seq": n}`` (it sleeps for ever when asked to step to ``n``: only the fleet's deadline
  notices), ``{"fail_on_start": True}`` (its constructor raises) or ``{"hold_at_seq": n}`` (when asked to
  step to ``n`` it waits until the file ``release-<i>`` exists in ``once_dir``, which the test writes on
  an event: a shard held back until the test has seen what it waits for) or ``{"die_writing_at_seq": n}``
  (a shard writing its own files SIGKILLs itself halfway through writing the first file of the fragment
  ending at step ``n``: a torn temporary, as a node's power cut leaves). Without ``once_dir`` a fault
  fires in every incarnation of the shard; with it (a directory every shard process can write: one
  machine's local cluster), in the first incarnation that reaches it only: a token file ``shard-<i>``
  marks it fired.
* ``PinnedFleet(..., pins={shard: node_id})``: a ShardFleet whose shard ``shard``'s first actor is pinned
  hard to ``node_id`` (a node that does not exist makes Ray raise ActorUnschedulableError); later
  incarnations are placed as usual.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

from ..dataset.storage.local import Disk
from ..dataset.storage.opening import open_store
from .fleet import ShardFleet
from .shard import ShardCore, ShardError

FAULTS = ("crash_at_seq", "hang_at_seq", "fail_on_start", "hold_at_seq", "die_writing_at_seq")


class _DyingDisk(Disk):
    """Local filesystem steps whose first ``create`` writes half its bytes and SIGKILLs the process."""

    def create(self, path, data: bytes) -> None:
        with open(path, "wb") as fh:
            fh.write(data[: len(data) // 2])
            fh.flush()
            os.fsync(fh.fileno())
        os.kill(os.getpid(), signal.SIGKILL)


class FaultyShardCore(ShardCore):
    """A ShardCore that crashes, hangs or fails to start on request (see the module docstring); build one
    with ``with_faults``. ``faults``: ``{shard index: {fault: value}}``; ``once_dir``: see above."""

    faults: dict = {}
    once_dir: str | None = None

    @classmethod
    def with_faults(cls, faults: dict, once_dir=None) -> type:
        """A subclass carrying ``faults`` and ``once_dir`` (Ray ships it to the workers by value)."""
        for shard, fault in faults.items():
            unknown = set(fault) - set(FAULTS)
            if unknown:
                raise ValueError(f"faults[{shard}]: unknown {sorted(unknown)}; expected some of {FAULTS}")
            if "hold_at_seq" in fault and once_dir is None:
                raise ValueError(f"faults[{shard}]: hold_at_seq needs once_dir (where the release file appears)")
        return type(cls.__name__, (cls,), {"faults": dict(faults),
                                           "once_dir": None if once_dir is None else str(once_dir)})

    def __init__(self, config: dict, world_offset: int, num_worlds: int, **options):
        self.fault = dict(self.faults.get(world_offset // num_worlds, {}))
        self.shard_index = world_offset // num_worlds
        if self.fault.get("fail_on_start") and self._fire():
            raise ShardError("fail_on_start: this test shard was asked to fail to start")
        super().__init__(config, world_offset, num_worlds, **options)

    @staticmethod
    def release_file(once_dir, shard: int) -> Path:
        """The file that lets shard ``shard``'s step ``hold_at_seq`` go on (the test writes it)."""
        return Path(once_dir) / f"release-{shard}"

    def _fire(self) -> bool:
        """Whether the fault fires in this incarnation (always without ``once_dir``; else only the first time)."""
        if self.once_dir is None:
            return True
        try:
            os.close(os.open(Path(self.once_dir) / f"shard-{self.shard_index}", os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        except FileExistsError:
            return False
        return True

    def step(self, seq: int, *args, **kwargs):
        if seq == self.fault.get("crash_at_seq") and self._fire():
            os._exit(17)
        if seq == self.fault.get("hang_at_seq") and self._fire():
            while True:
                time.sleep(3600)
        if seq == self.fault.get("die_writing_at_seq") and self.files is not None and self._fire():
            self.files.store = open_store(self.files.spec.uri, _DyingDisk())
        if seq == self.fault.get("hold_at_seq") and self._fire():
            while not self.release_file(self.once_dir, self.shard_index).exists():
                time.sleep(0.05)
        return super().step(seq, *args, **kwargs)


class PinnedFleet(ShardFleet):
    """A ShardFleet whose shards in ``pins`` ({shard: node id}) start their first actor pinned hard there."""

    def __init__(self, *args, pins: dict, **kwargs):
        super().__init__(*args, **kwargs)
        self.pins = dict(pins)

    def placement(self, sh):
        if sh.incarnation == 0 and sh.index in self.pins:
            from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy
            return NodeAffinitySchedulingStrategy(node_id=self.pins[sh.index], soft=False)
        return super().placement(sh)
