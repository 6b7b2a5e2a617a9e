"""A shard writing its own dataset files: it keeps its steps of the fragment under way and, at the
fragment's end, encodes, hashes and writes each world block's file and its own snapshot straight to the
dataset's storage (``storage``: a directory every node mounts, or an object store), handing the driver
only their manifest entries. The driver's work per step is then a few entries per shard, not its rows.

The files are the bytes the driver would write (``fragments.fragment_table`` and ``encode_parquet`` of
the same rows), so a dataset does not depend on which process wrote it. It needs every world block to
lie inside one shard (``writer.Blocks.shards_can_write``).

A shard killed midway through a fragment loses that fragment's steps: its replacement restores the
snapshot taken at the fragment's start (the fleet snapshots shards at fragment ends when they write
their own files) and replays the steps handed out since, which refills the buffer step by step.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .fragments import arrow_schema, fragment_table, observation_entries
from .storage.opening import open_store
from .writer import state_entry, state_file, write_block_file


@dataclass
class FilesSpec:
    """What a shard needs to write its files: the dataset's ``uri`` (a path every node sees, or an object
    store URI), ``fragment_steps``, ``file_worlds``, the run's ``steps`` and ``total_worlds`` (the same for
    every shard of a run: a shard's index is its first world over its world count)."""
    uri: str
    fragment_steps: int
    file_worlds: int
    steps: int
    total_worlds: int

    def to_dict(self) -> dict:
        return dict(self.__dict__)


@dataclass
class FragmentStep:
    """One step as ``fragment_table`` reads it: ``seq``, ``worlds`` (global), ``obs`` acted on, ``arrays``."""
    seq: int
    worlds: np.ndarray
    obs: np.ndarray
    arrays: dict


class ShardFiles:
    """The files of shard ``spec.shard`` (worlds ``world_offset .. world_offset + num_worlds - 1``)."""

    def __init__(self, spec: dict, config: dict, world_offset: int, num_worlds: int, controlled: tuple, obs_size: int):
        self.spec = FilesSpec(**spec)
        self.store = open_store(self.spec.uri)
        self.controlled, self.obs_size = tuple(controlled), obs_size
        self.offset, self.num_worlds = world_offset, num_worlds
        self.worlds = np.arange(world_offset, world_offset + num_worlds, dtype=np.int64)
        self.schema = arrow_schema(obs_size, observation_entries(config))
        import pyarrow.parquet  # noqa: F401 - loaded now, not inside the first fragment's step
        self.steps: list[FragmentStep] = []
        self.shard = world_offset // num_worlds

    def restart(self) -> None:
        """Forget the steps of the fragment under way (a reset or a restore starts a new one)."""
        self.steps = []

    def is_fragment_end(self, seq: int) -> bool:
        return seq % self.spec.fragment_steps == 0 or seq == self.spec.steps

    def add(self, seq: int, obs: np.ndarray, arrays: dict, snapshot: dict | None) -> dict | None:
        """Keep step ``seq`` (``obs``: what the cars acted on; ``arrays``: the step's, see ``EnvShard.step``);
        at a fragment's end write its files and ``snapshot`` (the shard's at ``seq``) and return
        ``{"files": [manifest entries], "state": entry}``, else None."""
        if self.steps and self.steps[-1].seq != seq - 1:
            raise RuntimeError(f"shard {self.shard}: step {seq} follows {self.steps[-1].seq}: a fragment's steps "
                               "must be consecutive")
        self.steps.append(FragmentStep(seq, self.worlds, obs, arrays))
        if not self.is_fragment_end(seq):
            return None
        if snapshot is None:
            raise RuntimeError(f"shard {self.shard}: no snapshot at step {seq} (a fragment's end)")
        steps, self.steps = self.steps, []
        frag = (seq - 1) // self.spec.fragment_steps
        if steps[0].seq != frag * self.spec.fragment_steps + 1:
            raise RuntimeError(f"shard {self.shard}: fragment {frag} starts at step {steps[0].seq}, not "
                               f"{frag * self.spec.fragment_steps + 1} (a restore inside a fragment)")
        files = [self._write_block(b, frag, steps) for b in self._blocks()]
        state = state_entry(self.store, state_file(self.shard, seq), snapshot)
        return {"files": files, "state": state}

    def _blocks(self) -> range:
        fw = self.spec.file_worlds
        return range(self.offset // fw, -(-(self.offset + self.num_worlds) // fw))

    def _write_block(self, b: int, frag: int, steps: list) -> dict:
        fw = self.spec.file_worlds
        lo, hi = b * fw, min((b + 1) * fw, self.spec.total_worlds)
        table = fragment_table(steps, self.controlled, self.obs_size, lo - self.offset, hi - self.offset,
                               schema=self.schema, last_seq=self.spec.steps).combine_chunks()
        return write_block_file(self.store, table, b, frag, (lo, hi), steps[0].seq, steps[-1].seq)
