"""The pit complex's layout and surfaces: which pit surface lies at a point and when a pit surface
overrides the main track's band (the exact surface at a point and the raster reads are
``track.point_surface``'s; how far along a ray the answer holds, ``track.pit_quiet``).

Pit path layout (fixed so the kernels find the parts without extra fields): points
``0..PIT_CONN_STEPS`` are the entry connector (point 0 on the track, point ``PIT_CONN_STEPS`` the
fast-lane start), the fast lane runs straight to point ``M - 1 - PIT_CONN_STEPS`` and the last
``PIT_CONN_STEPS + 1`` points are the exit connector, ending on the track (``box_x``, ``box_y`` are
the service areas' centres).

The pit surfaces are PaddockJS 2.0.0's (``nearestPitLaneState``, ``pitLaneState.js``), read from the
track's ``pit_geom`` (``pit_lane.pit_geometry``): beside the 12 m fast lane, on the side away from the
track, a 1.5 m gap, the 8 m working lane (7.5-15.5 m from the fast lane's centre line), the 11 x 5 m
service areas on it with their 7.92 x 5 m queue areas, another 1.5 m gap and two 9 x 4.5 m garages a
team (17-21.5 m). A road counts wherever a point lies within half its width of the line of one of
its candidate segments (PaddockJS's offset from the clamped projection), the candidates being those
its road grid offers. A pit surface overrides the main-track band beyond the kerb, a pit box
everywhere (``pit_overrides``).

A track without a pit lane (PaddockJS's ``pitLane.enabled: false``) has an empty pit path and no
service boxes (``pit_lane.no_pit_fields``): ``has_pit_lane`` is False, ``pit_surface`` is -1
everywhere, ``pit_bbox`` is empty, so no kernel finds a pit surface.
"""

import math

import numpy as np

from ..core.jit import kernel
from ..core.layout import SURF_PIT_BOX, SURF_PIT_ENTRY, SURF_PIT_EXIT, SURF_PIT_LANE
from .geometry import seg_d2a
from .nearest_sample import clamped_projection
from ..core.trig import lerp_angle_at, lerp_at

# Pit geometry constants (metres): PaddockJS 2.0.0's pit complex (``trackConstants.js``,
# ``pitLaneLayout.js``), shared by the builders (pit_lane.py, paddockjs_track.py) and the kernels below.
PIT_CONN_STEPS = 24        # Bezier steps of each connector (the path has PIT_CONN_STEPS + 1 points each)
PIT_WORK_GAP = 1.5         # between the fast lane and the working lane, and the working lane and the garages
PIT_WORK_WIDTH = 8.0       # working lane width (its centre line 11.5 m from the fast lane's)
SERVICE_LENGTH = 11.0      # service area along the lane, centred on the working lane
SERVICE_DEPTH = 5.0        # service area across
QUEUE_GAP = 12.0           # the queue area's centre this far before its service area's (PIT_SERVICE_QUEUE_GAP)
QUEUE_LENGTH_RATIO = 0.72  # the queue area's length over the service area's
GARAGE_LENGTH = 9.0        # garage box (two a team) beyond the working lane
GARAGE_DEPTH = 4.5
BOX_PAIR_GAP = 4.0         # between a team's two garages
PIT_GRID_CELL = 32.0       # PaddockJS's query-index cell: its pit road grid's cell and each segment's margin
BOX_EASE = 34.0            # path length over which a pit-route car eases sideways into / out of its box

# ``pit_geom`` (``pit_lane.pit_geometry``), a flat float64 array: a header, then the road segments
# (SEG_SIZE values each: ax, ay, bx, by, half width, route, the grid cells c0, r0, c1, r1 it covers, ...),
# then the rectangles (QUAD_SIZE values each: four corners x0, y0 .. x3, y3, the kind, ...), then the mask's
# cells (row-major: MASK_ROAD + MASK_BOX where a road, a box may lie; 0.0 where ``pit_state`` certainly
# answers none). Empty: no pit lane.
PITG_N_SEG = 0
PITG_N_QUAD = 1
PITG_BOUNDS = 2            # min x, max x, min y, max y (m): outside, no point is a pit surface
PITG_GRID = 6              # road grid: x0, y0, cell, columns, rows
PITG_QUAD0 = 11            # index of the first rectangle
PITG_MAP = 12              # the lap distances (m) PaddockJS maps the pit roads onto (``mapPitDistance``): the
                           # entry connection's, the fast lane's start and end, the exit connection's
