"""The dataset format of a collection and its crash-safe writing: Parquet files of transition rows and a
manifest; cutting a run's steps into files (``BlockWriter``), owning an ``--out`` (``OutLock``), and
``inspect`` / ``verify``.

Layout of a dataset directory (see ``collect`` for the row columns, ``TRANSITION_COLUMNS``)::

    data/block-BBBB-frag-FFFFFF.parquet   the rows; nothing else ever lives under data/
    _manifest.json                        the dataset's description and the run's only commit record
    _run/lock                             the owner of a running collection (pid, host, start), flock-ed
    _run/state/shard-SSSS-seq-NNNNNNNNN.json   shard snapshots the manifest lists (``state``) while running
    _run/tmp/                             files being written (renamed into place once complete)

Readers: ``pyarrow.dataset.dataset(DIR)`` skips names starting with ``_`` or ``.``, so it reads DIR as
is; duckdb's ``read_parquet`` and polars read every file of a directory they are given, so give them
``DIR/data`` (or the glob ``DIR/**/*.parquet``).

Crash safety: every file is written under ``_run/tmp``, fsync-ed and renamed into place, and its
directory fsync-ed; the manifest is renamed into place last, and only what it lists exists for a
resume (a data file, a shard snapshot). So a kill at any instant leaves the previous commit intact
plus at most unlisted files, which a resume discards (temporary and state files) or regenerates byte
for byte (data files).
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import socket
import time
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
    """Bad collection input or an unusable --out; the message names the value and the fix."""


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


# -- the filesystem steps ------------------------------------------------------------------------------
def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class Disk:
    """The writer's filesystem steps. A crash falls between two of them (or inside ``create`` /
    ``write_table``, whose file is a temporary nobody reads); ``BlockWriter`` orders them so every such
    instant leaves a resumable directory. Tests substitute a subclass that dies at a chosen step."""

    def create(self, path: Path, data: bytes) -> None:
        """Write ``path`` (a new temporary) with ``data`` and fsync it."""
        with open(path, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())

    def write_table(self, table, path: Path) -> None:
        """Write ``table`` as Parquet to ``path`` (a new temporary) and fsync it."""
        import pyarrow.parquet as pq
        pq.write_table(table, path, compression="zstd", compression_level=3, write_statistics=True,
                       row_group_size=1 << 20)
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)

    def replace(self, src: Path, dst: Path) -> None:
        """Rename ``src`` to ``dst`` (atomic on one filesystem) and make the rename durable."""
        os.replace(src, dst)
        _fsync_dir(dst.parent)

    def unlink(self, path: Path) -> None:
        path.unlink(missing_ok=True)


def _tmp_dir(path: Path) -> Path:
    """Where a temporary for ``path`` is written: ``_run/tmp`` of its dataset when there is one (never
    under data/, never a name a reader would take for a data file), else beside it."""
    for parent in path.parents:
        if (parent / RUN_DIR / "tmp").is_dir():
            return parent / RUN_DIR / "tmp"
    return path.parent


def commit_bytes(path: Path, data: bytes, disk: Disk | None = None) -> None:
    """Put ``data`` at ``path`` atomically and durably (a temporary, fsync, rename, fsync of the directory)."""
    disk = disk or Disk()
    tmp = _tmp_dir(path) / (path.name + ".tmp")
    disk.create(tmp, data)
    disk.replace(tmp, path)


def write_json_atomic(path: Path, doc, disk: Disk | None = None) -> None:
    commit_bytes(Path(path), json.dumps(doc, indent=1, sort_keys=True).encode(), disk)


def write_parquet(table, path: Path, disk: Disk | None = None) -> str:
    """Write ``table`` to ``path`` atomically (never overwriting different bytes); returns the SHA-256."""
    disk = disk or Disk()
    tmp = _tmp_dir(path) / (path.name + ".partial")
    disk.write_table(table, tmp)
    digest = sha256_file(tmp)
    if path.exists():
        if sha256_file(path) != digest:
            disk.unlink(tmp)
            raise CollectError(f"{path} exists with other bytes than this run regenerates; it was not written by "
                               "this config and code: move it away or pass a new --out")
        disk.unlink(tmp)
    else:
        disk.replace(tmp, path)
    return digest


def read_manifest(out: Path) -> dict | None:
    """The manifest of ``out`` (None when there is none); CollectError when it does not read."""
    path = Path(out) / MANIFEST
    if not path.exists():
        return None
    try:
        doc = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CollectError(f"--out: {path} is not a readable manifest ({exc}); pass a new directory") from None
    if not isinstance(doc, dict) or doc.get("format") != DATASET_FORMAT:
        raise CollectError(f"--out: {path} is not a {DATASET_FORMAT} manifest; pass a new directory")
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
        raise CollectError(f"--out: cannot write to {out} ({exc.strerror or exc}); pass a writable directory") from None


# -- ownership of an --out -----------------------------------------------------------------------------
def _proc_start_ticks(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return int(fh.read().rsplit(")", 1)[1].split()[19])
    except (OSError, IndexError, ValueError):
        return None


class OutLock:
    """Exclusive ownership of a dataset directory by one collector: an ``flock`` on ``_run/lock`` (the
    kernel drops it when its process dies, SIGKILL included, so a dead owner's lock is taken over), and
    the owner's pid, host, process start and wall-clock start written in the file for the message a
    second collector gets. The file stays after release (it names the last owner)."""

    def __init__(self, out: Path):
        self.out = Path(out)
        self.fd: int | None = None

    @property
    def path(self) -> Path:
        return self.out / LOCK

    def owner(self) -> dict:
        """The owner the lock file names ({} when unreadable)."""
        try:
            doc = json.loads(self.path.read_text())
            return doc if isinstance(doc, dict) else {}
        except (OSError, UnicodeDecodeError, json.JSONDecodeError):
            return {}

    def acquire(self) -> "OutLock":
        """Take the lock (creating ``_run/``); CollectError naming the owner when another process holds it."""
        if self.fd is not None:
            return self
        try:
            (self.out / RUN_DIR).mkdir(parents=True, exist_ok=True)
            while True:
                fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    os.close(fd)
                    o = self.owner()
                    raise CollectError(
                        f"--out: {self.out} is being written by another collector (pid {o.get('pid', '?')} on "
                        f"{o.get('host', '?')}, started {o.get('started_at', '?')}); wait for it to finish or stop "
                        "it (its run resumes with the same command), or pass another --out") from None
                st = os.fstat(fd)
                try:
                    same = os.stat(self.path).st_ino == st.st_ino
                except FileNotFoundError:
                    same = False
                if same:
                    break
                os.close(fd)            # the file was replaced between open and flock: lock the new one
            doc = {"pid": os.getpid(), "host": socket.gethostname(), "start_ticks": _proc_start_ticks(os.getpid()),
                   "started_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
            os.ftruncate(fd, 0)
            os.pwrite(fd, json.dumps(doc).encode(), 0)
            os.fsync(fd)
        except OSError as exc:
            raise CollectError(f"--out: cannot lock {self.path} ({exc.strerror or exc}); pass a writable "
                               "directory on a filesystem with file locks") from None
        self.fd = fd
        return self

    def release(self) -> None:
        if self.fd is not None:
            os.close(self.fd)        # closing the descriptor drops the flock
            self.fd = None

    def __enter__(self) -> "OutLock":
        return self.acquire()

    def __exit__(self, *exc) -> None:
        self.release()


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


class BlockWriter:
    """Cuts the shards' steps into the dataset's files: world block B of fragment F is written once every
    shard holding one of its worlds has ended fragment F; a shard's snapshot is saved (and its steps of F
    dropped) once every block of its worlds is written for F. Blocks already in the manifest (a resumed
    run regenerating a fragment) are not written again.

    Commit order at a fragment end: the new data files, then the new snapshot files (each named by
    shard and step, so an old one is never overwritten), then the manifest listing them, then the
    snapshots it no longer lists are removed. The manifest's ``state`` maps each shard to its snapshot
    file, step and SHA-256; it is emptied (and ``status`` set to ``complete``) with the last data file.
    """

    def __init__(self, out: Path, manifest: dict, cfg, disk: Disk | None = None):
        """``cfg``: the run's ``collect.CollectConfig`` (its shard layout, fragment and block sizes).
        ``manifest``: the run's (new, with no files yet, or resumed); a new one is sealed
        (``provenance_sha256``) and committed here."""
        self.out, self.manifest, self.cfg = Path(out), manifest, cfg
        self.disk = disk or Disk()
        self.controlled = tuple(manifest["layout"]["controlled"])
        self.written = {(f["block"], f["fragment"]) for f in manifest["files"]}
        self.pending: dict[tuple, list] = {}        # (shard, fragment) -> its ShardSteps
        self.snapshots: dict[tuple, dict] = {}      # (shard, fragment) -> the snapshot at its end
        self.new_rows = 0
        self.num_blocks = -(-cfg.total_worlds // cfg.file_worlds)
        self.num_fragments = -(-cfg.steps // cfg.fragment_steps)
        self.schema = None
        manifest.setdefault("state", {})
        if "provenance_sha256" not in manifest:
            if manifest["files"] or manifest["state"]:
                raise CollectError(f"--out: {self.out / MANIFEST} has files but no provenance_sha256; it was "
                                   "edited: pass a new --out")
            manifest["provenance_sha256"] = provenance_sha256(manifest)
            self.commit()
        elif manifest["provenance_sha256"] != provenance_sha256(manifest):
            raise CollectError(f"--out: {self.out / MANIFEST}: its config, env, seeds or layout were edited "
                               "(provenance_sha256 does not match); pass a new --out")

    def commit(self) -> None:
        """Make the in-memory manifest the directory's (the one commit point)."""
        write_json_atomic(self.out / MANIFEST, self.manifest, self.disk)

    # worlds: shard s holds [s * W, (s + 1) * W); block b holds [b * FW, min((b + 1) * FW, N))
    def _block_range(self, b: int) -> tuple[int, int]:
        fw = self.cfg.file_worlds
        return b * fw, min((b + 1) * fw, self.cfg.total_worlds)

    def blocks_of_shard(self, s: int) -> range:
        w, fw = self.cfg.worlds_per_shard, self.cfg.file_worlds
        return range(s * w // fw, ((s + 1) * w - 1) // fw + 1)

    def shards_of_block(self, b: int) -> range:
        lo, hi = self._block_range(b)
        return range(lo // self.cfg.worlds_per_shard, (hi - 1) // self.cfg.worlds_per_shard + 1)

    def resume_docs(self) -> dict:
        """``{shard: snapshot doc}`` of the snapshots the manifest lists; removes what an interrupted run
        left unlisted under ``_run`` (temporaries, snapshots of an uncommitted fragment). CollectError if
        the directory does not agree with its manifest."""
        docs, listed = {}, set()
        state = self.manifest.get("state")
        if not isinstance(state, dict):
            raise CollectError(f"{self.out / MANIFEST}: state is {state!r}, not a mapping; the manifest was "
                               "edited: pass a new --out")
        for key, entry in sorted(state.items()):
            path = self.out / str(entry.get("path", "")) if isinstance(entry, dict) else None
            if path is None or not key.isdigit() or not path.is_file() or sha256_file(path) != entry.get("sha256"):
                raise CollectError(f"{self.out / MANIFEST}: state of shard {key} ({entry!r}) is missing or not the "
                                   "file the manifest lists; the directory was modified: pass a new --out")
            s = int(key)
            doc = json.loads(path.read_text())
            seq = doc.get("seq")
            done = -(-seq // self.cfg.fragment_steps) if isinstance(seq, int) else -1
            if done < 1 or any((b, f) not in self.written for b in self.blocks_of_shard(s) for f in range(done)):
                raise CollectError(f"{path}: at step {seq}, but the manifest does not list every file of this shard's "
                                   "worlds up to there; the directory was modified: pass a new --out")
            docs[s] = doc
            listed.add(path.name)
        for sub in ("state", "tmp"):
            d = self.out / RUN_DIR / sub
            for p in (d.iterdir() if d.is_dir() else ()):
                if p.is_file() and not (sub == "state" and p.name in listed):
                    self.disk.unlink(p)
        return docs

    def add(self, st) -> None:
        """Take shard ``st.shard``'s step ``st.seq``; write and commit what it completes."""
        cfg = self.cfg
        frag = (st.seq - 1) // cfg.fragment_steps
        self.pending.setdefault((st.shard, frag), []).append(st)
        if st.seq % cfg.fragment_steps and st.seq != cfg.steps:
            return
        snap = st.arrays.get("snapshot")
        if snap is None:
            raise CollectError(f"shard {st.shard}: no snapshot at step {st.seq} (fragment end); fragment_steps must be "
                               "a multiple of snapshot_every")
        self.snapshots[(st.shard, frag)] = snap
        touched, changed, superseded = set(), False, []
        for b in self.blocks_of_shard(st.shard):
            owners = self.shards_of_block(b)
            if (b, frag) not in self.written and all((s, frag) in self.snapshots for s in owners):
                self._write_block(b, frag)
                changed = True
            touched.update(owners)
        for s in sorted(touched):
            if (s, frag) in self.snapshots and all((b, frag) in self.written for b in self.blocks_of_shard(s)):
                superseded.append(self._save_state(s, self.snapshots.pop((s, frag))))
                self.pending.pop((s, frag), None)
                changed = True
        if len(self.written) == self.num_blocks * self.num_fragments and self.manifest["status"] != "complete":
            superseded += list(self.manifest["state"].values())          # the last file: nothing left to resume
            self.manifest["state"] = {}
            self.manifest["status"] = "complete"
            changed = True
        if changed:
            self.commit()
            for old in superseded:
                if old is not None:
                    self.disk.unlink(self.out / old["path"])

    def _save_state(self, s: int, doc: dict) -> dict | None:
        """Write shard ``s``'s snapshot ``doc`` to its own file and list it in the (uncommitted) manifest;
        returns the entry it supersedes."""
        data = canonical_json(doc)
        rel = f"{RUN_DIR}/state/shard-{s:04d}-seq-{doc['seq']:09d}.json"
        old = self.manifest["state"].get(str(s))
        if old is not None and old["path"] == rel:
            return None
        commit_bytes(self.out / rel, data, self.disk)
        self.manifest["state"][str(s)] = {"path": rel, "seq": doc["seq"], "sha256": hashlib.sha256(data).hexdigest()}
        return old

    def _write_block(self, b: int, frag: int) -> None:
        import pyarrow as pa

        lo, hi = self._block_range(b)
        w = self.cfg.worlds_per_shard
        if self.schema is None:
            obs_size = self.pending[(self.shards_of_block(b)[0], frag)][0].obs.shape[-1]
            self.schema = arrow_schema(obs_size, observation_entries(self.manifest["env_config"]))
        tables = []
        for s in self.shards_of_block(b):
            steps = self.pending[(s, frag)]
            tables.append(fragment_table(steps, self.controlled, steps[0].obs.shape[-1],
                                         max(lo, s * w) - s * w, min(hi, (s + 1) * w) - s * w,
                                         schema=self.schema, last_seq=self.cfg.steps))
        table = pa.concat_tables(tables).combine_chunks()     # one chunk: the bytes do not depend on the shards
        rel = f"{DATA_DIR}/block-{b:04d}-frag-{frag:06d}.parquet"
        digest = write_parquet(table, self.out / rel, self.disk)
        steps = self.pending[(self.shards_of_block(b)[0], frag)]
        self.manifest["files"].append({"path": rel, "block": b, "worlds": [lo, hi], "fragment": frag,
                                       "seq_from": steps[0].seq, "seq_to": steps[-1].seq, "rows": table.num_rows,
                                       "sha256": digest})
        self.manifest["files"].sort(key=lambda f: f["path"])
        self.written.add((b, frag))
        self.new_rows += table.num_rows
