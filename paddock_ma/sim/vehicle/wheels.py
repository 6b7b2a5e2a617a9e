"""Wheel contact patches -> surface codes, and the car's track position (step 3 of a tick).

Each car has four 0.72 x 0.38 m contact patches centred at (+-WHEEL_X, +-WHEEL_Y) in the car frame
(FL, FR, RL, RR; left = lateral -1). As PaddockJS 2.0.0 classifies them (``wheelSurface.js``,
``mainTrackWheelSurface.js``): offsets are measured from the centreline sample nearest the car, along
that sample's normal, linearly (no curvature term); a patch's surface is the band of its edge farthest
from the centreline. The car's centre state takes PaddockJS's pit override (``track.surface.pit_state``
and ``pit_overrides``, for a car ``pit_override_allowed``): when it puts the centre in the pit lane and
every patch lies within the width of the centre's pit road (or box) along its normal, every wheel reads
the centre's pit surface and its main-track offset (``analyticPitWheelState``). Otherwise, with the
centre in the pit lane or within 35 m of the pit entry or exit (lap distance of the car's centre sample),
PaddockJS samples each patch: its centre and four corners, each point from its own nearest sample and
its pit override, the patch taking the worst surface among them (``calculateWheelSurfaceState``'s full
sampling). Elsewhere no wheel reads a pit surface. Each patch's reported offset (F_WHEEL_EDGE_*, the
vector's and trackOffsetMeters') is the one PaddockJS's wheel state carries. The car's progress and
offset are the projection on the centreline polyline (searched from the car's segment).

Performance: the step calls ``classify_world`` once per world and tick; it gathers the track fields
the classification reads once (``wheel_track``) and runs the per-car body (``_classify_one`` and its
stages, all inlined) on them.
"""

import math
from collections import namedtuple

import numpy as np

from ..core.jit import kernel
from ..core.layout import (
    F_CURVATURE, F_HEADING, F_HEADING_ERROR, F_OFFSET, F_PJS_PROGRESS, F_PJS_RACE_DISTANCE, F_PROGRESS,
    F_WHEEL_EDGE_FL, F_WHEEL_OFFSET_FL, F_X, F_Y, I_ACTIVE, I_IN_PIT_LANE, I_MANUAL, I_ON_TRACK, I_PIT_INTENT,
    I_PIT_ROUTE, I_PIT_STATUS, I_SEG_HINT, I_SURFACE, I_WHEEL_SURFACE_FL, PATCH_LENGTH, PATCH_WIDTH, PIT_ENTERING,
    PIT_EXITING, PIT_QUEUED, PIT_SERVICING, ROUTE_NONE, SURF_PIT_BOX, SURF_PIT_ENTRY, SURF_PIT_EXIT, SURF_PIT_LANE,
    SURF_TRACK, PRE_COS, PRE_HEADING, PRE_SIN, WHEEL_X, WHEEL_Y,
)
from .surface_table import SURFACE_LEGAL, SURFACE_PRIORITY
from ..track.geometry import HINT_WINDOW, band_of, finish_locate, locate_slow, walk_segments
from ..track.nearest_sample import nearest_sample, nearest_sample_in_run, nearest_sample_in_window, window_run_near
from ..track.surface import near_pit_connector, pit_bbox, pit_override_call, pit_overrides, pit_state_call
from ..core.trig import sincos, wrap_angle

VISUAL_LENGTH = 5.63     # m, PaddockJS's REAL_F1_CAR_LENGTH_METERS (the car's visual footprint)
VISUAL_WIDTH = 1.9       # m, REAL_F1_CAR_WIDTH_METERS
BARRIER_WIDTH = 0.55     # m, PaddockJS's TRACK.barrierWidth
PIT_CONNECTOR_WINDOW = 35.0  # m, PaddockJS's PIT_CONNECTOR_FULL_SAMPLE_WINDOW
# m: the farthest a sampled patch point (a patch's centre or corner) lies from the car's centre
PATCH_REACH = math.hypot(WHEEL_X + 0.5 * PATCH_LENGTH, WHEEL_Y + 0.5 * PATCH_WIDTH)