PITG_LENGTH = 16           # the lap length (m)
PITG_MASK = 17             # the "no pit surface here" mask: index of its first cell, x0, y0, cell (m), columns, rows
PITG_SEG0 = 23             # index of the first segment
SEG_SIZE = 12              # ... c1, r1, then the route's length (m) before the segment and the route's length
QUAD_SIZE = 10             # ... kind, then the distance (m) along the fast lane PaddockJS maps the box by
ROUTE_ENTRY, ROUTE_MAIN, ROUTE_WORKING, ROUTE_EXIT = 0, 1, 2, 3
QUAD_SERVICE, QUAD_QUEUE, QUAD_GARAGE = 0, 1, 2
MASK_ROAD, MASK_BOX = 1, 2


@kernel(inline="always")
def near_pit_connector(s, entry_s, exit_s, length, window):
    """PaddockJS's ``isNearPitConnector``: lap distance ``s`` within ``window`` of the pit entry's or
    exit's lap distance (all m), the lap of ``length`` wrapped. Its callers pass their own window (the
    wheels' full-sample window, the rays' fallback window)."""
    d_in = abs(s - entry_s)
    d_out = abs(s - exit_s)
    return min(d_in, length - d_in) <= window or min(d_out, length - d_out) <= window


@kernel(inline="always")
def has_pit_lane(tr):
    """True when the track has a pit lane: a pit path (``px``) of at least one point. Takes any
    namedtuple with the pit arrays (TrackArrays or the kernels' smaller views of it)."""
    return tr.px.shape[0] > 0


@kernel(inline="always")
def pit_point_at(tr, path_s):
    """Point of the pit path at path distance path_s (m, clamped to [0, pit_length]).

    Returns (x m, y m, heading rad); (0, 0, 0) on a track without a pit lane (no route runs there).
    """
    m = tr.px.shape[0]
    if m == 0:
        return 0.0, 0.0, 0.0
    if path_s <= 0.0:
        return tr.px[0], tr.py[0], tr.ph[0]
    if path_s >= tr.ps[m - 1]:
        return tr.px[m - 1], tr.py[m - 1], tr.ph[m - 1]
    i = np.searchsorted(tr.ps, path_s) - 1
    if i < 0:
        i = 0
    if i > m - 2:
        i = m - 2
    t = (path_s - tr.ps[i]) / (tr.ps[i + 1] - tr.ps[i])
    return lerp_at(tr.px, i, t), lerp_at(tr.py, i, t), lerp_angle_at(tr.ph, i, t)



@kernel(inline="always")
def polyline_d2(px, py, lo, hi, x, y):
    """Squared distance (m^2) from (x, y) to the polyline of points lo..hi (segments by
    ``track.geometry.seg_d2a``)."""
    best = np.inf
    for i in range(lo, hi):
        d2, _t = seg_d2a(px, py, i, x, y)
        if d2 < best:
            best = d2
    return best


@kernel(inline="always")
def pit_lane_frame(px, py, pit_side):
    """The fast lane's frame from the pit path (px, py; > 2 PIT_CONN_STEPS + 1 points) ->
    (sx, sy, dx, dy, nx, ny, lane_len): its start (m), unit vector along it, the outward unit normal
    (the right normal times pit_side: away from the track) and its length (m)."""
    m = px.shape[0]
    i0 = PIT_CONN_STEPS
    i1 = m - 1 - PIT_CONN_STEPS
    sx = px[i0]
    sy = py[i0]
    dx = px[i1] - sx
    dy = py[i1] - sy
    lane_len = math.sqrt(dx * dx + dy * dy)
    dx /= lane_len
    dy /= lane_len
    return sx, sy, dx, dy, -dy * pit_side, dx * pit_side, lane_len


@kernel(inline="always")
def pit_overrides(p, a, kerb_edge):
    """PaddockJS's ``nearestTrackState`` pit override: whether the pit surface ``p`` (``pit_surface``'s
    answer, -1 none) replaces the main-track band of a point at |offset| ``a`` (m): a pit box always
    (the pit-box rule), another pit surface beyond the kerb's outer edge only. (Its merge buffer, the
    main track kept on the asphalt at an access road's first or last 1.92 m, never applies: the
    asphalt already keeps the main track.)"""
    return p == SURF_PIT_BOX or (p >= 0 and a > kerb_edge)


