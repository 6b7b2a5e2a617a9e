"""The dataset format of a collection: Parquet files of transition rows and a manifest; cutting a run's
steps into files (``BlockWriter``), and ``verify``.

See ``collect`` for the directory layout and the row columns (``TRANSITION_COLUMNS``).
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import numpy as np

from ..env.episodes import END_REASON_NAMES, METRIC_NAMES

DATASET_FORMAT = "paddock-ma-dataset"
DATASET_VERSION = 4      # 2: files cut by world blocks, no shard column (a dataset no longer depends on the shards)
#                          3: PaddockJS 2.0.0's thirteen metric columns in its order (fully_outside_white_line,
#                             destroy_reason: 0 none, 1 barrier; episodes.METRIC_NAMES)
#                          4: PaddockJS 2.0.0's observation vector layout in ``obs`` (issue 14: 24-entry base block,
#                             7 / 11 slots a ray, 8 / 13 a radar slot)
MANIFEST = "manifest.json"
TRANSITION_COLUMNS = (("world", "int32"), ("driver", "string"), ("episode_id", "int32"),
                      ("life", "int32"), ("episode_step", "int32"), ("seq", "int32"), ("obs", "float32[D]"),
                      ("action", "float32[3]"), *((m, "float32") for m in METRIC_NAMES), ("terminated", "bool"),
                      ("truncated", "bool"), ("end_reason", "string"), ("final_obs", "float32[D]"))


class CollectError(ValueError):
    """Bad collection input or an unusable --out; the message names the value and the fix."""


def canonical_json(obj) -> bytes:
    return json.dumps(obj, sort_keys=True, separators=(",", ":")).encode()


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def write_json_atomic(path: Path, doc) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(doc, indent=1, sort_keys=True))
    os.replace(tmp, path)


# -- fragments -------------------------------------------------------------------------------------------
def _schema(obs_size: int):
    import pyarrow as pa
    cols = [pa.field("world", pa.int32(), False),
            pa.field("driver", pa.string(), False), pa.field("episode_id", pa.int32(), False),
            pa.field("life", pa.int32(), False), pa.field("episode_step", pa.int32(), False),
            pa.field("seq", pa.int32(), False), pa.field("obs", pa.list_(pa.float32(), obs_size), False),
            pa.field("action", pa.list_(pa.float32(), 3), False)]
    cols += [pa.field(m, pa.float32(), False) for m in METRIC_NAMES]
    cols += [pa.field("terminated", pa.bool_(), False), pa.field("truncated", pa.bool_(), False),
             pa.field("end_reason", pa.string(), True), pa.field("final_obs", pa.list_(pa.float32(), obs_size), True)]
    return pa.schema(cols, metadata={"format": DATASET_FORMAT, "version": str(DATASET_VERSION)})


def fragment_table(steps: list, controlled: tuple, obs_size: int, lo: int = 0, hi: int | None = None):
    """A pyarrow Table of one shard's ShardSteps ``steps`` (consecutive seqs), for its local worlds
    ``lo:hi`` only (default: all), rows sorted by (world, driver index, seq)."""
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
    obs = order(stack(lambda s: s.obs))
    action = order(stack(lambda s: s.arrays["action"]))
    metrics = order(stack(lambda s: s.arrays["metrics"]))
    term = order(stack(lambda s: s.arrays["terminated"]))
    trunc = order(stack(lambda s: s.arrays["truncated"]))
    reason = order(stack(lambda s: s.arrays["end_reason"]))
    final = order(stack(lambda s: s.arrays["final_obs"] if s.arrays["final_obs"] is not None
                        else np.zeros_like(s.obs)))
    done = term | trunc
    rows = w * k * n_steps
    names = np.array([None] + list(END_REASON_NAMES[1:]), dtype=object)
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
        cols[m] = pa.array(metrics[:, j].astype(np.float32))
    cols["terminated"] = pa.array(term)
    cols["truncated"] = pa.array(trunc)
    cols["end_reason"] = pa.array(names[np.where(done, reason, 0)], pa.string())
    cols["final_obs"] = pa.FixedSizeListArray.from_arrays(pa.array(final.astype(np.float32).reshape(-1)), obs_size,
                                                          mask=pa.array(~done))
    return pa.table(cols, schema=_schema(obs_size))


def write_parquet(table, path: Path) -> str:
    """Write ``table`` to ``path`` (never overwriting different bytes); returns the SHA-256."""
    import pyarrow.parquet as pq

    tmp = path.with_name(path.name + ".partial")
    pq.write_table(table, tmp, compression="zstd", compression_level=3, write_statistics=True,
                   row_group_size=1 << 20)
    digest = sha256_file(tmp)
    if path.exists():
        if sha256_file(path) != digest:
            tmp.unlink()
            raise CollectError(f"{path} exists with other bytes than this run regenerates; it was not written by "
                               "this config and code: move it away or pass a new --out")
        tmp.unlink()
    else:
        os.replace(tmp, path)
    return digest


class BlockWriter:
    """Cuts the shards' steps into the dataset's files: world block B of fragment F is written once every
    shard holding one of its worlds has ended fragment F; a shard's snapshot is saved (and its steps of F
    dropped) once every block of its worlds is written for F. Blocks already in the manifest (a resumed
    run regenerating a fragment) are not written again."""

    def __init__(self, out: Path, manifest: dict, cfg):
        """``cfg``: the run's ``collect.CollectConfig`` (its shard layout, fragment and block sizes)."""
        self.out, self.manifest, self.cfg = out, manifest, cfg
        self.controlled = tuple(manifest["layout"]["controlled"])
        self.written = {(f["block"], f["fragment"]) for f in manifest["files"]}
        self.pending: dict[tuple, list] = {}        # (shard, fragment) -> its ShardSteps
        self.snapshots: dict[tuple, dict] = {}      # (shard, fragment) -> the snapshot at its end
        self.new_rows = 0

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
        """``{shard: snapshot doc}`` of the shards an interrupted run saved; CollectError if the directory
        does not agree with its manifest."""
        docs = {}
        for s in range(self.cfg.num_shards):
            path = self.out / "state" / f"shard-{s:04d}.json"
            if not path.exists():
                continue
            doc = json.loads(path.read_text())
            seq = doc.get("seq")
            done = -(-seq // self.cfg.fragment_steps) if isinstance(seq, int) else -1
            if done < 1 or any((b, f) not in self.written for b in self.blocks_of_shard(s) for f in range(done)):
                raise CollectError(f"{path}: at step {seq}, but the manifest does not list every file of this shard's "
                                   "worlds up to there; the directory was modified: pass a new --out")
            docs[s] = doc
        return docs

    def add(self, st) -> None:
        """Take shard ``st.shard``'s step ``st.seq``; write what it completes."""
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
        touched = set()
        for b in self.blocks_of_shard(st.shard):
            owners = self.shards_of_block(b)
            if (b, frag) not in self.written and all((s, frag) in self.snapshots for s in owners):
                self._write_block(b, frag)
            touched.update(owners)
        for s in sorted(touched):
            if (s, frag) in self.snapshots and all((b, frag) in self.written for b in self.blocks_of_shard(s)):
                write_json_atomic(self.out / "state" / f"shard-{s:04d}.json", self.snapshots.pop((s, frag)))
                self.pending.pop((s, frag), None)
        write_json_atomic(self.out / MANIFEST, self.manifest)

    def _write_block(self, b: int, frag: int) -> None:
        import pyarrow as pa

        lo, hi = self._block_range(b)
        w = self.cfg.worlds_per_shard
        tables = []
        for s in self.shards_of_block(b):
            steps = self.pending[(s, frag)]
            tables.append(fragment_table(steps, self.controlled, steps[0].obs.shape[-1],
                                         max(lo, s * w) - s * w, min(hi, (s + 1) * w) - s * w))
        table = pa.concat_tables(tables).combine_chunks()     # one chunk: the bytes do not depend on the shards
        rel = f"data/block-{b:04d}-frag-{frag:06d}.parquet"
        digest = write_parquet(table, self.out / rel)
        steps = self.pending[(self.shards_of_block(b)[0], frag)]
        self.manifest["files"].append({"path": rel, "block": b, "worlds": [lo, hi], "fragment": frag,
                                       "seq_from": steps[0].seq, "seq_to": steps[-1].seq, "rows": table.num_rows,
                                       "sha256": digest})
        self.manifest["files"].sort(key=lambda f: f["path"])
        self.written.add((b, frag))
        self.new_rows += table.num_rows


def verify(path) -> list[str]:
    """Check a dataset directory; returns the problems found (empty when it is clean), first problem first.

    Checks: the manifest reads; every listed file exists with its SHA-256 and row count and no data file
    is unlisted; every (world, driver, episode, episode step) appears exactly once; each car's seqs are
    1..N without a gap; each episode's steps are contiguous from 1 and an episode only follows one that
    ended (terminated or truncated); a complete run has steps x worlds x drivers rows.
    """
    import pyarrow.parquet as pq

    root = Path(path)
    mpath = root / MANIFEST
    if not mpath.exists():
        return [f"{mpath}: missing (not a dataset directory)"]
    try:
        manifest = json.loads(mpath.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        return [f"{mpath}: unreadable ({exc})"]
    if manifest.get("format") != DATASET_FORMAT:
        return [f"{mpath}: format {manifest.get('format')!r}, expected {DATASET_FORMAT!r}"]
    problems = []
    listed = {f["path"] for f in manifest["files"]}
    on_disk = {f"data/{p.name}" for p in (root / "data").glob("*.parquet")} if (root / "data").is_dir() else set()
    for extra in sorted(on_disk - listed):
        problems.append(f"{extra}: a data file the manifest does not list")
    cols = ("world", "driver", "episode_id", "episode_step", "seq", "terminated", "truncated")
    parts = []
    for f in manifest["files"]:
        p = root / f["path"]
        if not p.exists():
            problems.append(f"{f['path']}: listed in the manifest but missing")
            continue
        digest = sha256_file(p)
        if digest != f["sha256"]:
            problems.append(f"{f['path']}: SHA-256 {digest[:16]}..., manifest says {f['sha256'][:16]}...")
            continue
        meta = pq.ParquetFile(p).metadata
        if meta.num_rows != f["rows"]:
            problems.append(f"{f['path']}: {meta.num_rows} rows, manifest says {f['rows']}")
            continue
        parts.append(pq.read_table(p, columns=list(cols)))
    if problems:
        return problems
    import pyarrow as pa
    if not parts:
        return [] if manifest.get("status") != "complete" else ["manifest: complete but lists no files"]
    t = pa.concat_tables(parts)
    controlled = manifest["layout"]["controlled"]
    index = {d: i for i, d in enumerate(controlled)}
    world = t["world"].to_numpy().astype(np.int64)
    drv_names = t["driver"].to_pylist()
    if any(d not in index for d in set(drv_names)):
        return [f"driver column: names {sorted(set(drv_names) - set(index))} are not the manifest's controlled drivers"]
    drv = np.array([index[d] for d in drv_names], np.int64)
    ep = t["episode_id"].to_numpy().astype(np.int64)
    es = t["episode_step"].to_numpy().astype(np.int64)
    seq = t["seq"].to_numpy().astype(np.int64)
    done = t["terminated"].to_numpy(zero_copy_only=False) | t["truncated"].to_numpy(zero_copy_only=False)
    order = np.lexsort((seq, drv, world))
    world, drv, ep, es, seq, done = world[order], drv[order], ep[order], es[order], seq[order], done[order]
    car = world * len(controlled) + drv
    key = np.lexsort((es, ep, car))
    dup = (np.diff(car[key]) == 0) & (np.diff(ep[key]) == 0) & (np.diff(es[key]) == 0)
    if dup.any():
        i = key[np.argmax(dup)]
        return [f"duplicate transition: world {world[i]}, driver {controlled[drv[i]]}, episode {ep[i]}, step {es[i]}"]
    same = np.diff(car) == 0
    first = np.concatenate([[True], ~same])
    bad = ~first & ((seq - np.roll(seq, 1)) != 1)
    bad |= first & (seq != 1)
    if bad.any():
        i = int(np.argmax(bad))
        return [f"gap: world {world[i]}, driver {controlled[drv[i]]}: seq {seq[i]} follows "
                f"{seq[i - 1] if not first[i] else 'nothing'} (expected {seq[i - 1] + 1 if not first[i] else 1})"]
    prev_ep, prev_es, prev_done = np.roll(ep, 1), np.roll(es, 1), np.roll(done, 1)
    cont = ~first & (ep == prev_ep) & (es != prev_es + 1)
    new_ep = ~first & (ep != prev_ep) & ((es != 1) | ~prev_done | (ep < prev_ep))
    bad = cont | new_ep | (first & (es != 1) & (seq == 1))
    if bad.any():
        i = int(np.argmax(bad))
        return [f"episode not contiguous: world {world[i]}, driver {controlled[drv[i]]}, episode {ep[i]} step {es[i]} "
                f"at seq {seq[i]} follows episode {prev_ep[i]} step {prev_es[i]}"
                f"{' (which had not ended)' if not prev_done[i] and ep[i] != prev_ep[i] else ''}"]
    if manifest.get("status") == "complete":
        c = manifest["config"]
        want = c["steps"] * manifest["layout"]["total_worlds"] * len(controlled)
        if len(seq) != want:
            return [f"row count: {len(seq)} rows, a complete run of this config has {want}"]
    return []
