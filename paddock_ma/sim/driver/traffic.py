"""The built-in driver's traffic: which cars it sees (``gather_traffic``, once per world and tick) and
what the nearest of them mean for one car (``scan_traffic``: a passing lane, a following speed, cars
alongside). Only cars that collide with this car count as traffic: a phantom or batch-training car is
invisible to the built-in driver.

Performance: the traffic is kept sorted by lap distance, so a car's scan visits only the run of cars
within its range (``_window``, a binary search and a short walk) instead of the whole field: the scan
was a tenth of a simulator-mode tick. Its answers are those of a scan over every car in slot order
(a property test compares the two).
"""

import math
from collections import namedtuple

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
WINDOW_MARGIN = 1e-6     # m, widens the visited run beyond the rounding of ds (a superset is harmless)

# A world's gathered traffic (``gather_traffic``), as the built-in driver's per-car body takes it: slots
# idx int64[C], progress prog and offset offs (m), speed spd (m/s) float64[C], the first m of each used.
Traffic = namedtuple("Traffic", ["idx", "prog", "offs", "spd", "m"])


@kernel(inline="always")
def gather_traffic(cars_f, cars_i, car_flags, w, n_cars, idx, prog, offs, spd):
    """Compact copy of the cars of world ``w`` the built-in driver treats as traffic (active, not
    destroyed, FLAG_COLLIDES), sorted by lap distance (ties in slot order): slot idx int64[C],
    progress / offset (m), speed (m/s) float64[C]. Returns their count. Built once per world and
    tick instead of once per car; the order lets ``scan_traffic`` visit only the cars near a car."""
    m = 0
    for j in range(n_cars):
        if cars_i[w, j, I_ACTIVE] == 0 or cars_i[w, j, I_DESTROYED] != 0:
            continue
        if (car_flags[w, j] & FLAG_COLLIDES) == 0:
            continue
        p = cars_f[w, j, F_PROGRESS]
        if p != p:
            continue            # no lap distance (never expected): it could not count in a scan anyway
        # insertion by lap distance (stable: equal distances keep the slot order)
        k = m
        while k > 0 and prog[k - 1] > p:
            idx[k] = idx[k - 1]
            prog[k] = prog[k - 1]
            offs[k] = offs[k - 1]
            spd[k] = spd[k - 1]
            k -= 1
        idx[k] = j
        prog[k] = p
        offs[k] = cars_f[w, j, F_OFFSET]
        spd[k] = cars_f[w, j, F_SPEED]
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


@kernel(inline="always")
def _run_position(first, j, m):
    """Position of the j-th car of the run that starts at position first of m, wrapping round."""
    q = first + j
    return q - m if q >= m else q


@kernel(inline="always")
def _window(prog, m, s, reach, length):
    """The run of the sorted traffic (``gather_traffic``) that can hold cars within
    (-SIDE_BY_SIDE, reach] m of lap distance s, wrapping round the lap: (first, count), the run is
    positions first, first + 1, ... (mod m). A superset by WINDOW_MARGIN of the cars that pass the
    exact test, so the rounding of the along-track distance never drops one."""
    width = reach + SIDE_BY_SIDE + 2.0 * WINDOW_MARGIN
    if width >= length:
        return 0, m
    lo = s - SIDE_BY_SIDE - WINDOW_MARGIN
    lo -= math.floor(lo / length) * length
    first = 0
    hi = m
    while first < hi:                            # the first car with progress >= lo
        mid = (first + hi) >> 1
        if prog[mid] < lo:
            first = mid + 1
        else:
            hi = mid
    count = 0
    while count < m:                             # distances from lo grow along the run
        q = _run_position(first, count, m)
        along = prog[q] - lo
        if along < 0.0:
            along += length
        if along > width:
            break
        count += 1
    return first, count


