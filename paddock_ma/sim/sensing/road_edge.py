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
on the asphalt or its state is overridden by a pit surface (``track.surface.pit_override``: a pit box
anywhere, another pit surface beyond the kerb, by the sample's own ``track_state`` offset); the kerb and
illegal channels then read that pit surface (legal, not a kerb).

A batch-training car's rays (``layout.FLAG_MAIN_TRACK_RAYS``; PaddockJS's ``usesMainTrackOnlyRays``)
ignore the pit window, and their queries run in PaddockJS's sample mode: the nearest centreline sample
among the candidates' ends, at any distance, the offset along that sample's normal.
"""

import math

from ..core.jit import kernel
from ..core.layout import SURF_GRASS, SURF_GRAVEL, SURF_KERB
from ..track.geometry import band_of, sample_turn
from ..track.surface import near_pit_connector, pit_override
from .edge_lines import NONE, edge_line_hits
from .geometry import G_GRASS, G_GRAVEL, G_HW, G_KE, G_PX0, G_PX1, G_PY0, G_PY1
from .march import RAY_ILLEGAL, RAY_KERB, RAY_ROAD_EDGE
from .march_skip import next_metre, pit_test_quiet
from .track_state import track_state

ANALYTIC_MAX_CURVATURE = 5e-5   # PaddockJS's sample curvature (heading change / 28), unitless
CURVATURE_DIVISOR = 28.0
PIT_RAY_WINDOW = 55.0           # m along the lap from the pit entry or exit (PIT_CONNECTOR_RAY_FALLBACK_METERS)
RECOVERY_MARGIN = 64.0          # m beyond the runoff edge within which paths 1 and 2 apply
MIN_LATERAL = 0.08              # |ray . normal| below which the straight edge reads a miss
DEBUG_REFINE_STEPS = 12         # bisections of the march's bracket at debug precision (driver: none)
KIND_MISS = 0
KIND_EXIT = 1
KIND_ENTRY = 2


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
    a = abs(offset)
    if a <= hw:
        return True
    if include_pit:
        return _pit_code(pv, geo, x, y, a) >= 0
    return False


@kernel(inline="always")
def _pit_code(pv, geo, x, y, a):
    """``track.surface.pit_override`` at (x, y) of |offset| a, -1 outside the pit surfaces' box without a
    look."""
    if geo[G_PX0] <= x <= geo[G_PX1] and geo[G_PY0] <= y <= geo[G_PY1]:
        return pit_override(pv, x, y, a, geo[G_KE])
    return -1


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
def _surface(cx, cy, cs, cnx, cny, gseg, pv, geo, i0, count, progress, max_hint2, sample_mode, pit_allowed, x, y):
    """The march's surface at (x, y): the band of ``track_state``'s |offset|, or (for a car PaddockJS's pit
    override allows) the pit surface where it overrides the band."""
    _, _, offset = track_state(cx, cy, cs, cnx, cny, gseg, geo, i0, count, progress, max_hint2, sample_mode,
                               x, y)
    a = abs(offset)
    if pit_allowed:
        p = _pit_code(pv, geo, x, y, a)
        if p >= 0:
            return p
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
               offset, edge_lines, straight_edge, include_pit, pit_allowed, want_edge, want_kerb, want_illegal, ox, oy,
               dx, dy,
               length, debug, out_dist, out_hit):
    """The track channels of one ray of a car at (ox, oy) m along the unit (dx, dy), ``length`` m, as
    PaddockJS measures them: the road edge (``estimateTrackHit``), the kerb and the illegal surface
    (``estimateSurfaceHits``). Writes out_dist[RAY_ROAD_EDGE .. RAY_ILLEGAL] (m; miss = length) and
    out_hit for the wanted channels; returns the road edge's kind (KIND_*; KIND_MISS when not wanted).

    (i0, count, progress, max_hint2): the car's ``hint_range``, progress and squared acceptance radius;
    include_pit: PaddockJS's ``includePitLane`` (a sample its pit override puts in the pit lane is inside
    the road edge); pit_allowed: its ``pitOverrideAllowedForCar`` (the kerb and illegal channels read
    the pit override's surface);
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
    # still looking; the whole metres that ``sample_quiet`` or ``projection_quiet`` (and for a car in
    # the pit lane ``pit_surface_quiet``) vouches for are skipped
    march_kerb = march_surface and want_kerb
    march_illegal = march_surface and want_illegal
    k = 0.0
    read_pit = include_pit or (pit_allowed and (march_kerb or march_illegal))
    prev_inside = False
    while k <= length and (march_edge or march_kerb or march_illegal):
        x = ox + dx * k
        y = oy + dy * k
        w, _, offset_k = track_state(cx, cy, cs, cnx, cny, gseg, geo, i0, count, progress, max_hint2, sample_mode,
                                     x, y)
        a = abs(offset_k)
        code = band_of(a, hw, ke, geo[G_GRAVEL], geo[G_GRASS])
        inside = a <= hw
        pit_t = math.inf
        if read_pit and geo[G_PX0] <= x <= geo[G_PX1] and geo[G_PY0] <= y <= geo[G_PY1]:
            # PaddockJS's pit override of the sample's state: a pit box anywhere, another pit surface
            # beyond the kerb (the state then in the pit lane: inside the road edge for a car in the pit
            # lane; its surface for the surface channels)
            pit_code = pit_override(pv, x, y, a, ke)
            pit_t = pit_test_quiet(pv, geo, x, y, dx, dy)
            if pit_code >= 0:
                inside = inside or include_pit
                if pit_allowed:
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
                                 pit_allowed, ox + dx * mid, oy + dy * mid)
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
        # the next whole metre whose answer may differ for a channel still looking: the illegal surface's
        # four band edges; the kerb's two (the white line and the kerb's outer edge: a runoff car's kerb
        # ray, its illegal channel answered at its origin, skips the gravel and grass edges); the road
        # edge's inside / outside alone, for a car in the pit lane with the kerb's outer edge, beyond which
        # a pit surface counts as inside
        levels = 4 if march_illegal else 2 if (march_kerb or include_pit) else 1
        read_pit = include_pit or (pit_allowed and (march_kerb or march_illegal))
        k = next_metre(cx, cy, cs, cnx, cny, geo, i0, count, w, sample_mode, read_pit, pit_t, levels, max_hint2,
                       x, y, dx, dy, k, length)
    return kind