# The TrackArrays fields ``track.surface.pit_surface`` reads: built only where a pit test runs.
PitArrays = namedtuple("PitArrays", ["pit_geom"])
# PaddockJS's ``canUseAnalyticPitWheels`` margin: 0.001 sim units (1/12 mm)
PIT_ANALYTIC_TOLERANCE = 0.001 / 12.0

@kernel(inline="always")
def is_pit_surface(code):
    """True for pit-entry, pit-lane, pit-exit and pit-box."""
    return code == SURF_PIT_ENTRY or code == SURF_PIT_LANE or code == SURF_PIT_EXIT or code == SURF_PIT_BOX


@kernel(inline="always")
def pit_override_allowed(cars_i, w, c):
    """PaddockJS's ``pitOverrideAllowedForCar``: whether car ``c``'s wheels (and rays) read the pit
    surfaces where they override the main track's bands. A built-in driver's car always does; a
    policy-controlled car (I_MANUAL, PaddockJS's ``environmentControlled``) only once it has committed
    to a stop (pit intent 2) or while its stop is under way (entering, queued, servicing, exiting);
    before that its wheels near the pits read the main track's bands (gravel, grass, barrier)."""
    if cars_i[w, c, I_MANUAL] == 0:
        return True
    st = cars_i[w, c, I_PIT_STATUS]
    if st == PIT_ENTERING or st == PIT_QUEUED or st == PIT_SERVICING or st == PIT_EXITING:
        return True
    return cars_i[w, c, I_PIT_INTENT] >= 2


@kernel(inline="always")
def _project(cx, cy, grid_seg, gx0, gy0, gcell, gravel, x, y, hint):
    """Nearest centreline segment of (x, y) (m) as in ``track.geometry.locate``: (seg, t, offset m)."""
    n = cx.shape[0] - 1
    if 0 <= hint < n:
        d2, i, t, steps = walk_segments(cx, cy, x, y, hint, n)
        accept = 0.5 * gravel
        if steps >= HINT_WINDOW or d2 > accept * accept:
            d2, i, t = locate_slow(cx, cy, grid_seg, gx0, gy0, gcell, x, y, d2, i, t)
    else:
        d2, i, t = locate_slow(cx, cy, grid_seg, gx0, gy0, gcell, x, y, np.inf, 0, 0.0)
    ax = cx[i]
    ay = cy[i]
    cross = (cx[i + 1] - ax) * (y - ay) - (cy[i + 1] - ay) * (x - ax)
    dist = math.sqrt(d2)
    return i, t, (dist if cross >= 0.0 else -dist)


@kernel
def pit_zone(tr):
    """What the wheel classification needs of the pit: ``track.surface.pit_bbox`` (x0, y0, x1, y1; m)
    and the pit entry's and exit's lap distances (m). Computed once per step by the caller."""
    x0, y0, x1, y1 = pit_bbox(tr.pit_geom)
    return x0, y0, x1, y1, tr.pit_entry_s, tr.pit_exit_s


# The track's fields the wheel classification reads, unpacked once per world (``wheel_track``): the
# centreline arrays, the query raster's origin and cell (m) and segment grid, the lap length and the band
# edges (m), and the pit complex.
WheelTrack = namedtuple("WheelTrack", ["cx", "cy", "cs", "ch", "ccurv", "cnx", "cny", "grid_seg", "gx0", "gy0",
                                       "gcell", "length", "hw", "kerb", "gravel", "grass", "pit_geom"])
HALF_PATCH_L = 0.5 * PATCH_LENGTH   # m
HALF_PATCH_W = 0.5 * PATCH_WIDTH    # m
# How ``_classify_wheels`` reads the patches when not every wheel reads the centre's pit surface (a code >= 0)
WHEELS_BANDS = -1       # PaddockJS's analytic wheel state: the band of the patch edge farthest from the centreline
WHEELS_SAMPLED = -2     # its full sampling: a patch's five points, each from its own nearest sample


