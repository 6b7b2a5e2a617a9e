"""Pit stops: entry decision, the scripted pit route, box occupancy and service time.

While a stop is active (status entering, queued, servicing or exiting) the car is not driven by
physics: ``pit_route_tick`` moves it along the track's pit path (``TrackArrays.px/py/ps/ph``) at a
scripted speed. The path distance lives in ``F_PIT_PATH_S``; a negative value is the approach on the
track itself, that many metres before ``pit_entry_s``, where the car's lateral offset eases onto the
entry connector. Race distance keeps advancing through ``pit_track_s``, a linear map of path
distance onto the track distance between ``pit_entry_s`` and ``pit_exit_s``.

On a track without a pit lane (``track.surface.has_pit_lane`` False) no stop starts: ``try_start_pit``
refuses every intent, and a route found active there is cancelled (the car stays with physics).

Speed profile (PaddockJS 2.0.1 spec section 4.6, converted to SI): up to 150 km/h (and at most the
limit + 75 km/h) off the limiter, ramping down to the limit at 0.045 (m/s per m) toward the fast lane;
the limit in the lane; a braking curve to the queue point (stop when the team's box is busy) or a 30
km/h crawl through it into the box; after service, the limit to the lane end, then up to 150 km/h to
the end of the exit road, where the car rejoins physics at >= 95 km/h.

All kernels are ``jit.kernel`` (numba, no reference counting); arrays are the state arrays of
``layout.py``.
"""

import math

from ..core.jit import kernel
from ..core.layout import (
    F_HEADING, F_LAT_ACC, F_LONG_ACC, F_PIT_PATH_S, F_PIT_SERVICE_LEFT, F_PROGRESS, F_SPEED, F_STEER_ANGLE,
    F_TIRE_ENERGY, F_VX, F_VY, F_X, F_Y, F_YAW_RATE, FLAG_PIT_OCCUPIES, I_ACTIVE, I_CNT_PIT_ENTRY,
    I_CNT_PIT_EXIT, I_CNT_PIT_STOP_DONE, I_COMPOUND, I_DESTROYED, I_FINISHED, I_GRID_LOCKED, I_IN_PIT_LANE,
    I_PIT_BOX, I_PIT_INTENT, I_PIT_STATUS, I_PIT_STOPS, I_PIT_TARGET, I_RETIRED, I_SEG_HINT, I_TERMINATED,
    I_USED_COMPOUNDS, MPS_PER_KPH, MODE_RED_FLAG, P_PIT_CREW_CONSISTENCY, P_PIT_CREW_RELIABILITY,
    P_PIT_CREW_SPEED, PIT_COMPLETED, PIT_ENTERING, PIT_EXITING, PIT_PENDING, PIT_QUEUED, PIT_SERVICING,
    R_PIT_ISSUE_CHANCE, R_PIT_ISSUE_MAX_DELAY, R_PIT_MAX_CONCURRENT, R_PIT_MIN_GAP, R_PIT_PERFECT,
    R_PIT_SPEED_LIMIT, R_PIT_STOP_SECONDS, R_PIT_STOPS, R_PIT_VARIABILITY, R_TOTAL_LAPS, WI_PIT_LANE_OPEN,
    WI_RACE_MODE,
)
from ..core.rng import rng_uniform
from ..track.geometry import point_at
from ..core.trig import wrap_angle
from ..track.surface import BOX_EASE, has_pit_lane, pit_point_at

