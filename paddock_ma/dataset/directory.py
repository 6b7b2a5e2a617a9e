"""A collection's out directory (or object-store prefix): whether it may take a run, decided before any
work, and the folders of a new one.

A directory takes a run when it is new (missing, empty, or holding only what a run leaves before its
first manifest: ``unstarted``) and writable, or when it holds an interrupted run of the same dataset
to resume (its manifest has the run's config hash, code fingerprint and shard layout, and is not
complete). Anything else is refused with a ``CollectError`` naming what the directory holds and the
fix; nothing is ever overwritten.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from .format import DATASET_FORMAT, MANIFEST, RUN_DIR, CollectError
from .storage.opening import open_store
from .storage.store import Store


def load_manifest(store: Store) -> tuple[dict | None, object]:
    """``(manifest or None, token)`` of ``store`` (``token``: what its next commit checks); CollectError
    when it does not read."""
    data, token = store.read_manifest(MANIFEST)
    if data is None:
        return None, None
    try:
        doc = json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CollectError(f"out: {store.where(MANIFEST)} is not a readable manifest ({exc}); pass a new directory") from None
    if not isinstance(doc, dict) or doc.get("format") != DATASET_FORMAT:
        raise CollectError(f"out: {store.where(MANIFEST)} is not a {DATASET_FORMAT} manifest; pass a new directory")
    return doc, token


def unstarted(store: Store) -> bool:
    """Whether the store holds nothing but what a run leaves before its first manifest (files under its
    ``_run`` directory): such a directory is taken as new."""
    return all(rel.startswith(f"{RUN_DIR}/") for rel in store.list_files())


def resumable_manifest(out, base: dict) -> tuple[dict | None, object]:
    """``(manifest, token)`` of the run in ``out`` (a path, URI or ``Store``) that a run of ``base``
    (``manifest.run_base``) resumes, or ``(None, None)`` when ``out`` is new or empty and its place
    writable; CollectError for anything else. Writes nothing."""
    store = open_store(out)
    if store.local:
        root = store.root
        if root.exists() and not root.is_dir():
            raise CollectError(f"out: {root} exists and is not a directory; pass a new directory")
        entries = sorted(p.name for p in root.iterdir()) if root.is_dir() else []
        if not entries:
            _check_writable(root)
            return None, None
    else:
        entries = sorted({rel.split("/", 1)[0] for rel in store.list_files()})
    if entries and not unstarted(store):
        manifest, token = load_manifest(store)
        if manifest is None:
            raise CollectError(f"out: {store.uri} is not empty and holds no {MANIFEST} ({', '.join(entries[:5])}); "
                               "pass a new or empty directory (nothing is overwritten)")
        _check_resumable(store.uri, manifest, base)
        return manifest, token
    if store.local:
        _check_writable(store.root)
    else:
        store.prepare()
    return None, None


def _check_resumable(out: str, manifest: dict, base: dict) -> None:
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
