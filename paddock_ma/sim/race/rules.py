"""Race rules of a car after its tick: progress, laps and timing, finish, counters, stalled DNF, and
the pit-stop start.

Kernels the step calls each tick, in order (see ``sim.step``): ``race.control.race_control_tick``
(clock, start lights, red flag), ``race.control.car_is_held`` / ``race.pit_service.pit_route_active`` +
``race.pit_service.pit_route_tick``, then after dynamics and wheel classification ``update_car_rules`` per car
(``update_rules_world``: all cars of a world in one call) and ``race.control.update_ranks`` per world.
``race.placement.place_car`` is the one state-reset path of a car.

Timing model. Race distance is continuous (negative on the grid). Boundaries are the start line
(every multiple of L) and the sector starts ``tr.sector_s`` on every lap; boundary k sits at race
distance ``(k // 3) * L + sector_s[k % 3]``. The car's high-water boundary is stored as
``3 * I_COMPLETED_LAPS + I_SECTOR``; a forward crossing of a boundary beyond it closes a sector (and a
lap when k % 3 == 0) at the crossing time interpolated inside the tick, so sector times sum to the
lap time. Re-crossing after reversing does not count twice. Crossing the start line from the grid
(k == 0) only starts the clocks.
"""

import math

from ..core.jit import kernel
from ..core.layout import (
    F_BEST_LAP_TIME, F_FINISH_TIME, F_HEADING_ERROR, F_LAP_START_TIME, F_LAST_LAP_TIME, F_PIT_PATH_S,
    F_PROGRESS, F_RACE_DISTANCE, F_SECTOR1_TIME, F_SECTOR_START_TIME, F_SPEED, F_STALL_TIME,
    F_STEP_LEGAL_PROGRESS, F_STEP_PROGRESS, F_VX, F_VY, F_WHEEL_OFFSET_FL, F_WHEEL_OFFSET_FR,
    F_WHEEL_OFFSET_RL, F_WHEEL_OFFSET_RR, I_ACTIVE, I_CNT_KERB_TICKS, I_CNT_LAPS, I_CNT_OFFTRACK_TICKS,
    I_CNT_SEVERE_CUT_TICKS, I_CNT_SLOW_TICKS, I_CNT_SPIN_TICKS, I_COMPLETED_LAPS, I_DESTROYED, I_END_REASON,
    F_PJS_PROGRESS, I_MANUAL, I_PIT_ROUTE, ROUTE_NONE,
    I_FINISHED, I_GRID_LOCKED, I_IN_PIT_LANE, I_INSTABILITY, I_LAP, I_ON_TRACK, I_PIT_INTENT, I_PIT_STATUS,
    I_RETIRED, I_SECTOR, I_TERMINATED, I_WHEEL_SURFACE_FL, I_WHEEL_SURFACE_FR, I_WHEEL_SURFACE_RL,
    I_WHEEL_SURFACE_RR, END_STALLED, MPS_PER_KPH, NO_CLOCK, MODE_RED_FLAG, PIT_COMPLETED, PIT_PENDING,
    R_STALL_SECONDS, R_STALLED_DNF, R_TOTAL_LAPS, SURF_KERB, WF_TIME, WI_RACE_MODE,
)
from .pit_service import pit_route_active, pit_track_s_of, try_start_pit

SLOW_SPEED = 30.0 * MPS_PER_KPH            # m/s, "under 30 km/h" counter (2.0.1 metrics)
SPIN_HEADING_ERROR = 0.45 * math.pi     # rad (81 deg), PaddockJS's "spin or backwards" heading error
STALL_SPEED = 5.0 * MPS_PER_KPH            # m/s, below this off legal surfaces the stall clock runs


@kernel(inline="always")
def wrap_half(d, length):
    """``d`` wrapped into [-length/2, length/2) (m)."""
    return d - length * math.floor(d / length + 0.5)


@kernel(inline="always")
def sector_at(sector_s, p):
    """Sector index 0..2 of lap position ``p`` (m, [0, L)); sector_s float64[3] the sector starts (m)."""
    if p >= sector_s[2]:
        return 2
    if p >= sector_s[1]:
        return 1
    return 0


