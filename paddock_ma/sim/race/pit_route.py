"""A policy car's pit stop as PaddockJS 2.0.0 runs it (``advancePitStopCar``, ``src/simulation/pit/``).

A policy-controlled car's (I_MANUAL) stop starts as PaddockJS's ``shouldStartPitStop`` says: pit intent
> 0, the lane open, PaddockJS's race distance (F_PJS_RACE_DISTANCE) at most 250 m before the pit entry
and at most 90 m past it (later, PaddockJS schedules the next lap's entry), and for intent 1 its
``canStartPitStop`` (fewer active stops than the limit, the team's queue free, no active car within the
minimum gap ahead). From then PaddockJS's routes replace the physics (``race.pit_route_path``): each
tick the car's route distance is its projection on the route, the target speed is the route's (150
km/h off the limiter and at most the limit + 75 km/h, easing to the limit over the 295 m before the
limiter, the limit on it, braking to the queue point), and the car is put that far along the route,
at that speed, heading along the segment (PaddockJS sets no velocity vector, accelerations or grip:
they keep their values from the car's last physics tick). At the queue point the car queues while its
service area is busy, then rolls into it at 30 km/h; it is serviced standing at the centre
(``pit_service.service_seconds``), then drives the exit route and is handed back to the physics at
>= 95 km/h. Its race distance runs linearly along each route between PaddockJS's race distances of its
ends (``getPitBoxRaceDistance``).

Built-in drivers keep our own pit service (``race.pit_service``); the two share the boxes' occupancy
where it matters (a service area is busy while any car is serviced in it).

All kernels are ``jit.kernel`` on the state arrays of ``layout.py``; ``buf`` is the step's route scratch
(``pit_route_path.build_route``).
"""

import math

from ..core.jit import kernel
from ..core.layout import (
    F_APPLIED_BRAKE, F_APPLIED_THROTTLE, F_CONTACT_COOLDOWN, F_HEADING, F_PIT_ENTRY_RD, F_PIT_PATH_S, F_PIT_SERVICE_LEFT,
    F_ROUTE_END_RD, F_ROUTE_OFFSET0, F_ROUTE_START_RD, F_PJS_PROGRESS, F_PJS_RACE_DISTANCE, F_SPEED,
    F_STEER_ANGLE, F_TIRE_ENERGY, F_X, F_Y, F_YAW_RATE, FLAG_PIT_OCCUPIES, I_ACTIVE, I_CNT_PIT_ENTRY,
    I_CNT_PIT_EXIT, I_CNT_PIT_STOP_DONE, I_COMPOUND, I_DESTROYED, I_IN_PIT_LANE,
    I_PIT_BOX, I_PIT_INTENT, I_PIT_ROUTE, I_PIT_ROUTE_CURSOR, I_PIT_STATUS, I_PIT_STOPS, I_PIT_TARGET,
    I_RETIRED, I_TERMINATED, I_USED_COMPOUNDS, MAX_SPEED, MAX_STEER_ANGLE, MODE_RED_FLAG, MPS_PER_KPH,
    PIT_COMPLETED, PIT_ENTERING, PIT_EXITING, PIT_PENDING, PIT_QUEUED, PIT_SERVICING, R_PIT_MAX_CONCURRENT,
    R_PIT_MIN_GAP, R_PIT_SPEED_LIMIT, ROUTE_ENTRY, ROUTE_EXIT, ROUTE_HELD,
    ROUTE_NONE, ROUTE_RELEASE, WHEELBASE, WI_RACE_MODE,
)
from ..core.trig import clamp, wrap_angle
from ..track.surface import has_pit_lane, pit_override_call
from .pit_route_path import (
    build_route, distance_to_limiter, hinted_offset, lane_frame, limiter_at, nearest_on_route, queue_point,
    route_end, sample_route, service_distances, start_pose,
)
from .pit_service import may_start_pit_stop, pit_route_active, service_seconds

