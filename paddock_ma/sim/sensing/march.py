"""The surface-ray march of ``sensing.sensors``: safe steps from band-edge distances, curvature and the
pit-area raster, exact classification of each sample (``sensing.geometry``), and bisection of the
crossings (see the docstring of ``paddock_ma.sim.sensing.sensors`` for the method and its precision
contract)."""

import math

from ..core.jit import kernel
from ..core.layout import CAR_LENGTH, CAR_WIDTH, SURF_BARRIER, SURF_GRAVEL, SURF_KERB, SURF_PIT_ENTRY, SURF_TRACK
from .geometry import (
    DERIV_WINDOW, FAR, G_HW, G_KE, G_PX0, G_PX1, G_PY0, G_PY1, G_TRUST, N_GEO, surface_code, guess_segment,
    nearest_segment, pit_gap,
)

# The ray channels, in PaddockJS's listing order (the config's names). A channel's position here is its
# index in the last axis of ``ray_dist`` / ``ray_hit`` (RAY_*) and 1 << position its bit in
# ``channel_mask`` (CH_*).
RAY_CHANNELS = ("road_edge", "kerb", "illegal_surface", "car")
RAY_ROAD_EDGE = 0
RAY_KERB = 1
RAY_ILLEGAL = 2
RAY_CAR = 3
N_RAY_CHANNELS = 4
CH_ROAD_EDGE = 1 << RAY_ROAD_EDGE
CH_KERB = 1 << RAY_KERB
CH_ILLEGAL = 1 << RAY_ILLEGAL
CH_CAR = 1 << RAY_CAR
CH_ALL = (1 << N_RAY_CHANNELS) - 1
CHANNEL_BITS = {name: 1 << i for i, name in enumerate(RAY_CHANNELS)}
assert len(RAY_CHANNELS) == N_RAY_CHANNELS and CHANNEL_BITS["car"] == CH_CAR
KIND_MISS = 0
KIND_EXIT = 1
KIND_ENTRY = 2

# Marching constants (m).
MIN_STEP = 0.199         # driver precision: smallest march step (< 2 x TOLERANCE: one bisection)
TOLERANCE = 0.1          # driver precision: bisection bracket
DEBUG_MIN_STEP = 0.0199
DEBUG_TOLERANCE = 0.01
PIT_MIN_STEP = 0.05      # smallest step where pit surfaces are involved (thin slivers between parts)
EDGE_STEP = 0.001        # step past the exact edge of a pit-lane rectangle (``pit_rect_gap``)
DEBUG_PIT_MIN_STEP = 0.01
HALF_L = 0.5 * CAR_LENGTH
HALF_W = 0.5 * CAR_WIDTH
BODY_RADIUS = math.sqrt(HALF_L * HALF_L + HALF_W * HALF_W)   # ~2.41 m, broad phase


@kernel
def _inside(code, origin_pit):
    """Road-edge predicate: on the asphalt (pit surfaces too when the origin is on one)."""
    return code == SURF_TRACK or (origin_pit and code >= SURF_PIT_ENTRY)


@kernel
def _illegal(code):
    return SURF_GRAVEL <= code <= SURF_BARRIER


@kernel
def _pred(ch, code, origin_pit):
    if ch == RAY_ROAD_EDGE:
        return _inside(code, origin_pit)
    if ch == RAY_KERB:
        return code == SURF_KERB
    return _illegal(code)


@kernel(inline='always')
def _safe_gap(geo, a, need_edge, need_kerb, need_ill, origin_pit):
    """Distance (m) the ray can advance from a point at |offset| a without changing any open
    channel's predicate. Exact where only main-track bands matter (|offset| is 1-Lipschitz); 0 where
    a pit surface may be involved (the caller falls back to the raster bound)."""
    hw = geo[G_HW]
    ke = geo[G_KE]
    gap = FAR
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