@kernel(inline="always")
def in_pit_bounds(g, x, y):
    """(x, y) (m) inside the pit complex's bounds (``pit_geom`` g; False without a pit lane)."""
    if g.shape[0] == 0:
        return False
    return g[PITG_BOUNDS] <= x <= g[PITG_BOUNDS + 1] and g[PITG_BOUNDS + 2] <= y <= g[PITG_BOUNDS + 3]


@kernel(inline="always")
def pit_mask_at(g, x, y):
    """What the mask of ``pit_geom`` g (``pit_lane.pit_mask``) allows at (x, y) (m): MASK_ROAD if a
    candidate road's strip may reach the point, plus MASK_BOX if a rectangle may; 0 where no pit surface
    lies there. Off the mask both. The mask spares ``pit_state`` its searches for most points of the
    complex's bounds (the main track beside the pit lane, the roads far from the boxes); the answer is
    the same either way."""
    o = int(g[PITG_MASK])
    cell = g[PITG_MASK + 3]
    col = math.floor((x - g[PITG_MASK + 1]) / cell)
    row = math.floor((y - g[PITG_MASK + 2]) / cell)
    cols = int(g[PITG_MASK + 4])
    if 0 <= col < cols and 0 <= row < int(g[PITG_MASK + 5]):
        return int(g[o + int(row) * cols + int(col)])
    return MASK_ROAD + MASK_BOX


@kernel(inline="always")
def seg_projection(g, o, x, y):
    """PaddockJS's ``projectPointToSegment`` of (x, y) on the pit segment at g[o] -> (signed offset m,
    projected x, y, unit normal x, y). The offset is measured along the segment's normal from the
    clamped projection: the distance to the segment's line, beyond its ends too."""
    ax = g[o]
    ay = g[o + 1]
    dx = g[o + 2] - ax
    dy = g[o + 3] - ay
    amount = clamped_projection(ax, ay, dx, dy, x, y)
    qx = ax + dx * amount
    qy = ay + dy * amount
    length = math.sqrt(dx * dx + dy * dy)
    nx = -dy / length if length > 0.0 else 0.0
    ny = dx / length if length > 0.0 else 1.0
    return (x - qx) * nx + (y - qy) * ny, qx, qy, nx, ny


@kernel(inline="always")
def road_radius(g, x, y):
    """Which pit road segments PaddockJS's road grid offers for (x, y) (``queryPitRoadSegmentCandidatesByRoute``):
    those covering the point's cell (radius 0), else its 3 x 3 cells (1), else every segment (-1: the
    grid found none). Returns (radius, column, row)."""
    col = math.floor((x - g[PITG_GRID]) / g[PITG_GRID + 2])
    row = math.floor((y - g[PITG_GRID + 1]) / g[PITG_GRID + 2])
    n = int(g[PITG_N_SEG])
    for r in range(2):
        for k in range(n):
            o = PITG_SEG0 + SEG_SIZE * k
            if g[o + 6] <= col + r and g[o + 8] >= col - r and g[o + 7] <= row + r and g[o + 9] >= row - r:
                return r, col, row
    return -1, col, row


@kernel(inline="always")
def seg_candidate(g, o, r, col, row):
    """Whether the segment at g[o] is a candidate at radius ``r`` around (col, row) (-1: all are)."""
    if r < 0:
        return True
    return g[o + 6] <= col + r and g[o + 8] >= col - r and g[o + 7] <= row + r and g[o + 9] >= row - r


@kernel(inline="always")
def point_in_quad(g, o, x, y):
    """PaddockJS's ``pointIsInsidePolygon`` (crossings) for the rectangle at g[o] (corners x0, y0 .. x3, y3)."""
    inside = False
    j = 3
    for i in range(4):
        xi = g[o + 2 * i]
        yi = g[o + 2 * i + 1]
        xj = g[o + 2 * j]
        yj = g[o + 2 * j + 1]
        if (yi > y) != (yj > y):
            x_at = ((xj - xi) * (y - yi)) / (yj - yi) + xi
            if x < x_at:
                inside = not inside
        j = i
    return inside


