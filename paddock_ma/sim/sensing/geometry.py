"""Where a ray sample is, for the surface-ray march (``sensing.march``): the per-track sensor
constants (``sensor_geometry``: pit box, trust radius, band edges, raster origin, per-segment turning
bounds), the nearest centreline segment of a sample by local descent or the raster, its exact
surface code, and the step bounds of the pit area: the predicate rasters (``grid_pred_edge``) and the
pit lane's own rectangles (``pit_rect_gap``)."""

import math
from collections import namedtuple

import numpy as np

from ..core.jit import allocating_kernel, kernel
from ..core.layout import SURF_BARRIER
from ..track.surface import pit_surface
from ..track.geometry import GRID_WINDOW, seg_d2a, band_of
from ..track.surface import (
    PIT_CONN_STEPS, PIT_WORK_WIDTH, SERVICE_LENGTH, WORK_LANE_MARGIN, polyline_d2, pit_bbox, pit_lane_frame,
    pit_quick_box,
)
from ..track.index import PRED_ILLEGAL, PRED_INSIDE_PIT

FAR = 1.0e30
_WALK_MAX = 48           # descent steps before falling back to the raster (a stale start)
DERIV_WINDOW = 24       # segments either side covered by the local curvature bound (3 blocks)

# The fields of TrackArrays that ``pit_surface`` reads. Hot kernels take single arrays and this small
# view, never the whole 33-field TrackArrays tuple, so a call unpacks only what it reads.
PitView = namedtuple("PitView", ["px", "py", "pit_side", "pit_width", "box_x", "box_y"])


# sensor_geometry() slots
G_PX0, G_PY0, G_PX1, G_PY1 = 0, 1, 2, 3
G_TRUST = 4
G_HW, G_KE, G_GRAVEL, G_GRASS = 5, 6, 7, 8
G_X0, G_Y0, G_CELL = 9, 10, 11
# the pit lane's frame (``pit_surface``'s): origin, unit vector along the fast lane, outward normal
G_LX, G_LY, G_LDX, G_LDY, G_LNX, G_LNY = 12, 13, 14, 15, 16, 17
# its two rectangles in that frame (u along, v across): the fast lane [0, L] x [-hw, hw] and the
# working lane [wu0, wu1] x (hw, v_work]; a rectangle's "clear" flag is 1 when every point of it is
# beyond the kerb band (|offset| > kerb_edge), so the main track's bands cannot change inside it
G_LLEN, G_LHW, G_WU0, G_WU1, G_VWORK, G_FAST_CLEAR, G_WORK_CLEAR = 18, 19, 20, 21, 22, 23, 24
# ``pit_surface``'s quick-reject box in that frame: outside [u0, u1] x [v0, v1] no point is a pit surface
G_QU0, G_QU1, G_QV0, G_QV1 = 25, 26, 27, 28
N_GEO = 29               # then three blocks of one entry per segment (n = segments):
                         # [N_GEO, N_GEO + n) its windowed turning-rate bound (1/m),
                         # [N_GEO + n, N_GEO + 2n) its length (m), [N_GEO + 2n, N_GEO + 3n) 1 / length
_RECT_PROBE = 0.25       # m, spacing of the probes of a rectangle's edge for its clear flag
_KBLOCK = 8


