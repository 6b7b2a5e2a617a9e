"""Pit lane geometry beside the start straight (built once per track, plain numpy).

Layout, in the frame of the start straight (u along the direction of travel from the finish line,
v across it, positive away from the track on the pit side):

* fast lane: a straight ``PIT_WIDTH`` (12 m) road at ``v = lane_offset`` (31 m first, then 43, 55 m
  if the nearer ones touch another part of the track), from ``u = -0.64 Lp`` to ``u = +0.36 Lp``;
* 10 service boxes (one per team, 16 m apart) beside it; the working lane, the service areas with
  their queue areas and two garages a team are PaddockJS's, laid out from the fast lane and the
  service boxes by ``pit_geometry`` (``track.surface`` reads them);
* entry connector: a cubic Bezier from a point on the track asphalt ``PIT_CONN_LENGTH`` before the
  lane start to the lane start; exit connector: from the lane end to a point on the track
  ``PIT_CONN_LENGTH`` after it.

The pit goes on the outside of the circuit when that side is clear of every other part of the
track and its kerb, otherwise on the inside.
"""

import math
from collections import namedtuple

import numpy as np

from .geometry import point_at_arrays
from .surface import (
    MASK_BOX, MASK_ROAD, BOX_PAIR_GAP, GARAGE_DEPTH, GARAGE_LENGTH, PIT_CONN_STEPS, PIT_WORK_GAP, PIT_WORK_WIDTH, PITG_BOUNDS,
    PITG_GRID, PITG_LENGTH, PITG_MAP, PITG_MASK, PITG_N_QUAD, PITG_N_SEG, PITG_QUAD0, PITG_SEG0, PIT_GRID_CELL,
    QUAD_GARAGE, QUAD_QUEUE,
    QUAD_SERVICE, QUAD_SIZE, QUEUE_GAP, QUEUE_LENGTH_RATIO, ROUTE_ENTRY, ROUTE_EXIT, ROUTE_MAIN, ROUTE_WORKING,
    SEG_SIZE, SERVICE_DEPTH, SERVICE_LENGTH,
)

N_BOXES = 10
PIT_WIDTH = 12.0
BOX_PITCH = 16.0          # m between service box centres
LANE_BUFFER = 40.0        # m of fast lane before the first and after the last box
PIT_CONN_LENGTH = 110.0   # m along the track covered by each connector
PIT_CONN_INSET = 2.0      # m, |offset| of the connector's end on the track asphalt
LANE_OFFSETS = (31.0, 43.0, 55.0)
LANE_POINT_STEP = 8.0     # m between fast-lane points of the pit path
MASK_SPLIT = 16           # the pit mask's cells: the road grid's (32 m) split 16 ways each way, 2 m
MASK_MARGIN = 1e-4        # m a mask cell is widened by: a point read into a neighbour cell by rounding


def no_pit_fields() -> dict:
    """The pit fields of TrackArrays for a track without a pit lane (PaddockJS's
    ``pitLane.enabled: false``): an empty pit path (``px``, ``py``, ``ps``, ``ph`` float64[0]), no
    service boxes (``box_x``, ``box_y``, ``box_path_s`` float64[0]) and 0 for every pit scalar. The
    kernels read "no pit lane" from the empty path (``track.surface.has_pit_lane``)."""
    def empty():
        return np.zeros(0, np.float64)
    return dict(px=empty(), py=empty(), ps=empty(), ph=empty(), pit_length=0.0, pit_width=0.0,
                pit_entry_s=0.0, pit_exit_s=0.0, pit_lane_start=0.0, pit_lane_end=0.0, pit_side=0.0,
                box_x=empty(), box_y=empty(), box_path_s=empty(), pit_geom=empty())


def track_has_pit_lane(track) -> bool:
    """True when the TrackArrays ``track`` has a pit lane (Python's ``track.surface.has_pit_lane``)."""
    return len(track.px) > 0


class PitPlacementError(ValueError):
    """No side of the start straight has room for the pit lane."""


def _rect(cx, cy, fx, fy, nx, ny, length, depth):
    """PaddockJS's ``createPitRectangleCorners``: the four corners (x0, y0, ..., x3, y3) m of a
    ``length`` x ``depth`` rectangle centred at (cx, cy), ``length`` along (fx, fy)."""
    hl = length / 2
    hd = depth / 2
    return [cx + fx * hl + nx * hd, cy + fy * hl + ny * hd, cx - fx * hl + nx * hd, cy - fy * hl + ny * hd,
            cx - fx * hl - nx * hd, cy - fy * hl - ny * hd, cx + fx * hl - nx * hd, cy + fy * hl - ny * hd]