APPROACH_DISTANCE = 250.0                  # m, a stop starts this far before the pit entry
LATE_THRESHOLD = 90.0                      # m, ... and up to this far past it
ROUTE_FINISH = 8.5                         # m, PIT_ROUTE_FINISH_DISTANCE
RELEASE_FINISH = 4.0                       # m, PIT_QUEUE_RELEASE_FINISH_DISTANCE
QUEUE_CAPTURE = 2.5                        # m, PIT_QUEUE_CAPTURE_DISTANCE
QUEUE_CAPTURE_SPEED = 140.0 * MPS_PER_KPH  # m/s
RELEASE_SPEED = 30.0 * MPS_PER_KPH         # m/s, PIT_QUEUE_RELEASE_SPEED
EXIT_RELEASE_SPEED = 95.0 * MPS_PER_KPH    # m/s
LIMITER_BRAKE_DISTANCE = 295.0             # m
LIMITER_APPROACH_SLOPE = 0.045             # (m/s) per m
CONNECTOR_OVERSPEED = 75.0 * MPS_PER_KPH   # m/s above the limit on the entry road
OFF_LIMITER_SPEED = 150.0 * MPS_PER_KPH    # m/s
QUEUE_BRAKE_ZONE = 25.0                    # m before the queue point
QUEUE_BRAKE_SLOPE = 62.0 * MPS_PER_KPH / 100.0   # (m/s) per m
QUEUE_SPEED_FLOOR = 42.0 * MPS_PER_KPH     # m/s
SERVICE_CLEAR = 0.9 * 5.63                 # m, PIT_SERVICE_CLEAR_DISTANCE (0.9 of the visual car length)


@kernel(inline="always")
def _box(tr, cars_i, w, c):
    nb = tr.box_x.shape[0]
    return min(max(cars_i[w, c, I_PIT_BOX], 0), nb - 1)


@kernel(inline="always")
def _box_race_distance(tr, cars_f, w, c, along):
    """PaddockJS's ``getPitBoxRaceDistance``: the race distance (m) credited at ``along`` m down the
    fast lane of the stop's lap (its entry's race distance F_PIT_ENTRY_RD, then the entry-to-exit span
    in proportion)."""
    _, _, _, _, _, _, lane_len = lane_frame(tr.px, tr.py)
    span = (tr.pit_exit_s - tr.pit_entry_s) % tr.length
    return cars_f[w, c, F_PIT_ENTRY_RD] + span * (along / lane_len if lane_len > 0.0 else 0.0)


@kernel(inline="always")
def _rival_of_box(tr, cars_i, car_flags, w, c, j, b):
    """Car j is another active pit-occupying car of service area ``b`` than car c."""
    return (j != c and cars_i[w, j, I_ACTIVE] != 0 and (car_flags[w, j] & FLAG_PIT_OCCUPIES) != 0
            and _box(tr, cars_i, w, j) == b)


@kernel
def service_busy(tr, cars_f, cars_i, car_flags, w, c, b, n_cars):
    """PaddockJS's ``isPitServiceBusy``: another pit-occupying car of service area ``b`` is serviced in
    it, rolls into it from the queue, or is leaving it and still within SERVICE_CLEAR m of its centre."""
    for j in range(n_cars):
        if not _rival_of_box(tr, cars_i, car_flags, w, c, j, b):
            continue
        st = cars_i[w, j, I_PIT_STATUS]
        if st == PIT_SERVICING:
            return True
        if st == PIT_ENTERING and cars_i[w, j, I_PIT_ROUTE] == ROUTE_RELEASE:
            return True
        if st == PIT_EXITING and math.hypot(cars_f[w, j, F_X] - tr.box_x[b],
                                            cars_f[w, j, F_Y] - tr.box_y[b]) < SERVICE_CLEAR:
            return True
    return False


@kernel
def queue_occupied(tr, cars_i, car_flags, w, c, b, n_cars):
    """PaddockJS's ``isPitServiceQueueOccupied``: another pit-occupying car of service area ``b`` is
    queued or on its way to the queue point."""
    for j in range(n_cars):
        if not _rival_of_box(tr, cars_i, car_flags, w, c, j, b):
            continue
        st = cars_i[w, j, I_PIT_STATUS]
        if st == PIT_QUEUED or (st == PIT_ENTERING and cars_i[w, j, I_PIT_ROUTE] == ROUTE_ENTRY):
            return True
    return False


