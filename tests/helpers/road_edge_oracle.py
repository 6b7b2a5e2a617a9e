"""An independent oracle of the road-edge ray as PaddockJS 2.0.0 measures it (``estimateTrackHit``,
src/environment/sensors/trackRays.js), in plain Python and numpy, written from PaddockJS's code and
sharing nothing with ``paddock_ma.sim.sensing.road_edge``.

* Edge lines: every segment's white lines (samples offset +-half width along their normals) intersected
  with the ray by brute force over the whole lap.
* The candidate segments of a hinted query: PaddockJS's 512 arc buckets built as it builds them (each
  segment listed in every bucket from its start's to its end's, mod 512), the centre bucket's and two
  either side, in that order, each segment once.
* Straight edge and the 1 m march as in PaddockJS (the march's samples classified by the hinted query,
  else by the nearest segment of the whole lap).

Agreement with PaddockJS itself along its own traces is ``tests/env/test_paddockjs_closed_loop.py``.
"""

from __future__ import annotations

import math

import numpy as np

from paddock_ma.sim.core import layout as L
from paddock_ma.sim.track.geometry import locate
from paddock_ma.sim.track.surface import pit_surface

ANALYTIC_MAX_CURVATURE = 5e-5
PIT_WINDOW = 55.0
BUCKETS = 512
EPS2 = 1e-6 / 144.0
_BUCKET_LISTS = {}


def _bucket_lists(tr):
    key = id(tr.cs)
    if key not in _BUCKET_LISTS:
        bl = tr.length / BUCKETS
        lists = [[] for _ in range(BUCKETS)]
        for i in range(len(tr.cs) - 1):
            for b in range(math.floor(tr.cs[i] / bl), math.floor(tr.cs[i + 1] / bl) + 1):
                lists[b % BUCKETS].append(i)
        _BUCKET_LISTS[key] = (tr.cs, lists)     # tr.cs kept alive so its id stays unique
    return _BUCKET_LISTS[key][1]


def hinted_segments(tr, progress):
    lists = _bucket_lists(tr)
    centre = math.floor((progress % tr.length) / (tr.length / BUCKETS))
    out, seen = [], set()
    for o in range(-2, 3):
        for i in lists[(centre + o) % BUCKETS]:
            if i not in seen:
                seen.add(i)
                out.append(i)
    return out


def sample_curvature(tr, i):
    """PaddockJS's sample curvature: |heading of the chord i -> i+2 - heading of i-1 -> i+1| / 28."""
    n = len(tr.cx) - 1
    p, a, b, c = (i - 1) % n, (i + 1) % n, (i + 2) % n, i % n
    h = math.atan2(tr.cy[a] - tr.cy[p], tr.cx[a] - tr.cx[p])
    h2 = math.atan2(tr.cy[b] - tr.cy[c], tr.cx[b] - tr.cx[c])
    return abs((h2 - h + math.pi) % (2 * math.pi) - math.pi) / 28.0


def _project(tr, i, x, y):
    ax, ay, bx, by = tr.cx[i], tr.cy[i], tr.cx[i + 1], tr.cy[i + 1]
    dx, dy = bx - ax, by - ay
    l2 = dx * dx + dy * dy
    t = min(1.0, max(0.0, ((x - ax) * dx + (y - ay) * dy) / l2)) if l2 > 0 else 0.0
    qx, qy = x - (ax + dx * t), y - (ay + dy * t)
    return dict(seg=i, distance=tr.cs[i] + (tr.cs[i + 1] - tr.cs[i]) * t,
                offset=qx * tr.cnx[i] + qy * tr.cny[i], d2=qx * qx + qy * qy)


def _best(tr, ids, x, y, progress):
    best, best_tie = None, None
    for i in ids:
        p = _project(tr, i, x, y)
        tie = abs(p["distance"] - progress)
        if best is None or p["d2"] < best["d2"] - EPS2:
            best, best_tie = p, tie
        elif abs(p["d2"] - best["d2"]) <= EPS2 and tie < best_tie:
            best, best_tie = p, tie
    return best


def _best_sample(tr, ids, x, y, progress):
    n = len(tr.cx) - 1
    best, best_tie, seen = None, None, set()
    for i in ids:
        for j in (i % n, (i + 1) % n):
            if j in seen:
                continue
            seen.add(j)
            qx, qy = x - tr.cx[j], y - tr.cy[j]
            p = dict(seg=j, distance=tr.cs[j], offset=qx * tr.cnx[j] + qy * tr.cny[j], d2=qx * qx + qy * qy)
            tie = abs(p["distance"] - progress)
            if best is None or p["d2"] < best["d2"] - EPS2:
                best, best_tie = p, tie
            elif abs(p["d2"] - best["d2"]) <= EPS2 and tie < best_tie:
                best, best_tie = p, tie
    return best


