"""Track geometry arrays and the numba query kernels (import them through ``paddock_ma.sim.track``).

A track is a ``TrackArrays`` namedtuple of numpy arrays and float scalars, immutable and shared by
every world that races on it. The centreline is a closed polyline of N uniformly spaced samples
(~2 m apart) stored with N+1 entries: sample N repeats sample 0 and ``cs[N]`` is the lap length.
Segment ``i`` joins sample ``i`` to sample ``i + 1`` (``0 <= i < N``).

Frame (PaddockJS's): x right, y down; heading h points along ``(cos h, sin h)``; the right normal is
``(-sin h, cos h)``; a positive offset or curvature means "to the right" / "turning right".

Cross-section, by absolute offset from the centreline: track <= half_width (7.5 m), kerb <=
kerb_edge (9 m), gravel <= gravel_edge (21 m), grass <= grass_edge (41 m), barrier beyond. Pit
surfaces override those bands wherever they apply, except on the track asphalt and kerb.

Pit path layout (fixed so the kernels find the parts without extra fields): points
``0..PIT_CONN_STEPS`` are the entry connector (point 0 on the track, point ``PIT_CONN_STEPS`` the
fast-lane start), the fast lane runs straight to point ``M - 1 - PIT_CONN_STEPS`` and the last
``PIT_CONN_STEPS + 1`` points are the exit connector, ending on the track. Beside the fast lane, on
the side away from the track, lie the working lane and the service boxes (``box_x``, ``box_y`` are
the service-box centres) with a garage behind each.
"""

import math
from collections import namedtuple

import numpy as np

from .jit import allocating_kernel, kernel
from .trig import wrap_angle  # noqa: F401  (the one wrapping rule; re-exported for the track kernels)
from .layout import (
    SURF_BARRIER, SURF_GRASS, SURF_GRAVEL, SURF_KERB, SURF_PIT_BOX, SURF_PIT_ENTRY, SURF_PIT_EXIT,
    SURF_PIT_LANE, SURF_TRACK,
)

TrackArrays = namedtuple("TrackArrays", [
    "cx", "cy", "cs", "ch", "cnx", "cny", "ccurv",
    "length", "half_width", "kerb_edge", "gravel_edge", "grass_edge",
    "sector_s",
    "grid_x0", "grid_y0", "grid_cell", "grid_seg", "grid_surf", "grid_edge", "grid_pred_edge",
    "fine_grid", "fine_pred_edge",
    "px", "py", "ps", "ph",
    "pit_length", "pit_width",
    "pit_entry_s", "pit_exit_s",
    "pit_lane_start", "pit_lane_end",
    "pit_side",
    "box_x", "box_y", "box_path_s",
    "ai_preview",           # the built-in driver's table of the centreline ahead (ai_preview.py)
])


# Pit geometry constants (metres), shared by the builder (pit_lane.py) and the kernels below.
PIT_CONN_STEPS = 24        # Bezier steps of each connector (the path has PIT_CONN_STEPS + 1 points each)
PIT_WORK_WIDTH = 8.0       # working lane width, beside the fast lane
SERVICE_LENGTH = 11.0      # service box along the lane
SERVICE_DEPTH = 5.0        # service box across, the outer part of the working lane
GARAGE_LENGTH = 9.0        # garage behind each service box
GARAGE_DEPTH = 4.5
BOX_EASE = 34.0            # path length over which a pit-route car eases sideways into / out of its box
# The working lane starts BOX_EASE before the first box's centre and ends BOX_EASE after the last one's,
# so the whole sideways ease of a stop runs on pit surface (a shorter lane left a strip of grass
# between the fast lane and the working lane under the route's wheels).
WORK_LANE_MARGIN = BOX_EASE - 0.5 * SERVICE_LENGTH

HINT_WINDOW = 8            # segments searched either side of the hint

# Performance note: a non-inlined call of a kernel that takes ``tr`` costs ~130 ns, because numba
# increfs and decrefs every array of the namedtuple on the call. The small hot kernels are therefore
# ``inline="always"`` (inlined into their numba callers: ~10 ns for point_at, tens of ns for locate).
_GRID_WINDOW = 4           # segments searched either side of the raster's nearest segment
_GLOBAL = -1


