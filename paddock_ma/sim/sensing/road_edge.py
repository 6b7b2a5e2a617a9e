"""The track's ray channels as PaddockJS 2.0.0 measures them: the road edge (``estimateTrackHit``,
``src/environment/sensors/trackRays.js``; ``road_edge_ray``) and the kerb and illegal surface
(``estimateSurfaceHits``, ``surfaceRays.js``; ``surface_rays``), which take the same paths with the
kerbs' outer edge lines as well.

PaddockJS takes the first of three paths that gives an answer:

1. Edge lines (``estimateIndexedTrackHit``): unless the car is within ``PIT_RAY_WINDOW`` m (along the
   lap) of the pit entry or exit, the ray's nearest intersection with the white lines as PaddockJS
   draws them (``sensing.edge_lines``); kind exit when the car's own offset is within the half width,
   else entry, whichever way the line is crossed.
2. A straight edge (``estimateAnalyticMainTrackHit``): where no white line lies on the ray and the
   car's segment is nearly straight (PaddockJS's sample curvature <= ``ANALYTIC_MAX_CURVATURE``), the
   white lines are extended straight along the car's segment normal: a hit where the ray reaches the
   extended line (even when the real line curves away: PaddockJS's answer, kept), a miss when the ray
   runs along the track (|ray . normal| < ``MIN_LATERAL``).
3. A march (otherwise, and always near the pits): samples every metre from the car, each classified
   by its nearest centreline segment among those near the car's progress (``track_state``), with no
   refinement at driver precision (the hit reads the first whole metre past the change) and 12
   bisections at debug precision. Whole metres that provably give the same answer as the last one
   measured are skipped (``sample_quiet`` in sample mode, below; ``projection_quiet`` otherwise; for a
   car in the pit lane, outside the box around the pit surfaces only): the answer is the one every
   metre would give. The three channels
   share one walk of the edge lines and one march (``track_rays``).

The car's own state (``origin_state``) is PaddockJS's ``nearestTrackState`` in its projection mode: the
nearest segment (projection clamped to the segment) among the segments of the arc buckets around the
car's progress (``hint_range``), accepted within the runoff edge + ``HINT_MARGIN`` m, else the nearest
segment of the whole track; the signed offset is measured along the segment's start-sample normal.
The same query classifies the march's samples, so a sample far ahead along the lap is measured against
the nearest of those segments, clamped to its end, as PaddockJS does.

A car in the pit lane (PaddockJS's ``includePitLane``) always marches, a sample being inside when it is
on the asphalt or on a pit surface (``sensing.geometry.surface_code``: pit surfaces beyond the kerb).

A batch-training car's rays (``layout.FLAG_MAIN_TRACK_RAYS``; PaddockJS's ``usesMainTrackOnlyRays``)
ignore the pit window, and their queries run in PaddockJS's sample mode: the nearest centreline sample
among the candidates' ends, at any distance, the offset along that sample's normal.
"""

import math

from ..core.jit import kernel
from ..core.layout import SURF_GRASS, SURF_GRAVEL, SURF_KERB, SURF_PIT_ENTRY
from ..track.geometry import band_of, sample_turn
from ..track.surface import near_pit_connector
from .edge_lines import NONE, edge_line_hits
from .geometry import G_GRASS, G_GRAVEL, G_HW, G_KE, G_PX0, G_PX1, G_PY0, G_PY1, nearest_segment, surface_code
from .march import RAY_ILLEGAL, RAY_KERB, RAY_ROAD_EDGE

ANALYTIC_MAX_CURVATURE = 5e-5   # PaddockJS's sample curvature (heading change / 28), unitless
CURVATURE_DIVISOR = 28.0
PIT_RAY_WINDOW = 55.0           # m along the lap from the pit entry or exit (PIT_CONNECTOR_RAY_FALLBACK_METERS)
ARC_BUCKETS = 512               # PaddockJS's query index: the lap in 512 buckets ...
HINT_BUCKETS = 2                # ... of which the car's and 2 either side hold the candidate segments
HINT_MARGIN = 24.0              # m beyond the runoff edge within which a candidate is accepted
RECOVERY_MARGIN = 64.0          # m beyond the runoff edge within which paths 1 and 2 apply
TIE_D2 = 1e-6 / 144.0           # m^2: PaddockJS's AMBIGUOUS_DISTANCE_EPSILON (1e-6 sim units^2)
MIN_LATERAL = 0.08              # |ray . normal| below which the straight edge reads a miss
DEBUG_REFINE_STEPS = 12         # bisections of the march's bracket at debug precision (driver: none)
KIND_MISS = 0
KIND_EXIT = 1
KIND_ENTRY = 2


