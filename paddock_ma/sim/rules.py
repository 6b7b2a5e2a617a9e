"""Race rules: race control, placement, progress, laps and timing, counters, stalled DNF, race order.

Kernels the step calls each tick, in order (see ``step.py``): ``race_control_tick`` (clock, start
lights, red flag), ``car_is_held`` / ``pit_route_active`` + ``pit_route_tick`` (pit stops live in
``pit.py`` and are re-exported here), then after dynamics and wheel classification
``update_car_rules`` per car (``update_rules_world``: all cars of a world in one call) and
``update_ranks`` per world. ``place_car`` is the one state-reset
path for grid slots, scenario placements and ``reset_drivers``.

Timing model. Race distance is continuous (negative on the grid). Boundaries are the start line
(every multiple of L) and the sector starts ``tr.sector_s`` on every lap; boundary k sits at race
distance ``(k // 3) * L + sector_s[k % 3]``. The car's high-water boundary is stored as
``3 * I_COMPLETED_LAPS + I_SECTOR``; a forward crossing of a boundary beyond it closes a sector (and a
lap when k % 3 == 0) at the crossing time interpolated inside the tick, so sector times sum to the
lap time. Re-crossing after reversing does not count twice. Crossing the start line from the grid
(k == 0) only starts the clocks.
"""

import math

import numpy as np

from .jit import kernel
from .layout import (
    F_BEST_LAP_TIME, F_CONTACT_COOLDOWN, F_CURVATURE, F_FINISH_TIME, F_HEADING, F_HEADING_ERROR,
    F_LAP_START_TIME, F_LAST_LAP_TIME, F_LAT_ACC, F_LONG_ACC, F_OFFSET, F_PIT_PATH_S,
    F_PIT_SERVICE_LEFT, F_PREV_HEADING, F_PREV_X, F_PREV_Y, F_PROGRESS, F_RACE_DISTANCE,
    F_SECTOR1_TIME, F_SECTOR_START_TIME, F_SPEED, F_STALL_TIME, F_STEER_ANGLE, F_STEP_LEGAL_PROGRESS,
    F_STEP_PROGRESS, F_VX, F_VY, F_WHEEL_OFFSET_FL, F_WHEEL_OFFSET_FR, F_WHEEL_OFFSET_RL,
    F_WHEEL_OFFSET_RR, F_X, F_Y, F_YAW_RATE, FIRST_COUNTER, FLAG_CLASSIFIED, I_ACTIVE, I_AI_REJOIN,
    I_CNT_KERB_TICKS, I_CNT_LAPS, I_CNT_OFFTRACK_TICKS, I_CNT_SEVERE_CUT_TICKS, I_CNT_SLOW_TICKS,
    I_CNT_SPIN_TICKS, I_COMPLETED_LAPS, I_DESTROYED, I_END_REASON, I_FINISHED, I_GRID_LOCKED,
    I_IN_PIT_LANE, I_INSTABILITY, I_LAP, I_LAST_CONTACT_WITH, I_ON_TRACK, I_PIT_INTENT,
    I_PIT_STATUS, I_PIT_STOPS, I_RANK, I_RETIRED, I_SECTOR, I_SEG_HINT, I_TERMINATED,
    I_WHEEL_SURFACE_FL, I_WHEEL_SURFACE_FR, I_WHEEL_SURFACE_RL, I_WHEEL_SURFACE_RR, END_STALLED,
    MPS_PER_KPH, LAST_COUNTER, NO_CLOCK, MODE_GREEN, MODE_PRE_START, MODE_RED_FLAG, MODE_SAFETY_CAR, PIT_COMPLETED,
    PIT_PENDING,
    R_LIGHT_COUNT, R_LIGHT_INTERVAL, R_LIGHTS_OUT_HOLD, R_STALL_SECONDS, R_STALLED_DNF,
    R_STANDING_START, R_TOTAL_LAPS, SURF_KERB, WF_LIGHTS_OUT_AT, WF_RED_FLAG_TIME, WF_TIME,
    WI_PIT_LANE_OPEN, WI_RACE_FINISHED, WI_RACE_MODE, WI_RED_FLAG, WI_TICK,
)
from .pit import (  # noqa: F401  (re-exported: the step imports every rule kernel from here)
    box_busy, pit_lane_is_open, pit_route_active, pit_route_tick, pit_track_s, service_seconds,
    try_start_pit,
)
from .track import locate, point_at, wrap_angle