@kernel(inline="always")
def wheel_track(tr):
    """The ``WheelTrack`` of the TrackArrays ``tr``."""
    return WheelTrack(tr.cx, tr.cy, tr.cs, tr.ch, tr.ccurv, tr.cnx, tr.cny, tr.grid_seg, tr.grid_x0, tr.grid_y0,
                      tr.grid_cell, tr.length, tr.half_width, tr.kerb_edge, tr.gravel_edge, tr.grass_edge,
                      tr.pit_geom)


@kernel(inline="always")
def _centre_state(wt, cars_f, cars_i, w, c, x, y):
    """Car (w, c)'s track position from its centre (x, y) m: the projection on the centreline (F_PROGRESS,
    F_OFFSET, F_CURVATURE, the hint I_SEG_HINT) and PaddockJS's centre state (``nearestTrackState``, legacy
    mode): the nearest centreline sample itself, not the projection, from which the wheel offsets, the
    heading error (F_HEADING_ERROR) and the barrier test are measured along its normal, linearly.
    Returns (that sample's index, the centre's offset along its normal m)."""
    seg, t, off = _project(wt.cx, wt.cy, wt.grid_seg, wt.gx0, wt.gy0, wt.gcell, wt.gravel, x, y,
                           cars_i[w, c, I_SEG_HINT])
    seg, s, off, th, k = finish_locate(wt.cx, wt.cy, wt.cs, wt.ch, wt.ccurv, wt.length, x, y, seg, t, off * off)
    j = nearest_sample(wt.cx, wt.cy, seg, x, y)
    c_off = (x - wt.cx[j]) * wt.cnx[j] + (y - wt.cy[j]) * wt.cny[j]
    cars_f[w, c, F_PROGRESS] = s
    cars_f[w, c, F_OFFSET] = off
    cars_f[w, c, F_HEADING_ERROR] = wrap_angle(cars_f[w, c, F_HEADING] - wt.ch[j])
    cars_f[w, c, F_CURVATURE] = k
    cars_i[w, c, I_SEG_HINT] = seg
    return j, c_off


@kernel(inline="always")
def _centre_pit_state(pit_geom, kerb, box, x, y, c_off):
    """PaddockJS's centre state with its pit override (``nearestTrackStateForCar``): in the pit lane when a
    pit surface overrides the centre sample's band (at |c_off| m) there -> ``pit_state``'s (code, point,
    normal, width, lap distance), code -1 (and zeros) otherwise. box (x0, y0, x1, y1): where a point may
    read a pit surface (empty for a car PaddockJS's pit override does not allow)."""
    bx0, by0, bx1, by1 = box
    # (on the asphalt and kerb only a pit box overrides: the roads are searched beyond the kerb only)
    if bx0 <= x <= bx1 and by0 <= y <= by1 and (
            abs(c_off) > kerb or pit_override_call(PitArrays(pit_geom), x, y, abs(c_off), kerb) >= 0):
        cp, qx0, qy0, qnx, qny, qw, qd = pit_state_call(PitArrays(pit_geom), x, y)
        if not pit_overrides(cp, abs(c_off), kerb):
            cp = -1
        return cp, qx0, qy0, qnx, qny, qw, qd
    return -1, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0


@kernel(inline="always")
def _advance_race_distance(cars_f, cars_i, w, c, sp, length):
    """PaddockJS's progress ``sp`` (m; its DRS latch and pit route read it: the centre state's lap distance,
    its nearest sample's or in the pit lane the pit road's mapping) into F_PJS_PROGRESS, and its race
    distance, which advances by the progress's wrapped change (``raceProgress.js``); PaddockJS's pit route
    sets that itself."""
    prev = cars_f[w, c, F_PJS_PROGRESS]
    if prev >= 0.0 and cars_i[w, c, I_PIT_ROUTE] == ROUTE_NONE:
        d = sp - prev
        d -= length * math.floor(d / length + 0.5)
        cars_f[w, c, F_PJS_RACE_DISTANCE] += d
    cars_f[w, c, F_PJS_PROGRESS] = sp


