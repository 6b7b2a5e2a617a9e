"""The centreline through the control points, its standing start, validation and DRS zones.

``Samples`` holds 3,601 samples (sim units, the last repeating the first) of a closed centripetal
Catmull-Rom spline; ``build_samples`` blends the lap onto a start straight where it is straightest;
``sharpness_problem`` / ``self_intersects`` / ``track_is_valid`` are PaddockJS's validation."""

import math
from typing import Optional

import numpy as np

from .controls import shape_statistics, shape_variation
from .jsmath import (PIT_WORLD_PADDING, SAMPLE_COUNT, TRACK_BOUNDARY_PADDING, TRACK_WIDTH, U, WORLD_H, WORLD_W, clamp,
                     js_hypot, normalize_angle, normalize_angle_array)
from ....value_rules import is_finite_number


def _centripetal(p0, p1, p2, p3, t):
    t1 = 0 + math.sqrt(max(js_hypot(p0[0] - p1[0], p0[1] - p1[1]), 0.001))
    t2 = t1 + math.sqrt(max(js_hypot(p1[0] - p2[0], p1[1] - p2[1]), 0.001))
    t3 = t2 + math.sqrt(max(js_hypot(p2[0] - p3[0], p2[1] - p3[1]), 0.001))
    local = t1 + (t2 - t1) * t

    def lerp(a, b, start, end):
        amount = (local - start) / max(end - start, 0.001)
        return a[0] + (b[0] - a[0]) * amount, a[1] + (b[1] - a[1]) * amount

    a1 = lerp(p0, p1, 0, t1)
    a2 = lerp(p1, p2, t1, t2)
    a3 = lerp(p2, p3, t2, t3)
    b1 = lerp(a1, a2, 0, t2)
    b2 = lerp(a2, a3, t1, t3)
    return lerp(b1, b2, t1, t2)


def _uniform(p0, p1, p2, p3, t):
    t2 = t * t
    t3 = t2 * t
    return tuple(0.5 * ((2 * p1[k]) + (-p0[k] + p2[k]) * t + (2 * p0[k] - 5 * p1[k] + 4 * p2[k] - p3[k]) * t2
                        + (-p0[k] + 3 * p1[k] - 3 * p2[k] + p3[k]) * t3) for k in (0, 1))


def raw_center_point(ratio, controls, centripetal=True):
    count = len(controls)
    scaled = ratio * count
    index = int(math.floor(scaled)) % count
    local = scaled - math.floor(scaled)
    p = [controls[(index - 1 + count) % count], controls[index], controls[(index + 1) % count],
         controls[(index + 2) % count]]
    return _centripetal(*p, local) if centripetal else _uniform(*p, local)


class Samples:
    """PaddockJS's track samples as arrays (sim units): x, y, distance, heading, normal, curvature;
    N+1 entries, the last repeating the first with distance = lap length."""

    def __init__(self, x, y, distance):
        self.x = np.asarray(x, np.float64)
        self.y = np.asarray(y, np.float64)
        self.distance = np.asarray(distance, np.float64)
        self.heading = np.zeros_like(self.x)
        self.normal_x = np.zeros_like(self.x)
        self.normal_y = np.zeros_like(self.x)
        self.curvature = np.zeros_like(self.x)

    def recalculate_geometry(self):
        """recalculateSampleGeometry: central-difference heading, normal, |turn| / 28 curvature."""
        n = len(self.x) - 1
        x, y = self.x.tolist(), self.y.tolist()
        heading = [0.0] * n
        curvature = [0.0] * n
        for i in range(n):
            prev_i, next_i, next2 = (i - 1 + n) % n, (i + 1) % n, (i + 2) % n
            h = math.atan2(y[next_i] - y[prev_i], x[next_i] - x[prev_i])
            nh = math.atan2(y[next2] - y[i], x[next2] - x[i])
            heading[i] = h
            curvature[i] = abs(normalize_angle(nh - h)) / 28
        self.heading[:n] = heading
        self.normal_x[:n] = [-math.sin(h) for h in heading]
        self.normal_y[:n] = [math.cos(h) for h in heading]
        self.curvature[:n] = curvature
        for arr in (self.x, self.y, self.heading, self.normal_x, self.normal_y, self.curvature):
            arr[n] = arr[0]
        return self


