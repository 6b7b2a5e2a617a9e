"""Sensors of the policy-controlled cars: rays per channel, nearby-car radar, track lookahead.

One call, ``sense_worlds``, fills preallocated arrays for every car of every world whose
``sense_mask`` is set (``sense_world`` does one world, for a parallel caller). Semantics follow
PaddockJS 2.0.1 (spec section 6.6) in metres:

* Rays start at the car centre, direction heading + angle (+ = right). Channels (bit, index):
  road_edge (1, 0): first crossing of the white line, i.e. where "inside the asphalt" changes; pit
  surfaces count as inside when the origin is on one; ``ray_kind`` 1 = exit (origin inside),
  2 = entry (origin outside). kerb (2, 1): first point on a kerb, 0 when the origin is on one.
  illegal_surface (4, 2): first point on gravel, grass or barrier, 0 when the origin is on one.
  car (8, 3): nearest other car body hit (4.65 x 1.24 m box, distance max(0, tmin)).
  A miss reads the ray's length with hit 0. There is no barrier channel.
* Surface channels march the ray with safe steps (no step can skip a change of an open channel):
  the surface of a sample is the exact classification (``locate``'s arithmetic on the nearest
  centreline segment, followed along the ray by local descent, + bands + pit surfaces, equal to
  ``surface_at(tr, x, y, -1)``). Because |offset| is 1-Lipschitz the gap to the nearest band edge
  that matters for the open channels is a safe step (sphere tracing on exact distances); a second
  bound from the offset's rate along the ray and the local curvature lets rays that run along the
  track take long steps; where pit surfaces matter the raster ``grid_edge`` bound is the step.
  Steps never go below ``MIN_STEP`` (``PIT_MIN_STEP`` near the pit); a change is then bisected
  with exact queries. Driver precision: MIN_STEP 0.199 m (one bisection step reaches the 0.1 m
  bracket), reading within 0.1 m past the true crossing (the far end of the final bracket, as
  PaddockJS reports). Where the straight-edge prediction puts the crossing within tol / 2 past the
  safe point, the floor step is 0.99 tol, which brackets it with no bisection. Debug precision:
  0.0199 m / 0.01 m. A feature crossed for less than the floor step (a graze of the white line, a sliver
  between pit parts) can be missed. Zero-distance hits at the origin surface are kept.
* Radar: the ``radar_k`` nearest other active radar-visible cars within ``radar_radius`` m.
* Lookahead: curvature and wrapped heading delta of the centreline ahead of the car's progress.
"""

import math
from collections import namedtuple

import numpy as np
from numba import njit

from .layout import (
    CAR_LENGTH, CAR_WIDTH, F_HEADING, F_OFFSET, F_PROGRESS, F_SPEED, F_VX, F_VY, F_X, F_Y,
    FLAG_RADAR_VISIBLE, FLAG_RAY_VISIBLE, I_ACTIVE, I_DESTROYED, I_LAP, I_SEG_HINT, SURF_BARRIER,
    SURF_GRASS, SURF_GRAVEL, SURF_KERB, SURF_PIT_ENTRY, SURF_TRACK,
)
from .track import edge_distances, pit_surface, wrap_angle
from .track_core import _GRID_WINDOW, GARAGE_DEPTH, PIT_WORK_WIDTH, SERVICE_LENGTH, sample_at

# Ray channels: bit in ``channel_mask`` and index in the last axis of ``ray_dist`` / ``ray_hit``.
CH_ROAD_EDGE = 1
CH_KERB = 2
CH_ILLEGAL = 4
CH_CAR = 8
CH_ALL = 15
RAY_ROAD_EDGE = 0
RAY_KERB = 1
RAY_ILLEGAL = 2
RAY_CAR = 3
N_RAY_CHANNELS = 4
CHANNEL_NAMES = ("roadEdge", "kerb", "illegalSurface", "car")
KIND_MISS = 0
KIND_EXIT = 1
KIND_ENTRY = 2

# Radar fields: last axis of ``radar``.
RADAR_FORWARD = 0     # m, other centre ahead of the sensing car (its frame)
RADAR_RIGHT = 1       # m, to the right
RADAR_DISTANCE = 2    # m, Euclidean distance between centres (empty slot: the radius)
RADAR_SPEED = 3       # m/s, other speed minus own speed (scalars)
RADAR_HEADING = 4     # rad, other heading minus own, wrapped
RADAR_AHEAD = 5       # 1 when forward > 0
RADAR_SAME_LAP = 6    # 1 when both cars are on the same lap
RADAR_VEL_FORWARD = 7  # m/s, relative world velocity on the own forward axis
RADAR_VEL_RIGHT = 8    # m/s, on the own right axis
RADAR_CLOSING = 9      # m/s, -(d/dt distance): positive when approaching
N_RADAR_FIELDS = 10

# Layouts (degrees, + = right). The PaddockJS default: 8 rays of 120 m.
DEFAULT_ANGLES_DEG = (-135.0, -60.0, -20.0, 0.0, 20.0, 60.0, 135.0, 180.0)
DEFAULT_RAY_LENGTH = 120.0
FRONT_HEAVY_ANGLES_DEG = (-135.0, -90.0, -60.0, -35.0, -20.0, -10.0, 0.0, 10.0, 20.0, 35.0, 60.0,
                          90.0, 135.0, 180.0)

