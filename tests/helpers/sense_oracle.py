"""Independent brute-force oracles of the model-facing senses, from the simulator state.

Nothing here uses the sensor kernels: rays are marched in 1 cm steps with the track's exact
``surface_at`` and an analytic point-in-rectangle test against the other cars' 4.65 x 1.24 m boxes,
the radar is a sort of every other car by distance, the lookahead reads ``point_at``, and the
boundaries come from ``locate``.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from paddock_ma.sim.core import layout as L
from paddock_ma.sim.track.geometry import locate, point_at
from paddock_ma.sim.track.surface import surface_at

STEP = 0.01          # m, oracle march step
MIN_STEP = 0.25      # m, features shorter than this along a ray may be grazed past (sensors.py docstring)


@njit(cache=True)
def codes_along(tr, ox, oy, dx, dy, n):
    """Surface code at t = 0, STEP, 2 STEP, ... (n samples) along the ray, by the exact classifier."""
    out = np.empty(n, np.int64)
    for i in range(n):
        t = i * STEP
        code, off, seg = surface_at(tr, ox + t * dx, oy + t * dy, -1)
        out[i] = code
    return out


def wrap(a):
    return math.atan2(math.sin(a), math.cos(a))


def _first_runs(flags: np.ndarray):
    """[(start_t, end_t)] of the runs where ``flags`` is True (t in metres)."""
    idx = np.flatnonzero(np.diff(np.concatenate(([0], flags.astype(np.int8), [0]))))
    return [(s * STEP, e * STEP) for s, e in zip(idx[::2], idx[1::2])]


def check_surface_channel(got_hit, got_dist, flags, length, tol, what):
    """got (hit, distance m) against the oracle ``flags`` (True where the channel's feature is):
    the first feature sample, allowing a skipped graze shorter than MIN_STEP before it."""
    runs = _first_runs(flags)
    if flags[0]:
        assert got_hit and got_dist == 0.0, f"{what}: origin on the feature, got hit={got_hit} d={got_dist}"
        return
    allowed = []
    for start, end in runs:
        allowed.append(start)
        if end - start >= MIN_STEP:
            break
    else:
        allowed.append(None)     # every run may be grazed: a miss is acceptable
    if not got_hit:
        assert None in allowed, f"{what}: missed a feature at {allowed[0]} m (length {length})"
        assert got_dist == pytest_approx(length), f"{what}: miss must read the length"
        return
    ok = any(a is not None and a - STEP - 1e-6 <= got_dist <= a + tol for a in allowed)
    assert ok, f"{what}: got {got_dist:.4f} m, oracle first crossing(s) {allowed} (tolerance +{tol})"


def pytest_approx(v):
    import pytest
    return pytest.approx(v, abs=1e-4)


def inside_box(px, py, tx, ty, th):
    """bool array: points inside the 4.65 x 1.24 m box centred at (tx, ty) with heading th."""
    c, s = math.cos(th), math.sin(th)
    rx, ry = px - tx, py - ty
    u = rx * c + ry * s
    v = -rx * s + ry * c
    return (np.abs(u) <= 0.5 * L.CAR_LENGTH) & (np.abs(v) <= 0.5 * L.CAR_WIDTH)


def oracle_rays(tr, cars_f, cars_i, flags, w, c, rays):
    """Per ray {channel: (hit, distance or first-feature flags)} from brute force. ``rays``: object rays."""
    ox, oy, oh = cars_f[w, c, L.F_X], cars_f[w, c, L.F_Y], cars_f[w, c, L.F_HEADING]
    code0 = surface_at(tr, ox, oy, -1)[0]
    origin_pit = code0 >= L.SURF_PIT_ENTRY
    out = []
    for ray in rays:
        length = ray["length_meters"]
        ang = oh + math.radians(ray["angle_degrees"])
        dx, dy = math.cos(ang), math.sin(ang)
        n = int(round(length / STEP)) + 1
        codes = codes_along(tr, ox, oy, dx, dy, n)
        inside = (codes == L.SURF_TRACK) | (origin_pit & (codes >= L.SURF_PIT_ENTRY))
        t = np.arange(n) * STEP
        px, py = ox + t * dx, oy + t * dy
        best = (None, None)
        for j in range(cars_f.shape[1]):
            if j == c or cars_i[w, j, L.I_ACTIVE] == 0 or not (flags[w, j] & L.FLAG_RAY_VISIBLE):
                continue
            hit = np.flatnonzero(inside_box(px, py, cars_f[w, j, L.F_X], cars_f[w, j, L.F_Y], cars_f[w, j, L.F_HEADING]))
            if hit.size and (best[0] is None or t[hit[0]] < best[0]):
                best = (t[hit[0]], j)
        out.append({
            "road_edge": inside != inside[0], "exit": bool(inside[0]),
            "kerb": codes == L.SURF_KERB,
            "illegal": (codes >= L.SURF_GRAVEL) & (codes <= L.SURF_BARRIER),
            "car": best,
        })
    return out


def oracle_radar(cars_f, cars_i, flags, w, c, k, radius):
    """The k nearest other active radar-visible cars within radius: [(slot, fields dict)]."""
    ox, oy, oh = cars_f[w, c, L.F_X], cars_f[w, c, L.F_Y], cars_f[w, c, L.F_HEADING]
    cand = []
    for j in range(cars_f.shape[1]):
        if j == c or cars_i[w, j, L.I_ACTIVE] == 0 or not (flags[w, j] & L.FLAG_RADAR_VISIBLE):
            continue
        d = math.hypot(cars_f[w, j, L.F_X] - ox, cars_f[w, j, L.F_Y] - oy)
        if d <= radius:
            cand.append((d, j))
    cand.sort()
    out = []
    ch, sh = math.cos(oh), math.sin(oh)
    for d, j in cand[:k]:
        ddx, ddy = cars_f[w, j, L.F_X] - ox, cars_f[w, j, L.F_Y] - oy
        rvx, rvy = cars_f[w, j, L.F_VX] - cars_f[w, c, L.F_VX], cars_f[w, j, L.F_VY] - cars_f[w, c, L.F_VY]
        fwd = ddx * ch + ddy * sh
        out.append((j, {
            "relative_forward_meters": fwd, "relative_right_meters": -ddx * sh + ddy * ch,
            "relative_distance_meters": d,
            "relative_speed_kph": (cars_f[w, j, L.F_SPEED] - cars_f[w, c, L.F_SPEED]) * 3.6,
            "relative_heading_radians": wrap(cars_f[w, j, L.F_HEADING] - oh),
            "ahead": fwd > 0, "same_lap": bool(cars_i[w, j, L.I_LAP] == cars_i[w, c, L.I_LAP]),
            "relative_velocity_forward_meters_per_second": rvx * ch + rvy * sh,
            "relative_velocity_right_meters_per_second": -rvx * sh + rvy * ch,
            "closing_speed_meters_per_second": -(ddx * rvx + ddy * rvy) / d if d > 0 else 0.0,
        }))
    return out


def oracle_self(tr, cars_f, w, c):
    """Track-relative facts of car c from its pose: locate, boundaries, contact-patch corner surfaces."""
    x, y, h = cars_f[w, c, L.F_X], cars_f[w, c, L.F_Y], cars_f[w, c, L.F_HEADING]
    seg, s, off, th, k = locate(tr, x, y, -1)
    fx, fy = math.cos(h), math.sin(h)
    rx, ry = -fy, fx
    patches = []
    for wi in range(4):
        lon = L.WHEEL_X if wi < 2 else -L.WHEEL_X
        lat = -L.WHEEL_Y if wi % 2 == 0 else L.WHEEL_Y
        wx, wy = x + lon * fx + lat * rx, y + lon * fy + lat * ry
        woff = locate(tr, wx, wy, -1)[2]
        corners = set()
        for sl in (-1, 1):
            for sw in (-1, 1):
                cx = wx + sl * 0.5 * L.PATCH_LENGTH * fx + sw * 0.5 * L.PATCH_WIDTH * rx
                cy = wy + sl * 0.5 * L.PATCH_LENGTH * fy + sw * 0.5 * L.PATCH_WIDTH * ry
                corners.add(int(surface_at(tr, cx, cy, -1)[0]))
        patches.append((corners, woff))
    return {"progress": s, "offset": off, "heading_error": wrap(h - th), "curvature": k,
            "left": tr.half_width + off, "right": tr.half_width - off, "patches": patches}


def oracle_lookahead(tr, progress, distances):
    h0 = point_at(tr, progress)[2]
    out = []
    for d in distances:
        x, y, h, k = point_at(tr, progress + d)
        out.append((k, wrap(h - h0)))
    return out