def track_state(tr, ids, progress, x, y, sample_mode=False):
    """PaddockJS's nearestTrackState (main track) of (x, y): projection mode, or (batch-training rays)
    sample mode, the nearest end sample of the candidate segments at any distance."""
    if sample_mode:
        return _best_sample(tr, ids, x, y, progress)
    b = _best(tr, ids, x, y, progress)
    if b["d2"] <= (tr.grass_edge + 24.0) ** 2:
        return b
    n = len(tr.cx) - 1
    d2 = (tr.cx[:-1] - x) ** 2 + (tr.cy[:-1] - y) ** 2
    j = int(np.argmin(d2))
    return _best(tr, [(j + k) % n for k in range(-40, 41)], x, y, progress)


def edge_line_distance(tr, ox, oy, dx, dy, length):
    """The nearest intersection (m) of the ray with any segment's white line, or None."""
    best = None
    for o in (tr.half_width, -tr.half_width):
        sx, sy = tr.cx[:-1] + tr.cnx[:-1] * o, tr.cy[:-1] + tr.cny[:-1] * o
        vx, vy = tr.cx[1:] + tr.cnx[1:] * o - sx, tr.cy[1:] + tr.cny[1:] * o - sy
        den = dx * vy - dy * vx
        qx, qy = sx - ox, sy - oy
        with np.errstate(all="ignore"):
            t = (qx * vy - qy * vx) / den
            u = (qx * dy - qy * dx) / den
        ok = (np.abs(den) >= 1e-9 / 12) & (t >= 0) & (t <= length) & (u >= -1e-6) & (u <= 1 + 1e-6)
        if ok.any():
            best = t[ok].min() if best is None else min(best, t[ok].min())
    return best


def near_pit(tr, s):
    if len(tr.px) == 0:
        return False
    return any(min(abs(s - e), tr.length - abs(s - e)) <= PIT_WINDOW for e in (tr.pit_entry_s, tr.pit_exit_s))


def pit_override_of(tr, x, y, a):
    """PaddockJS's pit override of a point's state at |offset| ``a`` (m, its own track state's): a pit
    box anywhere, another pit surface beyond the kerb (``pit_surface``: PaddockJS's pit-lane state)."""
    p = int(pit_surface(tr, x, y))
    return p == L.SURF_PIT_BOX or (p >= 0 and a > tr.kerb_edge)


def include_pit_lane(tr, x, y, in_pit_lane=False, allowed=True):
    """PaddockJS's ``includePitLane`` of a car at (x, y): in the pit lane (every wheel), or, its pit override
    ``allowed``, its centre's state (from its nearest sample) or its ray origin's (the projection) put in
    the pit lane by the override."""
    if in_pit_lane:
        return True
    if not allowed:
        return False
    j = int(np.argmin((tr.cx[:-1] - x) ** 2 + (tr.cy[:-1] - y) ** 2))
    c_off = (x - tr.cx[j]) * tr.cnx[j] + (y - tr.cy[j]) * tr.cny[j]
    return any(pit_override_of(tr, x, y, abs(a)) for a in (c_off, locate(tr, x, y, -1)[2]))


def road_edge(tr, x, y, heading, angle, length, progress, *, debug=False, include_pit=False, batch_training=False):
    """-> (hit 0/1, distance m, kind 0 miss / 1 exit / 2 entry, path): one ray of a car at (x, y)
    whose progress (its nearest sample's lap distance) is ``progress``; ``angle`` rad from the heading.
    batch_training: PaddockJS's batch-training rays (no pit window, sample-mode queries)."""
    dx, dy = math.cos(heading + angle), math.sin(heading + angle)
    ids = hinted_segments(tr, progress)
    origin = track_state(tr, ids, progress, x, y, batch_training)
    hw = tr.half_width
    inside0 = abs(origin["offset"]) <= hw
    pit_window = not batch_training and near_pit(tr, origin["distance"])
    if not include_pit and not pit_window and abs(origin["offset"]) <= tr.grass_edge + 64.0:
        d = edge_line_distance(tr, x, y, dx, dy, length)
        if d is not None:
            return 1, d, 1 if inside0 else 2, "edge-lines"
        if sample_curvature(tr, origin["seg"]) <= ANALYTIC_MAX_CURVATURE:
            i, off = origin["seg"], origin["offset"]
            lateral = dx * tr.cnx[i] + dy * tr.cny[i]
            target = None
            if abs(lateral) >= 0.08:
                if inside0:
                    target = hw if lateral > 0 else -hw
                elif off > hw and lateral < 0:
                    target = hw
                elif off < -hw and lateral > 0:
                    target = -hw
            if target is not None and 0 <= (target - off) / lateral <= length:
                return 1, (target - off) / lateral, 1 if inside0 else 2, "straight-edge"
            return 0, length, 0, "straight-edge"

    def inside(t):
        px, py = x + dx * t, y + dy * t
        a = abs(track_state(tr, ids, progress, px, py, batch_training)["offset"])
        if a <= hw:
            return True
        return include_pit and pit_override_of(tr, px, py, a)

    prev = inside(0.0)
    k = 1
    while k <= length:
        if inside(float(k)) != prev:
            lo, hi = k - 1.0, float(k)
            for _ in range(12 if debug else 0):
                mid = 0.5 * (lo + hi)
                if inside(mid) != prev:
                    hi = mid
                else:
                    lo = mid
            return 1, hi, 1 if prev else 2, "march"
        k += 1
    return 0, length, 0, "march"


