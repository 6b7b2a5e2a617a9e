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
from itertools import chain

import numpy as np

from ..sim.core.jit import kernel
from ..sim.core.layout import I_MANUAL, I_PIT_INTENT, I_PIT_TARGET, I_TERMINATED, I_TRUNCATED
from ..errors import INVALID_ACTION, UNKNOWN_DRIVER, PaddockError, suggest
from ..value_rules import integer_problem, is_finite_number, number_problem

VEHICLE_FIELDS = ("steering", "throttle", "brake")
OPTIONAL_FIELDS = ("pit_intent", "pit_compound")
ACTION_FIELDS = VEHICLE_FIELDS + OPTIONAL_FIELDS
ACTION_BOUNDS = {"steering": (-1.0, 1.0), "throttle": (0.0, 1.0), "brake": (0.0, 1.0)}
ACTION_SPEC_VERSION = 1
# why a pit intent cannot be applied when the environment has no pit stops
PIT_STOPS_OFF = "pit stops are disabled (rules.modules.pit_stops.enabled, or a track without a pit lane)"


def action_spec(controlled_drivers, compounds) -> dict:
    """The action spec (version 1): per-driver fields with bounds and units, PaddockJS 2.0.0's key for key
    (a field not marked ``optional`` is required)."""
    return {
        "version": ACTION_SPEC_VERSION,
        "controlled_drivers": list(controlled_drivers),
        "action": {
            "type": "continuous",
            "per_driver": {
                "steering": {"min": -1.0, "max": 1.0, "unit": "normalized"},
                "throttle": {"min": 0.0, "max": 1.0, "unit": "normalized"},
                "brake": {"min": 0.0, "max": 1.0, "unit": "normalized"},
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
    pit_compound int32[C] (-1 = unchanged, else an index into the rules' compounds, as BatchEnv's
    ``pit_compound``), errors: the report-policy messages.
    """
    controls: np.ndarray
    apply: np.ndarray
    release: np.ndarray
    pit_intent: np.ndarray
    pit_compound: np.ndarray
    errors: list

    @classmethod
    def empty(cls, num_slots: int) -> "ValidatedActions":
        """No controls applied, nothing released, pit fields unchanged."""
        return cls(np.zeros((num_slots, 3), np.float32), np.zeros(num_slots, np.int8), np.zeros(num_slots, np.int8),
                   np.full(num_slots, -1, np.int32), np.full(num_slots, -1, np.int32), [])


def member_of(arr: np.ndarray, values) -> np.ndarray:
    """Elementwise ``arr in values`` for a handful of values (``np.isin`` sorts, and costs tens of
    microseconds on the few-element arrays of one step)."""
    return (np.asarray(arr)[..., None] == np.asarray(values)).any(axis=-1)


def _number(value, driver: str, name: str) -> float:
    """An action field's value clamped to its bounds, or PaddockError naming it: a non-finite float is
    refused as such; anything else that is not a number also hears the field's range."""
    lo, hi = ACTION_BOUNDS[name]
    if not is_finite_number(value):
        hint = "" if isinstance(value, (float, np.floating)) else f" (range {lo}..{hi}, clamped)"
        raise PaddockError(INVALID_ACTION, f"actions.{driver}.{name}: {number_problem(value)}{hint}",
                           f"actions.{driver}.{name}")
    return min(max(float(value), lo), hi)


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
        if name not in action:           # (a JSON null is not missing: it is what NaN becomes, _number refuses it)
            raise PaddockError(INVALID_ACTION, f"actions.{driver}.{name}: missing; steering, throttle and "
                               "brake are required for every controlled driver", f"actions.{driver}.{name}")
        values.append(_number(action[name], driver, name))
    intent = -1
    if action.get("pit_intent") is not None:
        raw = action["pit_intent"]
        if integer_problem(raw, 0, 3) is not None:
            raise PaddockError(INVALID_ACTION, f"actions.{driver}.pit_intent: got {raw!r}; expected 0 (none), "
                               "1 (stop if free) or 2 (committed)", f"actions.{driver}.pit_intent")
        intent = int(raw)
        if intent > 0 and (not pit_stops_enabled or in_active_stop):
            why = PIT_STOPS_OFF if not pit_stops_enabled \
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
        compound = tuple(compounds).index(raw)
    return values, intent, compound


# Value types of the common action, {"steering": x, "throttle": y, "brake": z} with plain numbers,
# which ``_plain_actions`` validates as one array (bool is not among them: it is rejected).
_PLAIN_NUMBERS = frozenset({float, int, np.float64, np.float32})
ACTION_LOW = np.array([ACTION_BOUNDS[f][0] for f in VEHICLE_FIELDS])    # [steering, throttle, brake]
ACTION_HIGH = np.array([ACTION_BOUNDS[f][1] for f in VEHICLE_FIELDS])


def _plain_actions(actions: dict, controlled: dict, running: np.ndarray, num_slots: int):
    """The common case of ``validate_actions`` at array speed: exactly one action per running
    controlled driver, each with exactly steering, throttle and brake as finite plain numbers.
    Returns the ValidatedActions, or None for anything else (the per-field path then validates it
    and words the error)."""
    live = running.tolist()
    slots, rows = [], []
    ended = 0                            # actions given for ended drivers (accepted and ignored)
    try:
        for driver, slot in controlled.items():
            if live[slot]:
                action = actions[driver]
                if type(action) is not dict or len(action) != 3:
                    return None
                rows.append((action["steering"], action["throttle"], action["brake"]))
                slots.append(slot)
            elif driver in actions:
                ended += 1
    except KeyError:
        return None
    if len(rows) + ended != len(actions):        # an action for a driver that is not controlled
        return None
    if not _PLAIN_NUMBERS.issuperset(map(type, chain.from_iterable(rows))):
        return None
    values = np.array(rows, np.float64).reshape(len(rows), 3)
    if not np.isfinite(values).all():
        return None
    out = ValidatedActions.empty(num_slots)
    out.controls[slots] = np.clip(values, ACTION_LOW, ACTION_HIGH)
    out.apply[slots] = 1
    return out


def validate_actions(actions, *, controlled: dict, running: np.ndarray, num_slots: int, compounds,
                     pit_stops_enabled: bool, in_active_stop, policy: str, all_drivers=()) -> ValidatedActions:
    """Validate a ``{driver: action}`` map for one world.

    controlled: driver id -> slot for controlled drivers; running: bool[C], the slot's episode is
    running; in_active_stop: a function returning bool[C] (the car is in an active pit stop), called
    only when an action asks for a stop. Raises PaddockError (strict), or collects errors (report) for
    invalid vehicle actions. Unknown drivers are errors under both policies.

    A driver whose episode has ended may be given an action or none: a PaddockJS trainer sends one
    for every controlled driver, so it is accepted, and ignored unread (a terminated car is held, a
    truncated one keeps its last applied controls; the array path, ``check_action_arrays``, ignores
    those rows the same way).
    """
    if not isinstance(actions, dict):
        raise PaddockError(INVALID_ACTION, f"actions: got {type(actions).__name__}; expected an object "
                           "mapping controlled driver ids to actions", "actions")
    plain = _plain_actions(actions, controlled, running, num_slots)
    if plain is not None:
        return plain
    stops = None
    out = ValidatedActions.empty(num_slots)
    for driver in actions:
        if driver not in controlled:
            known = "is not controlled" if driver in all_drivers else "is not a driver of this environment"
            raise PaddockError(UNKNOWN_DRIVER, f"actions.{driver}: {driver!r} {known}"
                               f"{suggest(driver, list(controlled))}; controlled drivers: "
                               f"{', '.join(controlled)}", f"actions.{driver}")
    for driver, slot in controlled.items():
        if not running[slot]:
            continue
        try:
            if driver not in actions:
                raise PaddockError(INVALID_ACTION, f"actions.{driver}: missing action for controlled driver "
                                   f"{driver!r}", f"actions.{driver}")
            action = actions[driver]
            if stops is None and isinstance(action, dict) and action.get("pit_intent") is not None:
                stops = in_active_stop()
            values, intent, compound = _one_action(action, driver, compounds, pit_stops_enabled,
                                                   stops is not None and bool(stops[slot]))
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


def paddockjs_action_error(error: dict) -> str:
    """PaddockJS's message for a report-policy action error (``validate_actions``'s structured form,
    ``{code, message, field, driver_id}``): the strings PaddockJS 2.0.0 puts in ``info.actionErrors``."""
    driver = error.get("driver_id", "unknown")
    field = error.get("field") or ""
    name = field.rsplit(".", 1)[-1] if field.count(".") >= 2 else None
    if name is None:
        return f"Missing action for controlled driver: {driver}"
    if name == "pit_intent":
        if "could not be applied" in error.get("message", ""):
            return f"Pit intent could not be applied for controlled driver: {driver}"
        return f"Invalid pitIntent action for controlled driver: {driver}"
    if name == "pit_compound":
        return f"Invalid pitCompound action for controlled driver: {driver}"
    if name in VEHICLE_FIELDS and error.get("message", "").endswith(
            "missing; steering, throttle and brake are required for every controlled driver"):
        return f"Missing {name} action for controlled driver: {driver}"
    return f"Invalid {name} action for controlled driver: {driver}"


# -- action arrays (BatchEnv.step) -------------------------------------------------------------------
# "not given" for the optional per-step arrays of the action kernels
NONE_INT64 = np.zeros((0, 0), np.int64)


def action_array(actions, shape: tuple) -> np.ndarray:
    """``actions`` as a float32 or float64 array of ``shape`` (W, K, 3) (the check kernel's dtypes), or
    PaddockError naming what is wrong with it."""
    arr = np.asarray(actions)
    if arr.shape != shape:
        raise PaddockError(INVALID_ACTION, f"actions: shape {arr.shape}, expected {shape} "
                           "(worlds, car slots, [steering, throttle, brake])", "actions")
    if arr.dtype == np.float32 or arr.dtype == np.float64:
        return arr
    if arr.dtype == np.bool_ or not np.issubdtype(arr.dtype, np.number):
        raise PaddockError(INVALID_ACTION, f"actions: dtype {arr.dtype}, expected a float array", "actions")
    return arr.astype(np.float64)


def pit_array(values, name: str, shape: tuple) -> np.ndarray:
    """pit_intent / pit_compound as int64 of ``shape`` (W, K), or NONE_INT64 meaning "not given"."""
    if values is None:
        return NONE_INT64
    arr = np.asarray(values)
    if arr.shape != shape or not np.issubdtype(arr.dtype, np.integer):
        raise PaddockError(INVALID_ACTION, f"{name}: expected an integer array of shape {shape}, got "
                           f"{arr.dtype} {arr.shape}", name)
    return arr.astype(np.int64, copy=False)


def raise_array_error(code, w, k, field, controlled, acts, intents, compounds, n_compounds):
    """Raise the PaddockError of the first invalid entry ``check_action_arrays`` found (``controlled``:
    driver ids in K order). A non-finite action's error carries ``where = (w, k)`` so that a caller
    can name its own id for the car (the adapters' agent ids)."""
    driver = controlled[k]
    if code == ARRAY_NONFINITE:
        name = VEHICLE_FIELDS[field]
        exc = PaddockError(INVALID_ACTION, f"actions[{w}].{driver}.{name}: got {acts[w, k]!r}; expected "
                           "finite numbers", f"actions[{w}].{driver}.{name}")
        exc.where = (int(w), int(k))
        raise exc
    if code == ARRAY_PIT_DISABLED:
        raise PaddockError(INVALID_ACTION, f"pit_intent[{w}].{driver}: {int(intents[w, k])} could not be "
                           f"applied: {PIT_STOPS_OFF}",
                           f"pit_intent[{w}].{driver}")
    name, arr, allowed = (("pit_intent", intents, (-1, 0, 1, 2)) if code == ARRAY_BAD_INTENT else
                          ("pit_compound", compounds, tuple(range(-1, n_compounds))))
    raise PaddockError(INVALID_ACTION, f"{name}[{w}].{driver}: got {int(arr[w, k])}; expected one of "
                       f"{list(allowed)} (-1 = unchanged)", f"{name}[{w}].{driver}")


# First error found by ``check_action_arrays`` (its first return value).
ARRAY_OK, ARRAY_NONFINITE, ARRAY_BAD_INTENT, ARRAY_BAD_COMPOUND, ARRAY_PIT_DISABLED = range(5)


@kernel
def check_action_arrays(cars_i, slots, actions, intents, compounds, n_compounds, pit_enabled, world_mask):
    """First invalid entry of a batched step's inputs for the running controlled slots, in the order
    the errors are reported (every action, then every pit intent, then every compound, then intents
    that pit stops being disabled forbid; each in (world, driver) order) -> (code, w, k, field).

    cars_i: the state's int car fields [W, C, NI]; slots int64[K]; actions float[W, K, 3]; intents,
    compounds int[W, K] (an array of shape (0, 0) when not given); n_compounds: the rules' compound
    count (compound indices are -1 = unchanged or 0 .. n_compounds - 1); pit_enabled: 0/1. code is
    one of ARRAY_*; field is the action column (0 steering, 1 throttle, 2 brake) of a non-finite value.
    Entries of slots whose episode has ended, and of worlds whose world_mask (int8[W]) is 0, are
    ignored. Reads only."""
    nw, nk = actions.shape[0], actions.shape[1]
    for w in range(nw):
        if world_mask[w] == 0:
            continue
        for k in range(nk):
            c = slots[k]
            if cars_i[w, c, I_TERMINATED] != 0 or cars_i[w, c, I_TRUNCATED] != 0:
                continue
            for f in range(3):
                if not math.isfinite(actions[w, k, f]):
                    return ARRAY_NONFINITE, w, k, f
    for code in (ARRAY_BAD_INTENT, ARRAY_BAD_COMPOUND, ARRAY_PIT_DISABLED):
        arr = compounds if code == ARRAY_BAD_COMPOUND else intents
        if arr.shape[0] == 0 or (code == ARRAY_PIT_DISABLED and pit_enabled):
            continue
        for w in range(nw):
            if world_mask[w] == 0:
                continue
            for k in range(nk):
                c = slots[k]
                if cars_i[w, c, I_TERMINATED] != 0 or cars_i[w, c, I_TRUNCATED] != 0:
                    continue
                v = arr[w, k]
                if code == ARRAY_BAD_INTENT:
                    bad = v < -1 or v > 2
                elif code == ARRAY_BAD_COMPOUND:
                    bad = v < -1 or v >= n_compounds
                else:
                    bad = v > 0
                if bad:
                    return code, w, k, 0
    return ARRAY_OK, 0, 0, 0


@kernel
def apply_action_arrays(cars_i, slots, actions, intents, compounds, compound_codes, release, world_mask,
                        out_actions, out_apply):
    """Scatter checked inputs (``check_action_arrays`` found nothing) into the step's per-slot buffers.

    For every controlled slot: out_actions[w, slot] float32[W, C, 3] = the action clamped to
    steering [-1, 1], throttle and brake [0, 1] (a non-finite value of an ended episode reads 0);
    out_apply[w, slot] int8[W, C] = 1 when the episode runs and the car is not released. Running slots
    also get: pit intent (cars_i I_PIT_INTENT, when intents[w, k] >= 0), pit target compound
    (I_PIT_TARGET = compound_codes[compounds[w, k]] when >= 0), and, when ``release`` (int8[W, K])
    is given (shape (0, 0) otherwise), the manual flag (I_MANUAL 0 for a released car, else 1).
    Worlds whose world_mask (int8[W]) is 0 are not touched."""
    nw, nk = actions.shape[0], actions.shape[1]
    for w in range(nw):
        if world_mask[w] == 0:
            continue
        for k in range(nk):
            c = slots[k]
            running = cars_i[w, c, I_TERMINATED] == 0 and cars_i[w, c, I_TRUNCATED] == 0
            for f in range(3):
                v = actions[w, k, f]
                if not math.isfinite(v):
                    v = 0.0
                lo = -1.0 if f == 0 else 0.0
                out_actions[w, c, f] = min(max(v, lo), 1.0)
            released = release.shape[0] > 0 and running and release[w, k] != 0
            if release.shape[0] > 0:
                cars_i[w, c, I_MANUAL] = 0 if released else 1
            out_apply[w, c] = 1 if running and not released else 0
            if not running:
                continue
            if intents.shape[0] > 0 and intents[w, k] >= 0:
                cars_i[w, c, I_PIT_INTENT] = intents[w, k]
            if compounds.shape[0] > 0 and compounds[w, k] >= 0:
                cars_i[w, c, I_PIT_TARGET] = compound_codes[compounds[w, k]]
