"""Skipping whole metres of the track rays' march without changing its answer (``sensing.road_edge``):
from a measured sample, the distance along the ray over which ``track_state`` provably answers in the
same band (``sample_quiet``, ``projection_quiet``), and the march's next whole metre (``next_metre``)."""

import math

from ..core.jit import kernel
from .geometry import G_GRASS, G_GRAVEL, G_HW, G_KE, G_PX0, G_PX1, G_PY0, G_PY1
from ..track.pit_quiet import pit_surface_quiet
from .track_state import project_segment

QUIET_D2 = 1e-3       # m^2: a sample nearer than the winner's squared distance + this may take over
QUIET_OFFSET = 1e-4   # m: an offset this near a band edge may cross it


@kernel(inline="always")
def _band_edge(geo, level):
    return geo[G_HW] if level == 0 else geo[G_KE] if level == 1 else geo[G_GRAVEL] if level == 2 else geo[G_GRASS]


@kernel(inline="always")
def _band_level(off, geo, n_levels):
    """How many of the first ``n_levels`` band edges |off| (m) lies beyond: the march's answer at that
    offset (``band_of`` for 4 levels, inside / outside the white line for 1)."""
    a = abs(off)
    level = 0
    while level < n_levels and a > _band_edge(geo, level):
        level += 1
    return level


@kernel(inline="always")
def _band_time(off, slope, geo, n_levels):
    """How far (m) along the ray an offset ``off`` (m) changing by ``slope`` per metre stays more than
    QUIET_OFFSET from each of the first ``n_levels`` band edges (either sign): 0 when it is within it."""
    t = math.inf
    for level in range(n_levels):
        edge = _band_edge(geo, level)
        for target in (edge, -edge):
            to_go = target - off
            if abs(to_go) <= QUIET_OFFSET:
                return 0.0
            if to_go * slope > 0.0:
                t = min(t, (abs(to_go) - QUIET_OFFSET) / abs(slope))
    return t


@kernel
def sample_quiet(cx, cy, cnx, cny, geo, i0, count, w, n_levels, x, y, dx, dy):
    """How far (m) along the ray from (x, y) (unit direction (dx, dy)) the sample-mode ``track_state``
    provably answers with an offset in the same band as at (x, y), where it answers with sample ``w``;
    the bands are those of the first ``n_levels`` edges (half width, kerb, gravel, grass edges; either
    sign): 0 when that cannot be shown at (x, y) itself.

    Along the ray every candidate's offset changes linearly, and so does its squared distance minus
    w's (the t^2 terms cancel). A candidate j can become the nearest only once that difference comes
    within QUIET_D2 (the scan's tie rule, TIE_D2 per candidate, acts far inside it): before that time
    j cannot answer; after it, j's answer is the same band as w's for as long as j's own offset stays
    in that band. The distance returned is the first time at which some candidate might answer with
    another band, or w's offset comes within QUIET_OFFSET of an edge. Both margins exceed float64
    rounding on track coordinates by orders of magnitude, so every whole metre before it gives the
    same answer as at (x, y)."""
    n = cx.shape[0] - 1
    qwx = x - cx[w]
    qwy = y - cy[w]
    dw = qwx * qwx + qwy * qwy
    bw = qwx * dx + qwy * dy
    off_w = qwx * cnx[w] + qwy * cny[w]
    level_w = _band_level(off_w, geo, n_levels)
    t = _band_time(off_w, dx * cnx[w] + dy * cny[w], geo, n_levels)
    for q in range(count + 1):
        if t <= 0.0:
            return 0.0
        i = i0 + q
        if i >= n:
            i -= n
        if i == w:
            continue
        qx = x - cx[i]
        qy = y - cy[i]
        gap = qx * qx + qy * qy - dw
        closing = bw - (qx * dx + qy * dy)      # half the rate at which the gap shrinks per metre
        if gap <= QUIET_D2:
            t_win = 0.0
        elif closing > 0.0:
            t_win = (gap - QUIET_D2) / (2.0 * closing)
        else:
            continue                            # j never comes nearer than w along the ray
        if t_win >= t:
            continue
        off_i = qx * cnx[i] + qy * cny[i]
        if _band_level(off_i, geo, n_levels) == level_w:
            t = min(t, max(t_win, _band_time(off_i, dx * cnx[i] + dy * cny[i], geo, n_levels)))
        else:
            t = t_win
    return max(t, 0.0)