SLOW_SPEED = 30.0 * MPS_PER_KPH            # m/s, "under 30 km/h" counter (2.0.1 metrics)
SPIN_HEADING_ERROR = math.radians(100.0)  # rad, "backwards" heading error for the spin counter
STALL_SPEED = 5.0 * MPS_PER_KPH            # m/s, below this off legal surfaces the stall clock runs
RESTART_SPEED = 60.0 * MPS_PER_KPH         # m/s, minimum speed when a red flag is withdrawn (spec 4.3)
LIGHTS_EPS = 1e-9                  # s, tolerance on the accumulated clock at lights out


@kernel(inline="always")
def wrap_half(d, length):
    """``d`` wrapped into [-length/2, length/2) (m)."""
    return d - length * math.floor(d / length + 0.5)


@kernel
def sector_of(tr, p):
    """Sector index 0..2 of lap position ``p`` (m, [0, L))."""
    if p >= tr.sector_s[2]:
        return 2
    if p >= tr.sector_s[1]:
        return 1
    return 0


@kernel
def boundary_index(tr, race_distance):
    """Index of the last timing boundary at or behind ``race_distance`` (3 per lap; -1 on the grid)."""
    L = tr.length
    lap = math.floor(race_distance / L)
    p = min(max(race_distance - lap * L, 0.0), L)
    return 3 * int(lap) + sector_of(tr, p)


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
def place_car(tr, cars_f, cars_i, w, c, race_distance, offset, speed, heading_error, now=0.0):
    """Put car ``c`` of world ``w`` at ``race_distance`` (m, absolute, negative on the grid) and
    lateral ``offset`` (m, + right) with ``speed`` (m/s) and ``heading_error`` (rad) to the track.

    The state-reset path: pose, velocity, track position and lap from the race distance; lap and
    sector clocks start at ``now`` (s, world time); best/last lap, sector and finish times, pit stop
    state (pending, intent 0, stops 0), stall and contact timers, grid lock, destroyed / retired /
    finished, instability and the event counters are cleared. Episode fields, tyre energy, compound,
    controls and interaction state are the caller's.
    """
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
    i[I_PIT_INTENT] = 0
    i[I_PIT_STOPS] = 0
    i[I_IN_PIT_LANE] = 0
    i[I_GRID_LOCKED] = 0
    i[I_DESTROYED] = 0
    i[I_RETIRED] = 0
    i[I_FINISHED] = 0
    i[I_INSTABILITY] = 0
    i[I_AI_REJOIN] = 0
    i[I_LAST_CONTACT_WITH] = -1
    for k in range(FIRST_COUNTER, LAST_COUNTER + 1):
        i[k] = 0