@kernel(inline="always")
def _arc_bucket(s, bucket_length):
    return int(math.floor(s / bucket_length))


@kernel
def hint_range(cs, length, progress):
    """PaddockJS's candidate segments for a query hinted with lap distance ``progress`` (m): those of
    the arc buckets within HINT_BUCKETS of its bucket -> (i0, count), segments i0, i0 + 1, ... (wrapped,
    ``count`` of them). cs: the centreline's cumulative distances float64[N+1] (m)."""
    n = cs.shape[0] - 1
    bucket_length = length / ARC_BUCKETS
    wrapped = progress % length
    centre = _arc_bucket(wrapped, bucket_length)
    b0 = (centre - HINT_BUCKETS) % ARC_BUCKETS
    b1 = (centre + HINT_BUCKETS) % ARC_BUCKETS
    if b0 == 0:
        b0 = ARC_BUCKETS      # the lap's last segment ends in bucket 512, i.e. 0: it is a candidate too
    lo = 0
    hi = n - 1
    while lo < hi:            # first segment ending in bucket b0 or later
        mid = (lo + hi) // 2
        if _arc_bucket(cs[mid + 1], bucket_length) >= b0:
            hi = mid
        else:
            lo = mid + 1
    i0 = lo
    lo = 0
    hi = n - 1
    while lo < hi:            # last segment starting in bucket b1 or earlier
        mid = (lo + hi + 1) // 2
        if _arc_bucket(cs[mid], bucket_length) <= b1:
            lo = mid
        else:
            hi = mid - 1
    return i0, (lo - i0) % n + 1


@kernel(inline="always")
def _project_segment(cx, cy, cs, cnx, cny, i, x, y):
    """PaddockJS's ``projectIndexedSegment``: (x, y) onto segment i, clamped -> (squared distance m^2,
    lap distance m of the projection, signed offset m along sample i's normal)."""
    ax = cx[i]
    ay = cy[i]
    ex = cx[i + 1] - ax
    ey = cy[i + 1] - ay
    l2 = ex * ex + ey * ey
    amount = 0.0
    if l2 > 0.0:
        amount = min(max(((x - ax) * ex + (y - ay) * ey) / l2, 0.0), 1.0)
    qx = x - (ax + ex * amount)
    qy = y - (ay + ey * amount)
    return qx * qx + qy * qy, cs[i] + (cs[i + 1] - cs[i]) * amount, qx * cnx[i] + qy * cny[i]


@kernel
def track_state(cx, cy, cs, cnx, cny, gseg, geo, i0, count, progress, max_hint2, sample_mode, x, y):
    """PaddockJS's main-track ``nearestTrackState`` of (x, y) m, hinted with the candidates (i0, count)
    of ``hint_range`` and lap distance ``progress`` -> (index, lap distance m, signed offset m).

    Projection mode (index = a segment): the nearest candidate segment, the point projected onto it
    and clamped (ties within TIE_D2 go to the projection nearer ``progress`` along the lap, then the
    first), when within sqrt(max_hint2) m, else the nearest segment of the track; (-1, 0, NONE) off
    the raster. Sample mode (PaddockJS's batch-training rays; index = a sample): the nearest sample of
    the candidate segments' ends, accepted at any distance, the offset along its normal."""
    n = cx.shape[0] - 1
    seg = -1
    best_d2 = NONE
    best_tie = NONE
    along = 0.0
    offset = 0.0
    for q in range(count + 1 if sample_mode else count):
        i = i0 + q
        if i >= n:
            i -= n
        if sample_mode:
            qx = x - cx[i]
            qy = y - cy[i]
            d2 = qx * qx + qy * qy
            s = cs[i]
            o = qx * cnx[i] + qy * cny[i]
        else:
            d2, s, o = _project_segment(cx, cy, cs, cnx, cny, i, x, y)
        tie = abs(s - progress)
        if seg < 0 or d2 < best_d2 - TIE_D2 or (abs(d2 - best_d2) <= TIE_D2 and tie < best_tie):
            seg = i
            best_d2 = d2
            best_tie = tie
            along = s
            offset = o
    if sample_mode or (seg >= 0 and best_d2 <= max_hint2):
        return seg, along, offset
    _, seg = nearest_segment(cx, cy, gseg, geo, x, y, -1)
    if seg < 0:
        return -1, 0.0, NONE
    _, along, offset = _project_segment(cx, cy, cs, cnx, cny, seg, x, y)
    return seg, along, offset