@kernel
def sector_of(tr, p):
    """``sector_at`` on the track's sectors."""
    return sector_at(tr.sector_s, p)


@kernel(inline="always")
def _boundary(L, sector_s, race_distance):
    """Index of the last timing boundary at or behind ``race_distance`` (m; 3 per lap, -1 on the
    grid); L the lap length (m), sector_s the sector starts."""
    lap = math.floor(race_distance / L)
    p = min(max(race_distance - lap * L, 0.0), L)
    return 3 * int(lap) + sector_at(sector_s, p)


@kernel
def _advance_timing_a(L, sector_s, cars_f, cars_i, w, c, k_old, k_new, rd_old, rd_new, t_now, dt):
    """Close the sectors and laps of boundaries k_old + 1 .. k_new that car ``c`` crossed forward
    this tick (k_new > k_old, from ``_boundary``). An ordinary call: reached a few times a lap."""
    hw = 3 * cars_i[w, c, I_COMPLETED_LAPS] + cars_i[w, c, I_SECTOR]
    for k in range(max(k_old + 1, hw), k_new + 1):
        rd_b = (k // 3) * L + sector_s[k % 3]
        frac = min(max((rd_b - rd_old) / (rd_new - rd_old), 0.0), 1.0)
        t_cross = t_now - dt + frac * dt
        if k == hw:
            if k == 0:                        # start line from the grid: clocks start here
                cars_f[w, c, F_LAP_START_TIME] = t_cross
                cars_f[w, c, F_SECTOR_START_TIME] = t_cross
            continue
        done = (k - 1) % 3
        if cars_f[w, c, F_SECTOR_START_TIME] != NO_CLOCK:
            cars_f[w, c, F_SECTOR1_TIME + done] = t_cross - cars_f[w, c, F_SECTOR_START_TIME]
        cars_f[w, c, F_SECTOR_START_TIME] = t_cross
        if k % 3 == 0:
            if cars_f[w, c, F_LAP_START_TIME] != NO_CLOCK:
                lap_time = t_cross - cars_f[w, c, F_LAP_START_TIME]
                cars_f[w, c, F_LAST_LAP_TIME] = lap_time
                best = cars_f[w, c, F_BEST_LAP_TIME]
                if best <= 0.0 or lap_time < best:
                    cars_f[w, c, F_BEST_LAP_TIME] = lap_time
            cars_f[w, c, F_LAP_START_TIME] = t_cross
            cars_i[w, c, I_CNT_LAPS] += 1
        cars_i[w, c, I_COMPLETED_LAPS] = k // 3
        cars_i[w, c, I_SECTOR] = k % 3
        hw = k


@kernel(inline="always")
def _count_ticks(kerb_edge, cars_f, cars_i, w, c, in_pit):
    """Per-tick event counters of car ``c`` (kerb, off-track, severe cut, slow, spin/backwards). Returns
    the speed (m/s) the slow and stall tests compare: max(|F_SPEED|, |velocity|) below SLOW_SPEED,
    |F_SPEED| above it."""
    if (cars_i[w, c, I_WHEEL_SURFACE_FL] == SURF_KERB or cars_i[w, c, I_WHEEL_SURFACE_FR] == SURF_KERB
            or cars_i[w, c, I_WHEEL_SURFACE_RL] == SURF_KERB
            or cars_i[w, c, I_WHEEL_SURFACE_RR] == SURF_KERB):
        cars_i[w, c, I_CNT_KERB_TICKS] += 1
    if cars_i[w, c, I_ON_TRACK] == 0:
        cars_i[w, c, I_CNT_OFFTRACK_TICKS] += 1
    if not in_pit:
        e = kerb_edge
        o1 = cars_f[w, c, F_WHEEL_OFFSET_FL]
        o2 = cars_f[w, c, F_WHEEL_OFFSET_FR]
        o3 = cars_f[w, c, F_WHEEL_OFFSET_RL]
        o4 = cars_f[w, c, F_WHEEL_OFFSET_RR]
        if (min(o1, o2, o3, o4) > e) or (max(o1, o2, o3, o4) < -e):
            cars_i[w, c, I_CNT_SEVERE_CUT_TICKS] += 1
    # the speed of the slow and stall tests: max(|F_SPEED|, |velocity|), whose hypot only matters below
    # SLOW_SPEED (> STALL_SPEED); above it the tests read false either way
    v = abs(cars_f[w, c, F_SPEED])
    if v < SLOW_SPEED:
        v = max(v, math.hypot(cars_f[w, c, F_VX], cars_f[w, c, F_VY]))
    if v < SLOW_SPEED:
        cars_i[w, c, I_CNT_SLOW_TICKS] += 1
    if cars_i[w, c, I_INSTABILITY] != 0 or abs(cars_f[w, c, F_HEADING_ERROR]) > SPIN_HEADING_ERROR:
        cars_i[w, c, I_CNT_SPIN_TICKS] += 1
    return v


@kernel(inline="always")
def _forward_progress(L, sector_s, cars_f, cars_i, w, c, rd_old, rd, delta, total, t_now, dt):
    """Timing of car ``c`` that moved ``delta`` > 0 m forward this tick (race distance rd_old -> rd m):
    sectors and laps of the boundaries crossed, and the finish after ``total`` laps, at the crossing
    time interpolated inside the tick (t_now s at its end)."""
    k_old = _boundary(L, sector_s, rd_old)
    k_new = _boundary(L, sector_s, rd)
    if k_new > k_old:
        _advance_timing_a(L, sector_s, cars_f, cars_i, w, c, k_old, k_new, rd_old, rd, t_now, dt)
    if cars_i[w, c, I_FINISHED] == 0 and rd >= total * L:
        frac = min(max((total * L - rd_old) / delta, 0.0), 1.0)
        cars_i[w, c, I_FINISHED] = 1
        cars_f[w, c, F_FINISH_TIME] = t_now - dt + frac * dt


@kernel(inline="always")
def _stall_clock(cars_f, cars_i, rules, w, c, v, dt):
    """The stalled-DNF clock of a racing car at speed v (m/s): runs off the legal surfaces below
    STALL_SPEED, resets otherwise; past R_STALL_SECONDS the car retires (END_STALLED). Returns
    whether the car is now terminal."""
    if cars_i[w, c, I_ON_TRACK] == 0 and v < STALL_SPEED:
        cars_f[w, c, F_STALL_TIME] += dt
        if cars_f[w, c, F_STALL_TIME] > rules[w, R_STALL_SECONDS]:
            cars_i[w, c, I_RETIRED] = 1
            cars_i[w, c, I_TERMINATED] = 1
            cars_i[w, c, I_END_REASON] = END_STALLED
            return True
    else:
        cars_f[w, c, F_STALL_TIME] = 0.0
    return False


@kernel(inline="always")
def _rules_one(L, sector_s, kerb_edge, pit_entry_s, pit_exit_s, pit_length, cars_f, cars_i,
               world_f, world_i, rules, w, c, old_progress, dt):
    """update_car_rules on unpacked track values, except the pit start: returns True when the car
    may start a stop (the caller then runs ``try_start_pit``). Takes no track tuple: an inlined body
    that receives it increfs and decrefs every array of the tuple per car."""
    if cars_i[w, c, I_ACTIVE] == 0:
        return False
    in_route = pit_route_active(cars_i, w, c)
    if in_route:
        if cars_i[w, c, I_PIT_ROUTE] != ROUTE_NONE:
            # PaddockJS's route (a policy car): its progress is its nearest sample's (PaddockJS's
            # ``trackState.distance`` off the pit surfaces), its race distance runs along the route
            cars_f[w, c, F_PROGRESS] = cars_f[w, c, F_PJS_PROGRESS]
        else:
            cars_f[w, c, F_PROGRESS] = pit_track_s_of(L, pit_entry_s, pit_exit_s, pit_length,
                                                      cars_f[w, c, F_PIT_PATH_S])
            cars_i[w, c, I_IN_PIT_LANE] = 1
    delta = wrap_half(cars_f[w, c, F_PROGRESS] - old_progress, L)
    rd_old = cars_f[w, c, F_RACE_DISTANCE]
    rd = rd_old + delta
    cars_f[w, c, F_RACE_DISTANCE] = rd
    cars_f[w, c, F_STEP_PROGRESS] += delta
    if cars_i[w, c, I_ON_TRACK] != 0:
        cars_f[w, c, F_STEP_LEGAL_PROGRESS] += delta
    total = max(1, int(rules[w, R_TOTAL_LAPS]))
    cars_i[w, c, I_LAP] = min(max(int(math.floor(max(0.0, rd) / L)) + 1, 1), total)
    if delta > 0.0:
        _forward_progress(L, sector_s, cars_f, cars_i, w, c, rd_old, rd, delta, total,
                          world_f[w, WF_TIME], dt)

    in_pit = in_route or cars_i[w, c, I_IN_PIT_LANE] != 0
    v = _count_ticks(kerb_edge, cars_f, cars_i, w, c, in_pit)

    terminal = (cars_i[w, c, I_DESTROYED] != 0 or cars_i[w, c, I_RETIRED] != 0
                or cars_i[w, c, I_TERMINATED] != 0)
    held = cars_i[w, c, I_GRID_LOCKED] != 0 or world_i[w, WI_RACE_MODE] == MODE_RED_FLAG
    if rules[w, R_STALLED_DNF] > 0.5 and not terminal and not held and not in_route:
        terminal = _stall_clock(cars_f, cars_i, rules, w, c, v, dt)
    if not in_route and not terminal and cars_i[w, c, I_PIT_INTENT] > 0:
        # try_start_pit's first test, done here: it takes the track tuple (a costly call)
        st = cars_i[w, c, I_PIT_STATUS]
        return st == PIT_PENDING or st == PIT_COMPLETED
    return False


@kernel
def _start_pit(tr, cars_f, cars_i, car_flags, world_i, rules, w, c):
    """Start a built-in driver's stop if its rules allow (``race.pit_service.try_start_pit``); a policy
    car's starts at the next tick's beginning, as PaddockJS's does (``sim.step``, ``race.pit_route``)."""
    if cars_i[w, c, I_MANUAL] == 0:
        try_start_pit(tr, cars_f, cars_i, car_flags, world_i, rules, w, c, cars_f.shape[1])


@kernel
def update_car_rules(tr, cars_f, cars_i, car_params, car_flags, world_f, world_i, rules, w, c,
                     old_progress, dt):
    """Rules of car ``c`` after its tick: progress, laps, timing, finish, counters, stall, pit entry.

    Call after wheel classification wrote F_PROGRESS (m, [0, L)); ``old_progress`` (m) is the
    value before the tick, ``dt`` (s) the tick. A car in an active stop gets its progress from its
    pit-path distance (``pit_track_s``) instead. Shapes as in ``pit_route_tick``.
    """
    if _rules_one(tr.length, tr.sector_s, tr.kerb_edge, tr.pit_entry_s, tr.pit_exit_s, tr.pit_length,
                  cars_f, cars_i, world_f, world_i, rules, w, c, old_progress, dt):
        _start_pit(tr, cars_f, cars_i, car_flags, world_i, rules, w, c)


# inlined into tick_world: a call passes the track tuple as ~300 machine words, per world and tick
@kernel(inline="always")
def update_rules_world(tr, cars_f, cars_i, car_params, car_flags, world_f, world_i, rules, w, n_cars,
                       old_progress, dt):
    """``update_car_rules`` for every active car of world ``w``; old_progress float64[C] (m). One
    call per world: the track values are unpacked once, not per car."""
    L = tr.length
    sector_s = tr.sector_s
    kerb_edge = tr.kerb_edge
    pit_entry_s = tr.pit_entry_s
    pit_exit_s = tr.pit_exit_s
    pit_length = tr.pit_length
    for c in range(n_cars):
        if cars_i[w, c, I_ACTIVE] == 0:
            continue
        if _rules_one(L, sector_s, kerb_edge, pit_entry_s, pit_exit_s, pit_length, cars_f, cars_i,
                      world_f, world_i, rules, w, c, old_progress[c], dt):
            _start_pit(tr, cars_f, cars_i, car_flags, world_i, rules, w, c)