@kernel(inline="always")
def _patches_fit_pit_road(x, y, fx, fy, qx0, qy0, qnx, qny, qw):
    """PaddockJS's ``canUseAnalyticPitWheels``: every patch of the car at (x, y) heading (fx, fy) within the
    width ``qw`` m of the centre's pit road (box), measured along its normal (qnx, qny) from its point
    (qx0, qy0)."""
    rx = -fy
    ry = fx
    half = 0.5 * qw + PIT_ANALYTIC_TOLERANCE
    ph = abs(fx * qnx + fy * qny) * HALF_PATCH_L + abs(rx * qnx + ry * qny) * HALF_PATCH_W
    fits = True
    for wi in range(4):
        lon = WHEEL_X if wi < 2 else -WHEEL_X
        lat = -WHEEL_Y if wi % 2 == 0 else WHEEL_Y
        wc = (x + lon * fx + lat * rx - qx0) * qnx + (y + lon * fy + lat * ry - qy0) * qny
        if wc - ph < -half or wc + ph > half:
            fits = False
    return fits


@kernel(inline="always")
def _sampled_patch(wt, box, j, run_a, run_b, wx, wy, fx, fy, woff):
    """PaddockJS's full sampling of the patch centred at (wx, wy): the worst surface of its five points
    (the first of equals: centre, then the corners front-right, front-left, rear-left, rear-right), each
    from its own nearest sample (in the window run [run_a, run_b] when run_a >= 0, else the window around
    ``j``) and its pit override inside ``box`` -> (code, its priority, that point's offset m; ``woff``
    when none is worse than nothing)."""
    bx0, by0, bx1, by1 = box
    rx = -fy
    ry = fx
    code = SURF_TRACK
    code_p = -1
    edge_off = woff
    for q in range(5):
        sl = 0.0 if q == 0 else (1.0 if q < 3 else -1.0)
        sw = 0.0 if q == 0 else (1.0 if (q == 1 or q == 4) else -1.0)
        qx = wx + sl * HALF_PATCH_L * fx + sw * HALF_PATCH_W * rx
        qy = wy + sl * HALF_PATCH_L * fy + sw * HALF_PATCH_W * ry
        if run_a >= 0:
            jq = nearest_sample_in_run(wt.cx, wt.cy, j, run_a, run_b, qx, qy)
        else:
            jq = nearest_sample_in_window(wt.cx, wt.cy, wt.cs, wt.length, j, qx, qy)
        so = (qx - wt.cx[jq]) * wt.cnx[jq] + (qy - wt.cy[jq]) * wt.cny[jq]
        qc = band_of(abs(so), wt.hw, wt.kerb, wt.gravel, wt.grass)
        if bx0 <= qx <= bx1 and by0 <= qy <= by1:
            pc = pit_override_call(PitArrays(wt.pit_geom), qx, qy, abs(so), wt.kerb)
            if pc >= 0:
                qc = pc
        if SURFACE_PRIORITY[qc] > code_p:
            code_p = SURFACE_PRIORITY[qc]
            code = qc
            edge_off = so
    return code, code_p, edge_off