@kernel
def origin_paths(cx, cy, ch, seg, offset, along, hw, grass_edge, has_pit, entry_s, exit_s, length,
                 include_pit, main_track_only):
    """Which of PaddockJS's paths a car's rays may take, from its ``track_state`` (index, signed
    offset, lap distance along; m) -> (edge_lines, straight_edge): edge lines unless in the pit lane,
    near the pit entry or exit (not for ``main_track_only`` rays: PaddockJS's batch-training
    profile), or beyond the recovery band (runoff edge + RECOVERY_MARGIN); the straight edge where
    edge lines may be used and the sample curvature at the index is at most ANALYTIC_MAX_CURVATURE."""
    if include_pit or seg < 0 or abs(offset) > grass_edge + RECOVERY_MARGIN:
        return False, False
    if not main_track_only and has_pit and near_pit_connector(along, entry_s, exit_s, length, PIT_RAY_WINDOW):
        return False, False
    return True, sample_turn(cx, cy, ch, seg) / CURVATURE_DIVISOR <= ANALYTIC_MAX_CURVATURE


@kernel(inline="always")
def _inside(cx, cy, cs, cnx, cny, gseg, pv, geo, i0, count, progress, max_hint2, sample_mode, hw, include_pit,
            x, y):
    """The march's predicate at (x, y): on the asphalt by ``track_state``'s offset, or (in the pit
    lane) on a pit surface."""
    _, _, offset = track_state(cx, cy, cs, cnx, cny, gseg, geo, i0, count, progress, max_hint2, sample_mode,
                               x, y)
    if abs(offset) <= hw:
        return True
    if include_pit:
        a, seg = nearest_segment(cx, cy, gseg, geo, x, y, -1)
        return surface_code(pv, geo, x, y, a, seg, True) >= SURF_PIT_ENTRY
    return False


# ------------------------------------------------------------------------------------------------
# Skipping whole metres of a sample-mode march without changing its answer
# ------------------------------------------------------------------------------------------------
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
    d2w, _, off_w = _project_segment(cx, cy, cs, cnx, cny, w, x, y)
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
        d2, _, off_i = _project_segment(cx, cy, cs, cnx, cny, i, x, y)
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
def _next_metre(cx, cy, cs, cnx, cny, geo, i0, count, w, sample_mode, include_pit, n_levels, max_hint2, x, y, dx,
                dy, k, length):
    """The march's next whole metre after k (at (x, y)): given the answer ``w`` of ``track_state`` there
    (w < 0: do not skip), the first whole metre ``sample_quiet`` (sample mode) or ``projection_quiet``
    cannot vouch for (beyond ``length`` when it vouches for the rest of the ray); k + 1 when it
    vouches for none. A car in the pit lane (``include_pit``) also reads pit surfaces: no metre inside
    their box is vouched for."""
    if w < 0:
        return k + 1.0
    box = math.inf
    if include_pit:
        box = _pit_box_entry(geo, x, y, dx, dy)
        if box <= 0.0:
            return k + 1.0
    if sample_mode:
        t = sample_quiet(cx, cy, cnx, cny, geo, i0, count, w, n_levels, x, y, dx, dy)
    else:
        t = projection_quiet(cx, cy, cs, cnx, cny, geo, i0, count, w, n_levels, max_hint2, x, y, dx, dy)
    t = min(t, box - PIT_BOX_MARGIN)
    if t > length - k:
        return length + 1.0
    return k + max(1.0, math.ceil(t))


# ------------------------------------------------------------------------------------------------
# The three channels of one ray
# ------------------------------------------------------------------------------------------------
@kernel(inline="always")
def _is_illegal(code):
    """PaddockJS's illegal-surface channel: gravel or grass (not the barrier, not a pit surface)."""
    return code == SURF_GRAVEL or code == SURF_GRASS


@kernel(inline="always")
def _band_hit(offset, lateral, lo, hi, length):
    """PaddockJS's ``hitAbsOffsetBand`` on a straight edge: the first distance (m) along a ray whose
    offset changes by ``lateral`` per metre from ``offset`` at which |offset| lies in [lo, hi] (hi may
    be inf) -> (hit, distance); 0 when it already does."""
    a = abs(offset)
    if lo <= a <= hi:
        return 1, 0.0
    best = NONE
    for q in range(4):
        target = lo if q == 0 else -lo if q == 1 else hi if q == 2 else -hi
        if q >= 2 and math.isinf(hi):
            break
        d = (target - offset) / lateral
        if 0.0 <= d <= length:
            na = abs(offset + lateral * d)
            if lo - 1e-6 <= na <= hi + 1e-6 and d < best:
                best = d
    if best < NONE:
        return 1, best
    return 0, length


