"""Writing a dataset so that a kill at any instant loses nothing: the filesystem steps (``Disk``, a
temporary, fsync, rename, fsync of the directory) and ``BlockWriter``, which cuts the shards' steps into
the dataset's files and commits them with one manifest write (the layout is ``format``'s docstring).

Crash safety: every file is written under ``_run/tmp``, fsync-ed and renamed into place, and its
directory fsync-ed; the manifest is renamed into place last, and only what it lists exists for a
resume (a data file, a shard snapshot). So a kill at any instant leaves the previous commit intact
plus at most unlisted files, which a resume discards (temporary and state files) or regenerates byte
for byte (data files).
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from ..value_rules import is_integer
from .format import DATA_DIR, MANIFEST, RUN_DIR, CollectError, canonical_json, provenance_sha256, sha256_file
from .fragments import arrow_schema, fragment_table, observation_entries


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
                               "this config and code: move it away or pass a new out directory")
        disk.unlink(tmp)
    else:
        disk.replace(tmp, path)
    return digest


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
        """``cfg``: the run's ``distributed.collection.config.CollectConfig`` (its shard layout, fragment and block sizes).
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
                raise CollectError(f"out: {self.out / MANIFEST} has files but no provenance_sha256; it was "
                                   "edited: pass a new out directory")
            manifest["provenance_sha256"] = provenance_sha256(manifest)
            self.commit()
        elif manifest["provenance_sha256"] != provenance_sha256(manifest):
            raise CollectError(f"out: {self.out / MANIFEST}: its config, env, seeds or layout were edited "
                               "(provenance_sha256 does not match); pass a new out directory")

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
                               "edited: pass a new out directory")
        for key, entry in sorted(state.items()):
            path = self.out / str(entry.get("path", "")) if isinstance(entry, dict) else None
            if path is None or not key.isdigit() or not path.is_file() or sha256_file(path) != entry.get("sha256"):
                raise CollectError(f"{self.out / MANIFEST}: state of shard {key} ({entry!r}) is missing or not the "
                                   "file the manifest lists; the directory was modified: pass a new out directory")
            s = int(key)
            doc = json.loads(path.read_text())
            seq = doc.get("seq")
            done = -(-seq // self.cfg.fragment_steps) if is_integer(seq) else -1
            if done < 1 or any((b, f) not in self.written for b in self.blocks_of_shard(s) for f in range(done)):
                raise CollectError(f"{path}: at step {seq}, but the manifest does not list every file of this shard's "
                                   "worlds up to there; the directory was modified: pass a new out directory")
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
