"""Putting a car on the track: grid slots and ``place_car``, the one state-reset path of a car (grid
slots, scenario placements and ``reset_drivers`` all go through it, via ``race.start.place_cars``).
"""

import math

import numpy as np

from ..core.jit import kernel
from ..core.layout import (
    F_BEST_LAP_TIME, F_CONTACT_COOLDOWN, F_CURVATURE, F_DRS_TIME_0, F_FINISH_TIME, F_PJS_PROGRESS,
    F_PJS_RACE_DISTANCE, F_PIT_ENTRY_RD, F_ROUTE_OFFSET0, I_PIT_ROUTE, I_PIT_ROUTE_CURSOR, ROUTE_NONE,
    F_HEADING, F_HEADING_ERROR,
    F_LAP_START_TIME, F_LAST_LAP_TIME, F_GRIP_USAGE, F_LAT_ACC, F_LONG_ACC, F_OFFSET, F_PIT_PATH_S,
    F_PIT_SERVICE_LEFT, F_PREV_HEADING, F_PREV_X, F_PREV_Y, F_PROGRESS, F_RACE_DISTANCE, F_SECTOR1_TIME,
    F_SECTOR_START_TIME, F_SPEED, F_STALL_TIME, F_STEER_ANGLE, F_STEP_LEGAL_PROGRESS, F_STEP_PROGRESS, F_VX,
    F_VY, F_X, F_Y, F_YAW_RATE, FIRST_COUNTER, I_AI_REJOIN, I_COMPLETED_LAPS, I_DESTROYED, I_FINISHED,
    I_GRID_LOCKED, I_IN_PIT_LANE, I_INSTABILITY, I_LAP, I_LAST_CONTACT_WITH, I_PIT_INTENT, I_PIT_STATUS,
    I_PIT_STOPS, I_RETIRED, I_SECTOR, I_SEG_HINT, I_TRACTION_LIMITED, LAST_COUNTER, NO_CLOCK, PIT_PENDING,
    I_DRS_ACTIVE, I_DRS_ENABLED, I_DRS_PASSAGE_0, I_DRS_ZONE, MAX_DRS_ZONES,
)
from .rules import sector_of
from ..track.geometry import locate, point_at
from ..core.trig import wrap_angle


@kernel
def grid_slot(i, standing):
    """(race_distance m, lateral offset m) of grid slot ``i`` (spec 2.4).

    Standing start: -6 - 8 i; rolling start: -30 - 35 i; offset -3.2 for even slots, +3.2 for odd.
    """
    offset = -3.2 if i % 2 == 0 else 3.2
    if standing:
        return -6.0 - 8.0 * i, offset
    return -30.0 - 35.0 * i, offset


@kernel
def place_car(tr, cars_f, cars_i, w, c, race_distance, offset, speed, heading_error, now=0.0):
    """Put car ``c`` of world ``w`` at ``race_distance`` (m, absolute, negative on the grid) and
    lateral ``offset`` (m, + right) with ``speed`` (m/s) and ``heading_error`` (rad) to the track.

    The state-reset path: pose, velocity, track position and lap from the race distance; lap and
    sector clocks start at ``now`` (s, world time); best/last lap, sector and finish times, pit stop
    state (pending, intent 0, stops 0), stall and contact timers, grid lock, destroyed / retired /
    finished, instability, the event counters and the DRS state (latch and detections) are cleared.
    Episode fields, tyre energy, compound, controls and interaction state are the caller's.
    """
    seg = _place_pose(tr, cars_f, w, c, race_distance, offset, speed, heading_error)
    _clear_race_state(tr, cars_f, cars_i, w, c, race_distance, seg, now)