@kernel
def start_pit_route(tr, cars_f, cars_i, car_flags, world_i, rules, w, c, n_cars):
    """Start policy car ``c``'s stop when PaddockJS would (``shouldStartPitStop``); True when started.

    Call at the beginning of a tick, before the car moves (``sim.step``), as PaddockJS does. Records the route's start: the car's pose, PaddockJS's
    race distance, the entry's race distance and the approach's start offset."""
    if tr.box_x.shape[0] == 0 or not may_start_pit_stop(tr, cars_i, world_i, rules, w, c):
        return False
    intent = cars_i[w, c, I_PIT_INTENT]
    L = tr.length
    rd = cars_f[w, c, F_PJS_RACE_DISTANCE]
    d = tr.pit_entry_s - rd
    d -= L * math.floor(d / L + 0.5)          # the scheduled entry: m from here, in [-L/2, L/2)
    if d > APPROACH_DISTANCE or d < -LATE_THRESHOLD:
        return False
    b = _box(tr, cars_i, w, c)
    if intent == 1:
        active = 0
        for j in range(n_cars):
            if j != c and cars_i[w, j, I_ACTIVE] != 0 and pit_route_active(cars_i, w, j):
                active += 1
        if active >= max(1, int(math.floor(rules[w, R_PIT_MAX_CONCURRENT]))):
            return False
        if queue_occupied(tr, cars_i, car_flags, w, c, b, n_cars):
            return False
        for j in range(n_cars):
            if j != c and cars_i[w, j, I_ACTIVE] != 0 and pit_route_active(cars_i, w, j):
                gap = cars_f[w, j, F_PJS_RACE_DISTANCE] - rd
                if 0.0 <= gap < rules[w, R_PIT_MIN_GAP]:
                    return False
    # the approach starts from the car's offset to its nearest sample (0 when its centre is on a pit surface)
    x = cars_f[w, c, F_X]
    y = cars_f[w, c, F_Y]
    fallback = tr.grass_edge + 180.0
    off = hinted_offset(tr.cx, tr.cy, tr.cs, tr.cnx, tr.cny, L, fallback * fallback,
                        cars_f[w, c, F_PJS_PROGRESS], x, y)
    if pit_override_call(tr, x, y, abs(off), tr.kerb_edge) >= 0:
        off = 0.0
    start_pose(cars_f, w, c)
    cars_f[w, c, F_ROUTE_OFFSET0] = off
    cars_f[w, c, F_PIT_ENTRY_RD] = rd + d
    cars_f[w, c, F_ROUTE_START_RD] = rd
    _, queue = service_distances(tr.px, tr.py, tr.pit_lane_start, tr.box_path_s, b)
    cars_f[w, c, F_ROUTE_END_RD] = _box_race_distance(tr, cars_f, w, c, queue)
    cars_f[w, c, F_PIT_PATH_S] = 0.0
    cars_f[w, c, F_PIT_SERVICE_LEFT] = 0.0
    cars_i[w, c, I_PIT_STATUS] = PIT_ENTERING
    cars_i[w, c, I_PIT_ROUTE] = ROUTE_ENTRY
    cars_i[w, c, I_PIT_ROUTE_CURSOR] = 0
    cars_i[w, c, I_CNT_PIT_ENTRY] += 1
    return True


@kernel(inline="always")
def _place(cars_f, w, c, x, y, h, v, dt):
    """PaddockJS's route pose: position, heading, speed, and the yaw rate and steering angle they imply,
    the brake (0.4 while slowing; the caller sets the throttle); nothing else of the car changes."""
    dh = wrap_angle(h - cars_f[w, c, F_HEADING])
    yaw = dh / max(dt, 1e-6)
    cars_f[w, c, F_APPLIED_BRAKE] = 0.4 if v < cars_f[w, c, F_SPEED] else 0.0
    cars_f[w, c, F_X] = x
    cars_f[w, c, F_Y] = y
    cars_f[w, c, F_HEADING] = h
    cars_f[w, c, F_SPEED] = v
    cars_f[w, c, F_YAW_RATE] = yaw
    cars_f[w, c, F_STEER_ANGLE] = clamp(math.atan(yaw * WHEELBASE / max(v, 1.0 / 12.0)),
                                        -MAX_STEER_ANGLE, MAX_STEER_ANGLE)