@kernel(inline="always")
def _boundary(L, s1, s2, race_distance):
    """``boundary_index`` on scalars: L lap length, s1 / s2 sector 2 / 3 start (m)."""
    lap = math.floor(race_distance / L)
    p = min(max(race_distance - lap * L, 0.0), L)
    sec = 2 if p >= s2 else (1 if p >= s1 else 0)
    return 3 * int(lap) + sec


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
    """Per-tick event counters of car ``c`` (kerb, off-track, severe cut, slow, spin/backwards)."""
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
    v = max(abs(cars_f[w, c, F_SPEED]), math.hypot(cars_f[w, c, F_VX], cars_f[w, c, F_VY]))
    if v < SLOW_SPEED:
        cars_i[w, c, I_CNT_SLOW_TICKS] += 1
    if cars_i[w, c, I_INSTABILITY] != 0 or abs(cars_f[w, c, F_HEADING_ERROR]) > SPIN_HEADING_ERROR:
        cars_i[w, c, I_CNT_SPIN_TICKS] += 1
    return v


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
        cars_f[w, c, F_PROGRESS] = _pit_track_s(L, pit_entry_s, pit_exit_s, pit_length,
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
    t_now = world_f[w, WF_TIME]
    if delta > 0.0:
        s1 = sector_s[1]
        s2 = sector_s[2]
        k_old = _boundary(L, s1, s2, rd_old)
        k_new = _boundary(L, s1, s2, rd)
        if k_new > k_old:
            _advance_timing_a(L, sector_s, cars_f, cars_i, w, c, k_old, k_new, rd_old, rd, t_now, dt)
        if cars_i[w, c, I_FINISHED] == 0 and rd >= total * L:
            frac = min(max((total * L - rd_old) / delta, 0.0), 1.0)
            cars_i[w, c, I_FINISHED] = 1
            cars_f[w, c, F_FINISH_TIME] = t_now - dt + frac * dt

    in_pit = in_route or cars_i[w, c, I_IN_PIT_LANE] != 0
    v = _count_ticks(kerb_edge, cars_f, cars_i, w, c, in_pit)

    terminal = (cars_i[w, c, I_DESTROYED] != 0 or cars_i[w, c, I_RETIRED] != 0
                or cars_i[w, c, I_TERMINATED] != 0)
    held = cars_i[w, c, I_GRID_LOCKED] != 0 or world_i[w, WI_RACE_MODE] == MODE_RED_FLAG
    if rules[w, R_STALLED_DNF] > 0.5 and not terminal and not held and not in_route:
        if cars_i[w, c, I_ON_TRACK] == 0 and v < STALL_SPEED:
            cars_f[w, c, F_STALL_TIME] += dt
            if cars_f[w, c, F_STALL_TIME] > rules[w, R_STALL_SECONDS]:
                cars_i[w, c, I_RETIRED] = 1
                cars_i[w, c, I_TERMINATED] = 1
                cars_i[w, c, I_END_REASON] = END_STALLED
                terminal = True
        else:
            cars_f[w, c, F_STALL_TIME] = 0.0
    if not in_route and not terminal and cars_i[w, c, I_PIT_INTENT] > 0:
        # try_start_pit's first test, done here: it takes the track tuple (a costly call)
        st = cars_i[w, c, I_PIT_STATUS]
        return st == PIT_PENDING or st == PIT_COMPLETED
    return False


@kernel(inline="always")
def _pit_track_s(L, pit_entry_s, pit_exit_s, pit_length, path_s):
    """``pit.pit_track_s`` on scalars (same arithmetic)."""
    if path_s < 0.0:
        s = pit_entry_s + path_s
    else:
        span = (pit_exit_s - pit_entry_s) % L
        s = pit_entry_s + min(path_s, pit_length) * span / pit_length
    return s % L


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
        try_start_pit(tr, cars_f, cars_i, car_flags, world_i, rules, w, c, cars_f.shape[1])


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
            try_start_pit(tr, cars_f, cars_i, car_flags, world_i, rules, w, c, cars_f.shape[1])


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

    Insertion sort of the classified slots in ``order`` (int64[>= n_cars] scratch). Sets WI_RACE_FINISHED (and the
    safety-car mode, spec 4.2) once every classified active car has finished; a destroyed or
    stopped car therefore keeps the race from finishing, as in PaddockJS.
    """
    m = 0
    all_finished = True
    for c in range(n_cars):
        if cars_i[w, c, I_ACTIVE] == 0 or (car_flags[w, c] & FLAG_CLASSIFIED) == 0:
            cars_i[w, c, I_RANK] = 0
            continue
        if cars_i[w, c, I_FINISHED] == 0:
            all_finished = False
        j = m
        while j > 0 and _ahead(cars_f, cars_i, c, order[j - 1], w):
            order[j] = order[j - 1]
            j -= 1
        order[j] = c
        m += 1
    for r in range(m):
        cars_i[w, order[r], I_RANK] = r + 1
    if m > 0 and all_finished and world_i[w, WI_RACE_FINISHED] == 0:
        world_i[w, WI_RACE_FINISHED] = 1
        if world_i[w, WI_RACE_MODE] != MODE_RED_FLAG:
            world_i[w, WI_RACE_MODE] = MODE_SAFETY_CAR