# Route constants (spec 4.6; SI).
APPROACH_MAX_SPEED = 150.0 * MPS_PER_KPH   # m/s, off-limiter cap
ABOVE_LIMIT_CAP = 75.0 * MPS_PER_KPH       # m/s, off-limiter speed is at most limit + this
RAMP_SLOPE = 0.045                 # (m/s)/m, target ramp down to the limit before the fast lane
CRAWL_SPEED = 30.0 * MPS_PER_KPH           # m/s, rolling gate from the queue point into the box
EXIT_MIN_SPEED = 95.0 * MPS_PER_KPH        # m/s, speed floor when the car rejoins the track
ROUTE_ACCEL = 8.0                  # m/s^2, scripted acceleration (about 0.8 g)
ROUTE_BRAKE = 14.0                 # m/s^2, scripted braking toward a lower target (about 1.4 g)
STOP_DECEL = 6.0                   # m/s^2, planned deceleration to the queue point / box
MIN_CREEP = 1.0                    # m/s, so a braking curve always reaches its stop point
QUEUE_GAP = 12.0                   # m, queue point before the box (spec: 12 m upstream)
ENTRY_WINDOW_BEFORE = 250.0        # m, a stop may start this far before pit_entry_s
ENTRY_WINDOW_AFTER = 5.0           # m, ... and up to this far past it
SPEED_IMPACT = 1.2                 # s per unit of crew speed below 0.5 (variability)
CONSISTENCY_JITTER = 1.4           # s of jitter at consistency 0
ISSUE_MIN_DELAY = 0.35             # s, smallest slow-stop issue delay
SERVICE_FLOOR = 1.6                # s, shortest varied service
SERVICE_EPS = 1e-9                 # s, tolerance so N ticks of dt complete an N*dt service


@kernel
def pit_route_active(cars_i, w, c):
    """True while car ``c`` of world ``w`` is in an active stop (entering/queued/servicing/exiting)."""
    st = cars_i[w, c, I_PIT_STATUS]
    return st == PIT_ENTERING or st == PIT_QUEUED or st == PIT_SERVICING or st == PIT_EXITING


@kernel
def pit_lane_is_open(world_i, w):
    """Effective pit-lane state: open flag set and no red flag (spec 4.3: red flag closes it)."""
    return world_i[w, WI_PIT_LANE_OPEN] != 0 and world_i[w, WI_RACE_MODE] != MODE_RED_FLAG


@kernel
def pit_track_s(tr, path_s):
    """Track distance (m, [0, L)) credited to a car at pit-path distance ``path_s`` (m).

    Negative ``path_s`` is the approach on the track; [0, pit_length] maps linearly onto the track
    span from ``pit_entry_s`` to ``pit_exit_s`` so race distance keeps advancing through the lane.
    """
    return pit_track_s_of(tr.length, tr.pit_entry_s, tr.pit_exit_s, tr.pit_length, path_s)


@kernel(inline="always")
def pit_track_s_of(L, pit_entry_s, pit_exit_s, pit_length, path_s):
    """``pit_track_s`` on the track's scalars (lap length, pit entry and exit lap distances, pit path
    length, all m), for the rules' per-car body that takes no track tuple."""
    if path_s < 0.0:
        s = pit_entry_s + path_s
    else:
        span = (pit_exit_s - pit_entry_s) % L
        s = pit_entry_s + min(path_s, pit_length) * span / pit_length
    return s % L


@kernel
def _box_of(tr, cars_i, w, c):
    nb = tr.box_path_s.shape[0]
    b = cars_i[w, c, I_PIT_BOX]
    return min(max(b, 0), nb - 1)


@kernel
def box_busy(tr, cars_f, cars_i, car_flags, w, c, n_cars):
    """True when another pit-occupying car holds car ``c``'s service box.

    A car holds a box while servicing in it, or while driving in past the queue point toward it.
    Cars without FLAG_PIT_OCCUPIES neither hold a box nor wait for one (interaction profiles).
    """
    if (car_flags[w, c] & FLAG_PIT_OCCUPIES) == 0:
        return False
    b = _box_of(tr, cars_i, w, c)
    queue_s = tr.box_path_s[b] - QUEUE_GAP
    for j in range(n_cars):
        if j == c or cars_i[w, j, I_ACTIVE] == 0 or (car_flags[w, j] & FLAG_PIT_OCCUPIES) == 0:
            continue
        if _box_of(tr, cars_i, w, j) != b:
            continue
        st = cars_i[w, j, I_PIT_STATUS]
        if st == PIT_SERVICING or (st == PIT_ENTERING and cars_f[w, j, F_PIT_PATH_S] >= queue_s):
            return True
    return False