@kernel(inline='always')
def _solve_step(g, r, acc):
    """Smallest t >= 0 with r t + acc t^2 / 2 = g (g > 0): how far the ray can go before an offset
    that starts g from an edge, approaching at rate r (m/m) with |rate change| <= acc t, gets there."""
    q = r * r + 2.0 * acc * g
    den = r + math.sqrt(q)
    if den <= 0.0:
        return FAR
    return 2.0 * g / den


@kernel(inline='always')
def _ray_frame(cx, cy, geo, seg, x, y, dx, dy, a):
    """Signed offset o (m, + right) of a sample at |offset| a with nearest segment seg, the offset's
    rate v0 = d . n along the ray (m/m) and the segment's length (m) -> (o, v0, seg_len). The
    length and its inverse come from ``geo`` (no square root or division per sample)."""
    n = cx.shape[0] - 1
    ax = cx[seg]
    ay = cy[seg]
    ex = cx[seg + 1] - ax
    ey = cy[seg + 1] - ay
    cross = ex * (y - ay) - ey * (x - ax)
    o = a if cross >= 0.0 else -a
    v0 = (-dx * ey + dy * ex) * geo[N_GEO + 2 * n + seg]
    return o, v0, geo[N_GEO + n + seg]


@kernel(inline='always')
def _deriv_step(geo, seg, o, v0, seg_len, a, need_edge, need_kerb, need_ill, gap):
    """Safe step (m) from the signed offset's rate along the ray, or 0 when it does not apply.

    With o the signed offset of the sample (nearest segment ``seg``) and v0 = d . n its rate along
    the ray (d the ray direction, n the segment's right normal), the rate changes by at most the
    turning of the centreline between the two projections: |o'(t) - v0| <= k (t / (1 - k a_max) + l),
    k the largest turning rate (1.5 x |ccurv|, polyline slack) within +-DERIV_WINDOW segments, l a
    segment length, a_max the outermost edge. The step is the first t at which o could reach any
    open channel's edge (+-half_width, +-kerb_edge), capped so the projection stays in the window.
    Inside the outermost open edge, a_max is that edge. Outside it (a car off the track whose
    illegal-surface channel is resolved at its origin: no pit surface can matter), the trust radius
    serves as a_max and as an extra edge the step stops at, so |o| stays where the local
    centreline is the nearest part of the track. Returns 0 early when even a straight centreline
    would not allow more than ``gap`` (the Lipschitz step already known).
    """
    hw = geo[G_HW]
    ke = geo[G_KE]
    e_out = ke if (need_kerb or need_ill) else hw
    if a >= e_out:
        if need_ill:
            return 0.0
        a_max = geo[G_TRUST]
        if a >= a_max:
            return 0.0
        if o > 0.0:
            up = a_max
            dn = e_out
        else:
            up = -e_out
            dn = -a_max
    else:
        a_max = e_out
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
    if km * a_max >= 0.5:
        return 0.0
    acc = km / (1.0 - km * a_max)
    slack = km * seg_len
    t_up = _solve_step(up - o, v0 + slack, acc)
    t_dn = _solve_step(o - dn, -v0 + slack, acc)
    cap = (DERIV_WINDOW - 2) * seg_len * (1.0 - km * a_max)
    return min(t_up, t_dn, cap)


@kernel(inline='always')
def _near_crossing(geo, o, v0, need_edge, need_kerb, need_ill, origin_pit, gap, tol):
    """True when the straight-edge prediction of the next open edge crossing (signed offset o and its
    rate v0 along the ray) lies less than tol / 2 past the safe step ``gap`` (m). Only a step-size
    hint: any answer keeps the march exact."""
    if abs(v0) < 0.2:
        return False
    hw = geo[G_HW]
    ke = geo[G_KE]
    use_hw = need_edge or need_kerb
    use_ke = need_kerb or need_ill or (need_edge and origin_pit)
    if v0 < 0.0:      # mirror: approach from above becomes approach from below
        o = -o
        v0 = -v0
    best = FAR
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
    return best - gap * v0 < 0.5 * tol * v0     # best / v0 - gap < tol / 2, v0 > 0