@kernel(inline="always")
def _first_of_route(g, route):
    """Index of the first segment of ``route`` in ``pit_geom`` g."""
    for k in range(int(g[PITG_N_SEG])):
        if g[PITG_SEG0 + SEG_SIZE * k + 5] == route:
            return k
    return 0


@kernel(inline="always")
def map_pit_distance(g, start, end, amount):
    """PaddockJS's ``mapPitDistance``: the lap distance (m, wrapped to the lap) ``amount`` (clamped to
    [0, 1]) of the way from ``start`` to ``end`` (m)."""
    d = start + (end - start) * min(max(amount, 0.0), 1.0)
    length = g[PITG_LENGTH]
    if length > 0.0:
        d = d - length * math.floor(d / length)
    return d


@kernel(inline="always")
def _box_at(g, x, y):
    """PaddockJS's pit-box rule at (x, y) (m) in ``pit_geom`` g: the index in g of the rectangle that holds
    the point (a service or queue area first, else a garage), -1 none."""
    nq = int(g[PITG_N_QUAD])
    q0 = int(g[PITG_QUAD0])
    for kind in range(2):
        for k in range(nq):
            o = q0 + QUAD_SIZE * k
            t = g[o + 8]
            if ((t != QUAD_GARAGE) if kind == 0 else (t == QUAD_GARAGE)) and point_in_quad(g, o, x, y):
                return o
    return -1


@kernel(inline="always")
def _box_state(g, o):
    """``pit_state`` on the rectangle at ``g[o]`` (a service or queue area, a garage) -> (SURF_PIT_BOX, its
    centre (m), the unit service normal, its depth along it (m), the lap distance of its place along the
    fast lane)."""
    # corner 0 - corner 3: the rectangle's depth along the service normal
    nx = g[o] - g[o + 6]
    ny = g[o + 1] - g[o + 7]
    dd = math.sqrt(nx * nx + ny * ny)
    lane = g[PITG_SEG0 + SEG_SIZE * _first_of_route(g, ROUTE_MAIN) + 11]
    amount = g[o + 9] / lane if lane > 0.0 else 0.0
    return (SURF_PIT_BOX, 0.5 * (g[o] + g[o + 4]), 0.5 * (g[o + 1] + g[o + 5]), nx / dd, ny / dd, dd,
            map_pit_distance(g, g[PITG_MAP + 1], g[PITG_MAP + 2], amount))


@kernel(inline="always")
def _road_mapping(g, route, last, along):
    """A road's surface code (SURF_PIT_*) and the lap distance (m) PaddockJS maps the distance ``along`` (m)
    its ``route`` (ROUTE_*) onto (``mapPitDistance``, between the road's ends' lap distances); ``last``:
    the offset in ``g`` of one of the route's segments (each holds the route's length)."""
    code = SURF_PIT_ENTRY if route == ROUTE_ENTRY else SURF_PIT_EXIT if route == ROUTE_EXIT else SURF_PIT_LANE
    total = g[last + 11]
    start = g[PITG_MAP + 1] if route == ROUTE_MAIN or route == ROUTE_WORKING else (
        g[PITG_MAP] if route == ROUTE_ENTRY else g[PITG_MAP + 2])
    end = g[PITG_MAP + 2] if route == ROUTE_MAIN or route == ROUTE_WORKING else (
        g[PITG_MAP + 1] if route == ROUTE_ENTRY else g[PITG_MAP + 3])
    return code, map_pit_distance(g, start, end, along / total if total > 0.0 else 0.0)


@kernel(inline="always")
def _nearest_road(g, x, y):
    """``pit_state`` on the roads at (x, y): each route's nearest candidate segment (by the offset from its
    line), within half the road's width; the nearest of those wins (the first of equals) -> as
    ``pit_state``, code -1 for none."""
    r, col, row = road_radius(g, x, y)
    n = int(g[PITG_N_SEG])
    best_code = -1
    best = np.inf
    bx = 0.0
    by = 0.0
    bnx = 0.0
    bny = 0.0
    bw = 0.0
    bd = 0.0
    route = -1
    route_best = np.inf
    rx = 0.0
    ry = 0.0
    rnx = 0.0
    rny = 0.0
    rd = 0.0
    for k in range(n + 1):
        o = PITG_SEG0 + SEG_SIZE * k
        this_route = int(g[o + 5]) if k < n else -2
        if this_route != route:
            # the previous route's nearest segment, if within its half width
            if route >= 0 and route_best <= g[o - SEG_SIZE + 4] and route_best < best:
                best = route_best
                best_code, bd = _road_mapping(g, route, o - SEG_SIZE, rd)
                bx = rx
                by = ry
                bnx = rnx
                bny = rny
                bw = 2.0 * g[o - SEG_SIZE + 4]
            route = this_route
            route_best = np.inf
        if k == n:
            break
        if not seg_candidate(g, o, r, col, row):
            continue
        off, qx, qy, nx, ny = seg_projection(g, o, x, y)
        if abs(off) < route_best:
            route_best = abs(off)
            rx = qx
            ry = qy
            rnx = nx
            rny = ny
            # the distance along the route (PaddockJS's ``distanceAlong``)
            rd = g[o + 10] + math.sqrt((qx - g[o]) ** 2 + (qy - g[o + 1]) ** 2)
    return best_code, bx, by, bnx, bny, bw, bd