@kernel
def service_seconds(car_params, world_i, rules, w, c):
    """Tyre service time (s) of car ``c``: the base time, or with crew variability (spec 4.6)

    max(min(1.6, base), base + (0.5 - speed)*1.2 + (u - 0.5)*(1 - consistency)*1.4 + issue), where
    the issue delay 0.35 + u*max_delay*(1 - reliability) s happens with probability
    issue_chance*(1 - reliability). Draws exactly three numbers from the world RNG when varied.
    """
    base = rules[w, R_PIT_STOP_SECONDS]
    if rules[w, R_PIT_VARIABILITY] < 0.5 or rules[w, R_PIT_PERFECT] > 0.5:
        return base
    speed = car_params[w, c, P_PIT_CREW_SPEED]
    consistency = car_params[w, c, P_PIT_CREW_CONSISTENCY]
    reliability = car_params[w, c, P_PIT_CREW_RELIABILITY]
    u_jitter = rng_uniform(world_i, w)
    u_issue = rng_uniform(world_i, w)
    u_delay = rng_uniform(world_i, w)
    issue = 0.0
    if u_issue < rules[w, R_PIT_ISSUE_CHANCE] * (1.0 - reliability):
        issue = ISSUE_MIN_DELAY + u_delay * rules[w, R_PIT_ISSUE_MAX_DELAY] * (1.0 - reliability)
    secs = (base + (0.5 - speed) * SPEED_IMPACT
            + (u_jitter - 0.5) * (1.0 - consistency) * CONSISTENCY_JITTER + issue)
    return max(min(SERVICE_FLOOR, base), secs)


@kernel(inline="always")
def may_start_pit_stop(tr, cars_i, world_i, rules, w, c):
    """What every stop start asks first (spec 4.6; PaddockJS's ``shouldStartPitStop``), for our pit service
    and PaddockJS's route alike: a pit lane, pit intent > 0, status pending (or completed and re-armed by
    a new intent), pit stops on with >= 2 laps, the lane open, and the car not finished, destroyed,
    retired, terminated or held on the grid."""
    if not has_pit_lane(tr):
        return False
    st = cars_i[w, c, I_PIT_STATUS]
    if cars_i[w, c, I_PIT_INTENT] <= 0 or (st != PIT_PENDING and st != PIT_COMPLETED):
        return False
    if rules[w, R_PIT_STOPS] < 0.5 or rules[w, R_TOTAL_LAPS] < 2.0 or not pit_lane_is_open(world_i, w):
        return False
    return not (cars_i[w, c, I_FINISHED] != 0 or cars_i[w, c, I_DESTROYED] != 0 or cars_i[w, c, I_RETIRED] != 0
                or cars_i[w, c, I_TERMINATED] != 0 or cars_i[w, c, I_GRID_LOCKED] != 0)


@kernel
def try_start_pit(tr, cars_f, cars_i, car_flags, world_i, rules, w, c, n_cars):
    """Start a stop for car ``c`` when its intent and the rules allow it; True when started.

    Conditions (spec 4.6): pit stops on with >= 2 laps, lane open, status pending (or completed and
    re-armed by a new intent), intent > 0, car not finished/held, and its track position within
    [-250 m, +5 m] of ``pit_entry_s``. Intent 1 also needs fewer than R_PIT_MAX_CONCURRENT
    pit-occupying cars in active stops, no queued team-mate, and no active pit car within
    R_PIT_MIN_GAP metres ahead. On start: status entering, path distance = -(distance to entry).
    Never on a track without a pit lane.
    """
    if not may_start_pit_stop(tr, cars_i, world_i, rules, w, c):
        return False
    intent = cars_i[w, c, I_PIT_INTENT]
    L = tr.length
    p = cars_f[w, c, F_PROGRESS]
    d = tr.pit_entry_s - p
    d -= L * math.floor(d / L + 0.5)          # wrapped to [-L/2, L/2): metres until the entry
    if d > ENTRY_WINDOW_BEFORE or d < -ENTRY_WINDOW_AFTER:
        return False
    if intent == 1:
        b = _box_of(tr, cars_i, w, c)
        active = 0
        for j in range(n_cars):
            if j == c or cars_i[w, j, I_ACTIVE] == 0 or not pit_route_active(cars_i, w, j):
                continue
            if (car_flags[w, j] & FLAG_PIT_OCCUPIES) != 0:
                active += 1
                if cars_i[w, j, I_PIT_STATUS] == PIT_QUEUED and _box_of(tr, cars_i, w, j) == b:
                    return False          # no double stacking behind a queued team-mate
            gap = cars_f[w, j, F_PROGRESS] - p
            gap -= L * math.floor(gap / L + 0.5)
            if 0.0 <= gap < rules[w, R_PIT_MIN_GAP]:
                return False
        if active >= rules[w, R_PIT_MAX_CONCURRENT]:
            return False
    cars_i[w, c, I_PIT_STATUS] = PIT_ENTERING
    cars_i[w, c, I_IN_PIT_LANE] = 1
    cars_f[w, c, F_PIT_PATH_S] = -d
    cars_f[w, c, F_PIT_SERVICE_LEFT] = 0.0
    cars_i[w, c, I_CNT_PIT_ENTRY] += 1
    return True


