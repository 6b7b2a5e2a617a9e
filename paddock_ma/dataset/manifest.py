"""A collection's manifest as a run writes it: what the run checks a directory against (``run_base``),
a new run's first manifest (``new_manifest``) and how the run went (``run_record``, its ``run``
section). The manifest's keys and hashes are ``format``'s; ``writer.BlockWriter`` commits it.
"""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

from .. import __version__
from ..env.episodes import METRIC_NAMES
from .format import DATASET_FORMAT, DATASET_VERSION, TRANSITION_COLUMNS, config_hash, provenance_sha256


def git_commit() -> str | None:
    """The git commit of the checkout this package runs from, or None outside one."""
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5,
                             cwd=Path(__file__).resolve().parent)
        return out.stdout.strip() or None if out.returncode == 0 else None
    except (OSError, subprocess.SubprocessError):
        return None


def run_base(identity: dict, layout: dict, env_config: dict, code_fingerprint: str) -> dict:
    """What a run of ``identity`` (``CollectConfig.identity()``) with shard ``layout`` over the resolved
    ``env_config``, by code ``code_fingerprint``, checks a directory's manifest against (and starts a new
    manifest from): format, version, fingerprint, config hash and the layout."""
    return {"format": DATASET_FORMAT, "format_version": DATASET_VERSION, "code_fingerprint": code_fingerprint,
            "config_hash": config_hash(identity, env_config), "run": {"layout": layout}}


def new_manifest(base: dict, identity: dict, env_config: dict) -> dict:
    """A new run's first manifest (status ``running``, no files yet), sealed with its ``provenance_sha256``."""
    from ..env.config.root import EnvConfig

    spec = EnvConfig.from_dict(env_config)
    manifest = dict(base, status="running", config=identity, env_config=env_config,
                    package_version=__version__, git_commit=git_commit(),
                    seeds={"root": identity["seed"], "worlds": "world g's generator key is SeedSequence(root).spawn(n)[g]; "
                           "the random policy hashes (root, g, seq, car, component)"},
                    layout={"total_worlds": identity["total_worlds"], "controlled": list(spec.controlled_drivers),
                            "file_worlds": identity["file_worlds"],
                            "file": "data/block-B-frag-F.parquet holds worlds B*file_worlds .. (B+1)*file_worlds-1 "
                                    "and seqs F*fragment_steps+1 .. (F+1)*fragment_steps"},
                    columns=[list(c) for c in TRANSITION_COLUMNS], metric_names=list(METRIC_NAMES), files=[])
    manifest["provenance_sha256"] = provenance_sha256(manifest)
    return manifest


def run_record(layout: dict, seconds: float, new_rows: int, events: list, writes: str = "driver") -> dict:
    """The manifest's ``run`` section: the shard ``layout``, the run's ``seconds`` and ``new_rows``, and its
    fleet's failures and moves (``events`` without their wall-clock times), who wrote the files
    (``writes``: ``shards`` or ``driver``) and when it finished (UTC)."""
    def untimed(kind):
        return [{k: v for k, v in e.items() if k != "time"} for e in events if e["kind"] == kind]
    return {"layout": layout, "seconds": round(seconds, 3), "new_rows": new_rows, "failures": untimed("failure"),
            "moves": untimed("move"), "writes": writes, "finished_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