@kernel(inline="always")
def _stand(cars_f, w, c, x, y, h):
    """Stand the car at (x, y) heading h: speed 0 (PaddockJS leaves its yaw rate and steering as they are,
    but for the box, where ``_begin_service`` zeroes them)."""
    cars_f[w, c, F_X] = x
    cars_f[w, c, F_Y] = y
    cars_f[w, c, F_HEADING] = h
    cars_f[w, c, F_SPEED] = 0.0
    cars_f[w, c, F_APPLIED_THROTTLE] = 0.0
    cars_f[w, c, F_APPLIED_BRAKE] = 1.0


@kernel
def _follow(tr, cars_f, cars_i, rules, w, c, phase, b, buf, dt):
    """PaddockJS's ``applyPitRoutePosition``: move car ``c`` one tick along its route; True when it has
    reached the route's end (the queue point, the service area, or the exit road's end)."""
    nseg, length = build_route(tr, cars_f, w, c, phase, b, buf)
    cursor = cars_i[w, c, I_PIT_ROUTE_CURSOR]
    limit = rules[w, R_PIT_SPEED_LIMIT]
    prog = cars_f[w, c, F_PIT_PATH_S]
    if phase == ROUTE_RELEASE:
        nxt = min(length, prog + RELEASE_SPEED * dt)
        x, y, h, cursor = sample_route(buf, nseg, length, cursor, nxt)
        _place(cars_f, w, c, x, y, h, RELEASE_SPEED, dt)
        cars_f[w, c, F_APPLIED_THROTTLE] = 0.32
        cars_f[w, c, F_APPLIED_BRAKE] = 0.0
        done = length - nxt <= RELEASE_FINISH
    else:
        prog = nearest_on_route(buf, nseg, length, cars_f[w, c, F_X], cars_f[w, c, F_Y], prog)
        on_limiter, cursor = limiter_at(buf, nseg, length, cursor, prog)
        target = min(limit, MAX_SPEED) if on_limiter else min(OFF_LIMITER_SPEED, MAX_SPEED)
        entering = phase == ROUTE_ENTRY
        if not on_limiter and entering:
            target = min(target, limit + CONNECTOR_OVERSPEED)
            to_limiter, cursor = distance_to_limiter(buf, nseg, length, cursor, prog)
            if to_limiter < LIMITER_BRAKE_DISTANCE:
                target = min(target, limit + max(0.0, to_limiter * LIMITER_APPROACH_SLOPE))
        if entering:
            before = max(0.0, length - prog)
            if before < QUEUE_BRAKE_ZONE:
                approach = (max(QUEUE_SPEED_FLOOR, before * QUEUE_BRAKE_SLOPE) if before > QUEUE_CAPTURE
                            else before * QUEUE_BRAKE_SLOPE)
                target = min(target, clamp(approach, 0.0, limit * 0.78))
        nxt = min(length, prog + max(0.0, target) * dt)
        x, y, h, cursor = sample_route(buf, nseg, length, cursor, nxt)
        _place(cars_f, w, c, x, y, h, target, dt)
        cars_f[w, c, F_APPLIED_THROTTLE] = 0.28 if on_limiter else 0.46
        after = max(0.0, length - nxt)
        if entering:
            ex, ey = route_end(buf, nseg)
            done = (after <= QUEUE_CAPTURE and math.hypot(x - ex, y - ey) <= QUEUE_CAPTURE
                    and target <= QUEUE_CAPTURE_SPEED)
        else:
            done = after <= ROUTE_FINISH
    cars_i[w, c, I_PIT_ROUTE_CURSOR] = cursor
    cars_f[w, c, F_PIT_PATH_S] = nxt
    start = cars_f[w, c, F_ROUTE_START_RD]
    amount = nxt / length if length > 0.0 else 1.0
    cars_f[w, c, F_PJS_RACE_DISTANCE] = start + (cars_f[w, c, F_ROUTE_END_RD] - start) * amount
    return done


