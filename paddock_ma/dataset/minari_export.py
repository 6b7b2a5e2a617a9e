"""A collected dataset as a Minari dataset, offline RL's standard format: ``export_minari(DATASET,
DATASET_ID)`` (``paddock-ma export-minari DATASET DATASET_ID``) writes it into Minari's local store
(``MINARI_DATASETS_PATH``, default ``~/.minari/datasets``), so ``minari.load_dataset(DATASET_ID)`` opens it.

One Minari episode per car life (world, driver, episode), in (world, driver, episode) order: its
observations are the rows' ``obs`` then the last row's ``final_obs`` (T + 1 of them), its actions,
terminations and truncations the rows' (an episode cut by the end of the collection is truncated), its
rewards the env's default example reward (``env.rewards.DEFAULT_REWARD``, legal progress in metres) and
its infos every metric: ``infos["metrics"]`` float32[T + 1, M], columns ``episodes.METRIC_NAMES`` (also in the
metadata, ``paddock_ma_metric_names``; Minari's infos have T + 1 entries: row t + 1 is step t's, row 0 the
start's, zeros; NaN lap times are 0), so any other reward can be recomputed.
The observation and action spaces are the environment's (``Box(-inf, inf, (D,))`` and the vehicle
action bounds of ``env.actions``); the metadata names the env id, the dataset's config hash,
provenance hash, seed, policy and source, and the paddock_ma version. The Arrow storage of Minari is
used (pyarrow is already a dependency; HDF5 would need h5py).
"""

from __future__ import annotations

import json

import numpy as np

from ..env.actions import ACTION_HIGH, ACTION_LOW
from ..env.episodes import METRIC_NAMES
from ..env.rewards import DEFAULT_REWARD, EXAMPLE_REWARDS
from .format import DATA_DIR, MANIFEST, CollectError
from .storage.opening import open_store

COLUMNS = ["world", "driver", "episode_id", "episode_step", "obs", "action", "terminated", "truncated", "final_obs",
           *METRIC_NAMES]


def _spaces(obs_size: int):
    from gymnasium import spaces
    return (spaces.Box(-np.inf, np.inf, (obs_size,), np.float32),
            spaces.Box(ACTION_LOW.astype(np.float32), ACTION_HIGH.astype(np.float32), (3,), np.float32))


def _episodes(table, controlled: list):
    """Minari ``EpisodeBuffer``s of every car life in ``table`` (the dataset's rows)."""
    from minari.data_collector.episode_buffer import EpisodeBuffer

    index = {d: i for i, d in enumerate(controlled)}
    drv = np.array([index[d] for d in table["driver"].to_pylist()], np.int64)
    world, ep = table["world"].to_numpy().astype(np.int64), table["episode_id"].to_numpy().astype(np.int64)
    order = np.lexsort((table["episode_step"].to_numpy(), ep, drv, world))
    d = table.schema.field("obs").type.list_size
    obs = table["obs"].combine_chunks().flatten().to_numpy().reshape(-1, d)[order]
    final = table["final_obs"].combine_chunks()
    final_vals = final.flatten().to_numpy(zero_copy_only=False)     # only the non-null rows' values
    final_rows = np.flatnonzero(~final.is_null().to_numpy(zero_copy_only=False))
    final_at = {int(r): i for i, r in enumerate(final_rows)}
    action = table["action"].combine_chunks().flatten().to_numpy().reshape(-1, 3)[order]
    term = table["terminated"].to_numpy(zero_copy_only=False)[order]
    trunc = table["truncated"].to_numpy(zero_copy_only=False)[order]
    metrics = np.nan_to_num(np.stack([table[m].to_numpy(zero_copy_only=False).astype(np.float32)
                                      for m in METRIC_NAMES], -1)[order])
    reward = EXAMPLE_REWARDS[DEFAULT_REWARD](metrics)
    key = np.stack([world[order], drv[order], ep[order]], 1)
    starts = np.flatnonzero(np.r_[True, (np.diff(key, axis=0) != 0).any(1)])
    ends = np.r_[starts[1:], len(order)]
    for i, (a, b) in enumerate(zip(starts, ends)):
        last = int(order[b - 1])
        if last not in final_at:
            raise CollectError(f"dataset: world {key[a][0]}, driver {controlled[key[a][1]]}, episode {key[a][2]}: its last "
                               "row has no final_obs (not a complete dataset; verify it)")
        j = final_at[last]
        yield EpisodeBuffer(id=i, observations=np.concatenate([obs[a:b], final_vals[j * d:(j + 1) * d][None]]),
                            actions=action[a:b], rewards=reward[a:b], terminations=term[a:b], truncations=trunc[a:b],
                            infos={"metrics": np.concatenate([np.zeros((1, len(METRIC_NAMES)), np.float32), metrics[a:b]])})


