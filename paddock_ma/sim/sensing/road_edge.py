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
from .track_state import state_at

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
def _inside(rt, o, x, y):
    """The march's predicate at (x, y) of a ray of the car ``o``: on the asphalt by ``track_state``'s offset,
    or (in the pit lane) on a pit surface."""
    _, _, offset = state_at(rt, o, x, y)
    a = abs(offset)
    if a <= rt.geo[G_HW]:
        return True
    if o.include_pit:
        return _pit_code(rt.pv, rt.geo, x, y, a) >= 0
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
def _surface(rt, o, x, y):
    """The march's surface at (x, y) of a ray of the car ``o``: the band of ``track_state``'s |offset|, or (for
    a car PaddockJS's pit override allows) the pit surface where it overrides the band."""
    _, _, offset = state_at(rt, o, x, y)
    a = abs(offset)
    geo = rt.geo
    if o.pit_allowed:
        p = _pit_code(rt.pv, geo, x, y, a)
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


@kernel(inline="always")
def _line_paths(rt, o, dx, dy, length, march_surface, out_dist, out_hit):
    """PaddockJS's first two paths for a ray of the car ``o`` (``origin_paths`` allows the edge lines): the
    edge lines (one walk of the grid serves all three channels; road edge: the nearest white line; kerb:
    the nearer of the white line and the kerb's outer line, illegal: the kerb's outer line, 0 when the car
    is on that surface; the path fails for both surface channels when either finds no line), else the
    straight edge. Writes the channels they answer -> (road edge kind, whether the road edge is left to
    the march, whether the surface channels are)."""
    geo = rt.geo
    hw = geo[G_HW]
    ke = geo[G_KE]
    kind = KIND_MISS
    march_edge = o.want_edge
    track_d, kerb_d = edge_line_hits(geo, rt.grid_at, o.x, o.y, dx, dy, length, march_surface)
    lateral = dx * rt.cnx[o.seg] + dy * rt.cny[o.seg]
    along_track = abs(lateral) < MIN_LATERAL
    if o.want_edge:
        if track_d < NONE:
            _answer(out_dist, out_hit, RAY_ROAD_EDGE, True, track_d, 1)
            kind = KIND_EXIT if abs(o.offset) <= hw else KIND_ENTRY
            march_edge = False
        elif o.straight_edge:
            if not along_track:
                hit, d, kind = _straight_edge_hit(o.offset, lateral, hw, length)
                _answer(out_dist, out_hit, RAY_ROAD_EDGE, True, d, hit)
            march_edge = False
    if march_surface:
        code0 = band_of(abs(o.offset), hw, ke, geo[G_GRAVEL], geo[G_GRASS])
        d_kerb = 0.0 if code0 == SURF_KERB else min(track_d, kerb_d)
        d_ill = 0.0 if _is_illegal(code0) else kerb_d
        if (not o.want_kerb or d_kerb < NONE) and (not o.want_illegal or d_ill < NONE):
            _answer(out_dist, out_hit, RAY_KERB, o.want_kerb, d_kerb, 1)
            _answer(out_dist, out_hit, RAY_ILLEGAL, o.want_illegal, d_ill, 1)
            march_surface = False
        elif o.straight_edge:
            if not along_track:
                h, d = _band_hit(o.offset, lateral, hw, ke, length)
                _answer(out_dist, out_hit, RAY_KERB, o.want_kerb, d, h)
                h, d = _band_hit(o.offset, lateral, ke, math.inf, length)
                _answer(out_dist, out_hit, RAY_ILLEGAL, o.want_illegal, d, h)
            march_surface = False
    return kind, march_edge, march_surface


@kernel(inline="always")
def _march_sample(rt, o, read_pit, x, y, dx, dy):
    """One sample of the march at (x, y), classified once for every channel still looking -> (its
    ``track_state`` index, its surface code for the kerb and illegal channels, whether it is inside the
    road edge, how far (m) along the ray its pit test keeps its answer: inf when none was read)."""
    geo = rt.geo
    w, _, offset_k = state_at(rt, o, x, y)
    a = abs(offset_k)
    code = band_of(a, geo[G_HW], geo[G_KE], geo[G_GRAVEL], geo[G_GRASS])
    inside = a <= geo[G_HW]
    pit_t = math.inf
    if read_pit and geo[G_PX0] <= x <= geo[G_PX1] and geo[G_PY0] <= y <= geo[G_PY1]:
        # PaddockJS's pit override of the sample's state: a pit box anywhere, another pit surface
        # beyond the kerb (the state then in the pit lane: inside the road edge for a car in the pit
        # lane; its surface for the surface channels)
        pit_code = pit_override(rt.pv, x, y, a, geo[G_KE])
        pit_t = pit_test_quiet(rt.pv, geo, x, y, dx, dy)
        if pit_code >= 0:
            inside = inside or o.include_pit
            if o.pit_allowed:
                code = pit_code
    return w, code, inside, pit_t