@kernel
def _speed_target(tr, limit, status, s, queue_s, box_s, busy):
    """Scripted target speed (m/s) at path distance ``s`` (m) for an entering or exiting car."""
    cap = min(APPROACH_MAX_SPEED, limit + ABOVE_LIMIT_CAP)
    if status == PIT_EXITING:
        return limit if s < tr.pit_lane_end else cap
    if s < tr.pit_lane_start:
        t = min(cap, limit + RAMP_SLOPE * (tr.pit_lane_start - s))
    else:
        t = limit
    if s < queue_s:
        if busy:
            t = min(t, max(MIN_CREEP, math.sqrt(2.0 * STOP_DECEL * (queue_s - s))))
        else:
            t = min(t, math.sqrt(CRAWL_SPEED * CRAWL_SPEED + 2.0 * STOP_DECEL * (queue_s - s)))
    else:
        t = min(t, CRAWL_SPEED, max(MIN_CREEP, math.sqrt(2.0 * STOP_DECEL * max(0.0, box_s - s))))
    return t


@kernel
def _route_pose(tr, cars_f, w, c, s, box_s, box_lat, entering):
    """Position (x, y) and heading (rad) of a route car at path distance ``s`` (m).

    s < 0: on the track before the entry, offset eased linearly from the current offset to the
    connector start. s >= 0: on the pit path, shifted sideways toward the box (smoothstep over
    BOX_EASE metres) near ``box_s``.
    """
    if s < 0.0:
        x0, y0, h0, _ = point_at(tr, tr.pit_entry_s)
        target = (tr.px[0] - x0) * -math.sin(h0) + (tr.py[0] - y0) * math.cos(h0)
        s_old = cars_f[w, c, F_PIT_PATH_S]
        xo, yo, ho, _ = point_at(tr, tr.pit_entry_s + min(s_old, 0.0))
        off_old = (cars_f[w, c, F_X] - xo) * -math.sin(ho) + (cars_f[w, c, F_Y] - yo) * math.cos(ho)
        ds = s - min(s_old, 0.0)
        rem = -min(s_old, 0.0)
        off = target if rem <= ds else off_old + (target - off_old) * ds / rem
        x, y, h, _ = point_at(tr, tr.pit_entry_s + s)
        slope = (target - off_old) / rem if rem > 1e-9 else 0.0
        return x - off * math.sin(h), y + off * math.cos(h), h + math.atan(slope)
    x, y, h = pit_point_at(tr, s)
    f = 1.0 - abs(box_s - s) / BOX_EASE
    if f <= 0.0:
        return x, y, h
    f = min(f, 1.0)
    lat = box_lat * f * f * (3.0 - 2.0 * f)
    dlat = box_lat * 6.0 * f * (1.0 - f) / BOX_EASE
    if not entering:
        dlat = -dlat
    return x - lat * math.sin(h), y + lat * math.cos(h), h + math.atan(dlat)


