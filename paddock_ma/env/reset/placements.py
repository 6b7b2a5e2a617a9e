"""Putting cars on the track: ``place`` (the one path every start and reset uses) and the placement
policies of ``BatchEnv.reset_drivers``.

A placement is a tuple ``(distance m, offset m, speed m/s or None = keep, heading error rad)``.
Policies (``PLACEMENT_POLICIES``): ``grid`` (the car's grid slot), ``random`` (a random legal
track position from the world's RNG, at rest), ``random-moving`` (the same at a speed uniform in
[0, RANDOM_MOVING_MAX_KPH) km/h from that RNG) and ``scenario`` (the scenario's placement of that
driver); or a dict of float arrays [W, K] (``distance_meters``, ``offset_meters``, ``speed_kph`` NaN =
keep, ``heading_error_radians``), or a list of placement tuples, one per reset car.
"""

from __future__ import annotations


import numpy as np

from ...sim.core import layout as L
from ...sim.race.start import place_and_classify, random_track_placements
from ..config.participants import (
    PLACEMENT_MAX_DISTANCE_M, PLACEMENT_MAX_HEADING_ERROR_RAD, PLACEMENT_MAX_OFFSET_M, PLACEMENT_MAX_SPEED_KPH,
)
from ...errors import INVALID_REQUEST, PaddockError, suggest
from ...value_rules import PLACEMENT_POLICIES, is_finite_number
from .scenarios import grid_placements

# "random-moving" (a policy of value_rules.PLACEMENT_POLICIES): a random legal position (as "random") at a
# speed uniform in [0, this) km/h, for collection that should see the car at speed from a life's first step.
RANDOM_MOVING_MAX_KPH = 250.0
RANDOM_EDGE_MARGIN = 1.5    # m kept between a random placement and the track's edge


def place(track, state, worlds, slots, placements) -> None:
    """Place cars (worlds[n], slots[n]) at placements[n] through ``race.place_and_classify``."""
    worlds = np.asarray(worlds, np.int64)
    slots = np.asarray(slots, np.int64)
    dist = np.array([p[0] for p in placements], np.float64)
    off = np.array([p[1] for p in placements], np.float64)
    speed = np.array([state.cars_f[wi, si, L.F_SPEED] if p[2] is None else p[2]
                      for p, wi, si in zip(placements, worlds, slots)], np.float64)
    head = np.array([p[3] for p in placements], np.float64)
    place_and_classify(track, state, worlds, slots, dist, off, speed, head)


def release_unlocked_starts(state, worlds) -> None:
    """Turn green the standing starts of ``worlds`` (int[n]) in which no car is held on the grid at reset
    (every car placed by the scenario): PaddockJS releases the start (``releaseRaceStart``) as its scenario
    placements unlock the last grid-locked car, so the reset's observation already reads a green race (the
    sim's race control would only turn it green at the first tick). Not applied to ``resetDrivers``:
    PaddockJS keeps its race in pre-start then (a difference the differential tester shows, seed 28)."""
    for w in np.asarray(worlds, np.int64):
        if state.world_i[w, L.WI_RACE_MODE] != L.MODE_PRE_START:
            continue
        active = state.cars_i[w, :, L.I_ACTIVE] != 0
        if not (state.cars_i[w, active, L.I_GRID_LOCKED] != 0).any():
            state.world_i[w, L.WI_RACE_MODE] = L.MODE_GREEN


def policy_placements(placement, *, track, state, driver_ids, scenario, standing_start, shape, worlds, ks,
                      slots) -> list:
    """The placement of each reset car (worlds[n], ks[n], slots[n]) under ``placement`` (module
    docstring). ``scenario``: driver id -> its scenario placement; ``shape``: (W, K). Random policies
    draw from (and advance) each world's generator in ``state.world_i``."""
    n = worlds.size
    if isinstance(placement, str):
        if placement == "grid":
            grid = grid_placements(driver_ids, standing_start, state.car_params[0, :, L.P_PACE])
            return [grid[driver_ids[s]] for s in slots]
        if placement == "scenario":
            return [scenario[driver_ids[s]] for s in slots]
        if placement in ("random", "random-moving"):
            dist, off, speed = np.empty(n), np.empty(n), np.empty(n)
            vmax = RANDOM_MOVING_MAX_KPH * L.MPS_PER_KPH if placement == "random-moving" else 0.0
            random_track_placements(track, state.world_i, worlds.astype(np.int64), RANDOM_EDGE_MARGIN, vmax,
                                    dist, off, speed)
            return [(d, o, v, 0.0) for d, o, v in zip(dist, off, speed)]
        raise PaddockError(INVALID_REQUEST, f"placement: got {placement!r}; expected one of "
                           f"{PLACEMENT_POLICIES} or arrays", "placement")
    who = [f"world {int(w)} {driver_ids[int(s)]}" for w, s in zip(worlds, slots)]
    if isinstance(placement, dict):
        return _array_placements(placement, shape, worlds, ks, who)
    if isinstance(placement, list):
        return _listed_placements(placement, who)
    raise PaddockError(INVALID_REQUEST, f"placement: got {type(placement).__name__}; expected a policy name "
                       f"{PLACEMENT_POLICIES}, a dict of arrays {ARRAY_KEYS} or a list of placement tuples",
                       "placement")