QUIET_D = 1e-3        # m: a segment nearer than the winner's distance + this may take over


@kernel
def projection_quiet(cx, cy, cs, cnx, cny, geo, i0, count, w, n_levels, max_hint2, x, y, dx, dy):
    """``sample_quiet`` for the projection-mode ``track_state`` (PaddockJS's ``nearestTrackState`` with
    clamped projections), where ``w`` is the segment answering at (x, y).

    Distances to segments are not linear along the ray, but each changes by at most a metre per
    metre: a candidate j can become the nearest only once t >= (d_j - d_w - QUIET_D) / 2. Its offset
    (measured from its projection, along its start sample's normal) is piecewise linear along the ray,
    with the slope n.d where the projection is clamped to an end and n.d - (e.n)(e.d) in between (e
    the segment's unit direction): it stays in its band while the larger of the two slopes times t
    keeps it QUIET_OFFSET from every edge. The answer also stays with the candidates while the nearest
    distance, at most d_w + t, stays within the acceptance radius (sqrt(max_hint2)); beyond it
    ``track_state`` asks the whole track, and where it did (w is no candidate) nothing is vouched for.
    -> the distance (m) over which every whole metre gives the band at (x, y); 0 when that cannot be
    shown."""
    n = cx.shape[0] - 1
    if (w - i0) % n >= count:
        return 0.0                  # w is the whole track's answer (no candidate was accepted)
    d2w, _, off_w = project_segment(cx, cy, cs, cnx, cny, w, x, y)
    dw = math.sqrt(d2w)
    t = math.sqrt(max_hint2) - dw - QUIET_D
    if t <= 0.0:
        return 0.0
    level_w = _band_level(off_w, geo, n_levels)
    t = min(t, _band_time_either_way(off_w, _offset_slope(cx, cy, cnx, cny, w, dx, dy), geo, n_levels))
    for q in range(count):
        if t <= 0.0:
            return 0.0
        i = i0 + q
        if i >= n:
            i -= n
        if i == w:
            continue
        d2, _, off_i = project_segment(cx, cy, cs, cnx, cny, i, x, y)
        t_win = 0.5 * (math.sqrt(d2) - dw - QUIET_D)
        if t_win >= t:
            continue
        t_win = max(t_win, 0.0)
        if _band_level(off_i, geo, n_levels) == level_w:
            t = min(t, max(t_win, _band_time_either_way(off_i, _offset_slope(cx, cy, cnx, cny, i, dx, dy), geo,
                                                        n_levels)))
        else:
            t = t_win
    return max(t, 0.0)


@kernel(inline="always")
def _band_time_either_way(off, rate, geo, n_levels):
    """``_band_time`` for an offset that may change either way at up to ``rate`` (m per metre)."""
    return min(_band_time(off, rate, geo, n_levels), _band_time(off, -rate, geo, n_levels))


@kernel(inline="always")
def _offset_slope(cx, cy, cnx, cny, i, dx, dy):
    """The largest rate (m per metre along the unit (dx, dy)) at which the offset from segment i
    changes, either way: |n.d| with the projection clamped, |n.d - (e.n)(e.d)| with it inside (e the
    unit direction), widened far beyond rounding."""
    ex = cx[i + 1] - cx[i]
    ey = cy[i + 1] - cy[i]
    el = math.sqrt(ex * ex + ey * ey)
    nd = dx * cnx[i] + dy * cny[i]
    if el <= 0.0:
        return abs(nd)
    ex /= el
    ey /= el
    inner = nd - (ex * cnx[i] + ey * cny[i]) * (ex * dx + ey * dy)
    return max(abs(nd), abs(inner)) * (1.0 + 1e-9) + 1e-12


PIT_BOX_MARGIN = 1e-3  # m around the pit surfaces' box, beyond which a sample cannot be on one


