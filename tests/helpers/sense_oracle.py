"""Independent brute-force oracles of the model-facing senses, from the simulator state.

Nothing here uses the sensor kernels: rays are marched in 1 cm steps with the track's exact
``surface_at`` and an analytic point-in-rectangle test against the other cars' 4.65 x 1.24 m boxes,
the radar is a sort of every other car by distance, the lookahead reads ``point_at`` and PaddockJS's
sample curvature from the sample positions, and the boundaries come from ``locate``.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from paddock_ma.sim.core import layout as L
from paddock_ma.sim.track.geometry import band_of, locate, point_at
from paddock_ma.sim.track.point_surface import surface_at
from paddock_ma.sim.track.surface import pit_state, pit_surface
from paddock_ma.sim.vehicle.surface_table import SURFACE_PRIORITY

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


def nearest_sample_index(tr, x, y) -> int:
    """PaddockJS's centre sample (``nearestTrackState``, legacy mode): the centreline sample nearest
    (x, y) (m), by brute force over the lap."""
    return int(np.argmin((tr.cx[:-1] - x) ** 2 + (tr.cy[:-1] - y) ** 2))


def _chord_heading(tr, i, j) -> float:
    n = tr.cx.shape[0] - 1
    i, j = i % n, j % n
    return math.atan2(tr.cy[j] - tr.cy[i], tr.cx[j] - tr.cx[i])


def sample_heading(tr, i) -> float:
    """PaddockJS's sample heading (``recalculateSampleGeometry``): the chord from sample i - 1 to i + 1."""
    return _chord_heading(tr, i - 1, i + 1)


def sample_curvature(tr, i) -> float:
    """PaddockJS's sample curvature (``recalculateSampleGeometry``: the angle between the chords
    i - 1 -> i + 1 and i -> i + 2), as 1/m over the mean sample spacing (length / N)."""
    n = tr.cx.shape[0] - 1
    return abs(wrap(_chord_heading(tr, i, i + 2) - sample_heading(tr, i))) * n / tr.length


def sample_curvature_at(tr, s) -> float:
    """``sample_curvature`` interpolated linearly between the samples around lap distance s (m), as
    PaddockJS's ``pointAt``."""
    s = s % tr.length
    i = int(np.searchsorted(tr.cs, s, side="right")) - 1
    t = (s - tr.cs[i]) / (tr.cs[i + 1] - tr.cs[i])
    a, b = sample_curvature(tr, i), sample_curvature(tr, i + 1)
    return a + t * (b - a)


PIT_CONNECTOR_WINDOW = 35.0   # m, PaddockJS's PIT_CONNECTOR_FULL_SAMPLE_WINDOW


def near_pit_connector(tr, s) -> bool:
    """Lap distance s (m) within PaddockJS's full-sampling window of the pit entry or exit."""
    if tr.px.shape[0] == 0:
        return False
    gaps = [abs(s - tr.pit_entry_s), abs(s - tr.pit_exit_s)]
    return any(min(g, tr.length - g) <= PIT_CONNECTOR_WINDOW for g in gaps)


def sampled_patch(tr, wx, wy, fx, fy, pit=True):
    """PaddockJS's full sampling of a contact patch centred at (wx, wy) on a car heading (fx, fy):
    (surface code, offset m) of the worst of its centre and four corners (first of equals: centre,
    front-right, front-left, rear-left, rear-right), each point's offset from its own nearest sample
    along that sample's normal; a pit surface there counts where PaddockJS's pit override applies (a pit
    box anywhere, another pit surface beyond the kerb; unless ``pit`` is False: a policy car without a
    committed stop, PaddockJS's ``pitOverrideAllowedForCar``)."""
    rx, ry = -fy, fx
    best = None
    for sl, sw in ((0, 0), (1, 1), (1, -1), (-1, -1), (-1, 1)):
        qx = wx + sl * 0.5 * L.PATCH_LENGTH * fx + sw * 0.5 * L.PATCH_WIDTH * rx
        qy = wy + sl * 0.5 * L.PATCH_LENGTH * fy + sw * 0.5 * L.PATCH_WIDTH * ry
        jq = nearest_sample_index(tr, qx, qy)
        hq = sample_heading(tr, jq)
        so = (qx - tr.cx[jq]) * -math.sin(hq) + (qy - tr.cy[jq]) * math.cos(hq)
        code = int(band_of(abs(so), tr.half_width, tr.kerb_edge, tr.gravel_edge, tr.grass_edge))
        p = int(pit_surface(tr, qx, qy)) if pit else -1
        if p == L.SURF_PIT_BOX or (p >= 0 and abs(so) > tr.kerb_edge):
            code = p
        if best is None or SURFACE_PRIORITY[code] > SURFACE_PRIORITY[best[0]]:
            best = (code, so)
    return best


