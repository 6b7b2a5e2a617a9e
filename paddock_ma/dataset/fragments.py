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
    episode goes on are truncated with end_reason ``collection-end`` and final_obs the next observation.

    Cost (paddock/gp-batch-v0, 298 floats an observation): about 1 microsecond a row, mostly the copies of
    ``obs`` and ``final_obs`` into row order; strings are built from codes by Arrow (``take``), not from
    Python objects."""
    import pyarrow as pa
    import pyarrow.compute as pc

    k = len(controlled)
    n_steps = len(steps)
    hi = steps[0].worlds.shape[0] if hi is None else hi
    w = hi - lo
    n = w * k * n_steps

    def rows(get, dtype=None):
        """``get(step)[lo:hi]`` of every step, in (world, driver, seq) row order: one copy."""
        first = np.asarray(get(steps[0]))
        out = np.empty((w, k, n_steps) + first.shape[2:], dtype or first.dtype)
        for i, s in enumerate(steps):
            out[:, :, i] = get(s)[lo:hi]
        return out.reshape((n,) + first.shape[2:])

    def ended(s):
        return s.arrays["terminated"] | s.arrays["truncated"]

    def final_of(s):
        final = s.arrays["final_obs"]
        if s.seq == last_seq:           # cars still running: the observation after the last step
            final = s.arrays["obs"] if final is None else np.where(ended(s)[..., None], final, s.arrays["obs"])
        return final if final is not None else _zeros(s.obs.shape)
    seqs = np.array([s.seq for s in steps], np.int32)
    world = np.repeat(steps[0].worlds[lo:hi].astype(np.int32), k * n_steps)
    drv = np.tile(np.repeat(np.arange(k, dtype=np.int32), n_steps), w)
    done = rows(ended)
    end_cut = np.tile(seqs == last_seq, w * k) & ~done
    code = np.where(end_cut, len(END_REASON_NAMES), np.where(done, rows(lambda s: s.arrays["end_reason"], np.int32), 0))
    names = pa.array([None] + list(END_REASON_NAMES[1:]) + [COLLECTION_END], pa.string())
    obs, final = rows(lambda s: s.obs, np.float32), rows(final_of, np.float32)
    cols = {
        "world": pa.array(world), "driver": pc.take(pa.array(list(controlled), pa.string()), pa.array(drv)),
        "episode_id": pa.array(rows(lambda s: s.arrays["episode_id"], np.int32)),
        "life": pa.array(rows(lambda s: s.arrays["life"], np.int32)),
        "episode_step": pa.array(rows(lambda s: s.arrays["episode_step"], np.int32)),
        "seq": pa.array(np.tile(seqs, w * k)),
        "obs": pa.FixedSizeListArray.from_arrays(pa.array(obs.reshape(-1)), obs_size),
        "action": pa.FixedSizeListArray.from_arrays(pa.array(rows(lambda s: s.arrays["action"], np.float32).reshape(-1)), 3),
    }
    metrics = rows(lambda s: s.arrays["metrics"], np.float32)
    for j, m in enumerate(METRIC_NAMES):
        col = np.ascontiguousarray(metrics[:, j])
        cols[m] = pa.array(col, mask=np.isnan(col) if m in NULLABLE_METRICS else None)
    cols["terminated"] = pa.array(rows(lambda s: s.arrays["terminated"]))
    cols["truncated"] = pa.array(rows(lambda s: s.arrays["truncated"]) | end_cut)
    cols["end_reason"] = pc.take(names, pa.array(code.astype(np.int32)))
    cols["final_obs"] = pa.FixedSizeListArray.from_arrays(pa.array(final.reshape(-1)), obs_size,
                                                          mask=pa.array(~(done | end_cut)))
    return pa.table(cols, schema=schema if schema is not None else arrow_schema(obs_size))


_ZEROS: dict = {}


def _zeros(shape) -> np.ndarray:
    """A shared read-only zero array of ``shape`` (the final_obs of a step where no car ended)."""
    z = _ZEROS.get(shape)
    if z is None:
        z = _ZEROS[shape] = np.zeros(shape, np.float32)
        z.flags.writeable = False
    return z


# Parquet encoding of a dataset file (DATASET_VERSION 6), chosen by measuring where a row's time goes
# (BENCHMARKS.md, "Collection: shards write their own files"): zstd level 1 (level 3 cost 50 % more CPU
# for 8 % fewer bytes), BYTE_STREAM_SPLIT for the float observations (zstd then finds the shared exponent
# bytes: 247 instead of 282 bytes a row), dictionaries only for the small string columns, and statistics
# only for the scalar columns (min/max of every observation entry cost CPU and no reader uses them).
DICTIONARY_COLUMNS = ["driver", "end_reason"]
SPLIT_COLUMNS = ["obs.list.element", "final_obs.list.element"]


def encode_parquet(table) -> bytes:
    """``table`` (``fragment_table``'s, one chunk) as the bytes of a dataset file: the same table gives the
    same bytes, whichever process encodes it."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    buf = pa.BufferOutputStream()
    stats = [c for c in table.column_names if c not in ("obs", "final_obs", "action")]
    pq.write_table(table, buf, compression="zstd", compression_level=1, row_group_size=1 << 20,
                   use_dictionary=DICTIONARY_COLUMNS, use_byte_stream_split=SPLIT_COLUMNS, write_statistics=stats)
    return buf.getvalue().to_pybytes()