@allocating_kernel
def sensor_geometry(tr):
    """Per-track constants of the ray march -> float64[N_GEO + 3 n] (n segments): the box
    (x0, y0, x1, y1) m around every pit surface (``track.surface.pit_bbox``; outside it ``pit_surface`` is -1);
    the trust radius (m) within which the nearest centreline segment is followed by local descent
    instead of the raster (the tightest corner radius, clamped to [kerb_edge + 2, grass_edge]: that
    close to a segment, no other part of a valid track is nearer); the band edges and the raster
    origin and cell; then per segment the turning-rate bound of ``_deriv_step`` (1.5 x the largest
    |curvature| of the blocks of _KBLOCK segments within +-DERIV_WINDOW segments, + 1e-9), its length
    and the inverse; and the pit lane's frame and rectangles (``_pit_frame``). The hot helpers take
    these and single arrays, never the TrackArrays tuple."""
    n = tr.cx.shape[0] - 1
    geo = np.zeros(N_GEO + 3 * n, dtype=np.float64)
    blk = np.zeros((n + _KBLOCK - 1) // _KBLOCK, dtype=np.float64)
    for i in range(n):
        b = i // _KBLOCK
        blk[b] = max(blk[b], abs(tr.ccurv[i]), abs(tr.ccurv[i + 1]))
    for i in range(n):
        # every block within +-DERIV_WINDOW segments (wrapped), as the bound's derivation needs
        km = 0.0
        for k in range(i - DERIV_WINDOW, i + DERIV_WINDOW + 1, _KBLOCK):
            j = k
            if j < 0:
                j += n
            elif j >= n:
                j -= n
            km = max(km, blk[j // _KBLOCK])
        geo[N_GEO + i] = 1.5 * km + 1e-9
        ex = tr.cx[i + 1] - tr.cx[i]
        ey = tr.cy[i + 1] - tr.cy[i]
        seg_len = math.sqrt(ex * ex + ey * ey)
        geo[N_GEO + n + i] = seg_len
        geo[N_GEO + 2 * n + i] = 1.0 / seg_len
    geo[G_PX0], geo[G_PY0], geo[G_PX1], geo[G_PY1] = pit_bbox(tr.px, tr.py, tr.box_x, tr.box_y,
                                                                  tr.pit_width)
    kmax = np.abs(tr.ccurv).max()
    trust = 1.0 / kmax if kmax > 0.0 else FAR
    geo[G_TRUST] = min(max(trust, tr.kerb_edge + 2.0), tr.grass_edge)
    geo[G_HW] = tr.half_width
    geo[G_KE] = tr.kerb_edge
    geo[G_GRAVEL] = tr.gravel_edge
    geo[G_GRASS] = tr.grass_edge
    geo[G_X0] = tr.grid_x0
    geo[G_Y0] = tr.grid_y0
    geo[G_CELL] = tr.grid_cell
    _pit_frame(tr, geo)
    return geo


@kernel(inline='always')
def _seg_d2(cx, cy, i, x, y):
    """Squared distance (m^2) from (x, y) to centreline segment i (``locate``'s arithmetic)."""
    return seg_d2a(cx, cy, i, x, y)[0]


@kernel(inline='always')
def nearest_segment(cx, cy, gseg, geo, x, y, seg):
    """|offset| (m) of (x, y) and its nearest centreline segment -> (a, seg).

    Local descent over segment distances from ``seg`` (the previous sample's), trusted within the
    trust radius; otherwise (or for seg < 0) the raster's nearest segment +- the window ``locate``
    uses, so the answer equals ``locate(tr, x, y, -1)``. Off the raster or where the raster has no
    segment: a conservative |offset| (raster margin, or grass edge + 20 m minus a cell; the point is
    barrier) and seg -1.
    """
    n = cx.shape[0] - 1
    if seg >= 0:
        d = _seg_d2(cx, cy, seg, x, y)
        moves = 0
        for step in (1, -1):          # downhill forward; backward only if forward did not move
            while moves < _WALK_MAX:
                j = seg + step
                if j == n:
                    j = 0
                elif j < 0:
                    j = n - 1
                dj = _seg_d2(cx, cy, j, x, y)
                if dj < d:
                    seg = j
                    d = dj
                    moves += 1
                else:
                    break
            if moves > 0:
                break
        a = math.sqrt(d)
        if a <= geo[G_TRUST] and moves < _WALK_MAX:
            return a, seg
    ny, nx = gseg.shape
    cell = geo[G_CELL]
    gx = int(math.floor((x - geo[G_X0]) / cell))
    gy = int(math.floor((y - geo[G_Y0]) / cell))
    if gx < 0 or gy < 0 or gx >= nx or gy >= ny:
        return geo[G_GRASS] + 1.0, -1
    g = gseg[gy, gx]
    if g < 0:
        return geo[G_GRASS] + 20.0 - 1.5 * cell, -1
    best = np.inf
    bi = g
    for k in range(g - GRID_WINDOW, g + GRID_WINDOW + 1):
        i = k
        if i < 0:
            i += n
        elif i >= n:
            i -= n
        d = _seg_d2(cx, cy, i, x, y)
        if d < best:
            best = d
            bi = i
    return math.sqrt(best), bi


@kernel(inline='always')
def guess_segment(cx, cy, geo, seg, dx, dy, step):
    """Segment near the projection of a point ``step`` m further along the ray (descent start):
    the along-track part of the step divided by the local segment length (its inverse from
    ``geo``: no division on the march's critical path)."""
    if seg < 0:
        return seg
    n = cx.shape[0] - 1
    ex = cx[seg + 1] - cx[seg]
    ey = cy[seg + 1] - cy[seg]
    inv = geo[N_GEO + 2 * n + seg]
    jump = int(round(step * (dx * ex + dy * ey) * (inv * inv)))
    jump = max(-(n // 4), min(n // 4, jump))
    g = seg + jump
    if g < 0:
        g += n
    elif g >= n:
        g -= n
    return g


@kernel(inline='always')
def _band(geo, a):
    """Main-track band of |offset| a (m): ``track.geometry.band_of`` with the edges kept in ``geo``."""
    return band_of(a, geo[G_HW], geo[G_KE], geo[G_GRAVEL], geo[G_GRASS])


@kernel(inline='always')
def surface_code(pv, geo, x, y, a, seg, want_pit):
    """Surface code at (x, y) of |offset| a: the band, or the pit surface over it when ``want_pit``
    (callers whose open channels treat pit surfaces like the band underneath skip the pit test).
    pv: PitView."""
    if seg < 0:
        return SURF_BARRIER
    code = _band(geo, a)
    if (want_pit and a > geo[G_KE] and geo[G_PX0] <= x <= geo[G_PX1]
            and geo[G_PY0] <= y <= geo[G_PY1]):
        p = pit_surface(pv, x, y)
        if p >= 0:
            code = p
    return code


@kernel
def classify(tr, geo, x, y, seg):
    """Exact surface at (x, y) m, as ``surface_at(tr, x, y, -1)`` -> (code, |offset| m, seg).
    geo: ``sensor_geometry(tr)``; seg: a nearby segment to descend from, or -1."""
    return classify_arrays(tr.cx, tr.cy, tr.grid_seg, pit_view(tr), geo, x, y, seg)


@kernel
def classify_arrays(cx, cy, gseg, pv, geo, x, y, seg):
    a, seg = nearest_segment(cx, cy, gseg, geo, x, y, seg)
    return surface_code(pv, geo, x, y, a, seg, True), a, seg


@kernel
def _pit_frame(tr, geo):
    """Fill the pit-lane slots of ``geo`` (``G_LX`` .. ``G_WORK_CLEAR``): the frame and rectangles of
    ``track.surface.pit_surface``, computed with its arithmetic. Without a pit lane both rectangles are
    empty. A rectangle is clear when |offset| exceeds kerb_edge by more than half the probe spacing
    at probes along its edges (|offset| is 1-Lipschitz and no centreline runs through a pit lane, so
    its minimum over the rectangle lies on the edge)."""
    geo[G_LLEN] = -1.0
    geo[G_WU0] = 1.0
    geo[G_WU1] = -1.0
    if tr.px.shape[0] <= 2 * PIT_CONN_STEPS + 1:
        return
    sx, sy, dx, dy, nx, ny, lane_len = pit_lane_frame(tr.px, tr.py, tr.pit_side)
    hw = 0.5 * tr.pit_width
    geo[G_LX] = sx
    geo[G_LY] = sy
    geo[G_LDX] = dx
    geo[G_LDY] = dy
    geo[G_LNX] = nx
    geo[G_LNY] = ny
    geo[G_LLEN] = lane_len
    geo[G_LHW] = hw
    geo[G_VWORK] = hw + PIT_WORK_WIDTH
    geo[G_QU0], geo[G_QU1], geo[G_QV0], geo[G_QV1] = pit_quick_box(tr.px, tr.py, sx, sy, dx, dy, nx, ny, lane_len, hw)
    nb = tr.box_x.shape[0]
    if nb > 0:
        u_first = (tr.box_x[0] - sx) * dx + (tr.box_y[0] - sy) * dy
        u_last = (tr.box_x[nb - 1] - sx) * dx + (tr.box_y[nb - 1] - sy) * dy
        geo[G_WU0] = max(0.0, u_first - 0.5 * SERVICE_LENGTH - WORK_LANE_MARGIN)
        geo[G_WU1] = min(lane_len, u_last + 0.5 * SERVICE_LENGTH + WORK_LANE_MARGIN)
    geo[G_FAST_CLEAR] = rect_clear(tr, geo, 0.0, lane_len, -hw, hw)
    geo[G_WORK_CLEAR] = rect_clear(tr, geo, geo[G_WU0], geo[G_WU1], hw, geo[G_VWORK])


@kernel
def rect_clear(tr, geo, u0, u1, v0, v1):
    """1.0 when every probe along the edges of the pit-frame rectangle [u0, u1] x [v0, v1] lies more
    than kerb_edge + _RECT_PROBE from the centreline, else 0.0 (also for an empty rectangle)."""
    if u1 <= u0 or v1 <= v0:
        return 0.0
    limit = geo[G_KE] + _RECT_PROBE
    for ua, va, ub, vb in ((u0, v0, u1, v0), (u0, v1, u1, v1), (u0, v0, u0, v1), (u1, v0, u1, v1)):
        n = int(math.ceil(max(ub - ua, vb - va) / _RECT_PROBE))
        for k in range(n + 1):
            u = ua + (ub - ua) * k / n
            v = va + (vb - va) * k / n
            x = geo[G_LX] + u * geo[G_LDX] + v * geo[G_LNX]
            y = geo[G_LY] + u * geo[G_LDY] + v * geo[G_LNY]
            a, seg = nearest_segment(tr.cx, tr.cy, tr.grid_seg, geo, x, y, -1)
            if seg >= 0 and a <= limit:
                return 0.0
    return 1.0


@kernel(inline='always')
def _lane_uv(geo, x, y):
    """(u, v) m of (x, y) in the pit lane's frame: along the fast lane from its start, and across it
    (positive away from the track)."""
    qx = x - geo[G_LX]
    qy = y - geo[G_LY]
    return qx * geo[G_LDX] + qy * geo[G_LDY], qx * geo[G_LNX] + qy * geo[G_LNY]


@kernel(inline='always')
def pit_rect_gap(geo, x, y, dx, dy, a):
    """How far (m) a ray with unit direction (dx, dy) can go from (x, y) without leaving the pit-lane
    rectangle the point is in (fast lane or working lane: every point of either is a pit surface)
    and, unless the rectangle is clear of the kerb band, without |offset| (a, m, beyond kerb_edge)
    reaching kerb_edge -> (gap, exact): exact is True when the gap ends on the rectangle's edge
    (not at the |offset| bound). (0, False) when the point is in neither rectangle. Inside, none of
    the ray predicates that see pit surfaces (inside-asphalt-or-pit, illegal) can change, however
    close the raster says a boundary of the pit area is."""
    u, v = _lane_uv(geo, x, y)
    hw = geo[G_LHW]
    if 0.0 <= u <= geo[G_LLEN] and -hw <= v <= hw:
        u0, u1, v0, v1, clear = 0.0, geo[G_LLEN], -hw, hw, geo[G_FAST_CLEAR]
    elif geo[G_WU0] <= u <= geo[G_WU1] and hw < v <= geo[G_VWORK]:
        u0, u1, v0, v1, clear = geo[G_WU0], geo[G_WU1], hw, geo[G_VWORK], geo[G_WORK_CLEAR]
    else:
        return 0.0, False
    du = dx * geo[G_LDX] + dy * geo[G_LDY]
    dv = dx * geo[G_LNX] + dy * geo[G_LNY]
    t = FAR
    if du > 0.0:
        t = (u1 - u) / du
    elif du < 0.0:
        t = (u0 - u) / du
    if dv > 0.0:
        t = min(t, (v1 - v) / dv)
    elif dv < 0.0:
        t = min(t, (v0 - v) / dv)
    exact = True
    if clear == 0.0 and a - geo[G_KE] < t:
        t = a - geo[G_KE]
        exact = False
    return max(t, 0.0), exact


@kernel
def _connector_gap(pv, geo, x, y, a):
    """How far (m) a point at |offset| a (m) can move, in any direction, and stay a pit surface by
    ``pit_surface``'s connector test: within pit_width / 2 of a connector's polyline (|distance| is
    1-Lipschitz), inside the quick-reject box, and beyond the kerb band (pit surfaces count only
    there). 0 when the point is not in a connector. Not inlined: only rays in the pit area get here."""
    m = pv.px.shape[0]
    if m <= 2 * PIT_CONN_STEPS + 1:
        return 0.0
    u, v = _lane_uv(geo, x, y)
    box = min(u - geo[G_QU0], geo[G_QU1] - u, v - geo[G_QV0], geo[G_QV1] - v)
    if box <= 0.0:
        return 0.0
    d2 = min(polyline_d2(pv.px, pv.py, 0, PIT_CONN_STEPS, x, y),
             polyline_d2(pv.px, pv.py, m - 1 - PIT_CONN_STEPS, m - 1, x, y))
    return max(0.0, min(0.5 * pv.pit_width - math.sqrt(d2), box, a - geo[G_KE]))


@kernel
def pit_view(tr):
    """The PitView of a track (its pit arrays, no copy)."""
    return PitView(tr.px, tr.py, tr.pit_side, tr.pit_width, tr.box_x, tr.box_y)


@kernel(inline='always')
def _raster_edge(gpred, pred, geo, x, y):
    """Raster lower bound (m) of the distance to a boundary of ray predicate ``pred``
    (``track.index.PRED_*``, a plane of ``grid_pred_edge``); 0 off the raster."""
    ny = gpred.shape[1]
    nx = gpred.shape[2]
    gx = int(math.floor((x - geo[G_X0]) / geo[G_CELL]))
    gy = int(math.floor((y - geo[G_Y0]) / geo[G_CELL]))
    if gx < 0 or gy < 0 or gx >= nx or gy >= ny:
        return 0.0
    return np.float64(gpred[pred, gy, gx])


@kernel(inline='always')
def _pred_bound(gpred, fpred, fgrid, pred, geo, x, y):
    """Lower bound (m) of the distance from (x, y) to a boundary of predicate ``pred``: the larger
    of the coarse raster's and, inside the pit area, the fine raster's (both are lower bounds)."""
    b = _raster_edge(gpred, pred, geo, x, y)
    cell = fgrid[2]
    gx = int(math.floor((x - fgrid[0]) / cell))
    gy = int(math.floor((y - fgrid[1]) / cell))
    if 0 <= gx < fpred.shape[2] and 0 <= gy < fpred.shape[1]:
        b = max(b, fpred[pred, gy, gx] * cell)
    return b


@kernel(inline='always')
def pit_gap(gpred, fpred, fgrid, pv, geo, x, y, dx, dy, a, need_edge, need_kerb, need_ill, origin_pit):
    """``_safe_gap`` where pit surfaces may be involved (it returned 0) -> (gap m, on_edge): each open
    channel's own bound, exact for the main-track bands; where a pit surface can change the
    predicate (beyond the kerb), the largest of its predicate raster's bound, the exit from the
    pit-lane rectangle the sample is in (``pit_rect_gap``; (dx, dy) is the ray's unit direction)
    and the room left inside a connector (``_connector_gap``). on_edge: the gap ends exactly on a
    rectangle's edge, so the next sample may be taken just past it (a thin feature right behind the
    edge is not stepped over). Boundaries that do not change an open channel's predicate (between
    pit parts, pit and asphalt for a car in the pit) do not shorten the step."""
    hw = geo[G_HW]
    ke = geo[G_KE]
    gap = FAR
    rect = -1.0
    exact = False
    if ((need_edge and origin_pit) or need_ill) and a > ke:
        # inside a pit part: the rectangle's exit, or the connector's room
        rect, exact = pit_rect_gap(geo, x, y, dx, dy, a)
        if rect <= 0.0:
            rect = _connector_gap(pv, geo, x, y, a)
            exact = False
    if need_edge:
        if not origin_pit:
            gap = abs(a - hw)
        elif a > ke:
            gap = max(rect, _pred_bound(gpred, fpred, fgrid, PRED_INSIDE_PIT, geo, x, y))
        else:
            gap = min(abs(a - hw), ke - a)
    if need_kerb:
        gap = min(gap, abs(a - hw), abs(a - ke))
    if need_ill:
        if a > ke:
            gap = min(gap, max(rect, _pred_bound(gpred, fpred, fgrid, PRED_ILLEGAL, geo, x, y)))
        else:
            gap = min(gap, ke - a)
    return gap, exact and gap == rect
