"""PaddockJS 2.0.0's ``nearestTrackState`` on the main track, as its rays use it (``sensing.road_edge``):
the candidate segments of a query hinted with a lap distance (``hint_range``: the arc buckets around
it), and the point's nearest candidate with its lap distance and signed offset (``track_state``), in
projection mode (segments, projections clamped) or sample mode (samples; batch-training rays).

A car's ray queries travel as two namedtuples: ``RayTrack`` (what they read of the track, gathered once
per sensing call by ``sensing.ray_origin.ray_track``) and ``RayOrigin`` (the car's hint and state, once
per car, ``sensing.ray_origin.ray_origin``); ``state_at`` is ``track_state`` hinted by them."""

import math
from collections import namedtuple

from ..core.jit import kernel
from .edge_lines import NONE
from ..track.nearest_sample import clamped_projection
from .geometry import nearest_segment

ARC_BUCKETS = 512               # PaddockJS's query index: the lap in 512 buckets ...
HINT_BUCKETS = 2                # ... of which the car's and 2 either side hold the candidate segments
HINT_MARGIN = 24.0              # m beyond the runoff edge within which a candidate is accepted
TIE_D2 = 1e-6 / 144.0           # m^2: PaddockJS's AMBIGUOUS_DISTANCE_EPSILON (1e-6 sim units^2)

# What a car's ray queries read of the track: the centreline arrays (cx, cy, cs, cnx, cny; m), the
# raster's segment grid (gseg), the pit surfaces' view (pv, ``sensing.geometry.pit_view``), the sensor
# constants (geo, ``sensing.geometry.sensor_geometry``) with the edge-line grid at index grid_at, and the
# squared radius (m^2) within which a hinted query accepts its nearest candidate (max_hint2).
RayTrack = namedtuple("RayTrack", ["cx", "cy", "cs", "cnx", "cny", "gseg", "pv", "geo", "grid_at", "max_hint2"])

# Where a car's rays start: the hint of their queries (``hint_range``'s i0 and count, the car's progress m,
# sample_mode: PaddockJS's batch-training sample mode), the car's own ``track_state`` (seg, its signed
# offset m), the paths its rays may take (edge_lines, straight_edge: ``road_edge.origin_paths``), whether
# they read the pit surfaces (include_pit: PaddockJS's ``includePitLane``, a pit surface is inside the
# road edge; pit_allowed: its pit override, the surface channels read pit surfaces), the wanted track
# channels (want_edge, want_kerb, want_illegal) and the origin (x, y) m.
RayOrigin = namedtuple("RayOrigin", ["i0", "count", "progress", "sample_mode", "seg", "offset", "edge_lines",
                                     "straight_edge", "include_pit", "pit_allowed", "want_edge", "want_kerb",
                                     "want_illegal", "x", "y"])


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
def project_segment(cx, cy, cs, cnx, cny, i, x, y):
    """PaddockJS's ``projectIndexedSegment``: (x, y) onto segment i, clamped -> (squared distance m^2,
    lap distance m of the projection, signed offset m along sample i's normal)."""
    ax = cx[i]
    ay = cy[i]
    ex = cx[i + 1] - ax
    ey = cy[i + 1] - ay
    amount = clamped_projection(ax, ay, ex, ey, x, y)
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
            d2, s, o = project_segment(cx, cy, cs, cnx, cny, i, x, y)
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
    _, along, offset = project_segment(cx, cy, cs, cnx, cny, seg, x, y)
    return seg, along, offset


@kernel(inline="always")
def state_at(rt, o, x, y):
    """``track_state`` of (x, y) m as a car's ray queries make it: on the ``RayTrack`` rt, hinted by the
    ``RayOrigin`` o -> (index, lap distance m, signed offset m)."""
    return track_state(rt.cx, rt.cy, rt.cs, rt.cnx, rt.cny, rt.gseg, rt.geo, o.i0, o.count, o.progress,
                       rt.max_hint2, o.sample_mode, x, y)
