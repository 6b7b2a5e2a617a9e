"""What surface lies at a point: the pit complex's layout and surfaces, the exact ``surface_at`` and
the raster reads.

Pit path layout (fixed so the kernels find the parts without extra fields): points
``0..PIT_CONN_STEPS`` are the entry connector (point 0 on the track, point ``PIT_CONN_STEPS`` the
fast-lane start), the fast lane runs straight to point ``M - 1 - PIT_CONN_STEPS`` and the last
``PIT_CONN_STEPS + 1`` points are the exit connector, ending on the track. Beside the fast lane, on
the side away from the track, lie the working lane and the service boxes (``box_x``, ``box_y`` are
the service-box centres) with a garage behind each. Pit surfaces override the main-track bands
wherever they apply, except on the track asphalt and kerb.

A track without a pit lane (PaddockJS's ``pitLane.enabled: false``) has an empty pit path and no
service boxes (``pit_lane.no_pit_fields``): ``has_pit_lane`` is False, ``pit_surface`` is -1
everywhere, ``pit_bbox`` is empty, so no kernel finds a pit surface.
"""

import math

import numpy as np

from ..core.jit import allocating_kernel, kernel
from ..core.layout import SURF_BARRIER, SURF_PIT_BOX, SURF_PIT_ENTRY, SURF_PIT_EXIT, SURF_PIT_LANE
from .geometry import seg_d2a, band_code, locate
from ..core.trig import lerp_angle_at, lerp_at

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
    the track. Boxes win over lanes, lanes over connectors. -1 everywhere without a pit lane.
    """
    m = tr.px.shape[0]
    if m == 0:
        return -1
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
    d_in = polyline_d2(tr.px, tr.py, 0, i0, x, y)
    d_out = polyline_d2(tr.px, tr.py, i1, m - 1, x, y)
    if min(d_in, d_out) <= hw * hw:
        return SURF_PIT_ENTRY if d_in <= d_out else SURF_PIT_EXIT
    return -1


@kernel(inline="always")
def _nearest_line(q, line, best):
    """min(best, |q - line|): the distance (m) from coordinate q to an axis line of the lane frame."""
    return min(best, abs(q - line))


@kernel(inline="always")
def pit_surface_quiet(tr, x, y, rdx, rdy):
    """How far (m) along the unit ray (rdx, rdy) from (x, y) ``pit_surface`` keeps answering as it does
    at (x, y) whether the point is on a pit surface (>= 0) or not (-1); inf without a pit lane.

    ``pit_surface``'s answer is a function of a few tests: u or v against lines of the lane frame (the
    quick box, the lane, the working lane, each service box and garage) and the distance to the
    connectors against half the pit width. On the ray u and v change by at most |ru| and |rv| a metre
    and a distance by at most 1, so none of the tests can change its answer before the nearest line
    over its rate or |distance - hw|. The u lines of a part count only where the v tests put the point
    in that part's band (crossing into another band is a v line's). The result is shortened by 1e-9 of
    itself and 1e-7 m for rounding."""
    m = tr.px.shape[0]
    if m == 0:
        return np.inf
    i0 = PIT_CONN_STEPS
    i1 = m - 1 - PIT_CONN_STEPS
    sx, sy, dx, dy, nx, ny, lane_len = pit_lane_frame(tr.px, tr.py, tr.pit_side)
    qx = x - sx
    qy = y - sy
    u = qx * dx + qy * dy
    v = qx * nx + qy * ny
    ru = abs(rdx * dx + rdy * dy)
    rv = abs(rdx * nx + rdy * ny)
    hw = 0.5 * tr.pit_width
    u0, u1, v0, v1 = pit_quick_box(tr.px, tr.py, sx, sy, dx, dy, nx, ny, lane_len, hw)
    v_work = hw + PIT_WORK_WIDTH
    dv = np.inf
    for line in (v0, v1, -hw, hw, v_work - SERVICE_DEPTH, v_work):
        dv = _nearest_line(v, line, dv)
    du = _nearest_line(u, u0, _nearest_line(u, u1, np.inf))
    nb = tr.box_x.shape[0]
    if -hw <= v <= v_work:
        du = _nearest_line(u, 0.0, _nearest_line(u, lane_len, du))
        if hw < v and nb > 0:
            u_first = (tr.box_x[0] - sx) * dx + (tr.box_y[0] - sy) * dy
            u_last = (tr.box_x[nb - 1] - sx) * dx + (tr.box_y[nb - 1] - sy) * dy
            du = _nearest_line(u, u_first - 0.5 * SERVICE_LENGTH - WORK_LANE_MARGIN, du)
            du = _nearest_line(u, u_last + 0.5 * SERVICE_LENGTH + WORK_LANE_MARGIN, du)
    if v > v_work - SERVICE_DEPTH:
        half = 0.5 * SERVICE_LENGTH if v <= v_work else 0.5 * GARAGE_LENGTH
        for k in range(nb):
            uk = (tr.box_x[k] - sx) * dx + (tr.box_y[k] - sy) * dy
            du = _nearest_line(u, uk - half, _nearest_line(u, uk + half, du))
    t = np.inf
    if ru > 0.0:
        t = du / ru
    if rv > 0.0:
        t = min(t, dv / rv)
    d = math.sqrt(min(polyline_d2(tr.px, tr.py, 0, i0, x, y), polyline_d2(tr.px, tr.py, i1, m - 1, x, y)))
    t = min(t, abs(d - hw))
    return max(0.0, t * (1.0 - 1e-9) - 1e-7)


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

