"""The polylines PaddockJS 2.0.0's pit route follows (``src/simulation/pit/pitRouting.js``), for a
policy car's stop (``race.pit_route``).

PaddockJS builds a route as a list of points once, when a stop (or one of its phases) starts, and moves
the car along it. Here the route is rebuilt each tick from a few per-car scalars (layout's F_ROUTE_*,
F_PIT_ENTRY_RD, I_PIT_ROUTE) into a scratch buffer ``buf`` float64[ROUTE_MAX, N_COLS] the step owns:
rows 0..n-1 hold the points (B_X, B_Y, B_LIM), rows 0..nseg-1 the segments (B_I0 its first point,
B_START, B_LEN, B_HEAD, B_SLIM, B_NEXT_LIM). The routes:

* entry (``startPitStop``): the car's pose, a straight point ahead of it, ``steps`` points on the track
  easing the lateral offset from the car's to the pit entry's connect point
  (``createPitApproachPoints``), the entry road's centreline (the pit path's first PIT_CONN_STEPS + 1
  points), the fast lane's start, the fast lane 34 m before the queue point and the queue point in the
  working lane (the last three with the limiter);
* queue release (``releasePitQueue``): the car, the queue point, the service area's centre;
* exit (``completePitService``): the service area's centre, the fast lane 34 m after it, the fast lane's
  end, the exit road's centreline.

Distances in metres; PaddockJS's tolerances (0.001 sim units) are ``EPS`` metres. All kernels are
``jit.kernel``.
"""

import math

from ..core.jit import kernel
from ..core.layout import (
    F_HEADING, F_PIT_ENTRY_RD, F_ROUTE_H0, F_ROUTE_OFFSET0, F_ROUTE_START_RD, F_ROUTE_X0, F_ROUTE_Y0, F_X,
    F_Y, ROUTE_ENTRY, ROUTE_EXIT, ROUTE_RELEASE,
)
from ..core.trig import clamp, wrap_angle
from ..track.nearest_sample import nearest_sample_in_window
from ..track.surface import PIT_CONN_STEPS

U = 12.0                        # PaddockJS sim units per metre
EPS = 0.001 / U                 # m, PaddockJS's 0.001 sim-unit tolerances
ROUTE_MAX = 48                  # points of the longest route (entry: <= 7 + 25 + 3)
N_COLS = 10
B_X, B_Y, B_LIM, B_I0, B_START, B_LEN, B_HEAD, B_SLIM, B_NEXT_LIM = 0, 1, 2, 3, 4, 5, 6, 7, 8
APPROACH_DISTANCE = 250.0       # m, PIT_ENTRY_APPROACH_DISTANCE
APPROACH_STEP = 74.0            # m between the approach's track points
WORKING_LANE_OFFSET = 11.5      # m, the working lane's centre from the fast lane's (6 + 1.5 + 4)
QUEUE_GAP = 12.0                # m, PIT_SERVICE_QUEUE_GAP
BOX_APPROACH = 34.0             # m, PIT_BOX_APPROACH_DISTANCE
FALLBACK_BEYOND_RUNOFF = 180.0  # m past the runoff's edge: a hinted nearest sample farther is not trusted


@kernel(inline="always")
def sample_index_at(cs, d):
    """PaddockJS's ``sampleIndexAtDistance``: the first sample whose lap distance is >= ``d`` (m, in
    [0, L]); cs float64[N+1]."""
    lo = 0
    hi = cs.shape[0] - 1
    while lo < hi:
        mid = (lo + hi) // 2
        if cs[mid] < d:
            lo = mid + 1
        else:
            hi = mid
    return lo


@kernel(inline="always")
def track_point(cx, cy, cs, cnx, cny, length, d):
    """PaddockJS's ``pointAt`` at race distance ``d`` (m, wrapped): (x, y, nx, ny), every field linear
    between the two samples around it (the normal too, not renormalised)."""
    wrapped = ((d % length) + length) % length
    low = sample_index_at(cs, wrapped)
    prev = max(0, low - 1)
    span = max(1.0 / U, cs[low] - cs[prev])
    a = clamp((wrapped - cs[prev]) / span, 0.0, 1.0)
    return (cx[prev] + (cx[low] - cx[prev]) * a, cy[prev] + (cy[low] - cy[prev]) * a,
            cnx[prev] + (cnx[low] - cnx[prev]) * a, cny[prev] + (cny[low] - cny[prev]) * a)