@kernel(inline="always")
def _ahead_in_the_way(prog, offs, spd, q, s, v, off, lane, length, reach):
    """(ds, dl, block_l, block_r) of traffic car q for a car at lap distance s, offset off, lane
    target lane (m), speed v (m/s): ds its distance ahead (m) if it is in the way within the range
    that matters, else nan; dl its offset minus off; block_l / block_r: it is alongside within
    PASS_GAP on the left / right."""
    half = 0.5 * length
    ds = prog[q] - s
    if ds > half:
        ds -= length
    elif ds < -half:
        ds += length
    if ds > reach or ds <= -SIDE_BY_SIDE:
        return math.nan, 0.0, False, False
    oj = offs[q]
    dl = oj - off
    block_l = False
    block_r = False
    if abs(ds) < SIDE_BY_SIDE:
        if dl < 0.0 and dl > -PASS_GAP:
            block_l = True
        elif dl >= 0.0 and dl < PASS_GAP:
            block_r = True
    if ds <= 0.0:
        return math.nan, dl, block_l, block_r
    # Look further ahead the faster we close on the car: the distance to shed the closing
    # speed at FOLLOW_DECEL, plus a second of it for the lane change.
    closing = max(v - max(spd[q], 0.0), 0.0)
    if ds > TRAFFIC_AHEAD + closing + closing * closing / (2.0 * FOLLOW_DECEL):
        return math.nan, dl, block_l, block_r
    # In the way: near our actual line, or near our lane target (within the passing gap, so
    # a car being passed keeps us in the passing lane until it is behind).
    if abs(oj - lane) < PASS_GAP + 0.1 or abs(dl) < SAME_LANE:
        return ds, dl, block_l, block_r
    return math.nan, dl, block_l, block_r


@kernel
def scan_traffic(idx, prog, offs, spd, m, c, collides, v, s, off, lane, length):
    """Scan the traffic (``gather_traffic``: m cars, sorted by lap distance) for car c, when it
    collides itself.

    v, s, off: car c's speed (m/s), progress and offset (m); lane: its current lane target (m);
    length: lap (m). Returns (pass_lane, follow_v, block_l, block_r): pass_lane, the lane (m) beside
    the nearest car in the way within the traffic range (nan = none; of equally near ones the lowest
    slot's); follow_v, a speed cap (m/s) from a car in the way that is in our actual line (MAX_SPEED =
    none); block_l / block_r, a car alongside on the left / right closer than PASS_GAP (lane moves
    toward it are held).

    The rule is that of a scan over the cars in slot order keeping the nearest car in the way so
    far, which takes its following speed when that car is in our line and otherwise keeps the
    following speed it had: so follow_v comes from the nearest in-line car among those nearer than
    every car in the way of a lower slot. Only the run of the field near s is visited (``_window``).
    """
    follow_v = MAX_SPEED
    pass_lane = math.nan
    block_l = False
    block_r = False
    if not collides:
        return pass_lane, follow_v, block_l, block_r
    gap = FOLLOW_GAP0 + FOLLOW_GAP_T * max(v, 0.0)
    # Farthest ahead any car can matter (its closing speed is at most our own speed).
    vp = max(v, 0.0)
    reach = max(TRAFFIC_AHEAD + vp + vp * vp / (2.0 * FOLLOW_DECEL), SIDE_BY_SIDE)
    first, count = _window(prog, m, s, reach, length)
    best_ds = 1e9
    best_slot = -1
    follow_ds = 1e9
    for j in range(count):
        q = _run_position(first, j, m)
        if idx[q] == c:
            continue
        ds, dl, bl, br = _ahead_in_the_way(prog, offs, spd, q, s, v, off, lane, length, reach)
        block_l = block_l or bl
        block_r = block_r or br
        if math.isnan(ds):
            continue
        if ds < best_ds or (ds == best_ds and idx[q] < best_slot):
            best_ds = ds
            best_slot = idx[q]
            # Pass on the side with more room between that car and the asphalt edge.
            oj = offs[q]
            pass_lane = oj - PASS_GAP if oj >= off else oj + PASS_GAP
        if abs(dl) < FOLLOW_LANE and ds < follow_ds:
            # the slot-order scan sets the following speed from this car only if no car in the way
            # of a lower slot is as near (rare: only in-line cars are checked)
            first_nearest = True
            for k in range(count):
                r = _run_position(first, k, m)
                if idx[r] == c or idx[r] >= idx[q]:
                    continue
                ds_r = _ahead_in_the_way(prog, offs, spd, r, s, v, off, lane, length, reach)[0]
                if ds_r <= ds:
                    first_nearest = False
                    break
            if first_nearest:
                follow_ds = ds
                follow_v = _follow_speed(ds, dl, max(spd[q], 0.0), gap)
    return pass_lane, follow_v, block_l, block_r