@kernel(inline="always")
def _pit_box_entry(geo, x, y, dx, dy):
    """Distance (m) along the ray from (x, y) (unit (dx, dy)) to where it enters the box around every pit
    surface (``geo[G_PX0:G_PY1 + 1]``, widened by PIT_BOX_MARGIN): 0 from inside it, inf when it never
    does. Outside that box a sample's surface is its band (``surface_code``)."""
    x0 = geo[G_PX0] - PIT_BOX_MARGIN
    x1 = geo[G_PX1] + PIT_BOX_MARGIN
    y0 = geo[G_PY0] - PIT_BOX_MARGIN
    y1 = geo[G_PY1] + PIT_BOX_MARGIN
    if x0 <= x <= x1 and y0 <= y <= y1:
        return 0.0
    t0 = 0.0
    t1 = math.inf
    for o, d, lo, hi in ((x, dx, x0, x1), (y, dy, y0, y1)):
        if d == 0.0:
            if o < lo or o > hi:
                return math.inf
        else:
            ta = (lo - o) / d
            tb = (hi - o) / d
            t0 = max(t0, min(ta, tb))
            t1 = min(t1, max(ta, tb))
    return t0 if t0 <= t1 else math.inf


@kernel(inline="always")
def _pit_box_exit(geo, x, y, dx, dy):
    """Distance (m) along the ray from (x, y) (unit (dx, dy)), inside the box around every pit surface,
    to where it leaves the box as ``surface_code`` tests it (outside it no sample reads a pit surface),
    less 1e-7 m for rounding."""
    t = math.inf
    for o, d, lo, hi in ((x, dx, geo[G_PX0], geo[G_PX1]), (y, dy, geo[G_PY0], geo[G_PY1])):
        if d > 0.0:
            t = min(t, (hi - o) / d)
        elif d < 0.0:
            t = min(t, (lo - o) / d)
    return max(0.0, t - 1e-7)


@kernel(inline="always")
def pit_test_quiet(pv, geo, x, y, dx, dy):
    """How far (m) along the ray from (x, y) (unit (dx, dy)), inside the pit surfaces' box, the march's
    pit test of a car in the pit lane (``pit_surface`` there) keeps its answer (on a pit surface or
    not, on a pit box or not): while the ray stays in the box and ``pit_surface_quiet`` vouches for it.
    Whether the answer overrides the band (beyond the kerb) is the band's: the march's levels."""
    t = min(pit_surface_quiet(pv, x, y, dx, dy), _pit_box_exit(geo, x, y, dx, dy))
    return max(0.0, t - 1e-7)


@kernel(inline="always")
def next_metre(rt, o, w, include_pit, pit_t, n_levels, x, y, dx, dy, k, length):
    """The march's next whole metre after k (at (x, y)) of a ray of the car ``o`` (``track_state.RayOrigin``)
    on ``rt`` (``track_state.RayTrack``): given the answer ``w`` of ``track_state`` there (w < 0: do not
    skip), the first whole metre ``sample_quiet`` (sample mode) or ``projection_quiet`` cannot vouch for
    (beyond ``length`` when it vouches for the rest of the ray); k + 1 when it vouches for none. A car in
    the pit lane (``include_pit``) also reads pit surfaces: outside their box until the ray enters it,
    inside it for ``pit_t`` m (``pit_test_quiet`` of the sample's pit test)."""
    if w < 0:
        return k + 1.0
    box = math.inf
    if include_pit:
        box = _pit_box_entry(rt.geo, x, y, dx, dy)
        if box <= 0.0:                  # inside the box: while the pit test keeps its answer
            box = pit_t + PIT_BOX_MARGIN
    if o.sample_mode:
        t = sample_quiet(rt.cx, rt.cy, rt.cnx, rt.cny, rt.geo, o.i0, o.count, w, n_levels, x, y, dx, dy)
    else:
        t = projection_quiet(rt.cx, rt.cy, rt.cs, rt.cnx, rt.cny, rt.geo, o.i0, o.count, w, n_levels,
                             rt.max_hint2, x, y, dx, dy)
    t = min(t, box - PIT_BOX_MARGIN)
    if t > length - k:
        return length + 1.0
    return k + max(1.0, math.ceil(t))