@kernel(inline="always")
def _surface(cx, cy, cs, cnx, cny, gseg, pv, geo, i0, count, progress, max_hint2, sample_mode, include_pit, x, y):
    """The march's surface at (x, y): the band of ``track_state``'s |offset|, or (in the pit lane) the pit
    surface beyond the kerb."""
    _, _, offset = track_state(cx, cy, cs, cnx, cny, gseg, geo, i0, count, progress, max_hint2, sample_mode,
                               x, y)
    a = abs(offset)
    if include_pit and a > geo[G_KE]:
        ta, seg = nearest_segment(cx, cy, gseg, geo, x, y, -1)
        code = surface_code(pv, geo, x, y, ta, seg, True)
        if code >= SURF_PIT_ENTRY:
            return code
    return band_of(a, geo[G_HW], geo[G_KE], geo[G_GRAVEL], geo[G_GRASS])


@kernel(inline="always")
def _answer(out_dist, out_hit, channel, wanted, distance, hit):
    """Write a wanted channel's answer (distance m, hit 0/1) into a ray's rows."""
    if wanted:
        out_dist[channel] = distance
        out_hit[channel] = hit


@kernel(inline="always")
def _straight_edge_hit(offset, lateral, hw, length):
    """PaddockJS's ``estimateAnalyticMainTrackHit``: the road edge on a straight edge, the ray's offset
    changing by ``lateral`` (|lateral| >= MIN_LATERAL) per metre from ``offset`` -> (hit, distance m,
    kind)."""
    inside0 = abs(offset) <= hw
    if inside0:
        target = hw if lateral > 0.0 else -hw
    elif offset > hw and lateral < 0.0:
        target = hw
    elif offset < -hw and lateral > 0.0:
        target = -hw
    else:
        return 0, length, KIND_MISS
    d = (target - offset) / lateral
    if d < 0.0 or d > length:
        return 0, length, KIND_MISS
    return 1, d, KIND_EXIT if inside0 else KIND_ENTRY


