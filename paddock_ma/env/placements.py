"""Putting cars on the track: ``place`` (the one path every start and reset uses) and the placement
policies of ``BatchEnv.reset_drivers``.

A placement is a tuple ``(distance m, offset m, speed m/s or None = keep, heading error rad)``.
Policies (``scenarios.PLACEMENT_POLICIES``): ``grid`` (the car's grid slot), ``random`` (a random legal
track position from the world's RNG, at rest), ``random-moving`` (the same at a speed uniform in
[0, RANDOM_MOVING_MAX_KPH) km/h from that RNG) and ``scenario`` (the scenario's placement of that
driver); or a dict of float arrays [W, K] (``distance_meters``, ``offset_meters``, ``speed_kph`` NaN =
keep, ``heading_error_radians``), or a list of placement tuples, one per reset car.
"""

from __future__ import annotations

import numpy as np

from ..sim import layout as L
from ..sim.race import place_and_classify, random_track_placements
from .errors import INVALID_REQUEST, PaddockError
from .scenarios import PLACEMENT_POLICIES, RANDOM_MOVING_MAX_KPH, grid_placements

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


def policy_placements(placement, *, track, state, driver_ids, scenario, standing_start, shape, worlds, ks,
                      slots) -> list:
    """The placement of each reset car (worlds[n], ks[n], slots[n]) under ``placement`` (module
    docstring). ``scenario``: driver id -> its scenario placement; ``shape``: (W, K). Random policies
    draw from (and advance) each world's generator in ``state.world_i``."""
    n = worlds.size
    if isinstance(placement, str):
        if placement == "grid":
            grid = grid_placements(driver_ids, standing_start)
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
    if isinstance(placement, dict):
        arrays = {}
        for key in ("distance_meters", "offset_meters", "speed_kph", "heading_error_radians"):
            a = np.asarray(placement.get(key, np.zeros(shape[0] * shape[1])), np.float64)
            arrays[key] = a.reshape(shape)[worlds, ks]
        return [(max(0.0, d), o, None if s != s else s * L.MPS_PER_KPH, h) for d, o, s, h in
                zip(arrays["distance_meters"], arrays["offset_meters"], arrays["speed_kph"],
                    arrays["heading_error_radians"])]
    if isinstance(placement, list) and len(placement) == n:
        return placement
    raise PaddockError(INVALID_REQUEST, "placement: expected a policy name, a dict of arrays, or a list "
                       "of placement tuples", "placement")