@kernel(inline="always")
def _release(tr, cars_f, cars_i, w, c, b):
    """PaddockJS's ``releasePitQueue``: roll from where the car stands, through the queue point, into the
    service area's centre."""
    start_pose(cars_f, w, c)
    service, _ = service_distances(tr.px, tr.py, tr.pit_lane_start, tr.box_path_s, b)
    cars_f[w, c, F_ROUTE_START_RD] = cars_f[w, c, F_PJS_RACE_DISTANCE]
    cars_f[w, c, F_ROUTE_END_RD] = _box_race_distance(tr, cars_f, w, c, service)
    cars_f[w, c, F_PIT_PATH_S] = 0.0
    cars_i[w, c, I_PIT_STATUS] = PIT_ENTERING
    cars_i[w, c, I_PIT_ROUTE] = ROUTE_RELEASE
    cars_i[w, c, I_PIT_ROUTE_CURSOR] = 0


@kernel(inline="always")
def _queue(tr, cars_f, cars_i, w, c, b, lane_h):
    """PaddockJS's ``beginPitQueue`` (and a queued tick): stand at the queue point."""
    qx, qy = queue_point(tr.px, tr.py, tr.box_x, tr.box_y, tr.pit_lane_start, tr.box_path_s, b)
    _stand(cars_f, w, c, qx, qy, lane_h)
    _, queue = service_distances(tr.px, tr.py, tr.pit_lane_start, tr.box_path_s, b)
    cars_f[w, c, F_PJS_RACE_DISTANCE] = _box_race_distance(tr, cars_f, w, c, queue)
    cars_i[w, c, I_PIT_STATUS] = PIT_QUEUED
    cars_i[w, c, I_PIT_ROUTE] = ROUTE_HELD


@kernel(inline="always")
def _begin_service(tr, cars_f, cars_i, car_params, world_i, rules, w, c, b, lane_h):
    """PaddockJS's ``beginPitService``: stand in the service area's centre, the service time starts."""
    _stand(cars_f, w, c, tr.box_x[b], tr.box_y[b], lane_h)
    cars_f[w, c, F_STEER_ANGLE] = 0.0
    cars_f[w, c, F_YAW_RATE] = 0.0
    service, _ = service_distances(tr.px, tr.py, tr.pit_lane_start, tr.box_path_s, b)
    cars_f[w, c, F_PJS_RACE_DISTANCE] = _box_race_distance(tr, cars_f, w, c, service)
    cars_f[w, c, F_PIT_SERVICE_LEFT] = service_seconds(car_params, world_i, rules, w, c)
    cars_i[w, c, I_PIT_STATUS] = PIT_SERVICING
    cars_i[w, c, I_PIT_ROUTE] = ROUTE_HELD


