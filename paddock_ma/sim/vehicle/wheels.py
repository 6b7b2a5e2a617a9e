"""Wheel contact patches -> surface codes, and the car's track position (step 3 of a tick).

Each car has four 0.72 x 0.38 m contact patches centred at (+-WHEEL_X, +-WHEEL_Y) in the car frame
(FL, FR, RL, RR; left = lateral -1). A patch's surface is the worst (by ``surface_table.SURFACE_PRIORITY``) of
the surfaces under its corners: the offset is linear across a patch this small, so the corners carry its
min and max offset along the track normal (the analytic test), and pit surfaces are point tests at
the corners, applied beyond the kerb as in ``track.surface.surface_at`` (and only inside a bounding box of
the pit complex: elsewhere no pit surface can apply).

Performance: the step calls ``classify_world`` once per world and tick; it unpacks the track arrays
once and runs the per-car body (``_classify_one``, inlined) on bare arrays. Near the track a wheel's offset comes from the car's
projection (the wheel's position in the track frame there, with a curvature term); elsewhere from its own
projection, searched from the car's segment. Normals are the samples' (cnx, cny), not sin/cos.
"""

import math
from collections import namedtuple

import numpy as np

from ..core.jit import kernel
from ..core.layout import (
    CAR_LENGTH, CAR_WIDTH, F_CURVATURE, F_HEADING, F_HEADING_ERROR, F_OFFSET, F_PROGRESS, F_WHEEL_OFFSET_FL,
    F_WHEEL_OFFSET_FR, F_WHEEL_OFFSET_RL, F_WHEEL_OFFSET_RR, F_X, F_Y, I_ACTIVE, I_IN_PIT_LANE, I_ON_TRACK,
    I_SEG_HINT, I_SURFACE, I_WHEEL_SURFACE_FL, I_WHEEL_SURFACE_FR, I_WHEEL_SURFACE_RL, I_WHEEL_SURFACE_RR,
    PATCH_LENGTH, PATCH_WIDTH, SURF_BARRIER, SURF_PIT_BOX, SURF_PIT_ENTRY, SURF_PIT_EXIT, SURF_PIT_LANE,
    SURF_TRACK, PRE_COS, PRE_HEADING, PRE_SIN, WHEEL_X, WHEEL_Y,
)
from .surface_table import SURFACE_LEGAL, SURFACE_PRIORITY
from ..track.geometry import HINT_WINDOW, finish_locate, locate_slow, walk_segments, band_of
from ..track.surface import pit_bbox, pit_surface_call
from ..core.trig import wrap_angle

# The TrackArrays fields ``track.surface.pit_surface`` reads: built only where a pit test runs.
PitArrays = namedtuple("PitArrays", ["px", "py", "pit_side", "pit_width", "box_x", "box_y"])

@kernel(inline="always")
def is_pit_surface(code):
    """True for pit-entry, pit-lane, pit-exit and pit-box."""
    return code == SURF_PIT_ENTRY or code == SURF_PIT_LANE or code == SURF_PIT_EXIT or code == SURF_PIT_BOX


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