# Marching constants (m).
MIN_STEP = 0.199         # driver precision: smallest march step (< 2 x TOLERANCE: one bisection)
TOLERANCE = 0.1          # driver precision: bisection bracket
DEBUG_MIN_STEP = 0.0199
DEBUG_TOLERANCE = 0.01
PIT_MIN_STEP = 0.05      # smallest step where pit surfaces are involved (thin slivers between parts)
DEBUG_PIT_MIN_STEP = 0.01
_HALF_L = 0.5 * CAR_LENGTH
_HALF_W = 0.5 * CAR_WIDTH
BODY_RADIUS = math.sqrt(_HALF_L * _HALF_L + _HALF_W * _HALF_W)   # ~2.41 m, broad phase
_FAR = 1.0e30
_WALK_MAX = 48           # descent steps before falling back to the raster (a stale start)
_DERIV_WINDOW = 24       # segments either side covered by the local curvature bound (3 blocks)

# The fields of TrackArrays that ``pit_surface`` reads. Hot kernels take single arrays and this small
# view, never the whole TrackArrays tuple: passing that 33-field tuple to a non-inlined call costs
# ~100 ns here (reference counts of every array), more than a whole march step.
PitView = namedtuple("PitView", ["px", "py", "pit_side", "pit_width", "box_x", "box_y"])


# sensor_geometry() slots
_G_PX0, _G_PY0, _G_PX1, _G_PY1 = 0, 1, 2, 3
_G_TRUST = 4
_G_HW, _G_KE, _G_GRAVEL, _G_GRASS = 5, 6, 7, 8
_G_X0, _G_Y0, _G_CELL = 9, 10, 11
N_GEO = 12               # then one entry per segment: its windowed turning-rate bound (1/m)
_KBLOCK = 8