@kernel
def pit_route_car_tick(tr, cars_f, cars_i, car_params, car_flags, world_i, rules, w, c, n_cars, buf, dt):
    """Advance policy car ``c`` of world ``w`` one tick (``dt`` s) of its stop (PaddockJS's
    ``advancePitStopCar`` for a stop under way). A red flag, or a terminal car, holds it where it is.

    Counters: I_CNT_PIT_STOP_DONE when the service ends, I_CNT_PIT_EXIT when the car is handed back to
    the physics at the end of the exit road. Shapes as in ``pit_service.pit_route_tick``; buf
    float64[ROUTE_MAX, N_COLS] scratch."""
    if not has_pit_lane(tr) or tr.box_x.shape[0] == 0:
        cars_i[w, c, I_PIT_STATUS] = PIT_PENDING
        cars_i[w, c, I_PIT_ROUTE] = ROUTE_NONE
        return
    if (world_i[w, WI_RACE_MODE] == MODE_RED_FLAG or cars_i[w, c, I_DESTROYED] != 0
            or cars_i[w, c, I_RETIRED] != 0 or cars_i[w, c, I_TERMINATED] != 0):
        cars_f[w, c, F_SPEED] = 0.0
        return
    b = _box(tr, cars_i, w, c)
    ax, ay, bx, by, _, _, _ = lane_frame(tr.px, tr.py)
    lane_h = math.atan2(by - ay, bx - ax)
    status = cars_i[w, c, I_PIT_STATUS]
    phase = cars_i[w, c, I_PIT_ROUTE]
    cars_f[w, c, F_CONTACT_COOLDOWN] = max(0.0, cars_f[w, c, F_CONTACT_COOLDOWN] - dt)
    if status == PIT_ENTERING:
        if _follow(tr, cars_f, cars_i, rules, w, c, phase, b, buf, dt):
            if phase == ROUTE_ENTRY:
                if (not service_busy(tr, cars_f, cars_i, car_flags, w, c, b, n_cars)
                        and not queue_occupied(tr, cars_i, car_flags, w, c, b, n_cars)):
                    _release(tr, cars_f, cars_i, w, c, b)
                else:
                    _queue(tr, cars_f, cars_i, w, c, b, lane_h)
            else:
                _begin_service(tr, cars_f, cars_i, car_params, world_i, rules, w, c, b, lane_h)
    elif status == PIT_QUEUED:
        _queue(tr, cars_f, cars_i, w, c, b, lane_h)
        if not service_busy(tr, cars_f, cars_i, car_flags, w, c, b, n_cars):
            _release(tr, cars_f, cars_i, w, c, b)
    elif status == PIT_SERVICING:
        left = max(0.0, cars_f[w, c, F_PIT_SERVICE_LEFT] - dt)
        cars_f[w, c, F_PIT_SERVICE_LEFT] = left
        _stand(cars_f, w, c, tr.box_x[b], tr.box_y[b], lane_h)
        service, _ = service_distances(tr.px, tr.py, tr.pit_lane_start, tr.box_path_s, b)
        cars_f[w, c, F_PJS_RACE_DISTANCE] = _box_race_distance(tr, cars_f, w, c, service)
        if left <= 0.0:
            # PaddockJS's completePitService: new tyres, then the exit route
            target = cars_i[w, c, I_PIT_TARGET]
            cars_i[w, c, I_COMPOUND] = target
            cars_i[w, c, I_USED_COMPOUNDS] |= 1 << target
            cars_f[w, c, F_TIRE_ENERGY] = 100.0
            cars_i[w, c, I_CNT_PIT_STOP_DONE] += 1
            _, _, _, _, _, _, lane_len = lane_frame(tr.px, tr.py)
            cars_f[w, c, F_ROUTE_START_RD] = cars_f[w, c, F_PJS_RACE_DISTANCE]
            cars_f[w, c, F_ROUTE_END_RD] = _box_race_distance(tr, cars_f, w, c, lane_len)
            cars_f[w, c, F_PIT_PATH_S] = 0.0
            cars_i[w, c, I_PIT_STATUS] = PIT_EXITING
            cars_i[w, c, I_PIT_ROUTE] = ROUTE_EXIT
            cars_i[w, c, I_PIT_ROUTE_CURSOR] = 0
    elif status == PIT_EXITING:
        if _follow(tr, cars_f, cars_i, rules, w, c, ROUTE_EXIT, b, buf, dt):
            # PaddockJS's finishPitExit: back to the physics
            cars_i[w, c, I_PIT_STATUS] = PIT_COMPLETED
            cars_i[w, c, I_PIT_ROUTE] = ROUTE_NONE
            cars_i[w, c, I_PIT_INTENT] = 0
            cars_i[w, c, I_PIT_STOPS] += 1
            cars_i[w, c, I_CNT_PIT_EXIT] += 1
            cars_i[w, c, I_IN_PIT_LANE] = 0
            cars_f[w, c, F_SPEED] = max(cars_f[w, c, F_SPEED], EXIT_RELEASE_SPEED)
            cars_f[w, c, F_APPLIED_THROTTLE] = 0.55
            cars_f[w, c, F_APPLIED_BRAKE] = 0.0
            cars_f[w, c, F_PJS_RACE_DISTANCE] = max(cars_f[w, c, F_PJS_RACE_DISTANCE],
                                                       cars_f[w, c, F_ROUTE_END_RD])
            cars_f[w, c, F_PJS_PROGRESS] = -1.0     # the next classification sets it
            cars_f[w, c, F_PIT_PATH_S] = 0.0
