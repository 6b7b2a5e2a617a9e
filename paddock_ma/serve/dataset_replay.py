"""A collected dataset (``paddock-ma collect``) replayed from its seed and actions, checked, and viewable.

A dataset holds, per world and step (``seq``), each controlled car's observation and action. One world
``g`` is replayed exactly as its shard ran it (``distributed.shard.ShardCore`` over that world alone: the
same per-world generator key, the same start and new-life placements) with the recorded actions, and
each step's observations are compared with the recorded ones: ``replay_dataset_world`` returns None when
they all match, else the first step, car and vector entry that differ. ``DatasetSource`` is the viewer's
source of a dataset world (``paddock-ma view --dataset DIR``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import INVALID_CONFIG, PaddockError
from ..distributed.dataset import MANIFEST


@dataclass
class DatasetWorld:
    """One world of a dataset: its manifest, actions float32[T, K, 3] and observations float32[T, K, D]
    (row t: what the cars saw and did at seq t + 1)."""
    manifest: dict
    world: int
    actions: np.ndarray
    obs: np.ndarray


def load_dataset_world(root, world: int) -> DatasetWorld:
    import pyarrow.parquet as pq
    root = Path(root)
    try:
        manifest = json.loads((root / MANIFEST).read_text())
    except (OSError, ValueError) as exc:
        raise PaddockError(INVALID_CONFIG, f"dataset: cannot read {root / MANIFEST}: {exc}", "dataset") from None
    total = manifest["layout"]["total_worlds"]
    if not 0 <= world < total:
        raise PaddockError(INVALID_CONFIG, f"world: got {world}; the dataset has worlds 0..{total - 1}", "world")
    controlled = manifest["layout"]["controlled"]
    steps = manifest["config"]["steps"]
    table = pq.read_table(root / "data", columns=["world", "seq", "driver", "obs", "action"],
                          filters=[("world", "=", world)])
    seq = table["seq"].to_numpy() - 1
    k = np.array([controlled.index(d) for d in table["driver"].to_pylist()])
    obs_rows = np.stack(table["obs"].to_numpy(zero_copy_only=False)).astype(np.float32)
    actions = np.zeros((steps, len(controlled), 3), np.float32)
    obs = np.zeros((steps, len(controlled), obs_rows.shape[1]), np.float32)
    actions[seq, k] = np.stack(table["action"].to_numpy(zero_copy_only=False))
    obs[seq, k] = obs_rows
    return DatasetWorld(manifest, world, actions, obs)


@dataclass
class DatasetDivergence:
    seq: int
    world: int
    driver: str
    entry: int
    got: float
    recorded: float

    def __str__(self) -> str:
        return (f"diverged at seq {self.seq}, world {self.world}, car {self.driver!r}: observation entry "
                f"{self.entry} is {self.got!r}, recorded {self.recorded!r}")


def replay_dataset_world(data: DatasetWorld, on_step=None) -> DatasetDivergence | None:
    """Replay ``data``'s world from the dataset's seed with its actions, comparing every observation;
    ``on_step(engine, seq)`` after the start (seq 0) and each step."""
    from ..distributed.shard import ShardCore
    cfg = data.manifest["config"]
    core = ShardCore(data.manifest["env_config"], data.world, 1, reset_placement=cfg["reset_placement"],
                     start_placement=cfg["start_placement"])
    seen = core.reset(cfg["seed"])["obs"][0]
    if on_step:
        on_step(core.env, 0)
    controlled = data.manifest["layout"]["controlled"]
    for t in range(len(data.actions)):
        diff = np.argwhere(seen != data.obs[t])
        if diff.size:
            k, i = diff[0]
            return DatasetDivergence(t + 1, data.world, controlled[k], int(i), float(seen[k, i]), float(data.obs[t, k, i]))
        _, out = core.step(t + 1, data.actions[t][None])
        seen = out["obs"][0]
        if on_step:
            on_step(core.env, t + 1)
    return None


class DatasetSource:
    """One world of a dataset as a viewer source, replayed into frames."""

    kind = "dataset"

    def __init__(self, root, world: int = 0):
        self.root, self.world = Path(root), world
        self.data = load_dataset_world(root, world)
        self.name = f"{self.root.name} ({self.data.manifest['config']['env']}, world {world})"

    def describe(self) -> dict:
        return {"kind": self.kind, "name": self.name}         # no path: a reply names nothing of this machine

    def document(self) -> dict:
        from .frames import preview_frame, track_picture
        frames, track = [], {}

        def collect(engine, seq):
            if not track:
                track.update(track_picture(engine))
            frames.append(preview_frame(engine, 0, observe=True, meta={"datasetSeq": seq, "datasetWorld": self.world}))
        divergence = replay_dataset_world(self.data, collect)
        return {"kind": self.kind, "name": self.name, "track": track, "frames": frames,
                "divergence": None if divergence is None else str(divergence)}
