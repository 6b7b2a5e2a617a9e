"""Race control: the world's clock and start lights, grid lock, red flag, which cars are held, and the
race order (spec 4.1-4.3).

Kernels the step calls (see ``sim.step``): ``race_control_tick`` first in every tick, ``car_is_held``
per car before the dynamics, ``update_ranks`` per world at the end of the tick. ``init_world`` sets
race control at a world's start (``race.start.start_worlds``).
"""

import math

from ..core.jit import kernel
from ..core.layout import (
    F_FINISH_TIME, F_HEADING, F_RACE_DISTANCE, F_SPEED, F_VX, F_VY, FLAG_CLASSIFIED, I_ACTIVE, I_DESTROYED,
    I_FINISHED, I_GRID_LOCKED, I_RANK, I_RETIRED, I_TERMINATED, MODE_GREEN, MODE_PRE_START, MODE_RED_FLAG,
    MODE_SAFETY_CAR, MPS_PER_KPH, R_LIGHT_COUNT, R_LIGHT_INTERVAL, R_LIGHTS_OUT_HOLD, R_STANDING_START,
    WF_LIGHTS_OUT_AT, WF_RED_FLAG_TIME, WF_TIME, WI_PIT_LANE_OPEN, WI_RACE_FINISHED, WI_RACE_MODE,
    WI_RED_FLAG, WI_TICK,
)
from .pit_service import pit_route_active

RESTART_SPEED = 60.0 * MPS_PER_KPH         # m/s, minimum speed when a red flag is withdrawn (spec 4.3)
LIGHTS_EPS = 1e-9                  # s, tolerance on the accumulated clock at lights out


@kernel
def init_world(world_f, world_i, rules, w):
    """Race control of world ``w`` at reset: mode, lights-out time, pit lane open, no red flag.

    Standing start: pre-start until R_LIGHT_COUNT * R_LIGHT_INTERVAL + R_LIGHTS_OUT_HOLD s (4.38 s by
    default); rolling start: green at once. Does not touch the clock, tick or RNG.
    """
    if rules[w, R_STANDING_START] > 0.5:
        world_i[w, WI_RACE_MODE] = MODE_PRE_START
        world_f[w, WF_LIGHTS_OUT_AT] = (rules[w, R_LIGHT_COUNT] * rules[w, R_LIGHT_INTERVAL]
                                        + rules[w, R_LIGHTS_OUT_HOLD])
    else:
        world_i[w, WI_RACE_MODE] = MODE_GREEN
        world_f[w, WF_LIGHTS_OUT_AT] = 0.0
    world_i[w, WI_PIT_LANE_OPEN] = 1
    world_i[w, WI_RED_FLAG] = 0
    world_i[w, WI_RACE_FINISHED] = 0
    world_f[w, WF_RED_FLAG_TIME] = -1.0


@kernel
def race_control_tick(cars_f, cars_i, world_f, world_i, rules, w, n_cars, dt):
    """Advance world ``w``'s clock by ``dt`` s and one tick; start lights; red flag.

    cars_f float64[W, C, NF]; cars_i int32[W, C, NI]; world_f float64[W, NWF]; world_i int64[W, NWI];
    rules float64[W, NR]. Pre-start turns green (and unlocks the grid) at lights out, or at once when
    no active car is grid-locked any more. A red flag request (WI_RED_FLAG) is honoured only while
    racing and before the race finishes; withdrawing it restarts cars at >= 60 km/h.
    """
    world_f[w, WF_TIME] += dt
    world_i[w, WI_TICK] += 1
    t = world_f[w, WF_TIME]
    mode = world_i[w, WI_RACE_MODE]
    if mode == MODE_PRE_START:
        locked = False
        for c in range(n_cars):
            if cars_i[w, c, I_ACTIVE] != 0 and cars_i[w, c, I_GRID_LOCKED] != 0:
                locked = True
        if not locked or t >= world_f[w, WF_LIGHTS_OUT_AT] - LIGHTS_EPS:
            mode = MODE_GREEN
            for c in range(n_cars):
                cars_i[w, c, I_GRID_LOCKED] = 0
    red = world_i[w, WI_RED_FLAG] != 0
    if red and (mode == MODE_GREEN or mode == MODE_SAFETY_CAR) and world_i[w, WI_RACE_FINISHED] == 0:
        mode = MODE_RED_FLAG
        world_f[w, WF_RED_FLAG_TIME] = t
    elif not red and mode == MODE_RED_FLAG:
        mode = MODE_GREEN
        world_f[w, WF_RED_FLAG_TIME] = -1.0
        for c in range(n_cars):
            if (cars_i[w, c, I_ACTIVE] == 0 or cars_i[w, c, I_DESTROYED] != 0
                    or cars_i[w, c, I_RETIRED] != 0 or cars_i[w, c, I_TERMINATED] != 0
                    or pit_route_active(cars_i, w, c)):
                continue
            v = max(cars_f[w, c, F_SPEED], RESTART_SPEED)
            h = cars_f[w, c, F_HEADING]
            cars_f[w, c, F_SPEED] = v
            cars_f[w, c, F_VX] = v * math.cos(h)
            cars_f[w, c, F_VY] = v * math.sin(h)
    world_i[w, WI_RACE_MODE] = mode