def pit_geometry(px, py, pit_side, pit_width, box_x, box_y, box_lane_u, mapping, length, normal=None, garages=None,
                 garage_lane_u=None) -> np.ndarray:
    """The pit complex as PaddockJS's ``nearestPitLaneState`` reads it, flat (``track.surface``'s
    ``PITG_*`` layout): its bounds (every road point and rectangle corner, padded by 9 m:
    ``createPitLaneBounds``), its road grid (the bounds widened by a 32 m cell, ``createPitQueryIndex``),
    the road segments of its four routes (entry road, fast lane, working lane, exit road) with their
    half widths and the grid cells each covers (its box widened by a cell), and its rectangles (service
    areas, their queue areas, garages).

    px, py: the pit path (entry road, fast lane, exit road; m); box_x, box_y: the service areas'
    centres (m), box_lane_u their distances (m) along the fast lane from its start; normal: the unit
    normal pointing away from the track (PaddockJS's ``serviceNormal``; default the fast lane's right
    normal times ``pit_side``); garages: float64[G, 2] garage centres (m; default two a service area, as
    PaddockJS pairs them: 9 m garages 4 m apart, centred on the service area), garage_lane_u their
    distances along the fast lane; mapping: the lap distances (m) PaddockJS maps its roads onto (the
    entry connection's, the fast lane's start and end, the exit connection's; unwrapped), length: the
    lap's (m). Empty for no pit lane. Last comes its mask (``pit_mask``), which lets ``surface.pit_state``
    skip its search where no pit surface can be."""
    if len(px) == 0:
        return np.zeros(0, np.float64)
    frame = _lane_frame(px, py, pit_side, normal)
    work = pit_width / 2 + PIT_WORK_GAP + PIT_WORK_WIDTH / 2        # the working lane's centre line
    routes = _pit_routes(px, py, frame, pit_width, work)
    quads = _pit_rects(frame, work, box_x, box_y, box_lane_u, garages, garage_lane_u)
    bounds = _pit_bounds(routes, quads, pit_width)
    grid = _road_grid(bounds)
    segs = np.asarray(_route_segments(routes, grid), np.float64)
    quads = np.asarray(quads, np.float64)
    return _pack(segs, quads, bounds, grid, mapping, length)


# the fast lane's frame: its start (sx, sy) and end (ex, ey) m, its length m, the unit vector along it
# (fx, fy) and the unit normal away from the track (nx, ny)
_LaneFrame = namedtuple("_LaneFrame", ["sx", "sy", "ex", "ey", "lane_len", "fx", "fy", "nx", "ny"])


def _lane_frame(px, py, pit_side, normal) -> _LaneFrame:
    """The fast lane's frame from the pit path (its points PIT_CONN_STEPS from either end) and the normal
    (default the lane's right normal times ``pit_side``)."""
    m = len(px)
    i0, i1 = PIT_CONN_STEPS, m - 1 - PIT_CONN_STEPS
    sx, sy = float(px[i0]), float(py[i0])
    ex, ey = float(px[i1]), float(py[i1])
    lane_len = math.hypot(ex - sx, ey - sy) or 1.0
    fx, fy = (ex - sx) / lane_len, (ey - sy) / lane_len
    if normal is None:
        nx, ny = -fy * pit_side, fx * pit_side
    else:
        nx, ny = float(normal[0]), float(normal[1])
    return _LaneFrame(sx, sy, ex, ey, lane_len, fx, fy, nx, ny)


def _pit_routes(px, py, f: _LaneFrame, pit_width, work) -> list:
    """The four routes as (ROUTE_*, [(x, y), ...] m, width m): the entry road (the pit path up to the lane),
    the fast lane, the working lane (``work`` m beside it), the exit road."""
    m = len(px)
    i0, i1 = PIT_CONN_STEPS, m - 1 - PIT_CONN_STEPS
    return [
        (ROUTE_ENTRY, [(float(px[k]), float(py[k])) for k in range(0, i0 + 1)], pit_width),
        (ROUTE_MAIN, [(f.sx, f.sy), (f.ex, f.ey)], pit_width),
        (ROUTE_WORKING, [(f.sx + f.nx * work, f.sy + f.ny * work),
                         (f.sx + f.fx * f.lane_len + f.nx * work, f.sy + f.fy * f.lane_len + f.ny * work)],
         PIT_WORK_WIDTH),
        (ROUTE_EXIT, [(float(px[k]), float(py[k])) for k in range(i1, m)], pit_width),
    ]