@kernel(inline="always")
def _place_pose(tr, cars_f, w, c, race_distance, offset, speed, heading_error):
    """``place_car``'s pose: position, heading, velocity along it, zero yaw/steer/accelerations,
    previous pose, and the track position of the placed car (progress, offset, heading error,
    curvature, race distance). Returns the car's centreline segment (its ``I_SEG_HINT``)."""
    L = tr.length
    s = race_distance % L
    x0, y0, h0, _ = point_at(tr, s)
    x = x0 - offset * math.sin(h0)
    y = y0 + offset * math.cos(h0)
    h = wrap_angle(h0 + heading_error)
    f = cars_f[w, c]
    f[F_X] = x
    f[F_Y] = y
    f[F_HEADING] = h
    f[F_SPEED] = speed
    f[F_VX] = speed * math.cos(h)
    f[F_VY] = speed * math.sin(h)
    f[F_YAW_RATE] = 0.0
    f[F_STEER_ANGLE] = 0.0
    f[F_LAT_ACC] = 0.0
    f[F_LONG_ACC] = 0.0
    f[F_GRIP_USAGE] = 0.0
    f[F_PREV_X] = x
    f[F_PREV_Y] = y
    f[F_PREV_HEADING] = h
    seg = np.searchsorted(tr.cs, s, side="right") - 1
    seg, ps, poff, ph, pcurv = locate(tr, x, y, min(max(seg, 0), tr.cs.shape[0] - 2))
    f[F_PROGRESS] = ps
    f[F_OFFSET] = poff
    f[F_HEADING_ERROR] = wrap_angle(h - ph)
    f[F_CURVATURE] = pcurv
    f[F_RACE_DISTANCE] = race_distance
    # PaddockJS's: its race distance is the placement's; its progress is the nearest sample's lap
    # distance, which the next classification sets without moving the race distance (as PaddockJS's reset)
    f[F_PJS_RACE_DISTANCE] = race_distance
    f[F_PJS_PROGRESS] = -1.0
    return seg


@kernel(inline="always")
def _clear_race_state(tr, cars_f, cars_i, w, c, race_distance, seg, now):
    """``place_car``'s race state: clocks from ``now`` (s) or from the next line crossed, cleared
    times, timers, pit state, flags and counters; lap and sector from the race distance (m)."""
    L = tr.length
    s = race_distance % L
    f = cars_f[w, c]
    # A car placed part-way round a lap has driven none of it: its clocks start at the next line it
    # crosses (a sector's or the lap's), so a partial first lap or sector never reports a time.
    mid_lap = race_distance > 0.0 and s > 0.0
    f[F_LAP_START_TIME] = NO_CLOCK if mid_lap else now
    f[F_SECTOR_START_TIME] = NO_CLOCK if mid_lap else now
    f[F_LAST_LAP_TIME] = 0.0
    f[F_BEST_LAP_TIME] = 0.0
    for k in range(3):
        f[F_SECTOR1_TIME + k] = 0.0
    f[F_FINISH_TIME] = 0.0
    f[F_CONTACT_COOLDOWN] = 0.0
    f[F_PIT_SERVICE_LEFT] = 0.0
    f[F_PIT_PATH_S] = 0.0
    f[F_STALL_TIME] = 0.0
    f[F_STEP_PROGRESS] = 0.0
    f[F_STEP_LEGAL_PROGRESS] = 0.0
    i = cars_i[w, c]
    i[I_SEG_HINT] = seg
    rd = max(race_distance, 0.0)
    i[I_COMPLETED_LAPS] = int(math.floor(rd / L))
    i[I_SECTOR] = sector_of(tr, s) if race_distance >= 0.0 else 0
    i[I_LAP] = int(math.floor(rd / L)) + 1      # clamped to the race's laps by update_car_rules
    i[I_PIT_STATUS] = PIT_PENDING
    i[I_PIT_ROUTE] = ROUTE_NONE
    i[I_PIT_ROUTE_CURSOR] = 0
    for k in range(F_PIT_ENTRY_RD, F_ROUTE_OFFSET0 + 1):
        f[k] = 0.0
    i[I_PIT_INTENT] = 0
    i[I_PIT_STOPS] = 0
    i[I_IN_PIT_LANE] = 0
    i[I_GRID_LOCKED] = 0
    i[I_DESTROYED] = 0
    i[I_RETIRED] = 0
    i[I_FINISHED] = 0
    i[I_INSTABILITY] = 0
    i[I_TRACTION_LIMITED] = 0
    i[I_AI_REJOIN] = 0
    i[I_LAST_CONTACT_WITH] = -1
    for k in range(FIRST_COUNTER, LAST_COUNTER + 1):
        i[k] = 0
    # DRS: no latch and no detections (PaddockJS's clearCarDrsState on a placement)
    i[I_DRS_ZONE] = 0
    i[I_DRS_ENABLED] = 0
    i[I_DRS_ACTIVE] = 0
    for k in range(MAX_DRS_ZONES):
        i[I_DRS_PASSAGE_0 + k] = 0
        f[F_DRS_TIME_0 + k] = 0.0