@kernel(inline="always")
def hinted_offset(cx, cy, cs, cnx, cny, length, fallback2, hint, x, y):
    """PaddockJS's ``nearestTrackState(track, point, hint, {indexMode: 'legacy'})``'s signed offset (m) of
    (x, y): from the nearest sample among the 240 either side of the hint's sample (the first of
    equals), or of the whole lap when that one is farther than sqrt(fallback2) m."""
    n = cx.shape[0] - 1
    j0 = sample_index_at(cs, ((hint % length) + length) % length)
    jb = nearest_sample_in_window(cx, cy, cs, length, j0 % n, x, y)
    best = (x - cx[jb]) ** 2 + (y - cy[jb]) ** 2
    if best > fallback2:
        best = math.inf
        for kk in range(n):
            d2 = (x - cx[kk]) ** 2 + (y - cy[kk]) ** 2
            if d2 < best:
                best = d2
                jb = kk
    return (x - cx[jb]) * cnx[jb] + (y - cy[jb]) * cny[jb]


@kernel(inline="always")
def _add(buf, n, x, y, lim):
    """``createRoute``'s de-duplication: append (x, y) unless it is within EPS of the last point (then
    a limiter point only marks that one); returns the new count."""
    if n > 0 and math.hypot(buf[n - 1, B_X] - x, buf[n - 1, B_Y] - y) < EPS:
        if lim:
            buf[n - 1, B_LIM] = 1.0
        return n
    buf[n, B_X] = x
    buf[n, B_Y] = y
    buf[n, B_LIM] = 1.0 if lim else 0.0
    return n + 1


@kernel(inline="always")
def _segments(buf, n):
    """``createRoute``'s segments of the ``n`` points in ``buf``: (count, total length m). Segments no
    longer than EPS are left out; a segment has the limiter when both its ends do; B_NEXT_LIM is where
    the next limiter segment at or after it starts (inf: none)."""
    nseg = 0
    total = 0.0
    for i in range(n - 1):
        dx = buf[i + 1, B_X] - buf[i, B_X]
        dy = buf[i + 1, B_Y] - buf[i, B_Y]
        seg_len = math.hypot(dx, dy)
        if seg_len <= EPS:
            continue
        buf[nseg, B_I0] = i
        buf[nseg, B_START] = total
        buf[nseg, B_LEN] = seg_len
        buf[nseg, B_HEAD] = math.atan2(dy, dx)
        buf[nseg, B_SLIM] = 1.0 if (buf[i, B_LIM] > 0.5 and buf[i + 1, B_LIM] > 0.5) else 0.0
        total += seg_len
        nseg += 1
    nxt = math.inf
    for k in range(nseg - 1, -1, -1):
        if buf[k, B_SLIM] > 0.5:
            nxt = buf[k, B_START]
        buf[k, B_NEXT_LIM] = nxt
    return nseg, total


@kernel(inline="always")
def lane_frame(px, py):
    """The fast lane of a pit path (px, py): its start, end, unit direction and length (m)."""
    m = px.shape[0]
    ax = px[PIT_CONN_STEPS]
    ay = py[PIT_CONN_STEPS]
    bx = px[m - 1 - PIT_CONN_STEPS]
    by = py[m - 1 - PIT_CONN_STEPS]
    lane_len = math.hypot(bx - ax, by - ay)
    return ax, ay, bx, by, (bx - ax) / lane_len, (by - ay) / lane_len, lane_len


@kernel(inline="always")
def lane_point(px, py, along):
    """``pitMainLanePointAt(pitLane, along, 0)``: the fast lane's centre ``along`` m from its start
    (clamped to the lane)."""
    ax, ay, bx, by, _, _, lane_len = lane_frame(px, py)
    a = clamp(along / lane_len, 0.0, 1.0) if lane_len > 0.0 else 0.0
    return ax + (bx - ax) * a, ay + (by - ay) * a


@kernel(inline="always")
def service_distances(px, py, pit_lane_start, box_path_s, b):
    """Service area ``b``'s distance along the fast lane and its queue point's (m)."""
    service = box_path_s[b] - pit_lane_start
    return service, max(0.5 * QUEUE_GAP, service - QUEUE_GAP)


