"""Track geometry arrays and the numba query kernels on the centreline (locate, point, band).

A track is a ``TrackArrays`` namedtuple of numpy arrays and float scalars, immutable and shared by
every world that races on it. The centreline is a closed polyline of N samples (~2 m apart: uniformly
spaced on our tracks, 0.6-4 m on PaddockJS's 3,600-sample tracks) stored with N+1 entries: sample N repeats sample 0 and ``cs[N]`` is the lap length.
Segment ``i`` joins sample ``i`` to sample ``i + 1`` (``0 <= i < N``).

Frame (PaddockJS's): x right, y down; heading h points along ``(cos h, sin h)``; the right normal is
``(-sin h, cos h)``; a positive offset or curvature means "to the right" / "turning right".

Cross-section, by absolute offset from the centreline: track <= half_width (7.5 m), kerb <=
kerb_edge (9 m), gravel <= gravel_edge (21 m), grass <= grass_edge (41 m), barrier beyond
(``band_of``). Pit surfaces override those bands beyond the kerb: the pit complex is in ``track.surface``,
``surface_at`` and the raster reads in ``track.point_surface``.

This module: the centreline queries (``locate``, ``point_at`` and their forms on bare arrays,
``sample_at``), the band rule and the white-line distances. PaddockJS's nearest-sample searches are
``track.nearest_sample``.
"""

import math
from collections import namedtuple

import numpy as np

from ..core.jit import kernel
from ..core.layout import SURF_BARRIER, SURF_GRASS, SURF_GRAVEL, SURF_KERB, SURF_TRACK
from ..core.trig import lerp_angle_at, lerp_at, wrap_angle

TrackArrays = namedtuple("TrackArrays", [
    "cx", "cy", "cs", "ch", "cnx", "cny", "ccurv",
    "length", "half_width", "kerb_edge", "gravel_edge", "grass_edge",
    "sector_s",
    "grid_x0", "grid_y0", "grid_cell", "grid_seg", "grid_surf", "grid_edge",
    "px", "py", "ps", "ph",
    "pit_length", "pit_width",
    "pit_entry_s", "pit_exit_s",
    "pit_lane_start", "pit_lane_end",
    "pit_side",
    "box_x", "box_y", "box_path_s",
    "pit_geom",             # float64[K]: the pit complex's roads, rectangles, bounds and grid (pit_lane.pit_geometry)
    "ai_preview",           # the built-in driver's table of the centreline ahead (track.preview)
    "drs_start", "drs_end",  # float64[Z] m, DRS zones (race.drs): lap distance of each start, and of its end
                             # (> start; beyond L when the zone wraps the line); Z <= MAX_DRS_ZONES, 0 = none
])


HINT_WINDOW = 8            # segments searched either side of the hint
SAMPLE_WALK = 4            # sample_at's walk from its first guess before it bisects

# Performance note: a non-inlined call of a kernel that takes ``tr`` costs ~130 ns, because numba
# increfs and decrefs every array of the namedtuple on the call. The small hot kernels are therefore
# ``inline="always"`` (inlined into their numba callers: ~10 ns for point_at, tens of ns for locate).
GRID_WINDOW = 4           # segments searched either side of the raster's nearest segment
_GLOBAL = -1


@kernel(inline="always")
def seg_d2a(cx, cy, i, x, y):
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
def seg_d2(tr, i, x, y):
    """``seg_d2a`` on the track's centreline."""
    return seg_d2a(tr.cx, tr.cy, i, x, y)


@kernel(inline="always")
def walk_segments(cx, cy, x, y, hint, n):
    """Descend from segment ``hint`` along the polyline (cx, cy) of n segments while the distance
    decreases, at most HINT_WINDOW steps. Returns (d2, seg, t, steps); steps == HINT_WINDOW means the
    walk was cut. Arrays are passed, not the namedtuple, so the loop reads no tuple attributes."""
    d0, t0 = seg_d2a(cx, cy, hint, x, y)
    j = hint + 1 if hint + 1 < n else 0
    d1, t1 = seg_d2a(cx, cy, j, x, y)
    step = 1
    if not d1 < d0:
        j = hint - 1 if hint > 0 else n - 1
        d1, t1 = seg_d2a(cx, cy, j, x, y)
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
        d1, t1 = seg_d2a(cx, cy, j, x, y)
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
def finish_locate(cx, cy, cs, ch, ccurv, length, x, y, i, t, d2):
    """Build (seg, s, offset, heading, curvature) from the nearest segment i at parameter t."""
    ax = cx[i]
    ay = cy[i]
    dx = cx[i + 1] - ax
    dy = cy[i + 1] - ay
    # sign from the side of the segment line; magnitude is the exact distance to the polyline
    cross = dx * (y - ay) - dy * (x - ax)
    dist = math.sqrt(d2)
    offset = dist if cross >= 0.0 else -dist
    s = lerp_at(cs, i, t)
    if s >= length:
        s -= length
    return i, s, offset, lerp_angle_at(ch, i, t), lerp_at(ccurv, i, t)


@kernel(inline="always")
def _locate_a(cx, cy, cs, ch, ccurv, grid_seg, grid_x0, grid_y0, grid_cell, length, gravel_edge,
              x, y, hint):
    """locate on the unpacked arrays: the hot path takes arrays, not the namedtuple, so branchy
    inlined code reads no tuple fields."""
    n = cx.shape[0] - 1
    if 0 <= hint < n:
        best_d2, best_i, best_t, steps = walk_segments(cx, cy, x, y, hint, n)
        accept = 0.5 * gravel_edge
        if steps < HINT_WINDOW and best_d2 <= accept * accept:
            return finish_locate(cx, cy, cs, ch, ccurv, length, x, y, best_i, best_t, best_d2)
    else:
        best_d2 = np.inf
        best_i = 0
        best_t = 0.0
    best_d2, best_i, best_t = locate_slow(cx, cy, grid_seg, grid_x0, grid_y0, grid_cell, x, y,
                                           best_d2, best_i, best_t)
    return finish_locate(cx, cy, cs, ch, ccurv, length, x, y, best_i, best_t, best_d2)


