"""The action contract: spec, validation of dict actions and of action arrays.

A controlled driver's action is ``{"steering", "throttle", "brake"}`` (required, finite numbers;
steering in [-1, 1] is an absolute target as a fraction of the maximum wheel angle, throttle and brake
in [0, 1]; out-of-range values are clamped and the clamped values reported as applied controls) plus
optional ``pit_intent`` (0 none, 1 stop if free, 2 committed) and ``pit_compound`` (one of the rules'
compounds). Validation happens before anything is stepped: in ``strict`` policy the first error raises
and nothing changes; in ``report`` policy a driver with an invalid action is handed to the built-in
driver for that step and the reasons are returned.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .errors import EPISODE_ENDED, INVALID_ACTION, UNKNOWN_DRIVER, PaddockError, suggest

VEHICLE_FIELDS = ("steering", "throttle", "brake")
OPTIONAL_FIELDS = ("pit_intent", "pit_compound")
ACTION_FIELDS = VEHICLE_FIELDS + OPTIONAL_FIELDS
ACTION_BOUNDS = {"steering": (-1.0, 1.0), "throttle": (0.0, 1.0), "brake": (0.0, 1.0)}
ACTION_SPEC_VERSION = 1


def action_spec(controlled_drivers, compounds) -> dict:
    """The action spec (version 1): per-driver fields with bounds and units."""
    return {
        "version": ACTION_SPEC_VERSION,
        "controlled_drivers": list(controlled_drivers),
        "action": {
            "type": "continuous",
            "per_driver": {
                "steering": {"min": -1.0, "max": 1.0, "unit": "normalized", "required": True},
                "throttle": {"min": 0.0, "max": 1.0, "unit": "normalized", "required": True},
                "brake": {"min": 0.0, "max": 1.0, "unit": "normalized", "required": True},
                "pit_intent": {"values": [0, 1, 2], "unit": "request", "optional": True},
                "pit_compound": {"values": list(compounds), "unit": "compound", "optional": True},
            },
        },
    }


@dataclass
class ValidatedActions:
    """Validated actions of one world, as arrays over the world's car slots.

    controls float32[C, 3] (clamped), apply int8[C] (1 = set as manual controls), release int8[C]
    (1 = hand the car to the built-in driver: report policy), pit_intent int32[C] (-1 = unchanged),
    pit_compound int32[C] (-1 = unchanged), errors: the report-policy messages.
    """
    controls: np.ndarray
    apply: np.ndarray
    release: np.ndarray
    pit_intent: np.ndarray
    pit_compound: np.ndarray
    errors: list


def member_of(arr: np.ndarray, values) -> np.ndarray:
    """Elementwise ``arr in values`` for a handful of values (``np.isin`` sorts, and costs tens of
    microseconds on the few-element arrays of one step)."""
    return (np.asarray(arr)[..., None] == np.asarray(values)).any(axis=-1)


def _number(value, driver: str, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise PaddockError(INVALID_ACTION,
                           f"actions.{driver}.{name}: got {value!r}; expected a finite number "
                           f"(range {ACTION_BOUNDS[name][0]}..{ACTION_BOUNDS[name][1]}, clamped)",
                           f"actions.{driver}.{name}")
    value = float(value)
    if not math.isfinite(value):
        raise PaddockError(INVALID_ACTION, f"actions.{driver}.{name}: got {value!r}; expected a finite number",
                           f"actions.{driver}.{name}")
    lo, hi = ACTION_BOUNDS[name]
    return min(max(value, lo), hi)


def _one_action(action, driver: str, compounds, pit_stops_enabled: bool, in_active_stop: bool):
    """(steer, throttle, brake, pit_intent or -1, compound index or -1) or PaddockError."""
    if not isinstance(action, dict):
        raise PaddockError(INVALID_ACTION, f"actions.{driver}: got {action!r}; expected an object with "
                           "steering, throttle and brake", f"actions.{driver}")
    for key in action:
        if key not in ACTION_FIELDS:
            raise PaddockError(INVALID_ACTION, f"actions.{driver}.{key}: unknown action field"
                               f"{suggest(key, ACTION_FIELDS)}; fields: {', '.join(ACTION_FIELDS)}",
                               f"actions.{driver}.{key}")
    values = []
    for name in VEHICLE_FIELDS:
        if name not in action or action[name] is None:
            raise PaddockError(INVALID_ACTION, f"actions.{driver}.{name}: missing; steering, throttle and "
                               "brake are required for every controlled driver", f"actions.{driver}.{name}")
        values.append(_number(action[name], driver, name))
    intent = -1
    if action.get("pit_intent") is not None:
        raw = action["pit_intent"]
        if isinstance(raw, bool) or not isinstance(raw, (int, np.integer)) or int(raw) not in (0, 1, 2):
            raise PaddockError(INVALID_ACTION, f"actions.{driver}.pit_intent: got {raw!r}; expected 0 (none), "
                               "1 (stop if free) or 2 (committed)", f"actions.{driver}.pit_intent")
        intent = int(raw)
        if intent > 0 and (not pit_stops_enabled or in_active_stop):
            why = "pit stops are disabled (rules.modules.pit_stops.enabled)" if not pit_stops_enabled \
                else "the driver is already in an active pit stop"
            raise PaddockError(INVALID_ACTION, f"actions.{driver}.pit_intent: {intent} could not be applied: "
                               f"{why}; send 0 or omit it", f"actions.{driver}.pit_intent")
    compound = -1
    if action.get("pit_compound") is not None:
        raw = action["pit_compound"]
        if raw not in compounds:
            raise PaddockError(INVALID_ACTION, f"actions.{driver}.pit_compound: got {raw!r}; expected one of "
                               f"{list(compounds)!r} (rules.modules.tire_strategy.compounds)",
                               f"actions.{driver}.pit_compound")
        compound = ("S", "M", "H").index(raw)
    return values, intent, compound


def validate_actions(actions, *, controlled: dict, running: np.ndarray, num_slots: int, compounds,
                     pit_stops_enabled: bool, in_active_stop: np.ndarray, policy: str,
                     all_drivers=()) -> ValidatedActions:
    """Validate a ``{driver: action}`` map for one world.

    controlled: driver id -> slot for controlled drivers; running: bool[C], the slot's episode is
    running (an action for an ended episode is an error; a missing one is fine); in_active_stop:
    bool[C]. Raises PaddockError (strict), or collects errors (report) for invalid vehicle actions.
    Unknown drivers and actions for ended episodes are errors under both policies.
    """
    if not isinstance(actions, dict):
        raise PaddockError(INVALID_ACTION, f"actions: got {type(actions).__name__}; expected an object "
                           "mapping controlled driver ids to actions", "actions")
    out = ValidatedActions(np.zeros((num_slots, 3), np.float32), np.zeros(num_slots, np.int8),
                           np.zeros(num_slots, np.int8), np.full(num_slots, -1, np.int32),
                           np.full(num_slots, -1, np.int32), [])
    for driver in actions:
        if driver not in controlled:
            known = "is not controlled" if driver in all_drivers else "is not a driver of this environment"
            raise PaddockError(UNKNOWN_DRIVER, f"actions.{driver}: {driver!r} {known}"
                               f"{suggest(driver, list(controlled))}; controlled drivers: "
                               f"{', '.join(controlled)}", f"actions.{driver}")
        if not running[controlled[driver]]:
            raise PaddockError(EPISODE_ENDED, f"actions.{driver}: the driver's episode has ended; call "
                               "reset_drivers for it (or reset) before sending it actions", f"actions.{driver}")
    for driver, slot in controlled.items():
        if not running[slot]:
            continue
        try:
            if driver not in actions:
                raise PaddockError(INVALID_ACTION, f"actions.{driver}: missing action for controlled driver "
                                   f"{driver!r}", f"actions.{driver}")
            values, intent, compound = _one_action(actions[driver], driver, compounds, pit_stops_enabled,
                                                   bool(in_active_stop[slot]))
        except PaddockError as exc:
            if policy != "report":
                raise
            out.errors.append(exc.to_dict() | {"driver_id": driver})
            out.release[slot] = 1
            continue
        out.controls[slot] = values
        out.apply[slot] = 1
        out.pit_intent[slot] = intent
        out.pit_compound[slot] = compound
    return out


def validate_action_array(actions: np.ndarray, controlled_mask: np.ndarray, running: np.ndarray,
                          driver_ids) -> np.ndarray:
    """Validate and clamp a ``[W, C, 3]`` action array for the running controlled slots.

    Non-finite values in a running controlled slot raise PaddockError naming world and driver; values
    elsewhere are ignored. Returns a clamped float32 copy.
    """
    actions = np.asarray(actions)
    expected = controlled_mask.shape + (3,)
    if actions.shape != expected:
        raise PaddockError(INVALID_ACTION, f"actions: shape {actions.shape}, expected {expected} "
                           "(worlds, car slots, [steering, throttle, brake])", "actions")
    if not np.issubdtype(actions.dtype, np.number):
        raise PaddockError(INVALID_ACTION, f"actions: dtype {actions.dtype}, expected a float array", "actions")
    live = controlled_mask & running
    bad = live & ~np.isfinite(actions).all(axis=-1)
    if bad.any():
        w, c = (int(i) for i in np.argwhere(bad)[0])
        field = VEHICLE_FIELDS[int(np.argmin(np.isfinite(actions[w, c])))]
        raise PaddockError(INVALID_ACTION, f"actions[{w}].{driver_ids[c]}.{field}: got {actions[w, c]!r}; "
                           "expected finite numbers", f"actions[{w}].{driver_ids[c]}.{field}")
    out = np.nan_to_num(actions.astype(np.float32, copy=True), nan=0.0, posinf=0.0, neginf=0.0)
    np.clip(out[..., 0], -1.0, 1.0, out=out[..., 0])
    np.clip(out[..., 1:], 0.0, 1.0, out=out[..., 1:])
    return out