def _cumulative(x, y):
    """Sequential running sum of V8-hypot segment lengths: float64[len(x)] starting at 0."""
    out = [0.0] * len(x)
    total = 0.0
    for i in range(1, len(x)):
        total += js_hypot(x[i - 1] - x[i], y[i - 1] - y[i])
        out[i] = total
    return out, total


def _base_samples(controls, centripetal=True, sample_count=SAMPLE_COUNT) -> Samples:
    pts = [raw_center_point(i / sample_count, controls, centripetal) for i in range(sample_count + 1)]
    xs = [p[0] for p in pts]
    ys = [p[1] for p in pts]
    dist, _ = _cumulative(xs, ys)
    return Samples(xs, ys, dist).recalculate_geometry()


def _forward(frm, to, total):
    """distanceForwardAlongTrack, elementwise."""
    return np.where(to >= frm, to - frm, total - frm + to)


def _world_clearance(x, y):
    return np.minimum(np.minimum(x - PIT_WORLD_PADDING, WORLD_W - PIT_WORLD_PADDING - x),
                      np.minimum(y - PIT_WORLD_PADDING, WORLD_H - PIT_WORLD_PADDING - y))


def _window_turn(s: Samples, total, length, backward):
    """Per candidate start index: (max |heading change|, sequential curvature sum, count) over the
    samples within ``length`` behind (backward) or ahead of it, PaddockJS's loops with their break."""
    n = len(s.x) - 1
    idx = np.arange(n)
    d = s.distance[:n]
    h = s.heading[:n]
    k = s.curvature[:n]
    turn = np.zeros(n)
    curv = np.zeros(n)
    count = np.zeros(n, np.int64)
    active = np.ones(n, bool)
    for offset in range(1, n):
        j = (idx - offset) % n if backward else (idx + offset) % n
        gap = _forward(d[j], d, total) if backward else _forward(d, d[j], total)
        active &= gap <= length
        if not active.any():
            break
        delta = h - h[j] if backward else h[j] - h
        turn = np.where(active, np.maximum(turn, np.abs(normalize_angle_array(delta))), turn)
        curv = np.where(active, curv + k[j], curv)
        count += active
    return turn, curv, count


def _standing_start_index(s: Samples, total, straight) -> int:
    """chooseStandingStartIndex: the lowest score of turn and curvature over the grid behind and
    the exit ahead of each sample, minus its distance from the world's edge."""
    n = len(s.x) - 1
    h = s.heading[:n]
    fx = np.array([math.cos(v) for v in h])
    fy = np.array([math.sin(v) for v in h])
    x, y = s.x[:n], s.y[:n]
    clearance = np.minimum(_world_clearance(x - fx * straight["grid"], y - fy * straight["grid"]),
                           _world_clearance(x + fx * straight["exit"], y + fy * straight["exit"]))
    grid_turn, grid_curv, grid_n = _window_turn(s, total, straight["grid"], True)
    exit_turn, exit_curv, exit_n = _window_turn(s, total, straight["exit"], False)
    score = (grid_turn * 5 + exit_turn * 1.2 + (grid_curv / np.maximum(1, grid_n)) * 2600
             + (exit_curv / np.maximum(1, exit_n)) * 650 - clearance * 0.002)
    score = np.where(clearance < 0, np.inf, score)
    best = int(np.argmin(score))
    return best if math.isfinite(score[best]) else 0


def _smoothstep(value):
    a = clamp(value, 0, 1)
    return a * a * (3 - 2 * a)


