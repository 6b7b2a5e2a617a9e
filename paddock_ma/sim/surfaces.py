"""Wheel contact patches -> surface codes, and the car's track position (step 3 of a tick).

Each car has four 0.72 x 0.38 m contact patches centred at (+-WHEEL_X, +-WHEEL_Y) in the car frame
(FL, FR, RL, RR; left = lateral -1). A patch's surface is the worst (by ``SURFACE_PRIORITY``) of the
surfaces under its corners: the offset is linear across a patch this small, so the corners carry its
min and max offset along the track normal (the analytic test), and pit surfaces are point tests at
the corners, applied beyond the kerb as in ``track.surface_at``.

Surface physics (PaddockJS table, section 2.3 of the spec) is exposed as arrays indexed by code.
"""

import math

import numpy as np
from numba import njit

from .layout import (
    CAR_LENGTH, CAR_WIDTH, F_CURVATURE, F_HEADING, F_HEADING_ERROR, F_OFFSET, F_PROGRESS,
    F_WHEEL_OFFSET_FL, F_WHEEL_OFFSET_FR, F_WHEEL_OFFSET_RL, F_WHEEL_OFFSET_RR, F_X, F_Y,
    I_IN_PIT_LANE, I_ON_TRACK, I_SEG_HINT, I_SURFACE, I_WHEEL_SURFACE_FL, I_WHEEL_SURFACE_FR,
    I_WHEEL_SURFACE_RL, I_WHEEL_SURFACE_RR, PATCH_LENGTH, PATCH_WIDTH, SURF_BARRIER, SURF_GRASS,
    SURF_GRAVEL, SURF_KERB, SURF_PIT_BOX, SURF_PIT_ENTRY, SURF_PIT_EXIT, SURF_PIT_LANE, SURF_TRACK,
    WHEEL_X, WHEEL_Y,
)
from .track_core import band_code, locate, pit_surface_call, wrap_angle

# "Worst surface" priority by code (track 0 < pit-entry/exit 1 < pit-lane 2 < pit-box 3 < kerb 4 <
# grass 5 < gravel 6 < barrier 7), and the surface physics table, indexed by SURF_* code.
SURFACE_PRIORITY = np.array([0, 4, 6, 5, 7, 1, 2, 1, 3], dtype=np.int64)
SURFACE_GRIP = np.array([1.00, 0.92, 0.43, 0.34, 0.18, 0.96, 0.96, 0.96, 0.94])
SURFACE_DRAG = np.array([0.0, 0.12, 4.0, 1.9, 9.0, 0.04, 0.04, 0.04, 0.08])
SURFACE_ROLLING = np.array([0.0, 0.045, 0.68, 0.36, 1.2, 0.012, 0.012, 0.012, 0.025])


@njit(cache=True, inline="always")
def surface_priority(code):
    """Priority (0 best .. 7 worst) of a SURF_* code."""
    if code == SURF_TRACK:
        return 0
    if code == SURF_PIT_ENTRY or code == SURF_PIT_EXIT:
        return 1
    if code == SURF_PIT_LANE:
        return 2
    if code == SURF_PIT_BOX:
        return 3
    if code == SURF_KERB:
        return 4
    if code == SURF_GRASS:
        return 5
    if code == SURF_GRAVEL:
        return 6
    return 7


@njit(cache=True, inline="always")
def is_pit_surface(code):
    """True for pit-entry, pit-lane, pit-exit and pit-box."""
    return code == SURF_PIT_ENTRY or code == SURF_PIT_LANE or code == SURF_PIT_EXIT or code == SURF_PIT_BOX


