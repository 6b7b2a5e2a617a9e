"""Requests of the protocol's batched form: the actions of one step of many worlds, checked and turned
into the engine's arrays (one engine call steps them all)."""

from __future__ import annotations

import numpy as np

from ..env.actions import ACTION_HIGH, ACTION_LOW, validate_actions
from ..errors import INVALID_ACTION, PaddockError
from .codec import F32_ENCODING, unpack_f32
from .replies import json_kind
from .wire_names import from_request

NUMBER_TYPES = frozenset({int, float})      # JSON numbers (a boolean is not one)


def batched_actions(worker, actions, envs: list, encoding: str):
    """[W, K, 3] actions (and optional pit arrays, release, per-world action errors) of a batched step of
    ``worker`` (a ``messages.Dispatcher``), or PaddockError naming the entry at fault.

    ``actions`` is a list (one entry per world of ``envs``) of ``{driver: action}`` objects, a nested
    list [n][K][3] of numbers, or (f32-base64) a packed float32 [n, K, 3] array.
    """
    engine = worker.engine
    k = len(engine.controlled)
    out = np.zeros((worker.num_worlds, k, 3), np.float32)
    if isinstance(actions, dict) and encoding == F32_ENCODING:
        out[envs] = unpack_f32(actions, "actions", (len(envs), k, 3))
        return out, None, None, None, None
    if not isinstance(actions, list) or len(actions) != len(envs):
        raise PaddockError(INVALID_ACTION, f"actions: expected a list of {len(envs)} entries (one per world of "
                           "envs), each an object of driver actions or a [steering, throttle, brake] list per "
                           f"controlled driver{' (or the packed f32 object)' if encoding == F32_ENCODING else ''}",
                           "actions")
    if all(isinstance(a, list) for a in actions):
        try:
            arr = np.array(actions, dtype=object)
        except ValueError:      # ragged
            arr = None
        if arr is None or arr.shape != (len(envs), k, 3) or not NUMBER_TYPES.issuperset(map(type, arr.flat)):
            raise PaddockError(INVALID_ACTION, f"actions: expected numbers of shape [{len(envs)}, {k}, 3] "
                               "(worlds of envs, controlled drivers, [steering, throttle, brake])", "actions")
        # clamped in float64 first, as the one-world form clamps (1e39 would overflow float32 to inf)
        out[envs] = np.clip(arr.astype(np.float64), ACTION_LOW, ACTION_HIGH)
        return out, None, None, None, None
    intents = np.full((worker.num_worlds, k), -1, np.int64)
    compounds = np.full((worker.num_worlds, k), -1, np.int64)
    release = np.zeros((worker.num_worlds, k), np.int8)
    running = engine.running_mask()
    errors = []
    pit_enabled = engine.pit_stops_enabled
    for i, (w, entry) in enumerate(zip(envs, actions)):
        if not isinstance(entry, dict):
            raise PaddockError(INVALID_ACTION, f"actions[{i}]: got {json_kind(entry)}; expected an object "
                               "mapping controlled drivers to actions", f"actions[{i}]")
        worker.check_driver_count(entry, f"actions[{i}]")
        try:
            validated = validate_actions(
                from_request(entry, "actions"), controlled=engine.controlled_index, running=running[w],
                num_slots=k, compounds=engine.compounds, pit_stops_enabled=pit_enabled,
                in_active_stop=lambda w=w: engine.active_pit_stops(w),
                policy=worker.config.action_policy, all_drivers=worker.worlds[w].config_driver_ids)
        except PaddockError as exc:
            raise PaddockError(exc.code, exc.message.replace("actions.", f"actions[{i}].", 1),
                               exc.field.replace("actions", f"actions[{i}]", 1) if exc.field else None) from None
        out[w] = validated.controls
        intents[w] = validated.pit_intent
        compounds[w] = validated.pit_compound
        release[w] = validated.release
        errors.append(validated.errors)
    return out, intents, compounds, release, errors