@kernel(inline="always")
def _edge_crossing(rt, o, dx, dy, k, debug, prev_inside):
    """The road edge between the march's whole metres k - 1 and k (inside at k - 1 is ``prev_inside``, not
    at k): k at driver precision; at debug precision (``debug``) the far end of the bracket after
    DEBUG_REFINE_STEPS bisections (m)."""
    lo = k - 1.0
    hi = k
    for _ in range(DEBUG_REFINE_STEPS if debug else 0):
        mid = 0.5 * (lo + hi)
        if _inside(rt, o, o.x + dx * mid, o.y + dy * mid) != prev_inside:
            hi = mid
        else:
            lo = mid
    return hi


@kernel(inline="always")
def _surface_crossing(rt, o, channel, dx, dy, k, debug):
    """The kerb (``channel`` RAY_KERB) or illegal surface (RAY_ILLEGAL) the march found at whole metre k:
    k at driver precision or at the origin; at debug precision the far end of the bracket [k - 1, k]
    after DEBUG_REFINE_STEPS bisections (m)."""
    lo = k - 1.0
    hi = k
    for _ in range(DEBUG_REFINE_STEPS if (debug and k > 0.0) else 0):
        mid = 0.5 * (lo + hi)
        c = _surface(rt, o, o.x + dx * mid, o.y + dy * mid)
        if (c == SURF_KERB) if channel == RAY_KERB else _is_illegal(c):
            hi = mid
        else:
            lo = mid
    return hi


@kernel
def track_rays(rt, o, dx, dy, length, debug, out_dist, out_hit):
    """The track channels of one ray of the car ``o`` (``track_state.RayOrigin``: its origin, hint, state,
    paths and wanted channels) on ``rt`` (``track_state.RayTrack``), along the unit (dx, dy), ``length`` m,
    as PaddockJS measures them: the road edge (``estimateTrackHit``), the kerb and the illegal surface
    (``estimateSurfaceHits``). Writes out_dist[RAY_ROAD_EDGE .. RAY_ILLEGAL] (m; miss = length) and
    out_hit for the wanted channels; returns the road edge's kind (KIND_*; KIND_MISS when not wanted).
    debug: 1 = debug precision (the march's hits bisected), 0 = driver precision.

    Each channel takes the first of PaddockJS's paths that answers (module docstring): the edge lines and
    the straight edge (``_line_paths``), the whole-metre march. Channels left to the march share it: each
    sample is classified once for all of them (``_march_sample``), and the march ends when every one has
    its answer."""
    _answer(out_dist, out_hit, RAY_ROAD_EDGE, o.want_edge, length, 0)
    _answer(out_dist, out_hit, RAY_KERB, o.want_kerb, length, 0)
    _answer(out_dist, out_hit, RAY_ILLEGAL, o.want_illegal, length, 0)
    kind = KIND_MISS
    march_edge = o.want_edge
    march_surface = o.want_kerb or o.want_illegal
    if o.edge_lines:
        kind, march_edge, march_surface = _line_paths(rt, o, dx, dy, length, march_surface, out_dist, out_hit)
    if not (march_edge or march_surface):
        return kind
    # the march: whole metres from the car (PaddockJS: 12 sim units a step, exact), each sample
    # classified once (its band, and for a car in the pit lane its pit surface) for every channel
    # still looking; the whole metres that ``sample_quiet`` or ``projection_quiet`` (and for a car in
    # the pit lane ``pit_surface_quiet``) vouches for are skipped
    march_kerb = march_surface and o.want_kerb
    march_illegal = march_surface and o.want_illegal
    k = 0.0
    read_pit = o.include_pit or (o.pit_allowed and (march_kerb or march_illegal))
    prev_inside = False
    while k <= length and (march_edge or march_kerb or march_illegal):
        x = o.x + dx * k
        y = o.y + dy * k
        w, code, inside, pit_t = _march_sample(rt, o, read_pit, x, y, dx, dy)
        if march_edge:
            if k == 0.0:
                prev_inside = inside
            elif inside != prev_inside:
                out_dist[RAY_ROAD_EDGE] = _edge_crossing(rt, o, dx, dy, k, debug, prev_inside)
                out_hit[RAY_ROAD_EDGE] = 1
                kind = KIND_EXIT if prev_inside else KIND_ENTRY
                march_edge = False
        if march_kerb and code == SURF_KERB:
            out_dist[RAY_KERB] = _surface_crossing(rt, o, RAY_KERB, dx, dy, k, debug)
            out_hit[RAY_KERB] = 1
            march_kerb = False
        if march_illegal and _is_illegal(code):
            out_dist[RAY_ILLEGAL] = _surface_crossing(rt, o, RAY_ILLEGAL, dx, dy, k, debug)
            out_hit[RAY_ILLEGAL] = 1
            march_illegal = False
        # the next whole metre whose answer may differ for a channel still looking: the illegal surface's
        # four band edges; the kerb's two (the white line and the kerb's outer edge: a runoff car's kerb
        # ray, its illegal channel answered at its origin, skips the gravel and grass edges); the road
        # edge's inside / outside alone, for a car in the pit lane with the kerb's outer edge, beyond which
        # a pit surface counts as inside
        levels = 4 if march_illegal else 2 if (march_kerb or o.include_pit) else 1
        read_pit = o.include_pit or (o.pit_allowed and (march_kerb or march_illegal))
        k = next_metre(rt, o, w, read_pit, pit_t, levels, x, y, dx, dy, k, length)
    return kind