@kernel(inline="always")
def _seg_d2a(cx, cy, i, x, y):
    """Squared distance (m^2) from (x, y) to segment i of the polyline (cx, cy), and the projection
    parameter t in [0, 1]."""
    ax = cx[i]
    ay = cy[i]
    dx = cx[i + 1] - ax
    dy = cy[i + 1] - ay
    qx = x - ax
    qy = y - ay
    # The clamped ends need no division (most segments a descent tries lie beside the point); the
    # results equal clamping the quotient, bit for bit.
    num = qx * dx + qy * dy
    if num <= 0.0:
        return qx * qx + qy * qy, 0.0
    den = dx * dx + dy * dy
    if num >= den:
        ex = qx - dx
        ey = qy - dy
        return ex * ex + ey * ey, 1.0
    t = num / den
    ex = qx - t * dx
    ey = qy - t * dy
    return ex * ex + ey * ey, t


@kernel(inline="always")
def _seg_d2(tr, i, x, y):
    """``_seg_d2a`` on the track's centreline."""
    return _seg_d2a(tr.cx, tr.cy, i, x, y)


@kernel(inline="always")
def _walk(cx, cy, x, y, hint, n):
    """Descend from segment ``hint`` along the polyline (cx, cy) of n segments while the distance
    decreases, at most HINT_WINDOW steps. Returns (d2, seg, t, steps); steps == HINT_WINDOW means the
    walk was cut. Arrays are passed, not the namedtuple (with numba's reference counting, which
    ``jit.kernel`` no longer uses, tuple attribute reads inside the loop were costly)."""
    d0, t0 = _seg_d2a(cx, cy, hint, x, y)
    j = hint + 1 if hint + 1 < n else 0
    d1, t1 = _seg_d2a(cx, cy, j, x, y)
    step = 1
    if not d1 < d0:
        j = hint - 1 if hint > 0 else n - 1
        d1, t1 = _seg_d2a(cx, cy, j, x, y)
        step = -1
    cur = hint
    dc = d0
    tc = t0
    steps = 0
    while d1 < dc and steps < HINT_WINDOW:
        cur = j
        dc = d1
        tc = t1
        steps += 1
        j = cur + step
        if j == n:
            j = 0
        elif j < 0:
            j = n - 1
        d1, t1 = _seg_d2a(cx, cy, j, x, y)
    return dc, cur, tc, steps


@kernel(inline="always")
def locate(tr, x, y, hint):
    """Project the point (x, y) (m) on the centreline.

    tr: TrackArrays; x, y: float64 m; hint: int, a segment index near the answer (e.g. the car's
    ``I_SEG_HINT``), or -1 for none. From the hint the search walks downhill along the polyline (the
    distance to consecutive segments is unimodal near the centreline, radius >= 20 m), at most
    HINT_WINDOW segments: ~3 segment tests for a car that moved less than a segment since its last
    query. When the walk is cut or ends farther than half the gravel edge (10.5 m, where another part
    of the track could be nearer), it also searches +-4 segments around the raster cell's nearest
    segment (``grid_seg``), and scans every segment when the point is off the raster or far from
    the track (no cell segment).

    Returns (seg int, s float64 m in [0, L), offset float64 m (+ right), heading float64 rad,
    curvature float64 1/m (+ turning right)) of the nearest centreline point.
    """
    return _locate_a(tr.cx, tr.cy, tr.cs, tr.ch, tr.ccurv, tr.grid_seg, tr.grid_x0, tr.grid_y0,
                     tr.grid_cell, tr.length, tr.gravel_edge, x, y, hint)


@kernel(inline="always")
def _finish_a(cx, cy, cs, ch, ccurv, length, x, y, i, t, d2):
    """Build (seg, s, offset, heading, curvature) from the nearest segment i at parameter t."""
    ax = cx[i]
    ay = cy[i]
    dx = cx[i + 1] - ax
    dy = cy[i + 1] - ay
    # sign from the side of the segment line; magnitude is the exact distance to the polyline
    cross = dx * (y - ay) - dy * (x - ax)
    dist = math.sqrt(d2)
    offset = dist if cross >= 0.0 else -dist
    s = cs[i] + t * (cs[i + 1] - cs[i])
    if s >= length:
        s -= length
    h = wrap_angle(ch[i] + t * wrap_angle(ch[i + 1] - ch[i]))
    k = ccurv[i] + t * (ccurv[i + 1] - ccurv[i])
    return i, s, offset, h, k