@kernel
def locate_slow(cx, cy, grid_seg, grid_x0, grid_y0, grid_cell, x, y, best_d2, best_i, best_t):
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
        lo = g - GRID_WINDOW
        hi = g + GRID_WINDOW
    # wrap by comparison, not modulo: integer division is slow in a loop this tight (lo > -n)
    i = lo + n if lo < 0 else (lo - n if lo >= n else lo)
    for _k in range(lo, hi + 1):
        d2, t = seg_d2a(cx, cy, i, x, y)
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
    return point_at_arrays(tr.cx, tr.cy, tr.cs, tr.ch, tr.ccurv, tr.length, s)


@kernel(inline="always")
def sample_at(cs, length, s):
    """(i, t): the centreline segment ``i`` holding lap distance ``s`` (m, wrapped into [0, length))
    and the fraction ``t`` in [0, 1] along it. cs: float64[N+1] cumulative distances. On uniformly
    spaced samples the first guess is within one segment of the answer and a short walk finds it;
    on samples of varying spacing (PaddockJS's tracks) a walk that does not arrive within
    SAMPLE_WALK steps ends in a bisection. Shared by every interpolation on bare arrays (track,
    driver, sensors)."""
    q = s / length
    if not 0.0 < q < 1.0:                  # (inside the lap the wrap leaves s and q as they are)
        s = s - math.floor(q) * length
        q = s / length
    n = cs.shape[0] - 1
    i = int(q * n)
    if i > n - 1:
        i = n - 1
    steps = 0
    while i > 0 and cs[i] > s and steps < SAMPLE_WALK:
        i -= 1
        steps += 1
    while i < n - 1 and cs[i + 1] < s and steps < SAMPLE_WALK:
        i += 1
        steps += 1
    if (i > 0 and cs[i] > s) or (i < n - 1 and cs[i + 1] < s):
        lo = 0
        hi = n - 1
        while lo < hi:                     # the last segment starting at or before s
            mid = (lo + hi + 1) >> 1
            if cs[mid] <= s:
                lo = mid
            else:
                hi = mid - 1
        i = lo
    return i, (s - cs[i]) / (cs[i + 1] - cs[i])


@kernel(inline="always")
def point_at_arrays(cx, cy, cs, ch, ccurv, length, s):
    """``point_at`` on the centreline's arrays (float64[N+1] each; length m): hot kernels take bare
    arrays (see ``_locate_a``), and the pit-lane builder has no TrackArrays yet.
    Returns (x m, y m, heading rad, curvature 1/m)."""
    i, t = sample_at(cs, length, s)
    return lerp_at(cx, i, t), lerp_at(cy, i, t), lerp_angle_at(ch, i, t), lerp_at(ccurv, i, t)


@kernel(inline="always")
def heading_curvature_at(cs, ch, ccurv, length, s):
    """(heading rad, curvature 1/m) of ``point_at_arrays`` without the position, for callers that
    hold only these arrays (the sensors' lookahead)."""
    i, t = sample_at(cs, length, s)
    return lerp_angle_at(ch, i, t), lerp_at(ccurv, i, t)


@kernel(inline="always")
def sample_turn(cx, cy, ch, i):
    """PaddockJS's per-sample curvature measure before its division by 28 (``recalculateSampleGeometry``):
    the angle (rad, >= 0) between the heading of the chord from sample ``i`` to sample ``i + 2`` and
    the sample's own heading ``ch[i]`` (the chord from ``i - 1`` to ``i + 1``). cx, cy, ch: the
    centreline's float64[N+1] arrays; ``i`` wraps around the lap."""
    n = cx.shape[0] - 1
    i = i % n
    k = (i + 2) % n
    return abs(wrap_angle(math.atan2(cy[k] - cy[i], cx[k] - cx[i]) - ch[i]))


@kernel(inline="always")
def sample_curvature_at(cx, cy, cs, ch, length, s):
    """Curvature (1/m, unsigned) at lap distance ``s`` (m) as PaddockJS's vector reads it: its sample
    measure (``sample_turn``) interpolated linearly between the samples around ``s`` (``pointAt``),
    over the mean sample spacing ``length / N``. On PaddockJS's 3,600-sample tracks
    ``vectors.curvature_entry`` of it is PaddockJS's entry exactly; on uniformly sampled tracks it is
    the heading change per metre, as there."""
    i, t = sample_at(cs, length, s)
    a = sample_turn(cx, cy, ch, i)
    b = sample_turn(cx, cy, ch, i + 1)
    return (a + t * (b - a)) * (cx.shape[0] - 1) / length


@kernel(inline="always")
def sample_curvature(cx, cy, ch, length, j):
    """``sample_curvature_at`` at sample ``j`` itself (1/m, unsigned): PaddockJS's ``track.curvature``,
    the measure of the car's centre sample (``nearest_sample``)."""
    return sample_turn(cx, cy, ch, j) * (cx.shape[0] - 1) / length


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
def edge_distances(tr, offset):
    """Distances (m) from a lateral offset (m, + right) to the white lines: (left_m, right_m).

    Negative when the point is beyond that line.
    """
    return tr.half_width + offset, tr.half_width - offset