@njit(cache=True, inline="always")
def patch_surface(tr, wx, wy, fx, fy, hint):
    """Worst surface under a contact patch centred at (wx, wy) m with forward unit vector (fx, fy).

    hint: int segment hint. Returns (code int, centre offset m, seg int).
    """
    seg, s, off, th, k = locate(tr, wx, wy, hint)
    nx = -math.sin(th)
    ny = math.cos(th)
    rx = -fy
    ry = fx
    hl = 0.5 * PATCH_LENGTH
    hw = 0.5 * PATCH_WIDTH
    a = hl * (fx * nx + fy * ny)   # offset change to the patch's front edge
    b = hw * (rx * nx + ry * ny)   # offset change to its right edge
    worst = -1
    worst_p = -1
    for q in range(4):
        sl = 1.0 if q < 2 else -1.0
        sw = 1.0 if q % 2 == 0 else -1.0
        o = off + sl * a + sw * b
        ao = abs(o)
        code = band_code(tr, ao)
        if ao > tr.kerb_edge:   # pit surfaces override beyond the kerb only: skip the test inside
            pc = pit_surface_call(tr, wx + sl * hl * fx + sw * hw * rx, wy + sl * hl * fy + sw * hw * ry)
            if pc >= 0:
                code = pc
        p = surface_priority(code)
        if p > worst_p:
            worst_p = p
            worst = code
    return worst, off, seg


@njit(cache=True)
def classify_car(tr, cars_f, cars_i, w, c):
    """Track position and wheel surfaces of car (w, c); returns True when its body touches the barrier.

    tr: TrackArrays; cars_f: float64[W, C, NF]; cars_i: int32[W, C, NI]; w, c: int.
    Reads F_X, F_Y, F_HEADING and the hint I_SEG_HINT. Writes F_PROGRESS (m), F_OFFSET (m),
    F_HEADING_ERROR (rad), F_CURVATURE (1/m), I_SEG_HINT, I_WHEEL_SURFACE_* and F_WHEEL_OFFSET_*
    (FL, FR, RL, RR), I_SURFACE (worst wheel), I_ON_TRACK (every wheel on track, kerb or pit) and
    I_IN_PIT_LANE (some wheel on a pit surface; the rules may also set it for a pit-route car).
    Barrier: any corner of the 4.65 x 1.24 m body beyond grass_edge while no wheel is on a pit surface.
    """
    x = cars_f[w, c, F_X]
    y = cars_f[w, c, F_Y]
    h = cars_f[w, c, F_HEADING]
    seg, s, off, th, k = locate(tr, x, y, cars_i[w, c, I_SEG_HINT])
    cars_f[w, c, F_PROGRESS] = s
    cars_f[w, c, F_OFFSET] = off
    cars_f[w, c, F_HEADING_ERROR] = wrap_angle(h - th)
    cars_f[w, c, F_CURVATURE] = k
    cars_i[w, c, I_SEG_HINT] = seg
    fx = math.cos(h)
    fy = math.sin(h)
    rx = -fy
    ry = fx
    worst = SURF_TRACK
    worst_p = 0
    on_track = 1
    in_pit = 0
    for wi in range(4):
        lon = WHEEL_X if wi < 2 else -WHEEL_X
        lat = -WHEEL_Y if wi % 2 == 0 else WHEEL_Y
        code, woff, wseg = patch_surface(tr, x + lon * fx + lat * rx, y + lon * fy + lat * ry, fx, fy, seg)
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
        p = surface_priority(code)
        if p > worst_p:
            worst_p = p
            worst = code
        if is_pit_surface(code):
            in_pit = 1
        elif code != SURF_TRACK and code != SURF_KERB:
            on_track = 0
    cars_i[w, c, I_SURFACE] = worst
    cars_i[w, c, I_ON_TRACK] = on_track
    cars_i[w, c, I_IN_PIT_LANE] = in_pit
    if in_pit == 1:
        return False
    # body corners: offsets from the linearised normal first, exact projection near the barrier
    nx = -math.sin(th)
    ny = math.cos(th)
    a = 0.5 * CAR_LENGTH * (fx * nx + fy * ny)
    b = 0.5 * CAR_WIDTH * (rx * nx + ry * ny)
    reach = abs(off) + abs(a) + abs(b)
    if reach <= tr.grass_edge - 0.5:
        return False
    for q in range(4):
        sl = 1.0 if q < 2 else -1.0
        sw = 1.0 if q % 2 == 0 else -1.0
        qx = x + sl * 0.5 * CAR_LENGTH * fx + sw * 0.5 * CAR_WIDTH * rx
        qy = y + sl * 0.5 * CAR_LENGTH * fy + sw * 0.5 * CAR_WIDTH * ry
        qseg, qs, qoff, qh, qk = locate(tr, qx, qy, seg)
        if abs(qoff) > tr.grass_edge:
            return True
    return False