@kernel(inline="always")
def _locate_a(cx, cy, cs, ch, ccurv, grid_seg, grid_x0, grid_y0, grid_cell, length, gravel_edge,
              x, y, hint):
    """locate on the unpacked arrays. Reading namedtuple fields inside branchy inlined code cost
    reference counting of every array of the tuple (~150 ns a call) before ``jit.kernel`` dropped
    reference counting; the hot path takes arrays."""
    n = cx.shape[0] - 1
    if 0 <= hint < n:
        best_d2, best_i, best_t, steps = _walk(cx, cy, x, y, hint, n)
        accept = 0.5 * gravel_edge
        if steps < HINT_WINDOW and best_d2 <= accept * accept:
            return _finish_a(cx, cy, cs, ch, ccurv, length, x, y, best_i, best_t, best_d2)
    else:
        best_d2 = np.inf
        best_i = 0
        best_t = 0.0
    best_d2, best_i, best_t = _locate_slow(cx, cy, grid_seg, grid_x0, grid_y0, grid_cell, x, y,
                                           best_d2, best_i, best_t)
    return _finish_a(cx, cy, cs, ch, ccurv, length, x, y, best_i, best_t, best_d2)


@kernel
def _locate_slow(cx, cy, grid_seg, grid_x0, grid_y0, grid_cell, x, y, best_d2, best_i, best_t):
    """locate's fallback (an ordinary call, out of the inlined fast path): search around the raster
    cell's nearest segment, or every segment off the raster or far from the track; keep the nearer of
    that and the walk's answer. Returns (d2, seg, t)."""
    n = cx.shape[0] - 1
    ny, nx = grid_seg.shape
    gx = int(math.floor((x - grid_x0) / grid_cell))
    gy = int(math.floor((y - grid_y0) / grid_cell))
    g = _GLOBAL
    if 0 <= gx < nx and 0 <= gy < ny:
        g = grid_seg[gy, gx]
    lo = 0
    hi = n - 1
    if g >= 0:
        lo = g - _GRID_WINDOW
        hi = g + _GRID_WINDOW
    # wrap by comparison, not modulo: integer division is slow in a loop this tight (lo > -n)
    i = lo + n if lo < 0 else (lo - n if lo >= n else lo)
    for _k in range(lo, hi + 1):
        d2, t = _seg_d2a(cx, cy, i, x, y)
        if d2 < best_d2:
            best_d2 = d2
            best_i = i
            best_t = t
        i += 1
        if i == n:
            i = 0
    return best_d2, best_i, best_t


@kernel(inline="always")
def point_at(tr, s):
    """Centreline point at lap distance s (m, wrapped into [0, L)).

    Returns (x m, y m, heading rad, curvature 1/m), linearly interpolated between samples.
    """
    return _point_at_a(tr.cx, tr.cy, tr.cs, tr.ch, tr.ccurv, tr.length, s)


@kernel(inline="always")
def sample_at(cs, length, s):
    """(i, t): the centreline segment ``i`` holding lap distance ``s`` (m, wrapped into [0, length))
    and the fraction ``t`` in [0, 1] along it. cs: float64[N+1] cumulative distances of uniformly
    spaced samples, so the first guess is within one segment of the answer. Shared by every
    interpolation on bare arrays (track, driver, sensors)."""
    s = s - math.floor(s / length) * length
    n = cs.shape[0] - 1
    i = int(s / length * n)
    if i > n - 1:
        i = n - 1
    while i > 0 and cs[i] > s:
        i -= 1
    while i < n - 1 and cs[i + 1] < s:
        i += 1
    return i, (s - cs[i]) / (cs[i + 1] - cs[i])


@kernel(inline="always")
def _point_at_a(cx, cy, cs, ch, ccurv, L, s):
    """point_at on unpacked arrays (see _locate_a for why)."""
    i, t = sample_at(cs, L, s)
    x = cx[i] + t * (cx[i + 1] - cx[i])
    y = cy[i] + t * (cy[i + 1] - cy[i])
    h = wrap_angle(ch[i] + t * wrap_angle(ch[i + 1] - ch[i]))
    k = ccurv[i] + t * (ccurv[i + 1] - ccurv[i])
    return x, y, h, k