@kernel(inline="always")
def queue_point(px, py, box_x, box_y, pit_lane_start, box_path_s, b):
    """Service area ``b``'s queue point: QUEUE_GAP before its centre along the lane (in the working lane)."""
    _, _, _, _, fx, fy, _ = lane_frame(px, py)
    service, queue = service_distances(px, py, pit_lane_start, box_path_s, b)
    return box_x[b] + fx * (queue - service), box_y[b] + fy * (queue - service)


@kernel(inline="always")
def _ease(a):
    a = clamp(a, 0.0, 1.0)
    return a * a * (3.0 - 2.0 * a)


@kernel
def build_route(tr, cars_f, w, c, phase, b, buf):
    """Rebuild car ``c``'s route of ``phase`` (ROUTE_ENTRY, ROUTE_RELEASE, ROUTE_EXIT) to service area
    ``b`` into ``buf``; returns (segment count, length m)."""
    px = tr.px
    py = tr.py
    m = px.shape[0]
    n = 0
    service, queue = service_distances(px, py, tr.pit_lane_start, tr.box_path_s, b)
    qx, qy = queue_point(px, py, tr.box_x, tr.box_y, tr.pit_lane_start, tr.box_path_s, b)
    if phase == ROUTE_ENTRY:
        x0 = cars_f[w, c, F_ROUTE_X0]
        y0 = cars_f[w, c, F_ROUTE_Y0]
        h0 = cars_f[w, c, F_ROUTE_H0]
        rd0 = cars_f[w, c, F_ROUTE_START_RD]
        remaining = max(0.0, cars_f[w, c, F_PIT_ENTRY_RD] - rd0)
        start_off = cars_f[w, c, F_ROUTE_OFFSET0]
        fallback = tr.grass_edge + FALLBACK_BEYOND_RUNOFF
        target_off = hinted_offset(tr.cx, tr.cy, tr.cs, tr.cnx, tr.cny, tr.length, fallback * fallback,
                                   tr.pit_entry_s, px[0], py[0])
        n = _add(buf, n, x0, y0, False)
        straight = min(remaining * 0.22, 42.0) if remaining > 14.0 else 0.0
        if straight > 1.0:
            n = _add(buf, n, x0 + math.cos(h0) * straight, y0 + math.sin(h0) * straight, False)
        transition = max(0.0, remaining - straight)
        steps = max(4, int(math.ceil(max(transition, APPROACH_DISTANCE * 0.45) / APPROACH_STEP)))
        steps = min(steps, ROUTE_MAX - PIT_CONN_STEPS - 6)      # room for the rest of the route
        for i in range(1, steps + 1):
            a = i / steps
            tx, ty, tnx, tny = track_point(tr.cx, tr.cy, tr.cs, tr.cnx, tr.cny, tr.length,
                                           rd0 + straight + transition * a)
            off = start_off + (target_off - start_off) * _ease(a)
            n = _add(buf, n, tx + tnx * off, ty + tny * off, False)
        for i in range(PIT_CONN_STEPS + 1):         # the connect point, then the entry road
            n = _add(buf, n, px[i], py[i], False)
        lx, ly = lane_point(px, py, 0.0)
        n = _add(buf, n, lx, ly, True)
        lx, ly = lane_point(px, py, max(0.0, queue - BOX_APPROACH))
        n = _add(buf, n, lx, ly, True)
        n = _add(buf, n, qx, qy, True)
    elif phase == ROUTE_RELEASE:
        n = _add(buf, n, cars_f[w, c, F_ROUTE_X0], cars_f[w, c, F_ROUTE_Y0], True)
        n = _add(buf, n, qx, qy, True)
        n = _add(buf, n, tr.box_x[b], tr.box_y[b], True)
    elif phase == ROUTE_EXIT:
        _, _, _, _, _, _, lane_len = lane_frame(px, py)
        n = _add(buf, n, tr.box_x[b], tr.box_y[b], True)
        lx, ly = lane_point(px, py, min(lane_len, service + BOX_APPROACH))
        n = _add(buf, n, lx, ly, True)
        lx, ly = lane_point(px, py, lane_len)
        n = _add(buf, n, lx, ly, True)
        for i in range(m - 1 - PIT_CONN_STEPS, m):
            n = _add(buf, n, px[i], py[i], False)
    return _segments(buf, n)