def _pit_rects(f: _LaneFrame, work, box_x, box_y, box_lane_u, garages, garage_lane_u) -> list:
    """The rectangles as rows of QUAD_SIZE (four corners, kind QUAD_*, distance along the fast lane m):
    per service area its rectangle and its queue area's, then the garages (default two a service area)."""
    fx, fy, nx, ny = f.fx, f.fy, f.nx, f.ny
    if garages is None:
        box_lateral = work + PIT_WORK_WIDTH / 2 + PIT_WORK_GAP + GARAGE_DEPTH / 2
        half_pair = (GARAGE_LENGTH + BOX_PAIR_GAP) / 2
        garage_lane_u = [u + k * half_pair for u in box_lane_u for k in (-1.0, 1.0)]
        garages = [(f.sx + fx * u + nx * box_lateral, f.sy + fy * u + ny * box_lateral) for u in garage_lane_u]
    garages = np.asarray(garages, np.float64).reshape(-1, 2)
    quads = []
    for k in range(len(box_x)):
        u = float(box_lane_u[k])
        quads.append(_rect(float(box_x[k]), float(box_y[k]), fx, fy, nx, ny, SERVICE_LENGTH, SERVICE_DEPTH)
                     + [QUAD_SERVICE, u])
        q = max(QUEUE_GAP / 2, u - QUEUE_GAP)
        # a queue area maps by its service area's distance along the lane (PaddockJS's box state's target)
        quads.append(_rect(f.sx + fx * q + nx * work, f.sy + fy * q + ny * work, fx, fy, nx, ny,
                           SERVICE_LENGTH * QUEUE_LENGTH_RATIO, SERVICE_DEPTH) + [QUAD_QUEUE, u])
    for (gx, gy), u in zip(garages, garage_lane_u):
        quads.append(_rect(gx, gy, fx, fy, nx, ny, GARAGE_LENGTH, GARAGE_DEPTH) + [QUAD_GARAGE, float(u)])
    return quads


def _pit_bounds(routes, quads, pit_width) -> tuple:
    """PaddockJS's ``createPitLaneBounds``: (x0, x1, y0, y1) m around every road point and rectangle corner."""
    pts = [p for _, points, _ in routes for p in points]
    for q in quads:
        pts += [(q[2 * k], q[2 * k + 1]) for k in range(4)]
    pts = np.asarray(pts)
    pad = max(pit_width, PIT_WORK_WIDTH, GARAGE_DEPTH, SERVICE_DEPTH) / 2 + 3.0
    return (pts[:, 0].min() - pad, pts[:, 0].max() + pad, pts[:, 1].min() - pad, pts[:, 1].max() + pad)


def _road_grid(bounds) -> tuple:
    """PaddockJS's ``createPitQueryIndex``: (gx0, gy0, cell, cols, rows) of the road grid over the bounds
    widened by a cell."""
    cell = PIT_GRID_CELL
    gx0, gy0 = bounds[0] - cell, bounds[2] - cell
    cols = max(1, math.ceil((bounds[1] + cell - gx0) / cell))
    rows = max(1, math.ceil((bounds[3] + cell - gy0) / cell))
    return gx0, gy0, cell, cols, rows


def _route_segments(routes, grid) -> list:
    """The routes' segments as rows of SEG_SIZE: ends, half width, route, the grid cells its box widened by
    a cell covers (c0, r0, c1, r1), its route's length before it and the route's whole length (m)."""
    gx0, gy0, cell, cols, rows = grid

    def cell_of(x, y):
        return (min(max(math.floor((x - gx0) / cell), 0), cols - 1), min(max(math.floor((y - gy0) / cell), 0), rows - 1))

    segs = []
    for route, points, width in routes:
        lengths = [math.hypot(bx - ax, by - ay) for (ax, ay), (bx, by) in zip(points[:-1], points[1:])]
        before = 0.0
        for ((ax, ay), (bx, by)), ln in zip(zip(points[:-1], points[1:]), lengths):
            c0, r0 = cell_of(min(ax, bx) - cell, min(ay, by) - cell)
            c1, r1 = cell_of(max(ax, bx) + cell, max(ay, by) + cell)
            segs.append([ax, ay, bx, by, width / 2, route, c0, r0, c1, r1, before, sum(lengths)])
            before += ln
    return segs


