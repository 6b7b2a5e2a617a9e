"""Worker snapshots on the wire: the engine's checksummed JSON snapshot plus the worker's seed, as opaque
base64 text. Decoding is strict JSON (``codec.decode``), never pickle; the engine checks the rest (track,
layout, shape, checksums) when it restores."""

from __future__ import annotations

import base64

from ..env.batch_env import BatchEnv
from ..errors import SNAPSHOT_REJECTED, PaddockError
from ..env.seeding import SEED_LIMIT
from ..value_rules import integer_problem
from .codec import Limits, WireError, decode, encode
from .replies import json_kind

_SNAPSHOT_LIMITS = Limits(max_line_bytes=1 << 30, max_string_chars=1 << 30)


def world_steps(engine: BatchEnv) -> list:
    """Each world's env step count."""
    return engine.world_steps().tolist()


def pack_worker_snapshot(engine: BatchEnv, seed: int | None) -> str:
    """The text of a snapshot reply: base64 of the engine's snapshot with ``worker: {seed, worlds}``."""
    doc = engine.snapshot()
    doc["worker"] = {"seed": seed, "worlds": engine.num_worlds}
    return base64.b64encode(encode(doc)).decode("ascii")


def unpack_worker_snapshot(text, num_worlds: int) -> tuple[dict, int | None]:
    """(the engine's snapshot document, the worker's seed) of a snapshot reply's text, or
    PaddockError(snapshot_rejected) naming what is wrong."""
    if not isinstance(text, str):
        raise PaddockError(SNAPSHOT_REJECTED, f"snapshot: got {json_kind(text)}; expected the text a snapshot "
                           "reply gave", "snapshot")
    try:
        doc = decode(base64.b64decode(text, validate=True), _SNAPSHOT_LIMITS)
    except (ValueError, WireError):
        raise PaddockError(SNAPSHOT_REJECTED, "snapshot: not a snapshot of this protocol (not base64 of a JSON "
                           "object); send the text of a snapshot reply unchanged", "snapshot") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("worker"), dict):
        raise PaddockError(SNAPSHOT_REJECTED, "snapshot: not a worker snapshot; send the text of a snapshot "
                           "reply unchanged", "snapshot")
    worker = doc.pop("worker")
    if worker.get("worlds") != num_worlds:
        raise PaddockError(SNAPSHOT_REJECTED, f"snapshot: taken on a worker of {worker.get('worlds')!r} worlds, "
                           f"this one has {num_worlds}; restore it into a worker of the same size", "snapshot")
    seed = worker.get("seed")
    if seed is not None and integer_problem(seed, 0, SEED_LIMIT) is not None:
        raise PaddockError(SNAPSHOT_REJECTED, "snapshot: its seed is not a valid seed", "snapshot")
    return doc, seed
