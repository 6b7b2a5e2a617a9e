"""The dataset format of a collection: Parquet files of transition rows (their columns and units; the
Parquet schema and how a shard's steps become a table are ``fragments``') and a manifest (its keys and
hashes). Writing one crash-safely is ``writer``, owning its directory ``lock``, checking it ``verify``.

Layout of a dataset directory (see ``distributed.collection.run`` for the row columns, ``TRANSITION_COLUMNS``)::

    data/block-BBBB-frag-FFFFFF.parquet   the rows; nothing else ever lives under data/
    _manifest.json                        the dataset's description and the run's only commit record
    _run/lock                             the owner of a running collection (pid, host, start): flock-ed on a
                                          filesystem, a renewed lease on an object store (``storage.lease``)
    _run/state/shard-SSSS-seq-NNNNNNNNN.json   shard snapshots the manifest lists (``state``) while running
    _run/tmp/                             files being written on a filesystem (renamed into place once complete;
                                          object stores have none: each object is one create-only PUT)

The directory may be an object store prefix (``s3://BUCKET/PREFIX``...): ``storage`` says what a store
must offer and how the commit and the lock work there.

Readers: ``pyarrow.dataset.dataset(DIR)`` skips names starting with ``_`` or ``.``, so it reads DIR as
is (a URI too); duckdb's ``read_parquet`` and polars read every file of a directory they are given, so
give them ``DIR/data/*.parquet``.
"""

from __future__ import annotations

import hashlib
import json

from ..env.episodes import METRIC_NAMES

DATASET_FORMAT = "paddock-ma-dataset"
DATASET_VERSION = 6      # 2: files cut by world blocks, no shard column (a dataset no longer depends on the shards)
#                          3: PaddockJS 2.0.0's thirteen metric columns in its order (fully_outside_white_line,
#                             destroy_reason: 0 none, 1 barrier; episodes.METRIC_NAMES)
#                          4: PaddockJS 2.0.0's observation vector layout in ``obs`` (issue 14: 24-entry base block,
#                             7 / 11 slots a ray, 8 / 13 a radar slot)
#                          5: _manifest.json and _run/ (pyarrow.dataset(DIR) reads the directory); snapshots listed
#                             in the manifest; lap_time_seconds null without a lap; units and the observation
#                             entries in the Parquet schema; a car's last row of the collection is truncated
#                             (end_reason ``collection-end``); provenance_sha256
#                          6: files encoded with zstd level 1 and byte-stream-split observations (``fragments.
#                             encode_parquet``: 4 µs a row less to write); each file's ``bytes`` in the manifest;
#                             shards may write their own files; a dataset may live on an object store
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