def _pack(segs, quads, bounds, grid, mapping, length) -> np.ndarray:
    """The flat ``pit_geom`` (``track.surface``'s PITG_* layout): header, segments, rectangles, mask."""
    gx0, gy0, cell, cols, rows = grid
    mask = pit_mask(segs, quads, gx0, gy0, cell, cols, rows)
    head = np.zeros(PITG_SEG0)
    head[PITG_N_SEG] = len(segs)
    head[PITG_N_QUAD] = len(quads)
    head[PITG_BOUNDS:PITG_BOUNDS + 4] = bounds
    head[PITG_GRID:PITG_GRID + 5] = (gx0, gy0, cell, cols, rows)
    head[PITG_QUAD0] = PITG_SEG0 + SEG_SIZE * len(segs)
    head[PITG_MAP:PITG_MAP + 4] = mapping
    head[PITG_LENGTH] = length
    head[PITG_MASK:PITG_MASK + 6] = (head[PITG_QUAD0] + QUAD_SIZE * len(quads), gx0, gy0, cell / MASK_SPLIT,
                                     mask.shape[1], mask.shape[0])
    out = np.concatenate([head, segs.ravel(), quads.ravel(), mask.ravel()])
    assert len(out) == head[PITG_MASK] + mask.size
    return np.ascontiguousarray(out)


def _candidates(segs, col, row):
    """bool[S]: the road segments PaddockJS's road grid offers in grid cell (col, row), as
    ``surface.road_radius`` and ``seg_candidate`` choose them (the cell's, else its 3 x 3 cells', else all)."""
    c0, r0, c1, r1 = segs[:, 6], segs[:, 7], segs[:, 8], segs[:, 9]
    for r in (0, 1):
        hit = (c0 <= col + r) & (c1 >= col - r) & (r0 <= row + r) & (r1 >= row - r)
        if hit.any():
            return hit
    return np.ones(len(segs), bool)


def pit_mask(segs, quads, gx0, gy0, cell, cols, rows, margin=MASK_MARGIN):
    """float64[rows * MASK_SPLIT, cols * MASK_SPLIT]: the road grid's cells split MASK_SPLIT ways each way
    (cells of cell / MASK_SPLIT m from (gx0, gy0)), each the sum of MASK_ROAD where ``surface.pit_state``
    may find a road and MASK_BOX where it may find a pit box (0.0: certainly no pit surface). A cell,
    widened by ``margin`` m (rounding, and a point's cell read one off), may hold a box where it meets a
    rectangle's bounding box, a road where the line of a road segment the grid offers there comes within
    the segment's half width (``pit_state`` measures a road's offset from its segment's line, beyond the
    segment's ends too). Cells at a grid cell's edge take the candidates of the grid cells they touch.

    segs float64[S, SEG_SIZE], quads float64[Q, QUAD_SIZE]: ``pit_geometry``'s rows."""
    fine = cell / MASK_SPLIT
    nx, ny = cols * MASK_SPLIT, rows * MASK_SPLIT
    x_lo = gx0 + fine * np.arange(nx)[None, :] - margin
    y_lo = gy0 + fine * np.arange(ny)[:, None] - margin
    x_hi = x_lo + fine + 2 * margin
    y_hi = y_lo + fine + 2 * margin
    box = np.zeros((ny, nx), bool)
    for q in quads:
        qx, qy = q[0:8:2], q[1:8:2]
        box |= (x_hi >= qx.min()) & (x_lo <= qx.max()) & (y_hi >= qy.min()) & (y_lo <= qy.max())
    road = np.zeros((ny, nx), bool)
    # the candidate segments of every fine cell: the union over the grid cells its widened box touches
    col_lo = np.floor((x_lo[0] - gx0) / cell).astype(int)
    col_hi = np.floor((x_hi[0] - gx0) / cell).astype(int)
    row_lo = np.floor((y_lo[:, 0] - gy0) / cell).astype(int)
    row_hi = np.floor((y_hi[:, 0] - gy0) / cell).astype(int)
    grid = np.array([[_candidates(segs, cc, rr) for cc in range(-1, cols + 1)] for rr in range(-1, rows + 1)])
    cand = np.zeros((ny, nx, len(segs)), bool)
    for rr in (row_lo, row_hi):
        for cc in (col_lo, col_hi):
            cand |= grid[rr[:, None] + 1, cc[None, :] + 1]
    for k, (ax, ay, bx, by, half) in enumerate(segs[:, :5]):
        dx, dy = bx - ax, by - ay
        ln = math.hypot(dx, dy)
        snx, sny = (-dy / ln, dx / ln) if ln > 0.0 else (0.0, 1.0)
        # the offset from the segment's line is affine: its range over a cell is its corners' range
        corners = [(x - ax) * snx + (y - ay) * sny for x in (x_lo, x_hi) for y in (y_lo, y_hi)]
        low = np.minimum.reduce(corners)
        high = np.maximum.reduce(corners)
        nearest = np.where((low <= 0.0) & (high >= 0.0), 0.0, np.minimum(np.abs(low), np.abs(high)))
        road |= cand[:, :, k] & (nearest <= half + margin)
    return MASK_ROAD * road + MASK_BOX * box