@kernel
def car_is_held(cars_i, world_i, w, c):
    """True when car ``c`` must not move this tick: empty slot, grid lock, red flag, or terminal
    (destroyed, retired, or its episode terminated). Finished cars keep driving."""
    return (cars_i[w, c, I_ACTIVE] == 0 or cars_i[w, c, I_GRID_LOCKED] != 0
            or world_i[w, WI_RACE_MODE] == MODE_RED_FLAG or cars_i[w, c, I_DESTROYED] != 0
            or cars_i[w, c, I_RETIRED] != 0 or cars_i[w, c, I_TERMINATED] != 0)


@kernel
def _ahead(cars_f, cars_i, a, b, w):
    """True when car ``a`` is classified ahead of car ``b``: finished cars first by finish time,
    then race distance descending; ties by slot index."""
    fa = cars_i[w, a, I_FINISHED] != 0
    fb = cars_i[w, b, I_FINISHED] != 0
    if fa != fb:
        return fa
    if fa:
        ta = cars_f[w, a, F_FINISH_TIME]
        tb = cars_f[w, b, F_FINISH_TIME]
        if ta != tb:
            return ta < tb
    else:
        da = cars_f[w, a, F_RACE_DISTANCE]
        db = cars_f[w, b, F_RACE_DISTANCE]
        if da != db:
            return da > db
    return a < b


@kernel
def update_ranks(cars_f, cars_i, car_flags, world_i, w, n_cars, order):
    """I_RANK (1-based) of active classified cars of world ``w``; 0 for the others.

    Insertion sort of the classified slots in ``order`` (int64[>= n_cars] scratch), started from their
    last ranks (I_RANK; unranked cars after the ranked ones, in slot order), so a tick with few
    overtakes costs few moves. ``_ahead`` is a strict total order (ties by slot; race distances and
    finish times are never NaN), so the ranks do not depend on where the sort starts. Sets
    WI_RACE_FINISHED (and the safety-car mode, spec 4.2) once every classified active car has
    finished; a destroyed or stopped car therefore keeps the race from finishing, as in PaddockJS.
    """
    m = 0
    all_finished = True
    for c in range(n_cars):
        if cars_i[w, c, I_ACTIVE] == 0 or (car_flags[w, c] & FLAG_CLASSIFIED) == 0:
            cars_i[w, c, I_RANK] = 0
            continue
        if cars_i[w, c, I_FINISHED] == 0:
            all_finished = False
        if cars_i[w, c, I_RANK] < 1:
            cars_i[w, c, I_RANK] = -1       # classified, unranked
        m += 1
    # the last order: a car ranked r at order[r - 1]; one whose rank is beyond m or taken is unranked
    for r in range(m):
        order[r] = -1
    for c in range(n_cars):
        r = cars_i[w, c, I_RANK]
        if r > 0:
            if r <= m and order[r - 1] == -1:
                order[r - 1] = c
            else:
                cars_i[w, c, I_RANK] = -1
    k = 0
    for r in range(m):
        if order[r] != -1:
            order[k] = order[r]
            k += 1
    for c in range(n_cars):             # the unranked after the ranked, in slot order
        if cars_i[w, c, I_RANK] == -1:
            order[k] = c
            k += 1
    for i in range(1, m):
        c = order[i]
        j = i
        while j > 0 and _ahead(cars_f, cars_i, c, order[j - 1], w):
            order[j] = order[j - 1]
            j -= 1
        order[j] = c
    for r in range(m):
        cars_i[w, order[r], I_RANK] = r + 1
    if m > 0 and all_finished and world_i[w, WI_RACE_FINISHED] == 0:
        world_i[w, WI_RACE_FINISHED] = 1
        if world_i[w, WI_RACE_MODE] != MODE_RED_FLAG:
            world_i[w, WI_RACE_MODE] = MODE_SAFETY_CAR