@kernel
def _write_motion(cars_f, w, c, x, y, h, v, dt):
    """Store a scripted pose and speed with consistent velocity, yaw rate and accelerations."""
    h_old = cars_f[w, c, F_HEADING]
    dh = h - h_old
    dh -= 2.0 * math.pi * math.floor(dh / (2.0 * math.pi) + 0.5)
    h = wrap_angle(h_old + dh)
    yaw = dh / dt
    cars_f[w, c, F_LONG_ACC] = (v - cars_f[w, c, F_SPEED]) / dt
    cars_f[w, c, F_LAT_ACC] = v * yaw
    cars_f[w, c, F_YAW_RATE] = yaw
    cars_f[w, c, F_STEER_ANGLE] = 0.0
    cars_f[w, c, F_X] = x
    cars_f[w, c, F_Y] = y
    cars_f[w, c, F_HEADING] = h
    cars_f[w, c, F_SPEED] = v
    cars_f[w, c, F_VX] = v * math.cos(h)
    cars_f[w, c, F_VY] = v * math.sin(h)


@kernel(inline="always")
def _box_place(tr, cars_i, w, c):
    """Car (w, c)'s service box on the pit path -> (box index, its path distance m, the path's heading there
    rad, the box's lateral offset m from the path, + right)."""
    b = _box_of(tr, cars_i, w, c)
    box_s = tr.box_path_s[b]
    bx, by, bh = pit_point_at(tr, box_s)
    box_lat = (tr.box_x[b] - bx) * -math.sin(bh) + (tr.box_y[b] - by) * math.cos(bh)
    return b, box_s, bh, box_lat


@kernel(inline="always")
def _service_tick(tr, cars_f, cars_i, w, c, b, bh, dt):
    """A servicing car's tick in box ``b`` (path heading ``bh`` rad): the service time runs down; at its end
    the tyres are the target compound at full energy, the stop is counted and the car exits."""
    left = cars_f[w, c, F_PIT_SERVICE_LEFT] - dt
    if left <= SERVICE_EPS:
        left = 0.0
        target = cars_i[w, c, I_PIT_TARGET]
        cars_i[w, c, I_COMPOUND] = target
        cars_i[w, c, I_USED_COMPOUNDS] |= 1 << target
        cars_f[w, c, F_TIRE_ENERGY] = 100.0
        cars_i[w, c, I_CNT_PIT_STOP_DONE] += 1
        cars_i[w, c, I_PIT_STATUS] = PIT_EXITING
    cars_f[w, c, F_PIT_SERVICE_LEFT] = left
    _write_motion(cars_f, w, c, tr.box_x[b], tr.box_y[b], bh, 0.0, dt)


@kernel(inline="always")
def _route_speed(tr, rules, w, status, s, v, queue_s, box_s, busy, dt):
    """A route car's speed (m/s) after this tick: from ``v`` toward ``_speed_target`` at path distance ``s``,
    at most ROUTE_ACCEL up or ROUTE_BRAKE down."""
    limit = rules[w, R_PIT_SPEED_LIMIT]
    target = _speed_target(tr, limit, status, s, queue_s, box_s, busy)
    if v < target:
        return min(target, v + ROUTE_ACCEL * dt)
    return max(target, v - ROUTE_BRAKE * dt)


@kernel(inline="always")
def _hand_back(tr, cars_f, cars_i, w, c, v, dt):
    """The end of the exit road: the car is handed back to physics on the track at the exit, along the
    track heading, at >= EXIT_MIN_SPEED; the stop is completed and counted (I_CNT_PIT_EXIT)."""
    x, y, _ = pit_point_at(tr, tr.pit_length)
    _, _, h, _ = point_at(tr, tr.pit_exit_s)
    _write_motion(cars_f, w, c, x, y, h, max(v, EXIT_MIN_SPEED), dt)
    cars_f[w, c, F_PIT_PATH_S] = 0.0
    cars_i[w, c, I_PIT_STATUS] = PIT_COMPLETED
    cars_i[w, c, I_PIT_INTENT] = 0
    cars_i[w, c, I_PIT_STOPS] += 1
    cars_i[w, c, I_CNT_PIT_EXIT] += 1
    cars_i[w, c, I_IN_PIT_LANE] = 0
    cars_i[w, c, I_SEG_HINT] = _seg_of(tr, tr.pit_exit_s)