# the keys of the dict-of-arrays form, and whether NaN is allowed (speed: NaN = keep the car's speed)
ARRAY_KEYS = ("distance_meters", "offset_meters", "speed_kph", "heading_error_radians")
_NAN_KEEPS = ("speed_kph",)
# every placement's ranges (config.participants: PaddockJS's clamps, as errors)
ARRAY_RANGES = {
    "distance_meters": (-PLACEMENT_MAX_DISTANCE_M, PLACEMENT_MAX_DISTANCE_M,
                        "m (a negative distance places the car at 0)"),
    "offset_meters": (-PLACEMENT_MAX_OFFSET_M, PLACEMENT_MAX_OFFSET_M,
                      "m (the barrier's inner face is 41 m out; beyond it a car is destroyed)"),
    "speed_kph": (0.0, PLACEMENT_MAX_SPEED_KPH, "km/h (PaddockJS's top speed)"),
    "heading_error_radians": (-PLACEMENT_MAX_HEADING_ERROR_RAD, PLACEMENT_MAX_HEADING_ERROR_RAD, "rad"),
}
_TUPLE_RANGES = (ARRAY_RANGES["distance_meters"], ARRAY_RANGES["offset_meters"],
                 (0.0, PLACEMENT_MAX_SPEED_KPH * L.MPS_PER_KPH, "m/s (PaddockJS's top speed, 330 km/h)"),
                 ARRAY_RANGES["heading_error_radians"])


def _bad(field: str, message: str):
    raise PaddockError(INVALID_REQUEST, f"{field}: {message}", field)


def _array_placements(placement: dict, shape, worlds, ks, who) -> list:
    """Placement tuples of the reset cars from a dict of arrays (module docstring); every key known,
    every array numeric of shape (W, K) (or W*K flat, or a scalar), every reset car's entry finite
    (a speed may be NaN: keep). Raises PaddockError(invalid_request) naming the key and the car."""
    for key in placement:
        if key not in ARRAY_KEYS:
            _bad(f"placement.{key}", f"unknown key{suggest(key, ARRAY_KEYS)}; known keys: {', '.join(ARRAY_KEYS)}")
    arrays = {}
    for key in ARRAY_KEYS:
        field = f"placement.{key}"
        raw = placement.get(key, 0.0)
        try:
            a = np.asarray(raw, np.float64)
        except (TypeError, ValueError):
            _bad(field, f"got {_short(raw)}; expected numbers (float arrays of shape {shape}, worlds x "
                 "controlled drivers)")
        if a.ndim == 0:
            a = np.full(shape, float(a))
        elif a.shape == (shape[0] * shape[1],):
            a = a.reshape(shape)
        elif a.shape != tuple(shape):
            _bad(field, f"got an array of shape {a.shape}; expected shape {tuple(shape)} (worlds x controlled "
                 f"drivers), {shape[0] * shape[1]} values flat, or one number")
        values = a[worlds, ks]
        bad = ~np.isfinite(values)
        if key in _NAN_KEEPS:
            bad &= ~np.isnan(values)
        if bad.any():
            n = int(np.argmax(bad))
            keep = " (NaN keeps the car's speed)" if key in _NAN_KEEPS else ""
            _bad(field, f"got {float(values[n])!r} for {who[n]}; expected a finite number{keep}")
        lo, hi, unit = ARRAY_RANGES[key]
        out = (values < lo) | (values > hi)
        if out.any():
            n = int(np.argmax(out))
            _bad(field, f"got {float(values[n])!r} for {who[n]}; expected a number in [{lo:g}, {hi:g}] {unit}")
        arrays[key] = values
    return [(max(0.0, d), o, None if s != s else s * L.MPS_PER_KPH, h) for d, o, s, h in
            zip(arrays["distance_meters"], arrays["offset_meters"], arrays["speed_kph"],
                arrays["heading_error_radians"])]


def _listed_placements(placement: list, who) -> list:
    """The list form: one (distance m, offset m, speed m/s or None, heading error rad) tuple per reset
    car, in the mask's row-major order, every number finite."""
    if len(placement) != len(who):
        _bad("placement", f"got {len(placement)} placements for {len(who)} reset car(s) ({', '.join(who)}); "
             "expected one placement tuple per reset car, in the mask's row-major order")
    out = []
    for n, p in enumerate(placement):
        field = f"placement[{n}]"
        expected = ("; expected (distance m, offset m, speed m/s or None, heading error rad) with finite "
                    "numbers")
        if not isinstance(p, (tuple, list)) or len(p) != 4:
            _bad(field, f"got {_short(p)} for {who[n]}{expected}")
        values = []
        for i, v in enumerate(p):
            if v is None and i == 2:
                values.append(None)
                continue
            if not is_finite_number(v):
                _bad(field, f"got {_short(v)} at index {i} for {who[n]}{expected}")
            lo, hi, unit = _TUPLE_RANGES[i]
            if not lo <= v <= hi:
                _bad(field, f"got {_short(v)} at index {i} for {who[n]}; expected a number in [{lo:g}, {hi:g}] {unit}")
            values.append(float(v))
        values[0] = max(0.0, values[0])
        out.append(tuple(values))
    return out


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."