@kernel(inline="always")
def pit_state(tr, x, y):
    """PaddockJS's ``nearestPitLaneState`` at (x, y) (m) -> (code, cx, cy, nx, ny, width, distance): the
    pit surface (SURF_PIT_*, -1 none), what its analytic wheel test reads: the state's point (the road's
    projection, a box's centre; m), the unit normal there and the road's (box's) width (m), and the lap
    distance (m) PaddockJS maps the point to (``mapPitDistance``: along the road, or the box's place along
    the fast lane, between the road's ends' lap distances).

    Inside the complex's bounds: a service or queue area, else a garage, is the pit box; else the
    roads (entry road, fast lane, working lane, exit road; each the nearest of its candidate segments
    by the offset from its line) within half their width, the nearest wins (the first of equals).
    The complex's mask (``pit_mask_at``) spares the searches it vouches for.
    ``tr``: any namedtuple with ``pit_geom``."""
    g = tr.pit_geom
    allowed = pit_mask_at(g, x, y) if in_pit_bounds(g, x, y) else 0
    if allowed == 0:
        return -1, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
    o = _box_at(g, x, y) if (allowed & MASK_BOX) != 0 else -1
    if o >= 0:
        return _box_state(g, o)
    if (allowed & MASK_ROAD) == 0:
        return -1, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
    return _nearest_road(g, x, y)


@kernel(inline="always")
def pit_surface(tr, x, y):
    """Pit surface code at (x, y) (m), or -1 when the point is on no pit surface: PaddockJS's
    ``nearestPitLaneState`` (``pit_state``). -1 everywhere without a pit lane. ``tr``: any namedtuple
    with ``pit_geom``."""
    return pit_state(tr, x, y)[0]


@kernel(inline="always")
def pit_override(tr, x, y, a, kerb_edge):
    """The pit surface that replaces the main-track band at (x, y) (m), a point at |offset| ``a`` (m) from
    the centreline: ``pit_surface`` where ``pit_overrides`` lets it, else -1. On the asphalt and kerb
    (a <= kerb_edge) only a pit box overrides, so only the boxes are searched there. ``tr``: any
    namedtuple with ``pit_geom``."""
    if a > kerb_edge:
        return pit_surface(tr, x, y)
    g = tr.pit_geom
    if in_pit_bounds(g, x, y) and (pit_mask_at(g, x, y) & MASK_BOX) != 0 and _box_at(g, x, y) >= 0:
        return SURF_PIT_BOX
    return -1


@kernel
def pit_override_call(tr, x, y, a, kerb_edge):
    """``pit_override`` as an ordinary (not inlined) call, for hot kernels that reach it rarely: keeps
    its large body out of their code."""
    return pit_override(tr, x, y, a, kerb_edge)


@kernel
def pit_state_call(tr, x, y):
    """``pit_state`` as an ordinary (not inlined) call."""
    return pit_state(tr, x, y)


@kernel(inline="always")
def pit_bbox(pit_geom):
    """(x0, y0, x1, y1) m: the pit complex's bounds (``pit_geom``), outside which ``pit_surface`` is -1.
    No pit lane gives an empty box."""
    if pit_geom.shape[0] == 0:
        return np.inf, np.inf, -np.inf, -np.inf
    return (pit_geom[PITG_BOUNDS], pit_geom[PITG_BOUNDS + 2], pit_geom[PITG_BOUNDS + 1],
            pit_geom[PITG_BOUNDS + 3])