@kernel
def pit_route_tick(tr, cars_f, cars_i, car_params, car_flags, world_f, world_i, rules, w, c, n_cars, dt):
    """Advance car ``c`` of world ``w`` one tick (``dt`` s) along its pit stop.

    tr: TrackArrays; cars_f float64[W, C, NF]; cars_i int32[W, C, NI]; car_params float64[W, C, NP];
    car_flags int32[W, C]; world_f float64[W, NWF]; world_i int64[W, NWI]; rules float64[W, NR].
    Status transitions: entering -> (queued) -> servicing -> exiting -> completed. A red flag or a
    terminal car freezes the route. Counters: I_CNT_PIT_STOP_DONE at service end, I_CNT_PIT_EXIT when
    the car is handed back to physics on the track at ``pit_exit_s``. On a track without a pit lane
    the route is cancelled (status pending, not in the pit lane) and the car left where it is.
    """
    if not has_pit_lane(tr):
        cars_i[w, c, I_PIT_STATUS] = PIT_PENDING
        cars_i[w, c, I_IN_PIT_LANE] = 0
        return
    cars_i[w, c, I_IN_PIT_LANE] = 1
    if (world_i[w, WI_RACE_MODE] == MODE_RED_FLAG or cars_i[w, c, I_DESTROYED] != 0
            or cars_i[w, c, I_RETIRED] != 0 or cars_i[w, c, I_TERMINATED] != 0):
        _write_motion(cars_f, w, c, cars_f[w, c, F_X], cars_f[w, c, F_Y], cars_f[w, c, F_HEADING],
                      0.0, dt)
        return
    status = cars_i[w, c, I_PIT_STATUS]
    b, box_s, bh, box_lat = _box_place(tr, cars_i, w, c)
    queue_s = box_s - QUEUE_GAP
    s = cars_f[w, c, F_PIT_PATH_S]
    if status == PIT_SERVICING:
        _service_tick(tr, cars_f, cars_i, w, c, b, bh, dt)
        return
    busy = box_busy(tr, cars_f, cars_i, car_flags, w, c, n_cars)
    if status == PIT_QUEUED:
        if busy:
            x, y, h = _route_pose(tr, cars_f, w, c, queue_s, box_s, box_lat, True)
            _write_motion(cars_f, w, c, x, y, h, 0.0, dt)
            return
        status = PIT_ENTERING
        cars_i[w, c, I_PIT_STATUS] = PIT_ENTERING

    v = _route_speed(tr, rules, w, status, s, cars_f[w, c, F_SPEED], queue_s, box_s, busy, dt)
    s_new = s + max(v * dt, 1e-6)
    if status == PIT_ENTERING:
        if busy and s < queue_s <= s_new:
            s_new = queue_s
            v = 0.0
            cars_i[w, c, I_PIT_STATUS] = PIT_QUEUED
        elif s_new >= box_s:
            cars_f[w, c, F_PIT_PATH_S] = box_s
            cars_f[w, c, F_PIT_SERVICE_LEFT] = service_seconds(car_params, world_i, rules, w, c)
            cars_i[w, c, I_PIT_STATUS] = PIT_SERVICING
            _write_motion(cars_f, w, c, tr.box_x[b], tr.box_y[b], bh, 0.0, dt)
            return
    elif s_new >= tr.pit_length:
        _hand_back(tr, cars_f, cars_i, w, c, v, dt)
        return
    x, y, h = _route_pose(tr, cars_f, w, c, s_new, box_s, box_lat, status == PIT_ENTERING)
    _write_motion(cars_f, w, c, x, y, h, v, dt)
    cars_f[w, c, F_PIT_PATH_S] = s_new
    cars_i[w, c, I_SEG_HINT] = _seg_of(tr, pit_track_s(tr, s_new))


@kernel
def _seg_of(tr, s):
    """Centreline segment index containing track distance ``s`` (binary search on ``cs``)."""
    n = tr.cs.shape[0] - 1
    lo, hi = 0, n
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if tr.cs[mid] <= s:
            lo = mid
        else:
            hi = mid
    return lo