@kernel(inline="always")
def _classify_one(cx, cy, cs, ch, ccurv, cnx, cny, grid_seg, gx0, gy0, gcell, length, hw, kerb,
                  gravel, grass, px, py, box_x, box_y, pit_side, pit_width, bbox, cars_f, cars_i,
                  w, c, fx, fy):
    """classify_car on unpacked track arrays and the pit box (bx0, by0, bx1, by1); fx, fy: cos and
    sin of the car's F_HEADING. Takes no tuple: an inlined body that receives the track tuple
    increfs and decrefs every array of it per car. (numba inlines at most 30 arguments: the box is
    one tuple.)"""
    bx0, by0, bx1, by1 = bbox
    x = cars_f[w, c, F_X]
    y = cars_f[w, c, F_Y]
    h = cars_f[w, c, F_HEADING]
    seg, t, off = _project(cx, cy, grid_seg, gx0, gy0, gcell, gravel, x, y, cars_i[w, c, I_SEG_HINT])
    seg, s, off, th, k = finish_locate(cx, cy, cs, ch, ccurv, length, x, y, seg, t, off * off)
    cars_f[w, c, F_PROGRESS] = s
    cars_f[w, c, F_OFFSET] = off
    cars_f[w, c, F_HEADING_ERROR] = wrap_angle(h - th)
    cars_f[w, c, F_CURVATURE] = k
    cars_i[w, c, I_SEG_HINT] = seg
    rx = -fy
    ry = fx
    hl = 0.5 * PATCH_LENGTH
    hpw = 0.5 * PATCH_WIDTH
    # Track frame at the car's projection: unit normal (right) and tangent, curvature k.
    cxn = cnx[seg] + t * (cnx[seg + 1] - cnx[seg])
    cyn = cny[seg] + t * (cny[seg + 1] - cny[seg])
    inv = 1.0 / math.sqrt(cxn * cxn + cyn * cyn)
    cxn *= inv
    cyn *= inv
    # Near the track (the common case) the wheel offsets follow from the car's projection: a wheel
    # at (a along, b across) the frame sits at offset b - a^2 k / (2 (1 - b k)) from a centreline
    # of curvature k (a circle's, to second order in a; within ~2 cm of the polyline's own
    # projection in the tightest corners, exact on straights). Elsewhere: exact projection.
    analytic = abs(off) < kerb + 3.0 and abs(k) * (abs(off) + 3.0) < 0.25
    worst = SURF_TRACK
    worst_p = 0
    on_track = 1
    in_pit = 0
    for wi in range(4):
        lon = WHEEL_X if wi < 2 else -WHEEL_X
        lat = -WHEEL_Y if wi % 2 == 0 else WHEEL_Y
        wx = x + lon * fx + lat * rx
        wy = y + lon * fy + lat * ry
        if analytic:
            dxw = wx - x
            dyw = wy - y
            aw = dxw * cyn - dyw * cxn           # along the tangent (cyn, -cxn)
            bw = off + dxw * cxn + dyw * cyn     # across, before the curvature term
            woff = bw - aw * aw * k / (2.0 * (1.0 - bw * k))
            nx = cxn
            ny = cyn
        else:
            wseg, wt, woff = _project(cx, cy, grid_seg, gx0, gy0, gcell, gravel, wx, wy, seg)
            nx = cnx[wseg] + wt * (cnx[wseg + 1] - cnx[wseg])
            ny = cny[wseg] + wt * (cny[wseg + 1] - cny[wseg])
        # The patch is small: its offset is linear across it, so its corners carry the extremes.
        a = hl * (fx * nx + fy * ny)     # offset change to the patch's front edge
        b = hpw * (rx * nx + ry * ny)    # offset change to its right edge
        # Every corner on the asphalt (the common case): |woff +- a +- b| <= |woff| + |a| + |b|
        # holds in floating point too (rounding is monotonic), so the corner loop would say track.
        if abs(woff) + abs(a) + abs(b) <= hw:
            code = SURF_TRACK
            code_p = 0
        else:
            code = -1
            code_p = -1
            for q in range(4):
                sl = 1.0 if q < 2 else -1.0
                sw = 1.0 if q % 2 == 0 else -1.0
                ao = abs(woff + sl * a + sw * b)
                qc = band_of(ao, hw, kerb, gravel, grass)
                if ao > kerb:   # pit surfaces override beyond the kerb only, and only near the pits
                    qx = wx + sl * hl * fx + sw * hpw * rx
                    qy = wy + sl * hl * fy + sw * hpw * ry
                    if bx0 <= qx <= bx1 and by0 <= qy <= by1:
                        pc = pit_surface_call(PitArrays(px, py, pit_side, pit_width, box_x, box_y),
                                              qx, qy)
                        if pc >= 0:
                            qc = pc
                p = SURFACE_PRIORITY[qc]
                if p > code_p:
                    code_p = p
                    code = qc
        if wi == 0:
            cars_i[w, c, I_WHEEL_SURFACE_FL] = code
            cars_f[w, c, F_WHEEL_OFFSET_FL] = woff
        elif wi == 1:
            cars_i[w, c, I_WHEEL_SURFACE_FR] = code
            cars_f[w, c, F_WHEEL_OFFSET_FR] = woff
        elif wi == 2:
            cars_i[w, c, I_WHEEL_SURFACE_RL] = code
            cars_f[w, c, F_WHEEL_OFFSET_RL] = woff
        else:
            cars_i[w, c, I_WHEEL_SURFACE_RR] = code
            cars_f[w, c, F_WHEEL_OFFSET_RR] = woff
        if code_p > worst_p:
            worst_p = code_p
            worst = code
        if is_pit_surface(code):
            in_pit = 1
        elif SURFACE_LEGAL[code] == 0:
            on_track = 0
    cars_i[w, c, I_SURFACE] = worst
    cars_i[w, c, I_ON_TRACK] = on_track
    cars_i[w, c, I_IN_PIT_LANE] = in_pit
    # The barrier's inner face is the grass edge: a wheel whose patch reaches past it (a barrier
    # wheel, with no pit surface under that corner) touches the wall, so the surfaces and the
    # destruction agree (the patches reach 0.95 m out from the car's axis, past the 0.62 m body).
    if worst == SURF_BARRIER:
        return True
    if in_pit == 1:
        return False
    # body corners: offsets from the linearised normal first, exact projection near the barrier
    a = 0.5 * CAR_LENGTH * (fx * cxn + fy * cyn)
    b = 0.5 * CAR_WIDTH * (rx * cxn + ry * cyn)
    reach = abs(off) + abs(a) + abs(b)
    if reach <= grass - 0.5:
        return False
    for q in range(4):
        sl = 1.0 if q < 2 else -1.0
        sw = 1.0 if q % 2 == 0 else -1.0
        qx = x + sl * 0.5 * CAR_LENGTH * fx + sw * 0.5 * CAR_WIDTH * rx
        qy = y + sl * 0.5 * CAR_LENGTH * fy + sw * 0.5 * CAR_WIDTH * ry
        qseg, qt, qoff = _project(cx, cy, grid_seg, gx0, gy0, gcell, gravel, qx, qy, seg)
        if abs(qoff) > grass:
            return True
    return False