@njit(cache=True)
def sensor_geometry(tr):
    """Per-track constants of the ray march -> float64[N_GEO]: the box (x0, y0, x1, y1) m around
    every pit surface (path, lanes, boxes, garages, plus a margin; outside it ``pit_surface`` is -1);
    the trust radius (m) within which the nearest centreline segment is followed by local descent
    instead of the raster (the tightest corner radius, clamped to [kerb_edge + 2, grass_edge]: that
    close to a segment, no other part of a valid track is nearer); the band edges and the raster
    origin and cell; then per segment the turning-rate bound of ``_deriv_step`` (1.5 x the largest
    |curvature| of the blocks of _KBLOCK segments within +-_DERIV_WINDOW segments, + 1e-9). The hot helpers
    take these and single arrays, never the TrackArrays tuple
    (passing the tuple to a non-inlined call costs ~85 ns here)."""
    n = tr.cx.shape[0] - 1
    geo = np.zeros(N_GEO + n, dtype=np.float64)
    blk = np.zeros((n + _KBLOCK - 1) // _KBLOCK, dtype=np.float64)
    for i in range(n):
        b = i // _KBLOCK
        blk[b] = max(blk[b], abs(tr.ccurv[i]), abs(tr.ccurv[i + 1]))
    for i in range(n):
        # every block within +-_DERIV_WINDOW segments (wrapped), as the bound's derivation needs
        km = 0.0
        for k in range(i - _DERIV_WINDOW, i + _DERIV_WINDOW + 1, _KBLOCK):
            j = k
            if j < 0:
                j += n
            elif j >= n:
                j -= n
            km = max(km, blk[j // _KBLOCK])
        geo[N_GEO + i] = 1.5 * km + 1e-9
    if tr.px.shape[0] == 0:
        geo[_G_PX0] = _FAR
        geo[_G_PY0] = _FAR
        geo[_G_PX1] = -_FAR
        geo[_G_PY1] = -_FAR
    else:
        xs = np.concatenate((tr.px, tr.box_x))
        ys = np.concatenate((tr.py, tr.box_y))
        m = 0.5 * tr.pit_width + PIT_WORK_WIDTH + GARAGE_DEPTH + SERVICE_LENGTH + 5.0
        geo[_G_PX0] = xs.min() - m
        geo[_G_PY0] = ys.min() - m
        geo[_G_PX1] = xs.max() + m
        geo[_G_PY1] = ys.max() + m
    kmax = np.abs(tr.ccurv).max()
    trust = 1.0 / kmax if kmax > 0.0 else _FAR
    geo[_G_TRUST] = min(max(trust, tr.kerb_edge + 2.0), tr.grass_edge)
    geo[_G_HW] = tr.half_width
    geo[_G_KE] = tr.kerb_edge
    geo[_G_GRAVEL] = tr.gravel_edge
    geo[_G_GRASS] = tr.grass_edge
    geo[_G_X0] = tr.grid_x0
    geo[_G_Y0] = tr.grid_y0
    geo[_G_CELL] = tr.grid_cell
    return geo


@njit(cache=True, inline='always')
def _seg_d2(cx, cy, i, x, y):
    """Squared distance (m^2) from (x, y) to centreline segment i (``locate``'s arithmetic)."""
    ax = cx[i]
    ay = cy[i]
    dx = cx[i + 1] - ax
    dy = cy[i + 1] - ay
    qx = x - ax
    qy = y - ay
    ll = dx * dx + dy * dy
    t = (qx * dx + qy * dy) / ll
    if t < 0.0:
        t = 0.0
    elif t > 1.0:
        t = 1.0
    ex = qx - t * dx
    ey = qy - t * dy
    return ex * ex + ey * ey


@njit(cache=True, inline='always')
def _nearest(cx, cy, gseg, geo, x, y, seg):
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
        while moves < _WALK_MAX:
            j = seg + 1 if seg + 1 < n else 0
            dj = _seg_d2(cx, cy, j, x, y)
            if dj < d:
                seg = j
                d = dj
                moves += 1
            else:
                break
        if moves == 0:
            while moves < _WALK_MAX:
                j = seg - 1 if seg > 0 else n - 1
                dj = _seg_d2(cx, cy, j, x, y)
                if dj < d:
                    seg = j
                    d = dj
                    moves += 1
                else:
                    break
        a = math.sqrt(d)
        if a <= geo[_G_TRUST] and moves < _WALK_MAX:
            return a, seg
    ny, nx = gseg.shape
    cell = geo[_G_CELL]
    gx = int(math.floor((x - geo[_G_X0]) / cell))
    gy = int(math.floor((y - geo[_G_Y0]) / cell))
    if gx < 0 or gy < 0 or gx >= nx or gy >= ny:
        return geo[_G_GRASS] + 1.0, -1
    g = gseg[gy, gx]
    if g < 0:
        return geo[_G_GRASS] + 20.0 - 1.5 * cell, -1
    best = np.inf
    bi = g
    for k in range(g - _GRID_WINDOW, g + _GRID_WINDOW + 1):
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


@njit(cache=True, inline='always')
def _guess(cx, cy, seg, dx, dy, step):
    """Segment near the projection of a point ``step`` m further along the ray (descent start):
    the along-track part of the step divided by the local segment length."""
    if seg < 0:
        return seg
    n = cx.shape[0] - 1
    ex = cx[seg + 1] - cx[seg]
    ey = cy[seg + 1] - cy[seg]
    jump = int(round(step * (dx * ex + dy * ey) / (ex * ex + ey * ey)))
    jump = max(-(n // 4), min(n // 4, jump))
    g = seg + jump
    if g < 0:
        g += n
    elif g >= n:
        g -= n
    return g


@njit(cache=True, inline='always')
def _band(geo, a):
    """Main-track band of |offset| a (m), as the track's ``band_code``."""
    if a <= geo[_G_HW]:
        return SURF_TRACK
    if a <= geo[_G_KE]:
        return SURF_KERB
    if a <= geo[_G_GRAVEL]:
        return SURF_GRAVEL
    if a <= geo[_G_GRASS]:
        return SURF_GRASS
    return SURF_BARRIER


@njit(cache=True, inline='always')
def _code(pv, geo, x, y, a, seg, want_pit):
    """Surface code at (x, y) of |offset| a: the band, or the pit surface over it when ``want_pit``
    (callers whose open channels treat pit surfaces like the band underneath skip the pit test).
    pv: PitView."""
    if seg < 0:
        return SURF_BARRIER
    code = _band(geo, a)
    if (want_pit and a > geo[_G_KE] and geo[_G_PX0] <= x <= geo[_G_PX1]
            and geo[_G_PY0] <= y <= geo[_G_PY1]):
        p = pit_surface(pv, x, y)
        if p >= 0:
            code = p
    return code


@njit(cache=True)
def classify(tr, geo, x, y, seg):
    """Exact surface at (x, y) m, as ``surface_at(tr, x, y, -1)`` -> (code, |offset| m, seg).
    geo: ``sensor_geometry(tr)``; seg: a nearby segment to descend from, or -1."""
    return _classify(tr.cx, tr.cy, tr.grid_seg, pit_view(tr), geo, x, y, seg)


@njit(cache=True)
def _classify(cx, cy, gseg, pv, geo, x, y, seg):
    a, seg = _nearest(cx, cy, gseg, geo, x, y, seg)
    return _code(pv, geo, x, y, a, seg, True), a, seg


@njit(cache=True)
def pit_view(tr):
    """The PitView of a track (its pit arrays, no copy)."""
    return PitView(tr.px, tr.py, tr.pit_side, tr.pit_width, tr.box_x, tr.box_y)


@njit(cache=True, inline='always')
def _raster_edge(gedge, geo, x, y):
    """Raster lower bound (m) of the distance to any surface boundary; 0 off the raster."""
    ny, nx = gedge.shape
    gx = int(math.floor((x - geo[_G_X0]) / geo[_G_CELL]))
    gy = int(math.floor((y - geo[_G_Y0]) / geo[_G_CELL]))
    if gx < 0 or gy < 0 or gx >= nx or gy >= ny:
        return 0.0
    return np.float64(gedge[gy, gx])


@njit(cache=True)
def _inside(code, origin_pit):
    """Road-edge predicate: on the asphalt (pit surfaces too when the origin is on one)."""
    return code == SURF_TRACK or (origin_pit and code >= SURF_PIT_ENTRY)


@njit(cache=True)
def _illegal(code):
    return SURF_GRAVEL <= code <= SURF_BARRIER


@njit(cache=True)
def _pred(ch, code, origin_pit):
    if ch == RAY_ROAD_EDGE:
        return _inside(code, origin_pit)
    if ch == RAY_KERB:
        return code == SURF_KERB
    return _illegal(code)


@njit(cache=True, inline='always')
def _safe_gap(geo, a, need_edge, need_kerb, need_ill, origin_pit):
    """Distance (m) the ray can advance from a point at |offset| a without changing any open
    channel's predicate. Exact where only main-track bands matter (|offset| is 1-Lipschitz); 0 where
    a pit surface may be involved (the caller falls back to the raster bound)."""
    hw = geo[_G_HW]
    ke = geo[_G_KE]
    gap = _FAR
    if need_edge:
        if origin_pit and a > ke:
            return 0.0
        gap = min(gap, abs(a - hw))
        if origin_pit:
            gap = min(gap, ke - a)
    if need_kerb:
        gap = min(gap, abs(a - hw), abs(a - ke))
    if need_ill:
        if a > ke:
            return 0.0     # on a pit surface (else the channel would be resolved)
        gap = min(gap, ke - a)
    return gap


@njit(cache=True, inline='always')
def _solve_step(g, r, acc):
    """Smallest t >= 0 with r t + acc t^2 / 2 = g (g > 0): how far the ray can go before an offset
    that starts g from an edge, approaching at rate r (m/m) with |rate change| <= acc t, gets there."""
    q = r * r + 2.0 * acc * g
    den = r + math.sqrt(q)
    if den <= 0.0:
        return _FAR
    return 2.0 * g / den


@njit(cache=True, inline='always')
def _ray_frame(cx, cy, seg, x, y, dx, dy, a):
    """Signed offset o (m, + right) of a sample at |offset| a with nearest segment seg, the offset's
    rate v0 = d . n along the ray (m/m) and the segment's length (m) -> (o, v0, seg_len)."""
    ax = cx[seg]
    ay = cy[seg]
    ex = cx[seg + 1] - ax
    ey = cy[seg + 1] - ay
    seg_len = math.sqrt(ex * ex + ey * ey)
    cross = ex * (y - ay) - ey * (x - ax)
    o = a if cross >= 0.0 else -a
    v0 = (-dx * ey + dy * ex) / seg_len
    return o, v0, seg_len


@njit(cache=True, inline='always')
def _deriv_step(geo, seg, o, v0, seg_len, a, need_edge, need_kerb, need_ill, gap):
    """Safe step (m) from the signed offset's rate along the ray, or 0 when it does not apply.

    With o the signed offset of the sample (nearest segment ``seg``) and v0 = d . n its rate along
    the ray (d the ray direction, n the segment's right normal), the rate changes by at most the
    turning of the centreline between the two projections: |o'(t) - v0| <= k (t / (1 - k a_max) + l),
    k the largest turning rate (1.5 x |ccurv|, polyline slack) within +-_DERIV_WINDOW segments, l a
    segment length, a_max the outermost edge. The step is the first t at which o could reach any
    open channel's edge (+-half_width, +-kerb_edge), capped so the projection stays in the window.
    Applies only strictly inside the outermost open edge (so |o| <= kerb_edge over the step, where
    no other part of a valid track is near). Returns 0 early when even a straight centreline
    would not allow more than ``gap`` (the Lipschitz step already known).
    """
    hw = geo[_G_HW]
    ke = geo[_G_KE]
    e_out = ke if (need_kerb or need_ill) else hw
    if a >= e_out:
        return 0.0
    # nearest edge above and below o among the open channels' edges
    up = e_out
    dn = -e_out
    if need_edge or need_kerb:
        if o < -hw:
            up = -hw
        elif o < hw:
            up = hw
            dn = -hw
        else:
            dn = hw
    if (v0 > 0.0 and up - o <= gap * v0) or (v0 < 0.0 and o - dn <= -gap * v0):
        return 0.0
    km = geo[N_GEO + seg]
    if km * e_out >= 0.5:
        return 0.0
    acc = km / (1.0 - km * e_out)
    slack = km * seg_len
    t_up = _solve_step(up - o, v0 + slack, acc)
    t_dn = _solve_step(o - dn, -v0 + slack, acc)
    cap = (_DERIV_WINDOW - 2) * seg_len * (1.0 - km * e_out)
    return min(t_up, t_dn, cap)


@njit(cache=True, inline='always')
def _near_crossing(geo, o, v0, need_edge, need_kerb, need_ill, origin_pit, gap, tol):
    """True when the straight-edge prediction of the next open edge crossing (signed offset o and its
    rate v0 along the ray) lies less than tol / 2 past the safe step ``gap`` (m). Only a step-size
    hint: any answer keeps the march exact."""
    if abs(v0) < 0.2:
        return False
    hw = geo[_G_HW]
    ke = geo[_G_KE]
    use_hw = need_edge or need_kerb
    use_ke = need_kerb or need_ill or (need_edge and origin_pit)
    if v0 < 0.0:      # mirror: approach from above becomes approach from below
        o = -o
        v0 = -v0
    best = _FAR
    if use_hw:
        if hw > o:
            best = min(best, hw - o)
        if -hw > o:
            best = min(best, -hw - o)
    if use_ke:
        if ke > o:
            best = min(best, ke - o)
        if -ke > o:
            best = min(best, -ke - o)
    return best / v0 - gap < 0.5 * tol


@njit(cache=True, inline='always')
def _bisect(cx, cy, gseg, pv, geo, ox, oy, dx, dy, lo, hi, seg, ch, p0, origin_pit, tol):
    """First point past the predicate change in [lo, hi] (pred(lo) == p0 != pred(hi)), to ``tol``.
    seg: nearest segment at lo (descent start)."""
    want_pit = ch == RAY_ILLEGAL or (ch == RAY_ROAD_EDGE and origin_pit)
    while hi - lo > tol:
        mid = 0.5 * (lo + hi)
        x = ox + mid * dx
        y = oy + mid * dy
        a, sg = _nearest(cx, cy, gseg, geo, x, y, seg)
        if _pred(ch, _code(pv, geo, x, y, a, sg, want_pit), origin_pit) != p0:
            hi = mid
        else:
            lo = mid
            seg = sg
    return hi


@njit(cache=True)
def march_ray(cx, cy, gseg, gedge, pv, geo, ox, oy, code0, a0, seg0, angle, length, mask, debug,
              out_dist, out_hit):
    """Surface channels of one ray from (ox, oy) m along ``angle`` (rad, world) for ``length`` m.

    cx, cy, gseg (grid_seg), gedge (grid_edge): the track's arrays; pv: ``pit_view(tr)``;
    geo: ``sensor_geometry(tr)``; (code0, a0, seg0): ``classify`` of the origin. mask: channel
    bitmask (bits 1, 2, 4 are used here); debug: 1 = debug precision. Writes out_dist[0:3] (float32
    m; miss = length) and out_hit[0:3] (int8) for the requested channels and returns the road-edge
    kind (0 miss, 1 exit, 2 entry).
    """
    return _march(cx, cy, gseg, gedge, pv, geo, ox, oy, code0, a0, seg0, math.cos(angle),
                  math.sin(angle), length, mask, debug, out_dist, out_hit)


@njit(cache=True)
def _march(cx, cy, gseg, gedge, pv, geo, ox, oy, code0, a0, seg0, dx, dy, length, mask, debug,
           out_dist, out_hit):
    """``march_ray`` with the ray's unit direction (dx, dy) given (the caller shares its cos / sin
    with the car channel)."""
    min_step = DEBUG_MIN_STEP if debug else MIN_STEP
    pit_min_step = DEBUG_PIT_MIN_STEP if debug else PIT_MIN_STEP
    tol = DEBUG_TOLERANCE if debug else TOLERANCE
    tight_step = 0.99 * tol
    origin_pit = code0 >= SURF_PIT_ENTRY
    need_edge = (mask & CH_ROAD_EDGE) != 0
    need_kerb = (mask & CH_KERB) != 0
    need_ill = (mask & CH_ILLEGAL) != 0
    p_edge = _inside(code0, origin_pit)
    kind = 0
    for ch in range(3):
        if (mask >> ch) & 1:
            out_dist[ch] = length
            out_hit[ch] = 0
    if need_kerb and code0 == SURF_KERB:
        out_dist[RAY_KERB] = 0.0
        out_hit[RAY_KERB] = 1
        need_kerb = False
    if need_ill and _illegal(code0):
        out_dist[RAY_ILLEGAL] = 0.0
        out_hit[RAY_ILLEGAL] = 1
        need_ill = False
    a = a0
    seg = seg0
    x = ox
    y = oy
    t = 0.0
    edge_t = -1.0     # bracket start of the road-edge hit
    while (need_edge or need_kerb or need_ill) and t < length:
        want_pit = need_ill or (need_edge and origin_pit)
        # safe step from the current sample: exact band gap, or the raster bound near pit surfaces
        gap = _safe_gap(geo, a, need_edge, need_kerb, need_ill, origin_pit)
        step_min = min_step
        if want_pit and geo[_G_PX0] <= x <= geo[_G_PX1] and geo[_G_PY0] <= y <= geo[_G_PY1]:
            # pit surfaces matter here: a finer floor, the pit layout leaves thin slivers of the band
            # between its parts and the kerb (e.g. gravel between the kerb and a connector)
            step_min = pit_min_step
        if gap <= 0.0:
            gap = _raster_edge(gedge, geo, x, y)    # pit geometry involved: the raster bound
        else:
            if seg >= 0:
                o, v0, seg_len = _ray_frame(cx, cy, seg, x, y, dx, dy, a)
                if not (origin_pit and need_edge):
                    gap = max(gap, _deriv_step(geo, seg, o, v0, seg_len, a, need_edge, need_kerb,
                                               need_ill, gap))
                if step_min > tight_step and _near_crossing(geo, o, v0, need_edge, need_kerb, need_ill,
                                                            origin_pit, gap, tol):
                    # the safe point is within tol / 2 of the predicted crossing: a floor step under
                    # tol brackets it with no bisection
                    step_min = tight_step
        # the predicate cannot change before t + gap; the floor step goes past it, and a change found
        # there is bisected from the safe point on
        lo = min(t + gap, length)
        tn = min(lo + step_min, length)
        x = ox + tn * dx
        y = oy + tn * dy
        hint = _guess(cx, cy, seg, dx, dy, tn - t)
        if a - (tn - t) > geo[_G_TRUST]:
            # |offset| is 1-Lipschitz: the new sample lies beyond the trust radius too, where the
            # descent's answer would be discarded for the raster's; go to the raster directly
            hint = -1
        a, sn = _nearest(cx, cy, gseg, geo, x, y, hint)
        code = _code(pv, geo, x, y, a, sn, want_pit)
        if need_edge and _inside(code, origin_pit) != p_edge:
            out_dist[RAY_ROAD_EDGE] = _bisect(cx, cy, gseg, pv, geo, ox, oy, dx, dy, lo, tn, seg,
                                              RAY_ROAD_EDGE,
                                              p_edge, origin_pit, tol)
            out_hit[RAY_ROAD_EDGE] = 1
            kind = KIND_EXIT if p_edge else KIND_ENTRY
            need_edge = False
            edge_t = t
        if need_kerb and code == SURF_KERB:
            if code0 == SURF_TRACK and (mask & CH_ROAD_EDGE) and out_hit[RAY_ROAD_EDGE] and not need_edge \
                    and kind == KIND_EXIT and edge_t == t:
                # the road-edge exit just bisected in this bracket is this kerb entry: same crossing
                out_dist[RAY_KERB] = out_dist[RAY_ROAD_EDGE]
            else:
                out_dist[RAY_KERB] = _bisect(cx, cy, gseg, pv, geo, ox, oy, dx, dy, lo, tn, seg, RAY_KERB,
                                             False, origin_pit, tol)
            out_hit[RAY_KERB] = 1
            need_kerb = False
        if need_ill and _illegal(code):
            out_dist[RAY_ILLEGAL] = _bisect(cx, cy, gseg, pv, geo, ox, oy, dx, dy, lo, tn, seg,
                                            RAY_ILLEGAL, False,
                                            origin_pit, tol)
            out_hit[RAY_ILLEGAL] = 1
            need_ill = False
        t = tn
        seg = sn
    return kind


@njit(cache=True)
def _centre_at(cs, ch, ccurv, length, s):
    """(heading rad, curvature 1/m) of the centreline at lap distance s (m, wrapped): the same
    interpolation as the track's ``point_at``, on single arrays (see PitView on why)."""
    i, t = sample_at(cs, length, s)
    h = wrap_angle(ch[i] + t * wrap_angle(ch[i + 1] - ch[i]))
    k = ccurv[i] + t * (ccurv[i + 1] - ccurv[i])
    return h, k


@njit(cache=True)
def _slab(ox, oy, dx, dy, length, tx, ty, tc, ts):
    """Ray (origin m, unit direction) against a car body centred at (tx, ty) with heading cos/sin
    (tc, ts): entry distance max(0, tmin) m, or -1 on a miss."""
    rx = ox - tx
    ry = oy - ty
    # origin and direction in the target's frame (u forward, v right)
    ou = rx * tc + ry * ts
    ov = -rx * ts + ry * tc
    du = dx * tc + dy * ts
    dv = -dx * ts + dy * tc
    tmin = -_FAR
    tmax = _FAR
    if abs(du) < 1e-12:
        if abs(ou) > _HALF_L:
            return -1.0
    else:
        t1 = (-_HALF_L - ou) / du
        t2 = (_HALF_L - ou) / du
        tmin = max(tmin, min(t1, t2))
        tmax = min(tmax, max(t1, t2))
    if abs(dv) < 1e-12:
        if abs(ov) > _HALF_W:
            return -1.0
    else:
        t1 = (-_HALF_W - ov) / dv
        t2 = (_HALF_W - ov) / dv
        tmin = max(tmin, min(t1, t2))
        tmax = min(tmax, max(t1, t2))
    if tmax < tmin or tmax < 0.0 or tmin > length:
        return -1.0
    return max(0.0, tmin)


@njit(cache=True)
def sense_world(tr, geo, cars_f, cars_i, car_flags, sense_mask, ray_angle, ray_length, ray_count,
                channel_mask, debug_precision, radar_k, radar_radius, lookahead_d, ray_dist, ray_hit,
                ray_kind, ray_car, ray_rel_speed, radar, radar_slot, look, w):
    """Senses of every masked car of world ``w``: arguments as ``sense_worlds``, plus
    geo = ``sensor_geometry(tr)`` (computed once per call by the caller) and the world index w.
    Worlds are independent, so a caller may run this over worlds in parallel."""
    n_cars = cars_f.shape[1]
    n_rays_max = ray_angle.shape[1]
    kmax = max(0, min(radar_k, radar.shape[2]))
    pv = pit_view(tr)
    cx = tr.cx
    cy = tr.cy
    gseg = tr.grid_seg
    gedge = tr.grid_edge
    cs = tr.cs
    chead = tr.ch
    ccurv = tr.ccurv
    length_l = tr.length
    cand = np.empty(n_cars, dtype=np.int64)      # ray targets near the sensing car
    near_j = np.empty(kmax, dtype=np.int64)      # radar: slots sorted by distance
    near_d = np.empty(kmax, dtype=np.float64)
    for c in range(n_cars):
        if sense_mask[w, c] == 0:
            continue
        ox = cars_f[w, c, F_X]
        oy = cars_f[w, c, F_Y]
        oh = cars_f[w, c, F_HEADING]
        ospeed = cars_f[w, c, F_SPEED]
        destroyed = cars_i[w, c, I_DESTROYED] != 0
        mask = channel_mask[c]
        nr = min(ray_count[c], n_rays_max)
        code0 = 0
        a0 = 0.0
        seg0 = -1
        if (mask & (CH_ROAD_EDGE | CH_KERB | CH_ILLEGAL)) and not destroyed and nr > 0:
            # the car's segment hint is a safe descent start: a wrong local minimum lies beyond
            # the trust radius and falls back to the raster
            hint = cars_i[w, c, I_SEG_HINT]
            if hint < 0 or hint >= cx.shape[0] - 1:
                hint = -1
            code0, a0, seg0 = _classify(cx, cy, gseg, pv, geo, ox, oy, hint)
        # ---- rays
        max_len = 0.0
        for r in range(nr):
            max_len = max(max_len, ray_length[c, r])
        n_cand = 0
        if (mask & CH_CAR) and not destroyed:
            reach = max_len + BODY_RADIUS
            for j in range(n_cars):
                if j == c or cars_i[w, j, I_ACTIVE] == 0 or (car_flags[w, j] & FLAG_RAY_VISIBLE) == 0:
                    continue
                ddx = cars_f[w, j, F_X] - ox
                ddy = cars_f[w, j, F_Y] - oy
                if ddx * ddx + ddy * ddy <= reach * reach:
                    cand[n_cand] = j
                    n_cand += 1
        for r in range(n_rays_max):
            if r >= nr:
                for ch in range(N_RAY_CHANNELS):
                    ray_dist[w, c, r, ch] = 0.0
                    ray_hit[w, c, r, ch] = 0
                ray_kind[w, c, r] = 0
                ray_car[w, c, r] = -1
                ray_rel_speed[w, c, r] = 0.0
                continue
            length = ray_length[c, r]
            for ch in range(N_RAY_CHANNELS):
                ray_dist[w, c, r, ch] = length
                ray_hit[w, c, r, ch] = 0
            ray_kind[w, c, r] = 0
            ray_car[w, c, r] = -1
            ray_rel_speed[w, c, r] = 0.0
            if destroyed:
                continue   # miss values, no march (PaddockJS: terminal placements read misses)
            ang = oh + ray_angle[c, r]
            dx = math.cos(ang)
            dy = math.sin(ang)
            if mask & (CH_ROAD_EDGE | CH_KERB | CH_ILLEGAL):
                ray_kind[w, c, r] = _march(cx, cy, gseg, gedge, pv, geo, ox, oy, code0, a0, seg0,
                                           dx, dy, length, mask, debug_precision, ray_dist[w, c, r],
                                           ray_hit[w, c, r])
            if n_cand > 0:
                best = _FAR
                best_j = -1
                for q in range(n_cand):
                    j = cand[q]
                    tx = cars_f[w, j, F_X]
                    ty = cars_f[w, j, F_Y]
                    rx = tx - ox
                    ry = ty - oy
                    along = rx * dx + ry * dy
                    if along < -BODY_RADIUS or along > length + BODY_RADIUS:
                        continue
                    perp = rx * dy - ry * dx
                    if abs(perp) > BODY_RADIUS:
                        continue
                    th = cars_f[w, j, F_HEADING]
                    d = _slab(ox, oy, dx, dy, length, tx, ty, math.cos(th), math.sin(th))
                    if d >= 0.0 and d < best:
                        best = d
                        best_j = j
                if best_j >= 0:
                    ray_dist[w, c, r, RAY_CAR] = best
                    ray_hit[w, c, r, RAY_CAR] = 1
                    ray_car[w, c, r] = best_j
                    ray_rel_speed[w, c, r] = cars_f[w, best_j, F_SPEED] - ospeed
        # ---- radar (every slot of the K axis is written; slots past radar_k read empty)
        if radar.shape[2] > 0:
            n_near = 0
            r2max = radar_radius * radar_radius
            for j in range(n_cars):
                if j == c or cars_i[w, j, I_ACTIVE] == 0 or (car_flags[w, j] & FLAG_RADAR_VISIBLE) == 0:
                    continue
                ddx = cars_f[w, j, F_X] - ox
                ddy = cars_f[w, j, F_Y] - oy
                d2 = ddx * ddx + ddy * ddy
                if d2 > r2max:
                    continue
                d = math.sqrt(d2)
                if n_near == kmax and (kmax == 0 or d >= near_d[kmax - 1]):
                    continue
                # insertion after every entry <= d: ties keep the lower slot first
                p = min(n_near, kmax - 1)
                while p > 0 and near_d[p - 1] > d:
                    near_d[p] = near_d[p - 1]
                    near_j[p] = near_j[p - 1]
                    p -= 1
                near_d[p] = d
                near_j[p] = j
                if n_near < kmax:
                    n_near += 1
            ch_ = math.cos(oh)
            sh_ = math.sin(oh)
            ovx = cars_f[w, c, F_VX]
            ovy = cars_f[w, c, F_VY]
            for s in range(radar.shape[2]):
                f = radar[w, c, s]
                for i in range(N_RADAR_FIELDS):
                    f[i] = 0.0
                if s >= n_near:
                    f[RADAR_DISTANCE] = radar_radius
                    radar_slot[w, c, s] = -1
                    continue
                j = near_j[s]
                d = near_d[s]
                ddx = cars_f[w, j, F_X] - ox
                ddy = cars_f[w, j, F_Y] - oy
                fwd = ddx * ch_ + ddy * sh_
                rvx = cars_f[w, j, F_VX] - ovx
                rvy = cars_f[w, j, F_VY] - ovy
                f[RADAR_FORWARD] = fwd
                f[RADAR_RIGHT] = -ddx * sh_ + ddy * ch_
                f[RADAR_DISTANCE] = d
                f[RADAR_SPEED] = cars_f[w, j, F_SPEED] - ospeed
                f[RADAR_HEADING] = wrap_angle(cars_f[w, j, F_HEADING] - oh)
                f[RADAR_AHEAD] = 1.0 if fwd > 0.0 else 0.0
                f[RADAR_SAME_LAP] = 1.0 if cars_i[w, j, I_LAP] == cars_i[w, c, I_LAP] else 0.0
                f[RADAR_VEL_FORWARD] = rvx * ch_ + rvy * sh_
                f[RADAR_VEL_RIGHT] = -rvx * sh_ + rvy * ch_
                f[RADAR_CLOSING] = -(ddx * rvx + ddy * rvy) / d if d > 0.0 else 0.0
                radar_slot[w, c, s] = j
        # ---- lookahead
        nq = lookahead_d.shape[0]
        if nq > 0:
            prog = cars_f[w, c, F_PROGRESS]
            h0, k0 = _centre_at(cs, chead, ccurv, length_l, prog)
            for q in range(nq):
                h1, k1 = _centre_at(cs, chead, ccurv, length_l, prog + lookahead_d[q])
                look[w, c, q, 0] = k1
                look[w, c, q, 1] = wrap_angle(h1 - h0)


@njit(cache=True)
def sense_worlds(tr, cars_f, cars_i, car_flags, sense_mask, ray_angle, ray_length, ray_count,
                 channel_mask, debug_precision, radar_k, radar_radius, lookahead_d, ray_dist, ray_hit,
                 ray_kind, ray_car, ray_rel_speed, radar, radar_slot, look):
    """Rays, radar and lookahead of every car with ``sense_mask`` set, in every world.

    tr: TrackArrays. cars_f float64[W, C, NF], cars_i int32[W, C, NI], car_flags int32[W, C]
    (targets need FLAG_RAY_VISIBLE / FLAG_RADAR_VISIBLE), sense_mask int8[W, C] (1 = compute).
    Ray layout per car slot: ray_angle float64[C, R] rad relative to the heading (+ right),
    ray_length float64[C, R] m, ray_count int32[C] rays used, channel_mask int32[C] (CH_* bits).
    debug_precision: int, 1 = debug precision (1 cm), 0 = driver precision (0.1 m).
    radar_k: int slots filled (the rest of the K axis reads empty), radar_radius: float64 m.
    lookahead_d float64[Q] m ahead.

    Work: per masked car one origin classification (descending from its I_SEG_HINT), per ray ~4-8
    march samples and ~0.5 bisection steps (grand-prix env benchmark), the car channel against the
    ray-visible cars within reach, radar over the car slots, lookahead by interpolation.

    Outputs (written for masked cars only; other cars' rows are left untouched):
    ray_dist float32[W, C, R, 4] m per channel (road_edge, kerb, illegal_surface, car), miss = the
    ray's length; ray_hit int8[W, C, R, 4]; ray_kind int8[W, C, R] (0 miss, 1 exit, 2 entry);
    ray_car int32[W, C, R] slot of the car hit or -1; ray_rel_speed float32[W, C, R] m/s, hit car's
    speed minus own. Unrequested channels read as misses; rays past ray_count[c] are zeros (car -1).
    A destroyed car reads misses on every ray. radar float32[W, C, K, N_RADAR_FIELDS] (RADAR_*),
    radar_slot int32[W, C, K] (-1 empty; empty fields are 0 except distance = radius).
    look float32[W, C, Q, 2]: curvature (1/m) at progress + d, heading delta (rad, wrapped).
    """
    geo = sensor_geometry(tr)
    for w in range(cars_f.shape[0]):
        sense_world(tr, geo, cars_f, cars_i, car_flags, sense_mask, ray_angle, ray_length, ray_count,
                    channel_mask, debug_precision, radar_k, radar_radius, lookahead_d, ray_dist, ray_hit,
                    ray_kind, ray_car, ray_rel_speed, radar, radar_slot, look, w)


@njit(cache=True)
def boundary_distances(tr, cars_f, w, c):
    """Distances (m) from car c's centre to the white line on its left and right, along the track
    normal, from its offset ``F_OFFSET``: (left_m, right_m), negative beyond that line."""
    return edge_distances(tr, cars_f[w, c, F_OFFSET])