def _standing_start(s: Samples, total, straight) -> tuple:
    """rotateSamplesToStandingStart then straightenStandingStartSamples: (Samples, lap length)."""
    n = len(s.x) - 1
    start = _standing_start_index(s, total, straight)
    order = np.concatenate([np.arange(start, n), np.arange(0, start)])
    start_distance = s.distance[start]
    dist = _forward(start_distance, s.distance[order], total)
    x, y, h = s.x[order].tolist(), s.y[order].tolist(), float(s.heading[start])
    fx, fy = math.cos(h), math.sin(h)
    x0, y0 = x[0], y[0]
    grid_lock = straight["grid"] + straight["lockExtra"]
    exit_lock = straight["exit"] + straight["lockExtra"]
    blend = straight["blend"]
    for i in range(n):
        d_from = float(dist[i])
        d_to = total - d_from
        line = None
        amount = 0.0
        if d_from <= exit_lock + blend:
            line = d_from
            amount = 1.0 if d_from <= exit_lock else 1 - _smoothstep((d_from - exit_lock) / blend)
        elif d_to <= grid_lock + blend:
            line = -d_to
            amount = 1.0 if d_to <= grid_lock else 1 - _smoothstep((d_to - grid_lock) / blend)
        if line is None or amount <= 0:
            continue
        x[i] = x[i] + ((x0 + fx * line) - x[i]) * amount
        y[i] = y[i] + ((y0 + fy * line) - y[i]) * amount
    dist, length = _cumulative(x, y)
    length += js_hypot(x[-1] - x[0], y[-1] - y[0])
    out = Samples(x + [x[0]], y + [y[0]], dist + [length]).recalculate_geometry()
    return out, length


# ------------------------------------------------------------------------------------ validation

def _shape_ok(controls, minimum):
    radii, mean = shape_statistics(controls)
    return mean > 0 and shape_variation(radii, mean) > minimum


def _inside_world(s: Samples):
    p = TRACK_BOUNDARY_PADDING
    return bool(np.all((s.x >= p) & (s.x <= WORLD_W - p) & (s.y >= p) & (s.y <= WORLD_H - p)))


def _clearance_ok(s: Samples, total, minimum, min_arc):
    x, y, d = s.x[:-1:24], s.y[:-1:24], s.distance[:-1:24]
    first, second = np.triu_indices(len(x), 1)
    arc = np.abs(d[second] - d[first])
    loop = np.minimum(arc, total - arc)
    dx = x[first] - x[second]
    dy = y[first] - y[second]
    close = (loop >= min_arc) & (dx * dx + dy * dy < minimum * minimum)
    return not bool(close.any())


def sharpness_problem(s: Samples, validation) -> Optional[str]:
    """hasReasonableTurnSharpness: None when it holds, else what fails (heading change between
    consecutive samples, or summed over 30 / 36 samples)."""
    n = len(s.x) - 1
    h = s.heading[:n]
    delta = np.abs(normalize_angle_array(np.roll(h, -1) - h))
    limit = validation["maxSampleHeadingDeltaRadians"]
    if np.any(delta > limit):
        i = int(np.argmax(delta))
        return (f"heading changes {delta[i]:.3f} rad between samples {i} and {(i + 1) % n} (PaddockJS allows "
                f"{limit} rad)")
    idx = np.arange(0, n, 6)
    for window in (30, 36):
        total = np.zeros(len(idx))
        for offset in range(0, window, 6):
            cur = h[(idx + offset) % n]
            nxt = h[(idx + offset + 6) % n]
            total = total + np.abs(normalize_angle_array(nxt - cur))
        if np.any(total > validation["maxLocalTurnRadians"]):
            i = int(idx[int(np.argmax(total))])
            return (f"the track turns {total.max():.3f} rad over the {window} samples from sample {i} (PaddockJS "
                    f"allows {validation['maxLocalTurnRadians']} rad)")
    return None