def lane_length() -> float:
    """Fast-lane length Lp (m): the box run plus a buffer at each end."""
    return N_BOXES * BOX_PITCH + 2.0 * LANE_BUFFER


def _bezier(p0, p1, p2, p3, steps):
    """Points float64[steps+1, 2] and tangent headings float64[steps+1] (rad) of a cubic Bezier."""
    t = np.linspace(0.0, 1.0, steps + 1)[:, None]
    pts = ((1 - t) ** 3) * p0 + 3 * ((1 - t) ** 2) * t * p1 + 3 * (1 - t) * t * t * p2 + (t ** 3) * p3
    der = 3 * ((1 - t) ** 2) * (p1 - p0) + 6 * (1 - t) * t * (p2 - p1) + 3 * t * t * (p3 - p2)
    return pts, np.arctan2(der[:, 1], der[:, 0])


def _min_dist_to_centreline(cx, cy, qx, qy):
    """Exact distance (m) from each query point to the closed centreline polyline."""
    ax, ay = cx[:-1], cy[:-1]
    dx, dy = np.diff(cx), np.diff(cy)
    ll = dx * dx + dy * dy
    out = np.empty(len(qx))
    for k0 in range(0, len(qx), 256):
        x = qx[k0:k0 + 256, None] - ax[None, :]
        y = qy[k0:k0 + 256, None] - ay[None, :]
        t = np.clip((x * dx + y * dy) / ll, 0.0, 1.0)
        out[k0:k0 + 256] = np.sqrt(((x - t * dx) ** 2 + (y - t * dy) ** 2).min(axis=1))
    return out


def pit_layout(cx, cy, cs, ch, ccurv, side, lane_offset, kerb_edge):
    """Pit geometry for one side and lane offset, plus the clearance sample points (``probe``) whose
    distance from the centreline decides whether ``build_pit`` may place it there."""
    L = cs[-1]
    h0 = ch[0]
    d = np.array([math.cos(h0), math.sin(h0)])
    n = np.array([-math.sin(h0), math.cos(h0)]) * side   # away from the track on the pit side
    p0 = np.array([cx[0], cy[0]])
    lp = lane_length()
    u_start, u_end = -0.64 * lp, 0.36 * lp
    lane_a = p0 + u_start * d + lane_offset * n
    lane_b = p0 + u_end * d + lane_offset * n
    handle = PIT_CONN_LENGTH / 3.0

    ex, ey, eh, _ = point_at_arrays(cx, cy, cs, ch, ccurv, L, u_start - PIT_CONN_LENGTH)
    e_dir = np.array([math.cos(eh), math.sin(eh)])
    e_n = np.array([-math.sin(eh), math.cos(eh)]) * side
    entry0 = np.array([ex, ey]) + PIT_CONN_INSET * e_n
    entry, entry_h = _bezier(entry0, entry0 + handle * e_dir, lane_a - handle * d, lane_a, PIT_CONN_STEPS)

    xx, xy, xh, _ = point_at_arrays(cx, cy, cs, ch, ccurv, L, u_end + PIT_CONN_LENGTH)
    x_dir = np.array([math.cos(xh), math.sin(xh)])
    x_n = np.array([-math.sin(xh), math.cos(xh)]) * side
    exit1 = np.array([xx, xy]) + PIT_CONN_INSET * x_n
    exit_, exit_h = _bezier(lane_b, lane_b + handle * d, exit1 - handle * x_dir, exit1, PIT_CONN_STEPS)

    n_mid = max(1, int(round((u_end - u_start) / LANE_POINT_STEP)))
    mids = lane_a[None, :] + np.linspace(0.0, 1.0, n_mid + 1)[1:-1, None] * (lane_b - lane_a)[None, :]
    path = np.concatenate([entry, mids, exit_], axis=0)
    heading = np.concatenate([entry_h, np.full(len(mids), math.atan2(d[1], d[0])), exit_h])
    heading[PIT_CONN_STEPS] = heading[len(path) - 1 - PIT_CONN_STEPS] = math.atan2(d[1], d[0])

    hw = 0.5 * PIT_WIDTH
    v_box = hw + PIT_WORK_WIDTH - 0.5 * SERVICE_DEPTH
    box_u = LANE_BUFFER + 0.5 * BOX_PITCH + BOX_PITCH * np.arange(N_BOXES)      # from the lane start
    boxes = lane_a[None, :] + box_u[:, None] * d[None, :] + v_box * n[None, :]

    # clearance samples: the lane, working lane and garages' outlines as ``pit_geometry`` lays them (the
    # working lane's outer edge 15.5 m, the garages' 21.5 m from the fast lane's centre line) and the
    # connectors away from the track ends (the ends lie on the asphalt by design)
    us = np.linspace(0.0, lp, int(lp / 4.0) + 1)
    work_out = hw + PIT_WORK_GAP + PIT_WORK_WIDTH
    vs = np.array([-hw, 0.0, hw, work_out, work_out + PIT_WORK_GAP + GARAGE_DEPTH])
    pts = [lane_a[None, :] + us[:, None] * d[None, :] + v * n[None, :] for v in vs]
    k_lo, k_hi = int(0.45 * PIT_CONN_STEPS), PIT_CONN_STEPS
    pts.append(entry[k_lo:k_hi])
    pts.append(exit_[0:PIT_CONN_STEPS - k_lo + 1])
    pts = np.concatenate(pts, axis=0)
    return dict(path=path, heading=heading, boxes=boxes, box_u=box_u, entry_s=(u_start - PIT_CONN_LENGTH) % L,
                mapping=(u_start - PIT_CONN_LENGTH, u_start, u_end, u_end + PIT_CONN_LENGTH),
                exit_s=(u_end + PIT_CONN_LENGTH) % L, probe=pts, lane_offset=lane_offset)