def oracle_self(tr, cars_f, w, c, pit=True):
    """Track-relative facts of car c from its pose: locate, boundaries, contact-patch corner surfaces;
    as PaddockJS measures them, the heading error to the nearest centreline sample's heading, that
    sample's lap distance ("sample_s") and the patch centres' offsets from it along its normal, and
    the patches' surfaces by PaddockJS's three ways: with the car's centre state in the pit lane (its pit
    override) and every patch within its pit road's width, every patch reads the centre's pit surface
    and offset ("analytic_pit", "centre_offset"); else, with the centre in the pit lane or near the pit
    connectors, each patch's full sampling ("sampled": (code, offset) or None); else the main track's
    bands of its corners. ``pit`` False: the pit surfaces do not count (a policy car PaddockJS's pit
    override leaves out)."""
    x, y, h = cars_f[w, c, L.F_X], cars_f[w, c, L.F_Y], cars_f[w, c, L.F_HEADING]
    seg, s, off, th, k = locate(tr, x, y, -1)
    j = nearest_sample_index(tr, x, y)
    hj = sample_heading(tr, j)
    fx, fy = math.cos(h), math.sin(h)
    rx, ry = -fy, fx
    c_off = (x - tr.cx[j]) * -math.sin(hj) + (y - tr.cy[j]) * math.cos(hj)
    cp, qx, qy, qnx, qny, qw, qd = pit_state(tr, x, y) if pit else (-1, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    if not (cp == L.SURF_PIT_BOX or (cp >= 0 and abs(c_off) > tr.kerb_edge)):
        cp = -1
    wheels = []
    for wi in range(4):
        lon = L.WHEEL_X if wi < 2 else -L.WHEEL_X
        lat = -L.WHEEL_Y if wi % 2 == 0 else L.WHEEL_Y
        wheels.append((x + lon * fx + lat * rx, y + lon * fy + lat * ry))
    analytic_pit = cp >= 0 and qw > 0
    if analytic_pit:
        ph = abs(fx * qnx + fy * qny) * 0.5 * L.PATCH_LENGTH + abs(rx * qnx + ry * qny) * 0.5 * L.PATCH_WIDTH
        for wx, wy in wheels:
            wc = (wx - qx) * qnx + (wy - qy) * qny
            analytic_pit = analytic_pit and -qw / 2 - 0.001 / 12 <= wc - ph and wc + ph <= qw / 2 + 0.001 / 12
    near = not analytic_pit and (cp >= 0 or near_pit_connector(tr, tr.cs[j]))
    patches = []
    sampled = []
    for wx, wy in wheels:
        # PaddockJS (``analyticWheelState``): from the car's centre sample along its normal, linearly
        woff = (wx - tr.cx[j]) * -math.sin(hj) + (wy - tr.cy[j]) * math.cos(hj)
        corners = set()
        for sl in (-1, 1):
            for sw in (-1, 1):
                cx = wx + sl * 0.5 * L.PATCH_LENGTH * fx + sw * 0.5 * L.PATCH_WIDTH * rx
                cy = wy + sl * 0.5 * L.PATCH_LENGTH * fy + sw * 0.5 * L.PATCH_WIDTH * ry
                code, off_q, _ = surface_at(tr, cx, cy, -1)
                if code >= L.SURF_PIT_ENTRY:
                    code = band_of(abs(off_q), tr.half_width, tr.kerb_edge, tr.gravel_edge, tr.grass_edge)
                corners.add(int(code))
        sampled.append(sampled_patch(tr, wx, wy, fx, fy, pit) if near else None)
        patches.append(({int(cp)} if analytic_pit else {sampled[-1][0]} if near else corners, woff))
    return {"progress": s, "offset": off, "heading_error": wrap(h - hj), "curvature": k, "sampled": sampled,
            "sample_s": tr.cs[j], "left": tr.half_width + off, "right": tr.half_width - off, "patches": patches,
            "analytic_pit": analytic_pit, "centre_offset": c_off,
            # PaddockJS's car progress: its centre state's lap distance (in the pit lane, the pit road's mapping)
            "centre_distance": tr.cs[j] if cp < 0 else qd}


def oracle_lookahead(tr, sample_s, distances):
    """(curvature 1/m, heading delta rad) at ``sample_s`` + d for each distance d (m): PaddockJS's
    lookahead from the car's centre sample (lap distance ``sample_s``), its sample curvature."""
    h0 = point_at(tr, sample_s)[2]
    out = []
    for d in distances:
        h = point_at(tr, sample_s + d)[2]
        out.append((sample_curvature_at(tr, sample_s + d), wrap(h - h0)))
    return out