# ------------------------------------------------------------------------------------------------
# Kerb and illegal-surface rays (``estimateSurfaceHits``, src/environment/sensors/surfaceRays.js)
# ------------------------------------------------------------------------------------------------
def band_surface(tr, offset):
    a = abs(offset)
    return ("track" if a <= tr.half_width else "kerb" if a <= tr.kerb_edge else "gravel" if a <= tr.gravel_edge
            else "grass" if a <= tr.grass_edge else "barrier")


def _matches(channel, surface):
    return surface == "kerb" if channel == "kerb" else surface in ("gravel", "grass")


def kerb_outer_distance(tr, ox, oy, dx, dy, length):
    """The nearest intersection (m) of the ray with any segment's kerb outer line (+-kerb edge), or None."""
    saved = tr.half_width
    return edge_line_distance(tr._replace(half_width=tr.kerb_edge), ox, oy, dx, dy, length) if saved else None


def surface_rays(tr, x, y, heading, angle, length, progress, channels=("kerb", "illegal"), *, debug=False,
                 include_pit=False, batch_training=False, pit_override=None):
    """-> {channel: (hit 0/1, distance m)} and the path: PaddockJS's kerb and illegal-surface rays.
    include_pit: the car (or its ray origin) in the pit lane: the march, always; pit_override: the car's
    pit override allowed (``pitOverrideAllowedForCar``; default ``include_pit``): the march's samples
    read it."""
    if pit_override is None:
        pit_override = include_pit
    dx, dy = math.cos(heading + angle), math.sin(heading + angle)
    ids = hinted_segments(tr, progress)
    origin = track_state(tr, ids, progress, x, y, batch_training)
    off = origin["offset"]
    surface0 = band_surface(tr, off)
    hw, ke = tr.half_width, tr.kerb_edge
    pit_window = not batch_training and near_pit(tr, origin["distance"])
    usable = not include_pit and not pit_window and abs(off) <= tr.grass_edge + 64.0
    if usable:
        track_d = edge_line_distance(tr, x, y, dx, dy, length)
        kerb_d = kerb_outer_distance(tr, x, y, dx, dy, length)
        out = {}
        for ch in channels:
            if _matches(ch, surface0):
                out[ch] = (1, 0.0)
                continue
            ds = [d for d in ((track_d, kerb_d) if ch == "kerb" else (kerb_d,)) if d is not None]
            if not ds:
                out = None
                break
            out[ch] = (1, min(ds))
        if out is not None:
            return out, "edge-lines"
        if sample_curvature(tr, origin["seg"]) <= ANALYTIC_MAX_CURVATURE:
            i = origin["seg"]
            lateral = dx * tr.cnx[i] + dy * tr.cny[i]
            if abs(lateral) < 0.08:
                return {ch: (0, length) for ch in channels}, "straight-edge"
            out = {}
            for ch in channels:
                lo, hi = (hw, ke) if ch == "kerb" else (ke, math.inf)
                if lo <= abs(off) <= hi:
                    out[ch] = (1, 0.0)
                    continue
                targets = [lo, -lo] + ([hi, -hi] if math.isfinite(hi) else [])
                cands = [(t - off) / lateral for t in targets]
                cands = [d for d in cands if 0 <= d <= length and lo - 1e-6 <= abs(off + lateral * d) <= hi + 1e-6]
                out[ch] = (1, min(cands)) if cands else (0, length)
            return out, "straight-edge"

    def surface(t):
        px, py = x + dx * t, y + dy * t
        so = track_state(tr, ids, progress, px, py, batch_training)["offset"]
        if pit_override and pit_override_of(tr, px, py, abs(so)):
            return "pit"
        return band_surface(tr, so)

    out = {ch: (0, length) for ch in channels}
    pending = list(channels)
    k = 0
    while k <= length and pending:
        s = surface(float(k))
        for ch in list(pending):
            if _matches(ch, s):
                hi = float(k)
                if k > 0 and debug:
                    lo = k - 1.0
                    for _ in range(12):
                        mid = 0.5 * (lo + hi)
                        if _matches(ch, surface(mid)):
                            hi = mid
                        else:
                            lo = mid
                out[ch] = (1, hi)
                pending.remove(ch)
        k += 1
    return out, "march"
