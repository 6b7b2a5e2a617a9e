"""A dataset world read back and replayed from its seed and recorded actions.

A dataset holds, per world and step (``seq``), each controlled car's observation and action.
``load_dataset_world`` reads one world ``g``'s actions and observations; ``replay_dataset_world`` re-runs
that world exactly as its shard ran it (``worlds``: the same engine over that world alone, the same
per-world generator key, the same start and new-life placements) with the recorded actions, comparing
each step's observations with the recorded ones: None when they all match, else the first step, car and
vector entry that differ.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
import numpy as np

from ..errors import INVALID_CONFIG, PaddockError
from ..value_rules import integer_problem
from .format import DATA_DIR, MANIFEST
from .storage.opening import open_store
from .worlds import collection_engine, start_worlds


@dataclass
class DatasetWorld:
    """One world of a dataset: its manifest, actions float32[T, K, 3] and observations float32[T, K, D]
    (row t: what the cars saw and did at seq t + 1)."""
    manifest: dict
    world: int
    actions: np.ndarray
    obs: np.ndarray


def load_dataset_world(root, world: int) -> DatasetWorld:
    """World ``world`` (global index) of the dataset in ``root`` (a directory or an object store URI); PaddockError naming a manifest that does
    not read or a world the dataset does not have."""
    import pyarrow.parquet as pq
    store = open_store(root)
    try:
        data, _ = store.read_manifest(MANIFEST)
        if data is None:
            raise FileNotFoundError("no such file")
        manifest = json.loads(data)
    except (OSError, ValueError) as exc:
        raise PaddockError(INVALID_CONFIG, f"dataset: cannot read {store.where(MANIFEST)}: {exc}", "dataset") from None
    total = manifest["layout"]["total_worlds"]
    if integer_problem(world, 0, total) is not None:
        raise PaddockError(INVALID_CONFIG, f"world: got {world}; the dataset has worlds 0..{total - 1}", "world")
    controlled = manifest["layout"]["controlled"]
    steps = manifest["config"]["steps"]
    fs, base = store.arrow_filesystem()
    table = pq.read_table(f"{base}/{DATA_DIR}", filesystem=fs, columns=["world", "seq", "driver", "obs", "action"],
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
    """Where a replay first differs from the recorded data: step ``seq``, ``world``, car ``driver``, the
    observation vector's entry ``entry``, the replayed value ``got`` and the ``recorded`` one."""
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
    cfg = data.manifest["config"]
    engine = collection_engine(data.manifest["env_config"], data.world, 1, reset_placement=cfg["reset_placement"])
    seen = start_worlds(engine, cfg["seed"], cfg["start_placement"]).obs[0]
    if on_step:
        on_step(engine, 0)
    controlled = data.manifest["layout"]["controlled"]
    for t in range(len(data.actions)):
        diff = np.argwhere(seen != data.obs[t])
        if diff.size:
            k, i = diff[0]
            return DatasetDivergence(t + 1, data.world, controlled[k], int(i), float(seen[k, i]), float(data.obs[t, k, i]))
        seen = engine.step(data.actions[t][None]).obs[0]
        if on_step:
            on_step(engine, t + 1)
    return None
