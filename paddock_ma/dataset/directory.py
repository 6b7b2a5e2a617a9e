"""A collection's out directory: whether it may take a run, decided before any work, and the folders of
a new one.

A directory takes a run when it is new (missing, empty, or holding only what a run leaves before its
first manifest: ``unstarted``) and writable, or when it holds an interrupted run of the same dataset
to resume (its manifest has the run's config hash, code fingerprint and shard layout, and is not
complete). Anything else is refused with a ``CollectError`` naming what the directory holds and the
fix; nothing is ever overwritten.
"""

from __future__ import annotations

import os
from pathlib import Path

from .format import DATA_DIR, MANIFEST, RUN_DIR, CollectError, read_manifest


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


def resumable_manifest(out: Path, base: dict) -> dict | None:
    """The manifest of the run in ``out`` that a run of ``base`` (``manifest.run_base``) resumes, or None
    when ``out`` is new or empty and its place writable; CollectError for anything else. Writes nothing."""
    if out.exists() and not out.is_dir():
        raise CollectError(f"out: {out} exists and is not a directory; pass a new directory")
    if out.is_dir():
        entries = sorted(p.name for p in out.iterdir())
        if entries and not unstarted(out):
            manifest = read_manifest(out)
            if manifest is None:
                raise CollectError(f"out: {out} is not empty and holds no {MANIFEST} ({', '.join(entries[:5])}); "
                                   "pass a new or empty directory (nothing is overwritten)")
            _check_resumable(out, manifest, base)
            return manifest
    _check_writable(out)
    return None


def _check_resumable(out: Path, manifest: dict, base: dict) -> None:
    """CollectError unless ``manifest`` is an unfinished run of ``base``'s dataset, code and shard layout."""
    if manifest.get("config_hash") != base["config_hash"]:
        raise CollectError(f"out: {out} holds a run of another config (config_hash "
                           f"{manifest.get('config_hash', '?')[:12]}, this one {base['config_hash'][:12]}); "
                           "resume it with the same arguments or pass a new directory")
    if manifest.get("code_fingerprint") != base["code_fingerprint"]:
        raise CollectError(f"out: {out} was collected by other paddock_ma code (fingerprint "
                           f"{manifest.get('code_fingerprint')}, this one {base['code_fingerprint']}): "
                           "its remaining fragments would not continue its trajectories; resume it with "
                           f"that code (git commit {manifest.get('git_commit')}) or pass a new directory")
    if manifest.get("status") == "complete":
        raise CollectError(f"out: {out} already holds this complete dataset; verify it "
                           "(verify.verify) or pass a new directory")
    if manifest.get("run", {}).get("layout") != base["run"]["layout"]:
        theirs = manifest.get("run", {}).get("layout") or {}
        raise CollectError(f"out: {out} holds a run of this dataset with another shard layout "
                           f"({theirs.get('num_shards')} shards x {theirs.get('worlds_per_shard')} worlds, "
                           f"snapshots every {theirs.get('snapshot_every')}); resume it with num_shards="
                           f"{theirs.get('num_shards')} and worlds_per_shard={theirs.get('worlds_per_shard')} "
                           "or pass a new directory")


def _check_writable(out: Path) -> None:
    """CollectError unless a directory can be created where ``out`` is (its nearest existing ancestor
    takes a new directory: permissions say yes on /proc, a read-only mount or a full disk, so it is tried)."""
    anc = out.resolve()
    while not anc.exists():
        anc = anc.parent
    if not anc.is_dir() or not os.access(anc, os.W_OK | os.X_OK):
        raise CollectError(f"out: cannot write to {out} ({anc} is {'not a directory' if not anc.is_dir() else 'not writable'}); "
                           "pass a writable directory")
    import tempfile
    try:
        os.rmdir(tempfile.mkdtemp(prefix=".paddock-probe-", dir=anc))
    except OSError as exc:
        raise CollectError(f"out: cannot write to {out} ({anc}: {exc.strerror or exc}); pass a writable "
                           "directory") from None


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
