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
from ..env.episodes import METRIC_NAMES
from ..env.views.events import EVENT_COUNTERS, world_events
from ..env.observations import object_view
from ..sim.core import layout as L
from .codec import F32_ENCODING, pack_f32
from .wire_names import array_to_wire, to_wire, wire_name

METRIC_WIRE_NAMES = [wire_name(n) for n in METRIC_NAMES]


def batch_result(engine: BatchEnv, envs: list, encoding: str, pack=pack_f32, before=None, action_errors=None,
                 reset_mask=None, reset_scope: bool = False) -> dict:
    """The batched reply of the worlds ``envs`` after the engine's latest call (see the module docstring).

    pack: how float32 arrays are packed in the f32-base64 encoding (``codec.pack_f32`` or ``PackedF32``).
    before: ``race_flags(engine, envs)`` taken before a step (for race-control events), or None.
    """
    st = engine.state
    rows = np.asarray(envs, np.int64)
    ci = st.cars_i[rows][:, engine.slots]                     # [n, K, NI]
    terminated = ci[:, :, L.I_TERMINATED] != 0
    truncated = ci[:, :, L.I_TRUNCATED] != 0
    names = L.END_REASON_NAMES
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
        "endReason": [[names[r] for r in world] for world in ci[:, :, L.I_END_REASON].tolist()],
        "episodeId": ci[:, :, L.I_EPISODE_ID].tolist(),
        "episodeStep": ci[:, :, L.I_EPISODE_STEP].tolist(),
        "metrics": {"names": METRIC_WIRE_NAMES,
                    "values": pack(metrics) if encoding == F32_ENCODING else array_to_wire(metrics)},
        "events": _batch_events(engine, envs, rows, before),
        "step": st.world_i[rows, L.WI_ENV_STEP].tolist(),
        "elapsedSeconds": st.world_f[rows, L.WF_TIME].tolist(),
        "seed": st.world_i[rows, L.WI_SEED].tolist(),
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


def race_flags(engine: BatchEnv, envs: list) -> tuple:
    """(race mode int64[n], race finished int64[n], finished flags int32[n, C]) of the worlds ``envs``."""
    rows = np.asarray(envs, np.int64)
    st = engine.state
    return (st.world_i[rows, L.WI_RACE_MODE].copy(), st.world_i[rows, L.WI_RACE_FINISHED].copy(),
            st.cars_i[rows, :, L.I_FINISHED].copy())


def _batch_events(engine: BatchEnv, envs: list, rows: np.ndarray, before) -> list:
    """The events of each world of ``envs``; only worlds where a counter or a race flag moved are read."""
    st = engine.state
    busy = (st.cars_i[rows][:, :, EVENT_COUNTERS] > 0).any(axis=(1, 2))
    if before is not None:
        mode, finished_race, finished = before
        now = race_flags(engine, envs)
        busy |= (mode != now[0]) | (finished_race != now[1]) | (finished != now[2]).any(axis=1)
    out = [[] for _ in envs]
    for i in np.nonzero(busy)[0].tolist():
        flags = None if before is None else {"mode": int(before[0][i]), "race_finished": int(before[1][i]),
                                             "finished": before[2][i]}
        out[i] = to_wire(world_events(engine, envs[i], flags)[0])
    return out