def export_minari(dataset, dataset_id: str, description: str | None = None):
    """Write the complete dataset ``dataset`` (a directory or an object store URI) as the Minari dataset
    ``dataset_id`` (``namespace/name-vN``) in Minari's local store; returns the ``MinariDataset``.
    CollectError when the dataset is not complete and untouched (``verify``) or the id is taken."""
    import minari
    import pyarrow.parquet as pq
    from minari.utils import create_dataset_from_buffers

    from .verify import verify

    problems = verify(dataset)
    if problems:
        raise CollectError(f"dataset: {dataset} does not verify: {problems[0]}")
    if dataset_id in minari.list_local_datasets():
        raise CollectError(f"dataset_id: {dataset_id} is already in Minari's local store; pick another version "
                           "(e.g. -v1) or delete it (minari.delete_dataset)")
    store = open_store(dataset)
    m = json.loads(store.read_manifest(MANIFEST)[0])
    fs, base = store.arrow_filesystem()
    table = pq.read_table(f"{base}/{DATA_DIR}", filesystem=fs, columns=COLUMNS)
    obs_space, act_space = _spaces(table.schema.field("obs").type.list_size)
    c = m["config"]
    text = (f"{c['env']} collected by paddock-ma ({c['total_worlds']} worlds x {c['steps']} steps, policy {c['policy']}, "
            f"seed {c['seed']}); one episode per car life; rewards: {DEFAULT_REWARD} (m), every metric in infos. "
            f"Source {store.uri}, config_hash {m['config_hash']}, provenance_sha256 {m['provenance_sha256']}, "
            f"paddock_ma {m['package_version']} (git {m['git_commit']}).")
    ds = create_dataset_from_buffers(
        dataset_id, list(_episodes(table, m["layout"]["controlled"])), env=None, observation_space=obs_space,
        action_space=act_space, algorithm_name=f"paddock-ma collect, policy {c['policy']}", author="paddock-ma",
        description=description or text, data_format="arrow")
    ds.storage.update_metadata(provenance_metadata(m, store.uri))
    return minari.load_dataset(dataset_id)


def provenance_metadata(m: dict, source: str) -> dict:
    """The Minari metadata keys naming where the episodes come from (``paddock_ma_*``)."""
    c = m["config"]
    return {"paddock_ma_env_id": c["env"], "paddock_ma_source": source, "paddock_ma_config_hash": m["config_hash"],
            "paddock_ma_provenance_sha256": m["provenance_sha256"], "paddock_ma_seed": c["seed"],
            "paddock_ma_policy": c["policy"], "paddock_ma_version": m["package_version"],
            "paddock_ma_git_commit": m["git_commit"] or "", "paddock_ma_reward": DEFAULT_REWARD,
            "paddock_ma_controlled": ",".join(m["layout"]["controlled"]), "paddock_ma_metric_names": ",".join(METRIC_NAMES)}


def main(argv=None) -> int:
    """``paddock-ma export-minari DATASET DATASET_ID [--description TEXT]``."""
    import argparse
    p = argparse.ArgumentParser(prog="paddock-ma export-minari", description="write a collected dataset (a directory "
                                "or an object store URI) as a Minari dataset in Minari's local store "
                                "(MINARI_DATASETS_PATH), for minari.load_dataset(DATASET_ID)")
    p.add_argument("dataset")
    p.add_argument("dataset_id", help="namespace/name-vN, e.g. paddock/oval-random-v0")
    p.add_argument("--description", default=None)
    args = p.parse_args(argv)
    try:
        ds = export_minari(args.dataset, args.dataset_id, args.description)
    except CollectError as exc:
        print(f"paddock-ma export-minari: error: {exc}")
        return 2
    print(f"{args.dataset_id}: {ds.total_episodes:,} episodes, {ds.total_steps:,} steps in {ds.storage.data_path}")
    return 0
