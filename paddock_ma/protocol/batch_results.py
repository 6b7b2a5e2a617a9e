"""The reply of a batched ``reset``/``step``/``resetDrivers``: columns over worlds and drivers.

Built straight from the engine's arrays (a few ``tolist`` calls, no per-driver dicts), already in wire
names. Every array's first index is the position of the world in the request's ``envs``; the second
(where there is one) the controlled driver, in ``drivers`` order::

    {"envs": [w, ...], "drivers": [id, ...], "encoding": "json" | "f32-base64",
     "observation": {"vectors": [n][K][D] numbers, or {"f32", "shape": [n, K, D]}},   (vector output)
     "objects": [n][K] observation objects,                                            (object output)
     "reward": null, "terminated": [n][K], "truncated": [n][K], "done": [n],
     "endReason": [n][K] names or null, "episodeId": [n][K], "episodeStep": [n][K],
     "metrics": {"names": [M wire names], "values": [n][K][M] or {"f32", "shape"}},
     "events": [n] lists of events, "step": [n], "elapsedSeconds": [n], "seed": [n],
     "actionErrors": [n] lists of PaddockJS's strings and "actionErrorDetails": [n] lists of
     {code, message, field, driverId} (step only), "resetMask": [n][K] (resetDrivers only)}

A batched resetDrivers with ``resultOptions.observationScope: "reset"`` sends the vectors of the reset
drivers only, ``[R, D]`` in the order of ``resetMask``'s true entries (world by world, drivers in order),
and their objects only.

Vectors shorter than D (per-driver sensor overrides) are zero-padded: driver k's length is in the
observation spec. Metric values are numbers (booleans as 0/1, a missing lap time as null).
"""

from __future__ import annotations

import numpy as np

from ..env.actions import paddockjs_action_error
from ..env.batch_env import BatchEnv
from ..env.episodes import END_REASON_NAMES, METRIC_NAMES
from ..env.json_safe import json_array
from ..env.views.observation_object import object_view
from ..env.views.events import race_flags, race_flags_changed, world_events, world_flags, worlds_with_events
from ..paddockjs.naming import wire_name
from .codec import F32_ENCODING, pack_f32
from .wire_names import to_wire

METRIC_WIRE_NAMES = [wire_name(n) for n in METRIC_NAMES]


def batch_result(engine: BatchEnv, envs: list, encoding: str, pack=pack_f32, before=None, action_errors=None,
                 reset_mask=None, reset_scope: bool = False) -> dict:
    """The batched reply of the worlds ``envs`` after the engine's latest call (see the module docstring).

    pack: how float32 arrays are packed in the f32-base64 encoding (``codec.pack_f32`` or ``PackedF32``).
    before: ``env.views.events.race_flags(engine, envs)`` taken before a step (for race-control events),
    or None.
    """
    rows = np.asarray(envs, np.int64)
    ep = engine.episodes(rows)                                # [n, K] arrays
    terminated, truncated = ep.terminated, ep.truncated
    out = {"envs": list(envs), "drivers": list(engine.controlled), "encoding": encoding}
    output = engine.config.observation.output
    if output in ("full", "vector"):
        vectors = engine.latest_obs[rows]
        if reset_scope:        # only the reset drivers' vectors: [R, D] in resetMask's row-major order
            vectors = vectors[reset_mask[rows]]
        out["observation"] = {"vectors": pack(vectors) if encoding == F32_ENCODING else vectors.tolist()}
    if output in ("full", "object"):
        out["objects"] = [[to_wire(object_view(engine, w, k)) for k in range(len(engine.controlled))
                           if not reset_scope or reset_mask[w, k]] for w in envs]
    metrics = engine.latest_metrics[rows]
    out.update({
        "reward": None,
        "terminated": terminated.tolist(),
        "truncated": truncated.tolist(),
        "done": (terminated | truncated).all(axis=1).tolist(),
        "endReason": [[END_REASON_NAMES[r] for r in world] for world in ep.end_reason.tolist()],
        "episodeId": ep.episode_id.tolist(),
        "episodeStep": ep.episode_step.tolist(),
        "metrics": {"names": METRIC_WIRE_NAMES,
                    "values": pack(metrics) if encoding == F32_ENCODING else json_array(metrics)},
        "events": _batch_events(engine, envs, rows, before),
        "step": engine.world_steps(rows).tolist(),
        "elapsedSeconds": engine.elapsed_seconds(rows).tolist(),
        "seed": engine.world_seeds(rows).tolist(),
    })
    if action_errors is not None:     # PaddockJS's strings, the structured errors beside them
        out["actionErrors"] = [[paddockjs_action_error(e) for e in world] for world in action_errors]
        out["actionErrorDetails"] = to_wire(action_errors)
    elif before is not None:
        out["actionErrors"] = [[] for _ in envs]
        out["actionErrorDetails"] = [[] for _ in envs]
    if reset_mask is not None:
        out["resetMask"] = reset_mask[rows].tolist()
    return out


def _batch_events(engine: BatchEnv, envs: list, rows: np.ndarray, before) -> list:
    """The events of each world of ``envs``; only worlds where a counter or a race flag moved are read."""
    busy = worlds_with_events(engine, rows)
    if before is not None:
        busy |= race_flags_changed(before, race_flags(engine, rows))
    out = [[] for _ in envs]
    for i in np.nonzero(busy)[0].tolist():
        flags = None if before is None else world_flags(before, i)
        out[i] = to_wire(world_events(engine, envs[i], flags)[0])
    return out