@kernel
def track_rays(cx, cy, cs, cnx, cny, gseg, pv, geo, grid_at, i0, count, progress, max_hint2, sample_mode, seg,
               offset, edge_lines, straight_edge, include_pit, want_edge, want_kerb, want_illegal, ox, oy, dx, dy,
               length, debug, out_dist, out_hit):
    """The track channels of one ray of a car at (ox, oy) m along the unit (dx, dy), ``length`` m, as
    PaddockJS measures them: the road edge (``estimateTrackHit``), the kerb and the illegal surface
    (``estimateSurfaceHits``). Writes out_dist[RAY_ROAD_EDGE .. RAY_ILLEGAL] (m; miss = length) and
    out_hit for the wanted channels; returns the road edge's kind (KIND_*; KIND_MISS when not wanted).

    (i0, count, progress, max_hint2): the car's ``hint_range``, progress and squared acceptance radius;
    (seg, offset): its ``track_state``; (edge_lines, straight_edge): ``origin_paths``; grid_at: where
    ``geo`` holds the edge-line grid. Each channel takes the first of PaddockJS's paths that answers
    (module docstring): the edge lines (one walk of the grid serves all three; road edge: the nearest
    white line; kerb: the nearer of the white line and the kerb's outer line, illegal: the kerb's outer
    line, 0 when the car is on that surface; the path fails for both surface channels when either finds
    no line), the straight edge, the whole-metre march. Channels left to the march share it: each
    sample is classified once for all of them, and the march ends when every one has its answer."""
    hw = geo[G_HW]
    ke = geo[G_KE]
    kind = KIND_MISS
    _answer(out_dist, out_hit, RAY_ROAD_EDGE, want_edge, length, 0)
    _answer(out_dist, out_hit, RAY_KERB, want_kerb, length, 0)
    _answer(out_dist, out_hit, RAY_ILLEGAL, want_illegal, length, 0)
    march_edge = want_edge
    march_surface = want_kerb or want_illegal
    if edge_lines:
        track_d, kerb_d = edge_line_hits(geo, grid_at, ox, oy, dx, dy, length, march_surface)
        lateral = dx * cnx[seg] + dy * cny[seg]
        along_track = abs(lateral) < MIN_LATERAL
        if want_edge:
            if track_d < NONE:
                _answer(out_dist, out_hit, RAY_ROAD_EDGE, True, track_d, 1)
                kind = KIND_EXIT if abs(offset) <= hw else KIND_ENTRY
                march_edge = False
            elif straight_edge:
                if not along_track:
                    hit, d, kind = _straight_edge_hit(offset, lateral, hw, length)
                    _answer(out_dist, out_hit, RAY_ROAD_EDGE, True, d, hit)
                march_edge = False
        if march_surface:
            code0 = band_of(abs(offset), hw, ke, geo[G_GRAVEL], geo[G_GRASS])
            d_kerb = 0.0 if code0 == SURF_KERB else min(track_d, kerb_d)
            d_ill = 0.0 if _is_illegal(code0) else kerb_d
            if (not want_kerb or d_kerb < NONE) and (not want_illegal or d_ill < NONE):
                _answer(out_dist, out_hit, RAY_KERB, want_kerb, d_kerb, 1)
                _answer(out_dist, out_hit, RAY_ILLEGAL, want_illegal, d_ill, 1)
                march_surface = False
            elif straight_edge:
                if not along_track:
                    h, d = _band_hit(offset, lateral, hw, ke, length)
                    _answer(out_dist, out_hit, RAY_KERB, want_kerb, d, h)
                    h, d = _band_hit(offset, lateral, ke, math.inf, length)
                    _answer(out_dist, out_hit, RAY_ILLEGAL, want_illegal, d, h)
                march_surface = False
    if not (march_edge or march_surface):
        return kind
    # the march: whole metres from the car (PaddockJS: 12 sim units a step, exact), each sample
    # classified once (its band, and for a car in the pit lane its pit surface) for every channel
    # still looking; the whole metres that ``sample_quiet`` or ``projection_quiet`` vouches for are
    # skipped (for a car in the pit lane, only outside the pit surfaces' box)
    march_kerb = march_surface and want_kerb
    march_illegal = march_surface and want_illegal
    k = 0.0
    prev_inside = False
    while k <= length and (march_edge or march_kerb or march_illegal):
        x = ox + dx * k
        y = oy + dy * k
        w, _, offset_k = track_state(cx, cy, cs, cnx, cny, gseg, geo, i0, count, progress, max_hint2, sample_mode,
                                     x, y)
        a = abs(offset_k)
        code = band_of(a, hw, ke, geo[G_GRAVEL], geo[G_GRASS])
        inside = a <= hw
        if include_pit and a > hw:
            ta, tseg = nearest_segment(cx, cy, gseg, geo, x, y, -1)
            pit_code = surface_code(pv, geo, x, y, ta, tseg, True)
            if pit_code >= SURF_PIT_ENTRY:
                inside = True
                if a > ke:
                    code = pit_code
        if march_edge:
            if k == 0.0:
                prev_inside = inside
            elif inside != prev_inside:
                lo = k - 1.0
                hi = k
                for _ in range(DEBUG_REFINE_STEPS if debug else 0):
                    mid = 0.5 * (lo + hi)
                    if _inside(cx, cy, cs, cnx, cny, gseg, pv, geo, i0, count, progress, max_hint2, sample_mode, hw,
                               include_pit, ox + dx * mid, oy + dy * mid) != prev_inside:
                        hi = mid
                    else:
                        lo = mid
                out_dist[RAY_ROAD_EDGE] = hi
                out_hit[RAY_ROAD_EDGE] = 1
                kind = KIND_EXIT if prev_inside else KIND_ENTRY
                march_edge = False
        for ch in range(RAY_KERB, RAY_ILLEGAL + 1):
            if not (march_kerb if ch == RAY_KERB else march_illegal):
                continue
            if (code == SURF_KERB) if ch == RAY_KERB else _is_illegal(code):
                lo = k - 1.0
                hi = k
                for _ in range(DEBUG_REFINE_STEPS if (debug and k > 0.0) else 0):
                    mid = 0.5 * (lo + hi)
                    c = _surface(cx, cy, cs, cnx, cny, gseg, pv, geo, i0, count, progress, max_hint2, sample_mode,
                                 include_pit, ox + dx * mid, oy + dy * mid)
                    if (c == SURF_KERB) if ch == RAY_KERB else _is_illegal(c):
                        hi = mid
                    else:
                        lo = mid
                out_dist[ch] = hi
                out_hit[ch] = 1
                if ch == RAY_KERB:
                    march_kerb = False
                else:
                    march_illegal = False
        # the next whole metre whose answer may differ for a channel still looking (the surfaces' four
        # bands, or the road edge's inside / outside alone)
        levels = 4 if (march_kerb or march_illegal) else 1
        k = _next_metre(cx, cy, cs, cnx, cny, geo, i0, count, w, sample_mode, include_pit, levels, max_hint2, x, y,
                        dx, dy, k, length)
    return kind
