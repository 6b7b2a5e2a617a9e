"""The built-in driver's traffic: which cars it sees (``gather_traffic``, once per world and tick) and
what the nearest of them mean for one car (``scan_traffic``: a passing lane, a following speed, cars
alongside). Only cars that collide with this car count as traffic: a phantom or batch-training car is
invisible to the built-in driver.
"""

import math

from ..core.jit import kernel
from ..core.layout import CAR_WIDTH, F_OFFSET, F_PROGRESS, F_SPEED, FLAG_COLLIDES, I_ACTIVE, I_DESTROYED, MAX_SPEED

PASS_GAP = 3.4           # m, lateral offset of a passing lane from the car being passed
TRAFFIC_AHEAD = 30.0     # m, cars ahead closer than this (plus closing distance) are traffic
SAME_LANE = 2.5          # m, lateral distance under which a car ahead is in the way
FOLLOW_LANE = 1.8        # m, ... and under which we must slow for it (bodies are 1.24 m wide)
SIDE_BY_SIDE = 6.0       # m, along-track distance under which a car is alongside
FOLLOW_GAP0 = 7.0        # m, following gap = FOLLOW_GAP0 + FOLLOW_GAP_T * v
FOLLOW_GAP_T = 0.25      # s
FOLLOW_DECEL = 10.0      # m/s^2, deceleration planned when closing on a car in our line
CREEP_GAP = 5.2          # m, closer than this behind a car in our line: stop rather than creep
CREEP_SPEED = 4.0        # m/s, slowest following speed otherwise (lets a car pull out and pass)


@kernel(inline="always")
def gather_traffic(cars_f, cars_i, car_flags, w, n_cars, idx, prog, offs, spd):
    """Compact copy of the cars of world ``w`` the built-in driver treats as traffic (active, not
    destroyed, FLAG_COLLIDES): slot idx int64[C], progress / offset (m), speed (m/s) float64[C].
    Returns their count. Built once per world and tick instead of once per car."""
    m = 0
    for j in range(n_cars):
        if cars_i[w, j, I_ACTIVE] == 0 or cars_i[w, j, I_DESTROYED] != 0:
            continue
        if (car_flags[w, j] & FLAG_COLLIDES) == 0:
            continue
        idx[m] = j
        prog[m] = cars_f[w, j, F_PROGRESS]
        offs[m] = cars_f[w, j, F_OFFSET]
        spd[m] = cars_f[w, j, F_SPEED]
        m += 1
    return m


@kernel(inline="always")
def _follow_speed(ds, dl, vj, gap):
    """Speed (m/s) from which a car can still stop at the following gap ``gap`` (m) behind a car ds m
    ahead and dl m across, at vj m/s, decelerating at FOLLOW_DECEL; at least CREEP_SPEED (to steer
    round a stopped car) unless about to touch it."""
    room = max(ds - gap, 0.0)
    follow_v = math.sqrt(vj * vj + 2.0 * FOLLOW_DECEL * room)
    if ds > CREEP_GAP or abs(dl) > CAR_WIDTH:
        follow_v = max(follow_v, CREEP_SPEED)
    return follow_v


@kernel
def scan_traffic(idx, prog, offs, spd, m, c, collides, v, s, off, lane, length):
    """Scan the traffic (``gather_traffic``: m cars) for car c, when it collides itself.

    v, s, off: car c's speed (m/s), progress and offset (m); lane: its current lane target (m);
    length: lap (m). Returns (pass_lane, follow_v, block_l, block_r): pass_lane, the lane (m) beside
    the nearest car in the way within the traffic range (nan = none); follow_v, a speed cap (m/s)
    from that car when it is in our actual line (MAX_SPEED = none); block_l / block_r, a car
    alongside on the left / right closer than PASS_GAP (lane moves toward it are held).
    """
    follow_v = MAX_SPEED
    best_ds = 1e9
    pass_lane = math.nan
    block_l = False
    block_r = False
    if not collides:
        return pass_lane, follow_v, block_l, block_r
    gap = FOLLOW_GAP0 + FOLLOW_GAP_T * max(v, 0.0)
    half = 0.5 * length
    # Farthest ahead any car can matter (its closing speed is at most our own speed): most cars of
    # a spread-out field fail this one predictable test and cost a few cycles each.
    vp = max(v, 0.0)
    reach = max(TRAFFIC_AHEAD + vp + vp * vp / (2.0 * FOLLOW_DECEL), SIDE_BY_SIDE)
    for q in range(m):
        ds = prog[q] - s
        if ds > half:
            ds -= length
        elif ds < -half:
            ds += length
        if ds > reach or ds <= -SIDE_BY_SIDE or idx[q] == c:
            continue
        oj = offs[q]
        dl = oj - off
        if abs(ds) < SIDE_BY_SIDE:
            if dl < 0.0 and dl > -PASS_GAP:
                block_l = True
            elif dl >= 0.0 and dl < PASS_GAP:
                block_r = True
        if ds <= 0.0:
            continue
        vj = max(spd[q], 0.0)
        # Look further ahead the faster we close on the car: the distance to shed the closing
        # speed at FOLLOW_DECEL, plus a second of it for the lane change.
        closing = max(v - vj, 0.0)
        if ds > TRAFFIC_AHEAD + closing + closing * closing / (2.0 * FOLLOW_DECEL):
            continue
        # In the way: near our actual line, or near our lane target (within the passing gap, so
        # a car being passed keeps us in the passing lane until it is behind).
        if abs(oj - lane) < PASS_GAP + 0.1 or abs(dl) < SAME_LANE:
            if ds < best_ds:
                best_ds = ds
                # Pass on the side with more room between that car and the asphalt edge.
                if oj >= off:
                    pass_lane = oj - PASS_GAP
                else:
                    pass_lane = oj + PASS_GAP
                if abs(dl) < FOLLOW_LANE:
                    follow_v = _follow_speed(ds, dl, vj, gap)
    return pass_lane, follow_v, block_l, block_r
