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

Performance: the step calls ``classify_world`` once per world and tick; it unpacks the track arrays
once and runs the per-car body (``_classify_one``, inlined) on bare arrays.
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
from ..track.geometry import (
    HINT_WINDOW, band_of, finish_locate, locate_slow, nearest_sample, nearest_sample_in_run, nearest_sample_in_window,
    walk_segments, window_run_near,
)
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


@kernel(inline="always")
def _classify_one(cx, cy, cs, ch, ccurv, cnx, cny, grid_seg, gx0, gy0, gcell, length, hw, kerb,
                  gravel, grass, pit_geom, zone, cars_f, cars_i, w, c, fx, fy):
    """classify_car on unpacked track arrays and ``pit_zone`` (the pit box bx0, by0, bx1, by1 and
    the pit entry's and exit's lap distances); fx, fy: cos and sin of the car's F_HEADING. Takes no
    tuple: an inlined body that receives the track tuple increfs and decrefs every array of it per
    car. (numba inlines at most 30 arguments: the zone is one tuple.)"""
    bx0, by0, bx1, by1, entry_s, exit_s = zone
    has_pit = bx0 <= bx1
    x = cars_f[w, c, F_X]
    y = cars_f[w, c, F_Y]
    h = cars_f[w, c, F_HEADING]
    seg, t, off = _project(cx, cy, grid_seg, gx0, gy0, gcell, gravel, x, y, cars_i[w, c, I_SEG_HINT])
    seg, s, off, th, k = finish_locate(cx, cy, cs, ch, ccurv, length, x, y, seg, t, off * off)
    # PaddockJS's centre state (``nearestTrackState``, legacy mode): the nearest centreline sample
    # itself, not the projection; wheel offsets, the heading error and the barrier test are measured
    # from that sample along its normal, linearly.
    j = nearest_sample(cx, cy, seg, x, y)
    nx = cnx[j]
    ny = cny[j]
    c_off = (x - cx[j]) * nx + (y - cy[j]) * ny
    cars_f[w, c, F_PROGRESS] = s
    cars_f[w, c, F_OFFSET] = off
    if not pit_override_allowed(cars_i, w, c):
        bx0 = np.inf             # no point is inside the pit box: the main track's bands only
        bx1 = -np.inf
    rx = -fy
    ry = fx
    hl = 0.5 * PATCH_LENGTH
    hpw = 0.5 * PATCH_WIDTH
    # PaddockJS's centre state with its pit override (``nearestTrackStateForCar``): in the pit lane
    # when a pit surface overrides the centre sample's band there
    cp = -1
    qx0 = 0.0
    qy0 = 0.0
    qnx = 0.0
    qny = 0.0
    qw = 0.0
    qd = 0.0
    # (on the asphalt and kerb only a pit box overrides: the roads are searched beyond the kerb only)
    if bx0 <= x <= bx1 and by0 <= y <= by1 and (
            abs(c_off) > kerb or pit_override_call(PitArrays(pit_geom), x, y, abs(c_off), kerb) >= 0):
        cp, qx0, qy0, qnx, qny, qw, qd = pit_state_call(PitArrays(pit_geom), x, y)
        if not pit_overrides(cp, abs(c_off), kerb):
            cp = -1
    # PaddockJS's progress (its DRS latch and pit route read it; the centre state's lap distance: its
    # nearest sample's, or in the pit lane the pit road's mapping) and race distance, which advances by
    # the progress's wrapped change (``raceProgress.js``); PaddockJS's pit route sets it itself
    sp = cs[j] if cp < 0 else qd
    prev = cars_f[w, c, F_PJS_PROGRESS]
    if prev >= 0.0 and cars_i[w, c, I_PIT_ROUTE] == ROUTE_NONE:
        d = sp - prev
        d -= length * math.floor(d / length + 0.5)
        cars_f[w, c, F_PJS_RACE_DISTANCE] += d
    cars_f[w, c, F_PJS_PROGRESS] = sp
    cars_f[w, c, F_HEADING_ERROR] = wrap_angle(h - ch[j])
    cars_f[w, c, F_CURVATURE] = k
    cars_i[w, c, I_SEG_HINT] = seg
    # ``canUseAnalyticPitWheels``: every patch within the width of the centre's pit road (box), measured
    # along its normal from its point; then every wheel reads the centre's pit surface
    analytic_pit = cp >= 0 and qw > 0.0
    if analytic_pit:
        half = 0.5 * qw + PIT_ANALYTIC_TOLERANCE
        ph = abs(fx * qnx + fy * qny) * hl + abs(rx * qnx + ry * qny) * hpw
        for wi in range(4):
            lon = WHEEL_X if wi < 2 else -WHEEL_X
            lat = -WHEEL_Y if wi % 2 == 0 else WHEEL_Y
            wc = (x + lon * fx + lat * rx - qx0) * qnx + (y + lon * fy + lat * ry - qy0) * qny
            if wc - ph < -half or wc + ph > half:
                analytic_pit = False
    # in the pit lane, or near the pit entry or exit, PaddockJS samples each patch at its centre and
    # corners, each point from its own nearest sample (``calculateWheelSurfaceState``'s full sampling)
    sampled = not analytic_pit and (cp >= 0 or (has_pit and near_pit_connector(cs[j], entry_s, exit_s, length,
                                                                               PIT_CONNECTOR_WINDOW)))
    fn = fx * nx + fy * ny          # forward . normal
    rn = rx * nx + ry * ny          # right . normal
    a = hl * fn                     # offset change to a patch's front edge
    b = hpw * rn                    # offset change to its right edge
    reach = abs(a) + abs(b)         # a patch's half extent along the normal
    # the window positions that may hold a sampled point's nearest sample, shared by the car's 20 points
    run_a = -1
    run_b = -1
    if sampled:
        run_a, run_b = window_run_near(cx, cy, cs, length, j, x, y, PATCH_REACH)
    worst = SURF_TRACK
    worst_p = 0
    on_track = 1
    in_pit = 0
    any_pit_wheel = False
    for wi in range(4):
        lon = WHEEL_X if wi < 2 else -WHEEL_X
        lat = -WHEEL_Y if wi % 2 == 0 else WHEEL_Y
        woff = c_off + lon * fn + lat * rn
        wx = x + lon * fx + lat * rx
        wy = y + lon * fy + lat * ry
        if analytic_pit:
            # ``analyticPitWheelState``: the centre's pit surface and main-track offset
            code = cp
            code_p = SURFACE_PRIORITY[code]
            edge_off = c_off
        elif sampled:
            # the worst surface of the five points (the first of equals: centre, then the corners
            # front-right, front-left, rear-left, rear-right), and that point's offset
            code = SURF_TRACK
            code_p = -1
            edge_off = woff
            for q in range(5):
                sl = 0.0 if q == 0 else (1.0 if q < 3 else -1.0)
                sw = 0.0 if q == 0 else (1.0 if (q == 1 or q == 4) else -1.0)
                qx = wx + sl * hl * fx + sw * hpw * rx
                qy = wy + sl * hl * fy + sw * hpw * ry
                if run_a >= 0:
                    jq = nearest_sample_in_run(cx, cy, j, run_a, run_b, qx, qy)
                else:
                    jq = nearest_sample_in_window(cx, cy, cs, length, j, qx, qy)
                so = (qx - cx[jq]) * cnx[jq] + (qy - cy[jq]) * cny[jq]
                qc = band_of(abs(so), hw, kerb, gravel, grass)
                if bx0 <= qx <= bx1 and by0 <= qy <= by1:
                    pc = pit_override_call(PitArrays(pit_geom), qx, qy, abs(so), kerb)
                    if pc >= 0:
                        qc = pc
                if SURFACE_PRIORITY[qc] > code_p:
                    code_p = SURFACE_PRIORITY[qc]
                    code = qc
                    edge_off = so
        else:
            # PaddockJS (``analyticWheelState``): the patch edge farthest from the centreline decides
            low = woff - reach
            high = woff + reach
            edge_off = low if abs(low) > abs(high) else high
            code = band_of(abs(edge_off), hw, kerb, gravel, grass)
            code_p = SURFACE_PRIORITY[code]
        cars_i[w, c, I_WHEEL_SURFACE_FL + wi] = code
        cars_f[w, c, F_WHEEL_OFFSET_FL + wi] = woff
        cars_f[w, c, F_WHEEL_EDGE_FL + wi] = edge_off
        if code_p > worst_p:
            worst_p = code_p
            worst = code
        if is_pit_surface(code):
            in_pit += 1
            any_pit_wheel = True
        elif SURFACE_LEGAL[code] == 0:
            on_track = 0
    cars_i[w, c, I_SURFACE] = worst
    cars_i[w, c, I_ON_TRACK] = on_track
    # PaddockJS's ``inPitLane``: every wheel on a pit surface
    cars_i[w, c, I_IN_PIT_LANE] = 1 if in_pit == 4 else 0
    st = cars_i[w, c, I_PIT_STATUS]
    if any_pit_wheel or st == PIT_ENTERING or st == PIT_QUEUED or st == PIT_SERVICING or st == PIT_EXITING:
        # a pit route moves the car (PaddockJS runs no runoff response for it); a car partly on a pit
        # surface is not destroyed by the barrier either (our pit surfaces: ``race.pit_service``)
        return False
    # PaddockJS's barrier (``applyRunoffResponse``): the car's visual footprint (5.63 x 1.9 m, which
    # holds its body and wheels) reaches past the barrier's inner face, half the barrier's 0.55 m
    # width inside the runoff's outer edge, measured from the centre sample along its normal.
    footprint = 0.5 * VISUAL_LENGTH * abs(fn) + 0.5 * VISUAL_WIDTH * abs(rn)
    return abs(c_off) + footprint > grass - 0.5 * BARRIER_WIDTH


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
    return _classify_one(tr.cx, tr.cy, tr.cs, tr.ch, tr.ccurv, tr.cnx, tr.cny, tr.grid_seg,
                         tr.grid_x0, tr.grid_y0, tr.grid_cell, tr.length, tr.half_width, tr.kerb_edge,
                         tr.gravel_edge, tr.grass_edge, tr.pit_geom, zone, cars_f, cars_i, w, c, cos_h, sin_h)


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
    cx = tr.cx
    cy = tr.cy
    cs = tr.cs
    ch = tr.ch
    ccurv = tr.ccurv
    cnx = tr.cnx
    cny = tr.cny
    grid_seg = tr.grid_seg
    gx0 = tr.grid_x0
    gy0 = tr.grid_y0
    gcell = tr.grid_cell
    length = tr.length
    hw = tr.half_width
    kerb = tr.kerb_edge
    gravel = tr.gravel_edge
    grass = tr.grass_edge
    pit_geom = tr.pit_geom
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
        if _classify_one(cx, cy, cs, ch, ccurv, cnx, cny, grid_seg, gx0, gy0, gcell, length, hw,
                         kerb, gravel, grass, pit_geom, zone, cars_f, cars_i, w, c, cos_h, sin_h):
            touch[c] = 1