@kernel(inline="always")
def pit_point_at(tr, path_s):
    """Point of the pit path at path distance path_s (m, clamped to [0, pit_length]).

    Returns (x m, y m, heading rad).
    """
    m = tr.px.shape[0]
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
    x = tr.px[i] + t * (tr.px[i + 1] - tr.px[i])
    y = tr.py[i] + t * (tr.py[i + 1] - tr.py[i])
    h = wrap_angle(tr.ph[i] + t * wrap_angle(tr.ph[i + 1] - tr.ph[i]))
    return x, y, h


@kernel(inline="always")
def band_code(tr, abs_offset):
    """Main-track band (SURF_TRACK..SURF_BARRIER) of an absolute offset (m) from the centreline."""
    return band_of(abs_offset, tr.half_width, tr.kerb_edge, tr.gravel_edge, tr.grass_edge)


@kernel(inline="always")
def band_of(ao, hw, kerb, gravel, grass):
    """The band rule on scalars: the main-track band code of an absolute offset ao (m) given the
    track's half width and kerb, gravel and grass edges (m). ``band_code``, the surfaces' patch
    classification and the ray march's sample classification all call it."""
    if ao <= hw:
        return SURF_TRACK
    if ao <= kerb:
        return SURF_KERB
    if ao <= gravel:
        return SURF_GRAVEL
    if ao <= grass:
        return SURF_GRASS
    return SURF_BARRIER


@kernel(inline="always")
def _polyline_d2(px, py, lo, hi, x, y):
    """Squared distance (m^2) from (x, y) to the polyline of points lo..hi."""
    best = np.inf
    for i in range(lo, hi):
        ax = px[i]
        ay = py[i]
        dx = px[i + 1] - ax
        dy = py[i + 1] - ay
        qx = x - ax
        qy = y - ay
        ll = dx * dx + dy * dy
        t = 0.0
        if ll > 0.0:
            t = (qx * dx + qy * dy) / ll
            t = min(1.0, max(0.0, t))
        ex = qx - t * dx
        ey = qy - t * dy
        d2 = ex * ex + ey * ey
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
def pit_quick_box(px, py, sx, sy, dx, dy, nx, ny, lane_len, hw):
    """``pit_surface``'s quick reject: the box (u0, u1, v0, v1) m of the fast lane's frame
    (``pit_lane_frame``'s sx .. lane_len) outside which no point is a pit surface (the path's end
    points, the lane, the garages' outer edge and margins). hw: half the pit width (m)."""
    m = px.shape[0]
    u_a = (px[0] - sx) * dx + (py[0] - sy) * dy
    u_b = (px[m - 1] - sx) * dx + (py[m - 1] - sy) * dy
    v_a = (px[0] - sx) * nx + (py[0] - sy) * ny
    v_b = (px[m - 1] - sx) * nx + (py[m - 1] - sy) * ny
    return (min(u_a, 0.0) - hw - 2.0, max(u_b, lane_len) + hw + 2.0, min(v_a, v_b) - hw - 2.0,
            hw + PIT_WORK_WIDTH + GARAGE_DEPTH)


@kernel(inline="always")
def pit_surface(tr, x, y):
    """Pit surface code at (x, y) (m), or -1 when the point is on no pit surface.

    Uses the fast-lane frame: u along the lane from its start (m), v across it, positive away from
    the track. Boxes win over lanes, lanes over connectors.
    """
    m = tr.px.shape[0]
    i0 = PIT_CONN_STEPS
    i1 = m - 1 - PIT_CONN_STEPS
    sx, sy, dx, dy, nx, ny, lane_len = pit_lane_frame(tr.px, tr.py, tr.pit_side)
    qx = x - sx
    qy = y - sy
    u = qx * dx + qy * dy
    v = qx * nx + qy * ny
    hw = 0.5 * tr.pit_width
    u0, u1, v0, v1 = pit_quick_box(tr.px, tr.py, sx, sy, dx, dy, nx, ny, lane_len, hw)
    if u < u0 or u > u1 or v < v0 or v > v1:
        return -1
    nb = tr.box_x.shape[0]
    v_work = hw + PIT_WORK_WIDTH
    if v > v_work - SERVICE_DEPTH:
        for k in range(nb):
            uk = (tr.box_x[k] - sx) * dx + (tr.box_y[k] - sy) * dy
            if v <= v_work:
                if abs(u - uk) <= 0.5 * SERVICE_LENGTH:
                    return SURF_PIT_BOX
            elif abs(u - uk) <= 0.5 * GARAGE_LENGTH:
                return SURF_PIT_BOX
    if 0.0 <= u <= lane_len:
        if -hw <= v <= hw:
            return SURF_PIT_LANE
        if hw < v <= v_work and nb > 0:
            u_first = (tr.box_x[0] - sx) * dx + (tr.box_y[0] - sy) * dy
            u_last = (tr.box_x[nb - 1] - sx) * dx + (tr.box_y[nb - 1] - sy) * dy
            if u_first - 0.5 * SERVICE_LENGTH - WORK_LANE_MARGIN <= u <= u_last + 0.5 * SERVICE_LENGTH + WORK_LANE_MARGIN:
                return SURF_PIT_LANE
    d_in = _polyline_d2(tr.px, tr.py, 0, i0, x, y)
    d_out = _polyline_d2(tr.px, tr.py, i1, m - 1, x, y)
    if min(d_in, d_out) <= hw * hw:
        return SURF_PIT_ENTRY if d_in <= d_out else SURF_PIT_EXIT
    return -1