@kernel(inline='always')
def _bisect(cx, cy, gseg, pv, geo, ox, oy, dx, dy, lo, hi, seg, ch, p0, origin_pit, tol):
    """First point past the predicate change in [lo, hi] (pred(lo) == p0 != pred(hi)), to ``tol``.
    seg: nearest segment at lo (descent start)."""
    want_pit = ch == RAY_ILLEGAL or (ch == RAY_ROAD_EDGE and origin_pit)
    while hi - lo > tol:
        mid = 0.5 * (lo + hi)
        x = ox + mid * dx
        y = oy + mid * dy
        a, sg = nearest_segment(cx, cy, gseg, geo, x, y, seg)
        if _pred(ch, surface_code(pv, geo, x, y, a, sg, want_pit), origin_pit) != p0:
            hi = mid
        else:
            lo = mid
            seg = sg
    return hi


@kernel
def march_ray(cx, cy, gseg, gpred, fpred, fgrid, pv, geo, ox, oy, code0, a0, seg0, angle, length, mask,
              debug, out_dist, out_hit):
    """Surface channels of one ray from (ox, oy) m along ``angle`` (rad, world) for ``length`` m.

    cx, cy, gseg (grid_seg), gpred (grid_pred_edge), fpred / fgrid (fine_pred_edge / fine_grid): the
    track's arrays; pv: ``pit_view(tr)``;
    geo: ``sensor_geometry(tr)``; (code0, a0, seg0): ``classify`` of the origin. mask: channel
    bitmask (bits 1, 2, 4 are used here); debug: 1 = debug precision. Writes out_dist[0:3] (float32
    m; miss = length) and out_hit[0:3] (int8) for the requested channels and returns the road-edge
    kind (0 miss, 1 exit, 2 entry).
    """
    return march_dir(cx, cy, gseg, gpred, fpred, fgrid, pv, geo, ox, oy, code0, a0, seg0,
                  math.cos(angle), math.sin(angle), length, mask, debug, out_dist, out_hit)


@kernel(inline="always")
def march_dir(cx, cy, gseg, gpred, fpred, fgrid, pv, geo, ox, oy, code0, a0, seg0, dx, dy, length, mask,
           debug, out_dist, out_hit):
    """``march_ray`` with the ray's unit direction (dx, dy) given (the caller shares its cos / sin
    with the car channel). Inlined into its callers: as a call, passing its ~20 arguments (every array
    is several machine words) cost ~50 ns per ray, a quarter of a ray that crosses the track."""
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
        if want_pit and geo[G_PX0] <= x <= geo[G_PX1] and geo[G_PY0] <= y <= geo[G_PY1]:
            # pit surfaces matter here: a finer floor, the pit layout leaves thin slivers of the band
            # between its parts and the kerb (e.g. gravel between the kerb and a connector)
            step_min = pit_min_step
        if gap <= 0.0:
            # pit geometry involved: the open channels' predicate raster bounds
            gap, on_edge = pit_gap(gpred, fpred, fgrid, pv, geo, x, y, dx, dy, a, need_edge, need_kerb,
                                    need_ill, origin_pit)
            if on_edge:
                # the step ends on a pit-lane rectangle's edge: look just past it
                step_min = EDGE_STEP
        else:
            if seg >= 0:
                o, v0, seg_len = _ray_frame(cx, cy, geo, seg, x, y, dx, dy, a)
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
        hint = guess_segment(cx, cy, geo, seg, dx, dy, tn - t)
        if a - (tn - t) > geo[G_TRUST]:
            # |offset| is 1-Lipschitz: the new sample lies beyond the trust radius too, where the
            # descent's answer would be discarded for the raster's; go to the raster directly
            hint = -1
        a, sn = nearest_segment(cx, cy, gseg, geo, x, y, hint)
        code = surface_code(pv, geo, x, y, a, sn, want_pit)
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