@kernel(inline="always")
def find_segment(buf, nseg, length, cursor, d, pad):
    """PaddockJS's ``findRouteSegment``: the segment holding route distance ``d`` (m), searched from the
    ``cursor`` segment, ``pad`` m short of each segment's end. Returns (segment, new cursor)."""
    dd = clamp(d, 0.0, length)
    k = min(max(cursor, 0), nseg - 1)
    if buf[k, B_START] - EPS <= dd <= buf[k, B_START] + buf[k, B_LEN] - pad:
        return k, cursor
    if dd > buf[k, B_START] + buf[k, B_LEN] - pad:
        while k < nseg - 1 and dd > buf[k, B_START] + buf[k, B_LEN] - pad:
            k += 1
    else:
        while k > 0 and dd < buf[k, B_START] - EPS:
            k -= 1
    if dd < buf[k, B_START] - EPS or dd > buf[k, B_START] + buf[k, B_LEN] - pad:
        found = nseg - 1
        for q in range(nseg):
            if buf[q, B_START] - EPS <= dd <= buf[q, B_START] + buf[q, B_LEN] - pad:
                found = q
                break
        k = found
    return k, max(0, k)


@kernel(inline="always")
def sample_route(buf, nseg, length, cursor, d):
    """PaddockJS's ``sampleRoute``: (x, y, heading, new cursor) at route distance ``d`` (m)."""
    dd = clamp(d, 0.0, length)
    k, cursor = find_segment(buf, nseg, length, cursor, dd, 0.0)
    i0 = int(buf[k, B_I0])
    a = clamp((dd - buf[k, B_START]) / buf[k, B_LEN], 0.0, 1.0)
    x = buf[i0, B_X] + (buf[i0 + 1, B_X] - buf[i0, B_X]) * a
    y = buf[i0, B_Y] + (buf[i0 + 1, B_Y] - buf[i0, B_Y]) * a
    return x, y, buf[k, B_HEAD], cursor


@kernel(inline="always")
def limiter_at(buf, nseg, length, cursor, d):
    """PaddockJS's ``routeLimiterActiveAt``: (limiter on at route distance ``d``, new cursor)."""
    k, cursor = find_segment(buf, nseg, length, cursor, d, EPS)
    return buf[k, B_SLIM] > 0.5, cursor


@kernel(inline="always")
def distance_to_limiter(buf, nseg, length, cursor, d):
    """PaddockJS's ``distanceToNextLimiterSegment``: (m to the next limiter segment, 0 inside one; new
    cursor)."""
    dd = clamp(d, 0.0, length)
    k, cursor = find_segment(buf, nseg, length, cursor, dd, EPS)
    if buf[k, B_SLIM] > 0.5 and buf[k, B_START] + buf[k, B_LEN] > dd + EPS:
        return 0.0, cursor
    return max(0.0, buf[k, B_NEXT_LIM] - dd), cursor


@kernel(inline="always")
def nearest_on_route(buf, nseg, length, x, y, previous):
    """PaddockJS's ``nearestDistanceOnRoute``: the route distance (m) of (x, y)'s nearest point among the
    segments ending no more than 90 m behind ``previous`` (the first of equals), clamped to the route."""
    best = math.inf
    along = previous
    for k in range(nseg):
        if buf[k, B_START] + buf[k, B_LEN] < previous - 90.0:
            continue
        i0 = int(buf[k, B_I0])
        ax = buf[i0, B_X]
        ay = buf[i0, B_Y]
        dx = buf[i0 + 1, B_X] - ax
        dy = buf[i0 + 1, B_Y] - ay
        l2 = dx * dx + dy * dy
        a = clamp(((x - ax) * dx + (y - ay) * dy) / l2, 0.0, 1.0) if l2 > 0.0 else 0.0
        qx = ax + dx * a
        qy = ay + dy * a
        d2 = (x - qx) ** 2 + (y - qy) ** 2
        if d2 < best:
            best = d2
            along = buf[k, B_START] + buf[k, B_LEN] * a
    return clamp(along, 0.0, length)


@kernel(inline="always")
def route_end(buf, nseg):
    """The route's last point (x, y) (m)."""
    i1 = int(buf[nseg - 1, B_I0]) + 1
    return buf[i1, B_X], buf[i1, B_Y]


@kernel(inline="always")
def start_pose(cars_f, w, c):
    """Record the car's pose as the next route's first point."""
    cars_f[w, c, F_ROUTE_X0] = cars_f[w, c, F_X]
    cars_f[w, c, F_ROUTE_Y0] = cars_f[w, c, F_Y]
    cars_f[w, c, F_ROUTE_H0] = wrap_angle(cars_f[w, c, F_HEADING])
