"""How a shard's steps become a dataset's rows: the Parquet schema of the files (``arrow_schema``, with
the units and the observation entries as metadata) and the table of a run of consecutive steps of one
shard's worlds (``fragment_table``). The columns and their units are ``format``'s; the writer
(``writer.BlockWriter``) cuts the steps into blocks and fragments and writes these tables.
"""

from __future__ import annotations

import json

import numpy as np

from ..env.episodes import END_REASON_NAMES, METRIC_NAMES
from .format import (
    ACTION_COMPONENTS, COLLECTION_END, DATASET_FORMAT, DATASET_VERSION, METRIC_UNITS, NULLABLE_METRICS,
)


def observation_entries(env_config: dict) -> dict:
    """``{"vector": [{name, unit?, scale}] for each entry of ``obs``, "per_driver": {driver: [...]}}``
    (the env's observation spec; ``per_driver`` lists the drivers whose own sensors differ)."""
    from ..env.config.root import EnvConfig
    from ..env.observations import observation_spec, resolve_senses

    config = EnvConfig.from_dict(env_config)
    spec = observation_spec(config, {d: resolve_senses(config, d) for d in config.controlled_drivers})
    return {"vector": spec["vector"]["schema"],
            "per_driver": {d: v["vector"]["schema"] for d, v in spec["per_driver"].items()}}


def arrow_schema(obs_size: int, observation: dict | None = None):
    """The Parquet schema of a dataset's files: ``TRANSITION_COLUMNS``, with each metric's unit and the
    action's components as field metadata, and the schema metadata ``paddock_ma.obs`` naming each entry
    of ``obs`` / ``final_obs`` (``observation_entries``) and ``paddock_ma.columns`` the units."""
    import pyarrow as pa

    def f(name, typ, nullable=False, **meta):
        return pa.field(name, typ, nullable, metadata={k: json.dumps(v) if not isinstance(v, str) else v
                                                        for k, v in meta.items()} or None)
    obs_meta = "entries: schema metadata paddock_ma.obs"
    cols = [f("world", pa.int32(), meaning="global world index"),
            f("driver", pa.string(), meaning="controlled driver id"),
            f("episode_id", pa.int32(), meaning="the car's episode (life) number in its world"),
            f("life", pa.int32()), f("episode_step", pa.int32(), meaning="1 for an episode's first transition"),
            f("seq", pa.int32(), meaning="fleet step, 1..steps"),
            f("obs", pa.list_(pa.float32(), obs_size), meaning="observation the car acted on", unit=obs_meta),
            f("action", pa.list_(pa.float32(), 3), components=ACTION_COMPONENTS)]
    cols += [f(m, pa.float32(), m in NULLABLE_METRICS, unit=METRIC_UNITS[m]) for m in METRIC_NAMES]
    cols += [f("terminated", pa.bool_()),
             f("truncated", pa.bool_(), meaning=f"time limit, reset request, or end of the collection "
                                                f"(end_reason {COLLECTION_END})"),
             f("end_reason", pa.string(), True, values=[*END_REASON_NAMES[1:], COLLECTION_END]),
             f("final_obs", pa.list_(pa.float32(), obs_size), True,
               meaning="the observation after an episode's last transition; null while it runs", unit=obs_meta)]
    units = {"action": ACTION_COMPONENTS, **METRIC_UNITS}
    meta = {"format": DATASET_FORMAT, "version": str(DATASET_VERSION), "paddock_ma.columns": json.dumps(units)}
    if observation is not None:
        meta["paddock_ma.obs"] = json.dumps(observation)
    return pa.schema(cols, metadata=meta)


def fragment_table(steps: list, controlled: tuple, obs_size: int, lo: int = 0, hi: int | None = None, *,
                   schema=None, last_seq: int | None = None):
    """A pyarrow Table of one shard's ShardSteps ``steps`` (consecutive seqs), for its local worlds
    ``lo:hi`` only (default: all), rows sorted by (world, driver index, seq). ``schema``: ``arrow_schema``'s
    (default: without the observation entries). ``last_seq``: the collection's last step; its rows whose
    episode goes on are truncated with end_reason ``collection-end`` and final_obs the next observation."""
    import pyarrow as pa

    k = len(controlled)
    n_steps = len(steps)
    hi = steps[0].worlds.shape[0] if hi is None else hi
    w = hi - lo

    # stacked [S, w, K, ...] then flattened to rows in (world, driver, seq) order
    def stack(get):
        return np.stack([get(s)[lo:hi] for s in steps])
    order = lambda a: np.moveaxis(a, 0, 2).reshape((w * k * n_steps,) + a.shape[3:])   # noqa: E731
    seq = np.broadcast_to(np.array([s.seq for s in steps], np.int32)[:, None, None], (n_steps, w, k))
    world = np.broadcast_to(steps[0].worlds[lo:hi].astype(np.int32)[None, :, None], (n_steps, w, k))
    drv = np.broadcast_to(np.arange(k)[None, None, :], (n_steps, w, k))
    cut = np.array([s.seq == last_seq for s in steps])            # [S]: the collection's last step

    def ended(s):
        return s.arrays["terminated"] | s.arrays["truncated"]

    def final_of(s):
        final = s.arrays["final_obs"] if s.arrays["final_obs"] is not None else np.zeros_like(s.obs)
        if s.seq == last_seq:           # cars still running: the observation after the last step
            final = np.where(ended(s)[..., None], final, s.arrays["obs"])
        return final
    obs = order(stack(lambda s: s.obs))
    action = order(stack(lambda s: s.arrays["action"]))
    metrics = order(stack(lambda s: s.arrays["metrics"]))
    term = order(stack(lambda s: s.arrays["terminated"]))
    done = order(stack(ended))
    end_cut = order(np.broadcast_to(cut[:, None, None], (n_steps, w, k))) & ~done
    reason = order(stack(lambda s: s.arrays["end_reason"]))
    final = order(stack(final_of))
    names = np.array([None] + list(END_REASON_NAMES[1:]) + [COLLECTION_END], dtype=object)
    cols = {
        "world": pa.array(order(world)), "driver": pa.array(np.array(controlled, dtype=object)[order(drv)]),
        "episode_id": pa.array(order(stack(lambda s: s.arrays["episode_id"])).astype(np.int32)),
        "life": pa.array(order(stack(lambda s: s.arrays["life"])).astype(np.int32)),
        "episode_step": pa.array(order(stack(lambda s: s.arrays["episode_step"])).astype(np.int32)),
        "seq": pa.array(order(seq)),
        "obs": pa.FixedSizeListArray.from_arrays(pa.array(obs.astype(np.float32).reshape(-1)), obs_size),
        "action": pa.FixedSizeListArray.from_arrays(pa.array(action.astype(np.float32).reshape(-1)), 3),
    }
    for j, m in enumerate(METRIC_NAMES):
        col = metrics[:, j].astype(np.float32)
        cols[m] = pa.array(col, mask=np.isnan(col) if m in NULLABLE_METRICS else None)
    cols["terminated"] = pa.array(term)
    cols["truncated"] = pa.array(order(stack(lambda s: s.arrays["truncated"])) | end_cut)
    cols["end_reason"] = pa.array(names[np.where(end_cut, len(names) - 1, np.where(done, reason, 0))], pa.string())
    cols["final_obs"] = pa.FixedSizeListArray.from_arrays(pa.array(final.astype(np.float32).reshape(-1)), obs_size,
                                                          mask=pa.array(~(done | end_cut)))
    return pa.table(cols, schema=schema if schema is not None else arrow_schema(obs_size))