def self_intersects(s: Samples) -> bool:
    """hasSelfIntersections: every 12th sample's chords tested against each other."""
    x, y = s.x[:-1:12], s.y[:-1:12]
    m = len(x)
    first, second = np.meshgrid(np.arange(m - 1), np.arange(m - 1), indexing="ij")
    keep = (second >= first + 2) & ~((first == 0) & (second >= m - 3))
    a, c = first[keep], second[keep]
    ax, ay, bx, by = x[a], y[a], x[a + 1], y[a + 1]
    cx, cy, dx, dy = x[c], y[c], x[c + 1], y[c + 1]
    boxes = ((np.maximum(np.minimum(ax, bx), np.minimum(cx, dx)) <= np.minimum(np.maximum(ax, bx), np.maximum(cx, dx)))
             & (np.maximum(np.minimum(ay, by), np.minimum(cy, dy)) <= np.minimum(np.maximum(ay, by), np.maximum(cy, dy))))

    def orient(px, py, qx, qy, rx, ry):
        return (qx - px) * (ry - py) - (qy - py) * (rx - px)

    ab_c = orient(ax, ay, bx, by, cx, cy)
    ab_d = orient(ax, ay, bx, by, dx, dy)
    cd_a = orient(cx, cy, dx, dy, ax, ay)
    cd_b = orient(cx, cy, dx, dy, bx, by)
    return bool(np.any(boxes & (ab_c * ab_d < 0) & (cd_a * cd_b < 0)))


def track_is_valid(controls, s: Samples, total, options) -> bool:
    validation = options["validation"]
    return (options["length"]["min"] <= total <= options["length"]["max"]
            and _shape_ok(controls, validation["minShapeVariation"])
            and _inside_world(s)
            and _clearance_ok(s, total, TRACK_WIDTH * validation["minClearanceMultiplier"],
                              validation["minNonAdjacentArcDistance"])
            and sharpness_problem(s, validation) is None
            and not self_intersects(s))


# ------------------------------------------------------------------------------------- DRS zones

def drs_zones(s: Samples, total) -> list:
    n = len(s.x) - 1
    window = max(96, int(math.floor(n * 0.07)))
    candidates = []
    for index in range(0, n, window // 2):
        start_d = float(s.distance[index])
        end_d = float(s.distance[(index + window) % n])
        dist = end_d - start_d if end_d >= start_d else total - start_d + end_d
        if dist < 360:
            continue
        curv = 0.0
        for offset in range(window):
            curv += float(s.curvature[(index + offset) % n])
        candidates.append(dict(startRatio=start_d / total, endRatio=(start_d + min(dist, total * 0.16)) / total,
                               score=curv / window))
    zones = []
    for cand in sorted(candidates, key=lambda c: c["score"]):
        if all(abs(z["startRatio"] - cand["startRatio"]) > 0.18 for z in zones) and len(zones) < 3:
            zones.append(dict(id=f"generated-drs-{len(zones) + 1}", startRatio=math.fmod(cand["startRatio"], 1),
                              endRatio=math.fmod(cand["endRatio"], 1)))
    return sorted(zones, key=lambda z: z["startRatio"])

def normalize_drs_zone(zone: dict, total) -> tuple:
    """PaddockJS's ``normalizeDrsZone``: a zone's (start, end) in metres from its ``start``/``end`` (sim
    units) when both are finite numbers, else from its ``startRatio``/``endRatio`` of the lap ``total``
    (sim units); an end before the start moves one lap on (the zone wraps the line)."""
    start, end = zone.get("start"), zone.get("end")
    if all(is_finite_number(v) for v in (start, end)):
        return float(start) / U, float(end) / U
    start = zone["startRatio"] * total
    raw_end = zone["endRatio"] * total
    return start / U, (raw_end if raw_end >= start else raw_end + total) / U


def build_samples(controls, straight: dict, centripetal=True, sample_count=SAMPLE_COUNT) -> tuple:
    """buildTrackModel's centreline: (Samples, lap length), sim units, from control points (sim units)
    and the start straight's options (grid, exit, blend, lockExtra; sim units)."""
    base = _base_samples(controls, centripetal, sample_count)
    return _standing_start(base, float(base.distance[-1]), straight)


def samples_from_points(xs, ys) -> tuple:
    """(Samples, lap length) of a closed list of sample positions (sim units, not repeating the first),
    their distances and geometry as rebuildSampleDistances computes them."""
    dist, length = _cumulative(list(xs), list(ys))
    length += js_hypot(xs[-1] - xs[0], ys[-1] - ys[0])
    return Samples(list(xs) + [xs[0]], list(ys) + [ys[0]], dist + [length]).recalculate_geometry(), length