def build_pit(cx, cy, cs, ch, ccurv, kerb_edge):
    """Place the pit lane; returns the pit fields of TrackArrays (px, py, ps, ph, pit_* and box_*).

    cx, cy, cs, ch, ccurv: float64[N+1] centreline arrays (sample 0 is the finish line).
    Raises PitPlacementError when no side and offset keeps every pit part at least kerb_edge + 2 m
    from the centreline except the connectors' track ends.
    """
    turning = float(np.sum(ccurv[:-1] * np.diff(cs)))
    outside = -1.0 if turning > 0 else 1.0      # turning right overall: the inside is on the right
    chosen = None
    for side in (outside, -outside):
        for off in LANE_OFFSETS:
            lay = pit_layout(cx, cy, cs, ch, ccurv, side, off, kerb_edge)
            probe = lay["probe"]
            if _min_dist_to_centreline(cx, cy, probe[:, 0], probe[:, 1]).min() >= kerb_edge + 2.0:
                chosen = (side, lay)
                break
        if chosen:
            break
    if chosen is None:
        raise PitPlacementError("no room for the pit lane beside the start straight")
    side, lay = chosen
    path = lay["path"]
    boxes = lay["boxes"]
    seg = np.hypot(np.diff(path[:, 0]), np.diff(path[:, 1]))
    ps = np.concatenate([[0.0], np.cumsum(seg)])
    ph = lay["heading"]
    lane_start = float(ps[PIT_CONN_STEPS])
    lane_end = float(ps[len(ps) - 1 - PIT_CONN_STEPS])
    return dict(
        px=np.ascontiguousarray(path[:, 0]), py=np.ascontiguousarray(path[:, 1]), ps=ps, ph=ph,
        pit_length=float(ps[-1]), pit_width=PIT_WIDTH,
        pit_entry_s=float(lay["entry_s"]), pit_exit_s=float(lay["exit_s"]),
        pit_lane_start=lane_start, pit_lane_end=lane_end, pit_side=float(side),
        box_x=np.ascontiguousarray(boxes[:, 0]), box_y=np.ascontiguousarray(boxes[:, 1]),
        box_path_s=lane_start + lay["box_u"],
        pit_geom=pit_geometry(path[:, 0], path[:, 1], float(side), PIT_WIDTH, boxes[:, 0], boxes[:, 1], lay["box_u"],
                              lay["mapping"], float(cs[-1])),
    )