@kernel
def classify_car(tr, cars_f, cars_i, w, c):
    """Track position and wheel surfaces of car (w, c); returns True when the car touches the barrier.

    tr: TrackArrays; cars_f: float64[W, C, NF]; cars_i: int32[W, C, NI]; w, c: int.
    Reads F_X, F_Y, F_HEADING and the hint I_SEG_HINT. Writes F_PROGRESS (m), F_OFFSET (m),
    F_HEADING_ERROR (rad), F_CURVATURE (1/m), I_SEG_HINT, I_WHEEL_SURFACE_* and F_WHEEL_OFFSET_*
    (FL, FR, RL, RR), I_SURFACE (worst wheel), I_ON_TRACK (every wheel on track, kerb or pit) and
    I_IN_PIT_LANE (some wheel on a pit surface; the rules may also set it for a pit-route car).
    Barrier (the wall's inner face is grass_edge): a wheel on the barrier surface (a patch corner beyond
    grass_edge and on no pit surface), or any corner of the 4.65 x 1.24 m body beyond grass_edge while
    no wheel is on a pit surface.
    """
    bbox = pit_bbox(tr.px, tr.py, tr.box_x, tr.box_y, tr.pit_width)
    cos_h = math.cos(cars_f[w, c, F_HEADING])
    sin_h = math.sin(cars_f[w, c, F_HEADING])
    return _classify_one(tr.cx, tr.cy, tr.cs, tr.ch, tr.ccurv, tr.cnx, tr.cny, tr.grid_seg,
                         tr.grid_x0, tr.grid_y0, tr.grid_cell, tr.length, tr.half_width, tr.kerb_edge,
                         tr.gravel_edge, tr.grass_edge, tr.px, tr.py, tr.box_x, tr.box_y, tr.pit_side,
                         tr.pit_width, bbox, cars_f, cars_i, w, c, cos_h, sin_h)


# inlined into tick_world: a call passes the track tuple as ~300 machine words, per world and tick
@kernel(inline="always")
def classify_world(tr, cars_f, cars_i, w, n_cars, touch, trig, bbox):
    """``classify_car`` for every active car of world ``w``; touch int8[C] receives 1 where the
    car touches the barrier (0 otherwise, and for empty slots). One call per world: the
    track arrays are unpacked once, not per car.

    trig float64[C, >= 3]: the step's ``pre`` (columns PRE_HEADING, PRE_COS, PRE_SIN); a row whose heading equals the car's F_HEADING
    supplies cos and sin (the dynamics leave them there), any other row is recomputed and stored.
    bbox: ``pit_bbox`` of the track (x0, y0, x1, y1), computed once by the caller.
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
    px = tr.px
    py = tr.py
    box_x = tr.box_x
    box_y = tr.box_y
    pit_side = tr.pit_side
    pit_width = tr.pit_width
    for c in range(n_cars):
        touch[c] = 0
        if cars_i[w, c, I_ACTIVE] == 0:
            continue
        h = cars_f[w, c, F_HEADING]
        if trig[c, PRE_HEADING] != h:
            trig[c, PRE_HEADING] = h
            trig[c, PRE_COS] = math.cos(h)
            trig[c, PRE_SIN] = math.sin(h)
        cos_h = trig[c, PRE_COS]
        sin_h = trig[c, PRE_SIN]
        if _classify_one(cx, cy, cs, ch, ccurv, cnx, cny, grid_seg, gx0, gy0, gcell, length, hw,
                         kerb, gravel, grass, px, py, box_x, box_y, pit_side, pit_width,
                         bbox, cars_f, cars_i, w, c, cos_h, sin_h):
            touch[c] = 1