@kernel
def pit_surface_call(tr, x, y):
    """``pit_surface`` as an ordinary (not inlined) call, for hot kernels that reach it rarely: keeps
    its large body out of their code."""
    return pit_surface(tr, x, y)


@kernel(inline="always")
def surface_at(tr, x, y, hint):
    """Exact surface at (x, y) (m): the main-track band of the nearest centreline point, overridden by
    a pit surface beyond the kerb (|offset| > kerb_edge).

    hint: int segment hint as for ``locate``. Returns (surface code int, offset float64 m, seg int).
    """
    seg, s, offset, h, k = locate(tr, x, y, hint)
    a = abs(offset)
    code = band_code(tr, a)
    if a > tr.kerb_edge:
        p = pit_surface_call(tr, x, y)
        if p >= 0:
            code = p
    return code, offset, seg


@allocating_kernel
def pit_bbox(px, py, box_x, box_y, pit_width):
    """(x0, y0, x1, y1) m: a box around every pit surface (path points and service boxes, widened
    by the farthest a pit surface reaches from them: the working lane, garages and their margins).
    Outside it ``pit_surface`` is -1. An empty pit path gives an empty box."""
    if px.shape[0] == 0:
        return np.inf, np.inf, -np.inf, -np.inf
    x0 = px.min()
    x1 = px.max()
    y0 = py.min()
    y1 = py.max()
    if box_x.shape[0] > 0:
        x0 = min(x0, box_x.min())
        x1 = max(x1, box_x.max())
        y0 = min(y0, box_y.min())
        y1 = max(y1, box_y.max())
    m = 0.5 * pit_width + PIT_WORK_WIDTH + GARAGE_DEPTH + SERVICE_LENGTH + WORK_LANE_MARGIN + 2.0
    return x0 - m, y0 - m, x1 + m, y1 + m


@kernel(inline="always")
def surface_fast(tr, x, y):
    """Surface code at (x, y) (m) read from the raster (exact at cell centres; may differ within one
    cell of a boundary). Off the raster: barrier."""
    ny, nx = tr.grid_surf.shape
    gx = int(math.floor((x - tr.grid_x0) / tr.grid_cell))
    gy = int(math.floor((y - tr.grid_y0) / tr.grid_cell))
    if 0 <= gx < nx and 0 <= gy < ny:
        return np.int64(tr.grid_surf[gy, gx])
    return np.int64(SURF_BARRIER)


@kernel(inline="always")
def edge_distance_at(tr, x, y):
    """Lower bound (m) of the distance from (x, y) to the nearest surface boundary (raster, 0 near
    one; off the raster 0)."""
    ny, nx = tr.grid_edge.shape
    gx = int(math.floor((x - tr.grid_x0) / tr.grid_cell))
    gy = int(math.floor((y - tr.grid_y0) / tr.grid_cell))
    if 0 <= gx < nx and 0 <= gy < ny:
        return np.float64(tr.grid_edge[gy, gx])
    return 0.0


@kernel(inline="always")
def edge_distances(tr, offset):
    """Distances (m) from a lateral offset (m, + right) to the white lines: (left_m, right_m).

    Negative when the point is beyond that line.
    """
    return tr.half_width + offset, tr.half_width - offset