@kernel(inline="always")
def _classify_wheels(wt, box, cars_f, cars_i, w, c, j, c_off, mode, fx, fy):
    """Car (w, c)'s four patches (centre sample ``j``, the centre's offset ``c_off`` m along its normal,
    heading (fx, fy)): each wheel's surface (I_WHEEL_SURFACE_*), centre offset (F_WHEEL_OFFSET_*) and
    reported offset (F_WHEEL_EDGE_*), then I_SURFACE (worst wheel), I_ON_TRACK and I_IN_PIT_LANE. mode:
    the pit surface every wheel reads (``analyticPitWheelState``: the centre's, with its main-track
    offset), or WHEELS_BANDS, WHEELS_SAMPLED. Returns whether a wheel is on a pit surface."""
    x = cars_f[w, c, F_X]
    y = cars_f[w, c, F_Y]
    rx = -fy
    ry = fx
    fn = fx * wt.cnx[j] + fy * wt.cny[j]        # forward . normal
    rn = rx * wt.cnx[j] + ry * wt.cny[j]        # right . normal
    reach = abs(HALF_PATCH_L * fn) + abs(HALF_PATCH_W * rn)   # a patch's half extent along the normal
    # the window positions that may hold a sampled point's nearest sample, shared by the car's 20 points
    run_a = -1
    run_b = -1
    if mode == WHEELS_SAMPLED:
        run_a, run_b = window_run_near(wt.cx, wt.cy, wt.cs, wt.length, j, x, y, PATCH_REACH)
    worst = SURF_TRACK
    worst_p = 0
    on_track = 1
    in_pit = 0
    for wi in range(4):
        lon = WHEEL_X if wi < 2 else -WHEEL_X
        lat = -WHEEL_Y if wi % 2 == 0 else WHEEL_Y
        woff = c_off + lon * fn + lat * rn
        if mode >= 0:
            code = mode
            code_p = SURFACE_PRIORITY[code]
            edge_off = c_off
        elif mode == WHEELS_SAMPLED:
            code, code_p, edge_off = _sampled_patch(wt, box, j, run_a, run_b, x + lon * fx + lat * rx,
                                                    y + lon * fy + lat * ry, fx, fy, woff)
        else:
            # PaddockJS (``analyticWheelState``): the patch edge farthest from the centreline decides
            low = woff - reach
            high = woff + reach
            edge_off = low if abs(low) > abs(high) else high
            code = band_of(abs(edge_off), wt.hw, wt.kerb, wt.gravel, wt.grass)
            code_p = SURFACE_PRIORITY[code]
        cars_i[w, c, I_WHEEL_SURFACE_FL + wi] = code
        cars_f[w, c, F_WHEEL_OFFSET_FL + wi] = woff
        cars_f[w, c, F_WHEEL_EDGE_FL + wi] = edge_off
        if code_p > worst_p:
            worst_p = code_p
            worst = code
        if is_pit_surface(code):
            in_pit += 1
        elif SURFACE_LEGAL[code] == 0:
            on_track = 0
    cars_i[w, c, I_SURFACE] = worst
    cars_i[w, c, I_ON_TRACK] = on_track
    # PaddockJS's ``inPitLane``: every wheel on a pit surface
    cars_i[w, c, I_IN_PIT_LANE] = 1 if in_pit == 4 else 0
    return in_pit > 0


@kernel(inline="always")
def _classify_one(wt, zone, cars_f, cars_i, w, c, fx, fy):
    """classify_car on the world's ``wheel_track`` and ``pit_zone`` (the pit box bx0, by0, bx1, by1 and
    the pit entry's and exit's lap distances); fx, fy: cos and sin of the car's F_HEADING."""
    bx0, by0, bx1, by1, entry_s, exit_s = zone
    has_pit = bx0 <= bx1
    if not pit_override_allowed(cars_i, w, c):
        bx0 = np.inf             # no point is inside the pit box: the main track's bands only
        bx1 = -np.inf
    box = (bx0, by0, bx1, by1)
    x = cars_f[w, c, F_X]
    y = cars_f[w, c, F_Y]
    j, c_off = _centre_state(wt, cars_f, cars_i, w, c, x, y)
    cp, qx0, qy0, qnx, qny, qw, qd = _centre_pit_state(wt.pit_geom, wt.kerb, box, x, y, c_off)
    _advance_race_distance(cars_f, cars_i, w, c, wt.cs[j] if cp < 0 else qd, wt.length)
    # every wheel the centre's pit surface when every patch fits its pit road (box); in the pit lane, or
    # near the pit entry or exit, PaddockJS samples each patch at its centre and corners, each point from
    # its own nearest sample (``calculateWheelSurfaceState``'s full sampling)
    if cp >= 0 and qw > 0.0 and _patches_fit_pit_road(x, y, fx, fy, qx0, qy0, qnx, qny, qw):
        mode = cp
    elif cp >= 0 or (has_pit and near_pit_connector(wt.cs[j], entry_s, exit_s, wt.length, PIT_CONNECTOR_WINDOW)):
        mode = WHEELS_SAMPLED
    else:
        mode = WHEELS_BANDS
    any_pit_wheel = _classify_wheels(wt, box, cars_f, cars_i, w, c, j, c_off, mode, fx, fy)
    st = cars_i[w, c, I_PIT_STATUS]
    if any_pit_wheel or st == PIT_ENTERING or st == PIT_QUEUED or st == PIT_SERVICING or st == PIT_EXITING:
        # a pit route moves the car (PaddockJS runs no runoff response for it); a car partly on a pit
        # surface is not destroyed by the barrier either (our pit surfaces: ``race.pit_service``)
        return False
    # PaddockJS's barrier (``applyRunoffResponse``): the car's visual footprint (5.63 x 1.9 m, which
    # holds its body and wheels) reaches past the barrier's inner face, half the barrier's 0.55 m
    # width inside the runoff's outer edge, measured from the centre sample along its normal.
    fn = fx * wt.cnx[j] + fy * wt.cny[j]
    rn = -fy * wt.cnx[j] + fx * wt.cny[j]
    footprint = 0.5 * VISUAL_LENGTH * abs(fn) + 0.5 * VISUAL_WIDTH * abs(rn)
    return abs(c_off) + footprint > wt.grass - 0.5 * BARRIER_WIDTH


