"""The dataset format of a collection: Parquet files of transition rows (their schema and how a shard's
steps become a table) and a manifest (its hashes). Writing one crash-safely is ``writer``,
owning its directory ``lock``, checking it ``verify``.

Layout of a dataset directory (see ``distributed.collect`` for the row columns, ``TRANSITION_COLUMNS``)::

    data/block-BBBB-frag-FFFFFF.parquet   the rows; nothing else ever lives under data/
    _manifest.json                        the dataset's description and the run's only commit record
    _run/lock                             the owner of a running collection (pid, host, start), flock-ed
    _run/state/shard-SSSS-seq-NNNNNNNNN.json   shard snapshots the manifest lists (``state``) while running
    _run/tmp/                             files being written (renamed into place once complete)

Readers: ``pyarrow.dataset.dataset(DIR)`` skips names starting with ``_`` or ``.``, so it reads DIR as
is; duckdb's ``read_parquet`` and polars read every file of a directory they are given, so give them
``DIR/data`` (or the glob ``DIR/**/*.parquet``).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np

from ..env.episodes import END_REASON_NAMES, METRIC_NAMES

DATASET_FORMAT = "paddock-ma-dataset"
DATASET_VERSION = 5      # 2: files cut by world blocks, no shard column (a dataset no longer depends on the shards)
#                          3: PaddockJS 2.0.0's thirteen metric columns in its order (fully_outside_white_line,
#                             destroy_reason: 0 none, 1 barrier; episodes.METRIC_NAMES)
#                          4: PaddockJS 2.0.0's observation vector layout in ``obs`` (issue 14: 24-entry base block,
#                             7 / 11 slots a ray, 8 / 13 a radar slot)
#                          5: _manifest.json and _run/ (pyarrow.dataset(DIR) reads the directory); snapshots listed
#                             in the manifest; lap_time_seconds null without a lap; units and the observation
#                             entries in the Parquet schema; a car's last row of the collection is truncated
#                             (end_reason ``collection-end``); provenance_sha256
MANIFEST = "_manifest.json"
RUN_DIR = "_run"
DATA_DIR = "data"
LOCK = f"{RUN_DIR}/lock"
COLLECTION_END = "collection-end"     # end_reason of a car's last row when its episode was still running
TRANSITION_COLUMNS = (("world", "int32"), ("driver", "string"), ("episode_id", "int32"),
                      ("life", "int32"), ("episode_step", "int32"), ("seq", "int32"), ("obs", "float32[D]"),
                      ("action", "float32[3]"), *((m, "float32") for m in METRIC_NAMES), ("terminated", "bool"),
                      ("truncated", "bool"), ("end_reason", "string"), ("final_obs", "float32[D]"))
NULLABLE_METRICS = ("lap_time_seconds",)       # null where the env reports NaN (no lap completed this step)
METRIC_UNITS = {"progress_delta_meters": "m", "legal_progress_delta_meters": "m", "off_track": "flag 0/1",
                "kerb": "flag 0/1", "fully_outside_white_line": "flag 0/1", "severe_cut": "flag 0/1",
                "destroyed": "flag 0/1", "destroy_reason": "code: 0 none, 1 barrier", "under_30_kph": "flag 0/1",
                "spin_or_backwards": "flag 0/1", "lap_completed": "flag 0/1", "lap_time_seconds": "s",
                "contact_count": "count"}
ACTION_COMPONENTS = [{"name": "steering", "unit": "normalized", "min": -1.0, "max": 1.0},
                     {"name": "throttle", "unit": "normalized", "min": 0.0, "max": 1.0},
                     {"name": "brake", "unit": "normalized", "min": 0.0, "max": 1.0}]
# The keys of the manifest that say where the dataset comes from; provenance_sha256 hashes them.
PROVENANCE_KEYS = ("format", "format_version", "config", "config_hash", "env_config", "seeds", "layout", "columns",
                   "metric_names", "package_version", "git_commit", "code_fingerprint")
# verify's exit codes (paddock-ma verify): complete and untouched / a problem / an interrupted run


class CollectError(ValueError):
    """Bad collection input or an unusable out directory; the message names the value and the fix."""


def canonical_json(obj) -> bytes:
    return json.dumps(obj, sort_keys=True, separators=(",", ":")).encode()


def config_hash(identity: dict, env_config: dict, version: int = DATASET_VERSION) -> str:
    """SHA-256 (hex) of what a dataset's bytes depend on: ``CollectConfig.identity()``, the resolved env
    config and the format version (a resume must match it)."""
    return hashlib.sha256(canonical_json({"collect": identity, "env_config": env_config,
                                          "dataset_version": version})).hexdigest()


def provenance_sha256(manifest: dict) -> str:
    """SHA-256 (hex) of the manifest's ``PROVENANCE_KEYS``: an edit of the config, env, seeds, layout or
    versions changes it (an accident detector, not a signature: anyone can recompute it)."""
    return hashlib.sha256(canonical_json({k: manifest.get(k) for k in PROVENANCE_KEYS})).hexdigest()


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def read_manifest(out: Path) -> dict | None:
    """The manifest of ``out`` (None when there is none); CollectError when it does not read."""
    path = Path(out) / MANIFEST
    if not path.exists():
        return None
    try:
        doc = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CollectError(f"out: {path} is not a readable manifest ({exc}); pass a new directory") from None
    if not isinstance(doc, dict) or doc.get("format") != DATASET_FORMAT:
        raise CollectError(f"out: {path} is not a {DATASET_FORMAT} manifest; pass a new directory")
    return doc


def unstarted(out: Path) -> bool:
    """Whether ``out`` holds nothing but what a run leaves before its first manifest (an empty data/, its
    ``_run`` directory): such a directory is taken as new."""
    out = Path(out)
    for p in out.iterdir():
        if p.name == RUN_DIR and p.is_dir():
            continue
        if p.name == DATA_DIR and p.is_dir() and not any(p.iterdir()):
            continue
        return False
    return True


def create_dirs(out: Path) -> None:
    """data/, _run/state and _run/tmp of a new dataset directory (CollectError naming the path)."""
    try:
        for d in (out / DATA_DIR, out / RUN_DIR / "state", out / RUN_DIR / "tmp"):
            d.mkdir(parents=True, exist_ok=True)
        probe = out / RUN_DIR / "tmp" / "write-probe"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as exc:
        raise CollectError(f"out: cannot write to {out} ({exc.strerror or exc}); pass a writable directory") from None


# -- fragments -------------------------------------------------------------------------------------------
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