@kernel
def classify_car(tr, cars_f, cars_i, w, c):
    """Track position and wheel surfaces of car (w, c); returns True when the car touches the barrier.

    tr: TrackArrays; cars_f: float64[W, C, NF]; cars_i: int32[W, C, NI]; w, c: int.
    Reads F_X, F_Y, F_HEADING and the hint I_SEG_HINT. Writes F_PROGRESS (m) and F_OFFSET (m) from the
    projection on the centreline, F_CURVATURE (1/m), I_SEG_HINT, F_PJS_PROGRESS (m, PaddockJS's progress:
    the lap distance of the nearest centreline sample); and, as PaddockJS 2.0.0 measures them
    from the nearest centreline sample and its normal (``wheelSurface.js`` analytic path):
    F_HEADING_ERROR (rad, to the sample's heading), F_WHEEL_OFFSET_* (patch centres, m) and
    I_WHEEL_SURFACE_* (FL, FR, RL, RR: the band of the patch edge farthest from the centreline; pit
    surfaces as PaddockJS's pit override and wheel sampling read them, module docstring), I_SURFACE (worst wheel), I_ON_TRACK (every wheel on
    track, kerb or pit) and I_IN_PIT_LANE (every wheel on a pit surface, PaddockJS's ``inPitLane``). Pit
    surfaces count only where ``pit_override_allowed``. F_PJS_RACE_DISTANCE (PaddockJS's race
    distance) follows F_PJS_PROGRESS's change, but on PaddockJS's pit route.
    Barrier (PaddockJS's ``applyRunoffResponse``): the 5.63 x 1.9 m visual footprint reaches past
    grass_edge - 0.275 m, while no wheel is on a pit surface.
    """
    zone = pit_zone(tr)
    sin_h, cos_h = sincos(cars_f[w, c, F_HEADING])
    return _classify_one(wheel_track(tr), zone, cars_f, cars_i, w, c, cos_h, sin_h)


# inlined into tick_world: a call passes the track tuple as ~300 machine words, per world and tick
@kernel(inline="always")
def classify_world(tr, cars_f, cars_i, w, n_cars, touch, trig, zone):
    """``classify_car`` for every active car of world ``w``; touch int8[C] receives 1 where the
    car touches the barrier (0 otherwise, and for empty slots). One call per world: the
    track arrays are unpacked once, not per car.

    trig float64[C, >= 3]: the step's ``pre`` (columns PRE_HEADING, PRE_COS, PRE_SIN); a row whose heading equals the car's F_HEADING
    supplies cos and sin (the dynamics leave them there), any other row is recomputed and stored.
    zone: ``pit_zone`` of the track, computed once by the caller.
    """
    wt = wheel_track(tr)
    for c in range(n_cars):
        touch[c] = 0
        if cars_i[w, c, I_ACTIVE] == 0:
            continue
        h = cars_f[w, c, F_HEADING]
        if trig[c, PRE_HEADING] != h:
            trig[c, PRE_HEADING] = h
            trig[c, PRE_SIN], trig[c, PRE_COS] = sincos(h)
        cos_h = trig[c, PRE_COS]
        sin_h = trig[c, PRE_SIN]
        if _classify_one(wt, zone, cars_f, cars_i, w, c, cos_h, sin_h):
            touch[c] = 1
