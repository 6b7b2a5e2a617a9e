"""PaddockJS 2.0.0's procedural track generator, reproduced: ``trackSeed: N`` builds PaddockJS's track.

PaddockJS (``src/simulation/track/``) grows a random region of grid cells from a seeded Mulberry32
stream, traces and smooths its outline into 60-120 control points, samples a closed centripetal
Catmull-Rom spline through them at 3,600 equal parameter steps, rotates the lap so it starts where
the lap is straightest (the standing start) and blends 539 m before / 543 m after the line onto a
straight, then validates the result (length, shape variation, clearance, turn sharpness,
self-intersection) and tries further seeds derived from the first when it fails. The pit lane is a
straight lane beside the start straight with Bezier access roads.

This module follows those steps operation by operation in float64, in PaddockJS's units (sim units,
12 per metre) and frame (x right, y down), so the samples equal PaddockJS's to rounding (the
transcendental functions of V8 and of the C library may differ in the last bit); it returns them
in metres. It runs once per track at build time (plain Python and numpy; ~1 s).

Public: ``normalize_seed``, ``resolve_generation_options``, ``generate_track(seed, options)`` ->
``PaddockJSTrack`` (centreline samples, DRS zones and pit lane in metres).
"""

import math
from dataclasses import dataclass
from typing import Optional

import numpy as np

SIM_UNITS_PER_METER = 12.0
U = SIM_UNITS_PER_METER
PI = math.pi
TWO_PI = math.pi * 2

WORLD_W = 3550 * U
WORLD_H = 2148 * U
TRACK_WIDTH = 15 * U
KERB_WIDTH = 1.5 * U
GRAVEL_WIDTH = 12 * U
RUNOFF_WIDTH = 20 * U
SAMPLE_COUNT = 3600

TRACK_BOUNDARY_PADDING = 248 * U
PIT_WORLD_PADDING = 24 * U
PIT_LANE_WIDTH = 12 * U
PIT_LANE_EDGE_GAP = 16 * U
PIT_ACCESS_MIN_LENGTH = 70 * U
PIT_ACCESS_MAX_LENGTH = 150 * U
PIT_ACCESS_TANGENT_RATIO = 0.72
PIT_ACCESS_SAMPLE_STEPS = 24
PIT_ACCESS_TRACK_OVERLAP = PIT_LANE_WIDTH * 0.52
PIT_ACCESS_SEARCH_STEP = 8 * U
PIT_ENTRY_SEARCH_BEFORE = 230 * U
PIT_ENTRY_SEARCH_AFTER = 250 * U
PIT_EXIT_SEARCH_BEFORE = 60 * U
PIT_EXIT_SEARCH_AFTER = 560 * U
PIT_TEAM_COUNT = 10
PIT_BOXES_PER_TEAM = 2
PIT_BOX_COUNT = PIT_TEAM_COUNT * PIT_BOXES_PER_TEAM
PIT_BOX_LENGTH = 9 * U
PIT_BOX_DEPTH = 4.5 * U
PIT_BOX_PAIR_GAP = 4 * U
PIT_TEAM_GAP = 14 * U
PIT_BOX_TO_LANE_GAP = 1.5 * U
PIT_WORKING_LANE_GAP = 1.5 * U
PIT_WORKING_LANE_WIDTH = 8 * U
PIT_SERVICE_QUEUE_GAP = 12 * U
PIT_LANE_ENTRY_BUFFER = 44 * U
PIT_LANE_EXIT_BUFFER = 44 * U
PIT_LANE_FINISH_RATIO = 0.64
PIT_TRACK_CLEARANCE_MARGIN = 5 * U
PIT_LANE_OFFSET_SEARCH_STEP = 12 * U

# PaddockJS's default track (TRACK.centerlineControls), as fractions of the world
CENTERLINE_CONTROL_FRACTIONS = [
    (0.05, 0.56), (0.10, 0.81), (0.23, 0.91), (0.35, 0.80), (0.48, 0.90), (0.59, 0.75),
    (0.71, 0.87), (0.82, 0.72), (0.94, 0.66), (0.96, 0.47), (0.88, 0.33), (0.74, 0.31),
    (0.64, 0.18), (0.54, 0.31), (0.43, 0.13), (0.29, 0.18), (0.17, 0.31), (0.08, 0.43),
]

# trackGeneration profiles (trackGenerationOptions.js), in PaddockJS's option names (metres)
PROFILES = {
    "race": {},
    "training-short": {
        "length": {"minMeters": 900, "maxMeters": 1800},
        "startStraight": {"gridMeters": 0, "exitMeters": 80, "blendMeters": 80, "lockExtraMeters": 0},
        "pitLane": {"enabled": False},
        "shape": {"scale": 0.2, "cornerDensity": 1.3, "variation": 0.22},
        "validation": {"minClearanceMultiplier": 1, "minNonAdjacentArcMeters": 160, "maxLocalTurnRadians": 1.85},
        "attempts": {"primary": 80, "fallback": 200},
    },
    "training-medium": {
        "length": {"minMeters": 1600, "maxMeters": 3000},
        "startStraight": {"gridMeters": 80, "exitMeters": 140, "blendMeters": 120, "lockExtraMeters": 0},
        "pitLane": {"enabled": False},
        "shape": {"scale": 0.38, "cornerDensity": 1.18, "variation": 0.24},
        "validation": {"minClearanceMultiplier": 1.15, "minNonAdjacentArcMeters": 260, "maxLocalTurnRadians": 1.7},
        "attempts": {"primary": 80, "fallback": 200},
    },
    "training-technical": {
        "length": {"minMeters": 800, "maxMeters": 1700},
        "startStraight": {"gridMeters": 0, "exitMeters": 60, "blendMeters": 70, "lockExtraMeters": 0},
        "pitLane": {"enabled": False},
        "shape": {"scale": 0.18, "cornerDensity": 1.55, "variation": 0.2},
        "validation": {"minClearanceMultiplier": 0.9, "minNonAdjacentArcMeters": 140, "maxLocalTurnRadians": 2.05},
        "attempts": {"primary": 100, "fallback": 240},
    },
}

RACE_DEFAULTS = {
    "length": {"min": 3600 * U, "max": 9000 * U},
    "startStraight": {"grid": 496 * U, "exit": 500 * U, "blend": 320 * U, "lockExtra": 43 * U},
    "shape": {"scale": 1.0, "cornerDensity": 1.0, "variation": 0.28},
    "validation": {"minClearanceMultiplier": 1.55, "minShapeVariation": 0.28,
                   "minNonAdjacentArcDistance": 700 * U, "maxLocalTurnRadians": 1.42,
                   "maxSampleHeadingDeltaRadians": 0.08},
    # PaddockJS's defaults: primary = GENERATED_FALLBACK_ATTEMPTS (8), fallback = GENERATED_TRACK_ATTEMPTS (24)
    "attempts": {"primary": 8, "fallback": 24},
}

MASK32 = 0xFFFFFFFF


class TrackGenerationError(ValueError):
    """A ``trackGeneration`` option PaddockJS rejects; the message is PaddockJS's."""


# ----------------------------------------------------------------------------------- JS arithmetic

def js_round(x: float) -> float:
    """JavaScript's Math.round: nearest integer, halves toward +infinity."""
    return float(math.floor(x + 0.5))


def js_hypot(a: float, b: float) -> float:
    """V8's Math.hypot of two numbers: normalised by the larger magnitude, Kahan-summed squares."""
    a, b = abs(a), abs(b)
    top = a if a > b else b
    if top == 0.0:
        return 0.0
    total = 0.0
    compensation = 0.0
    for value in (a, b):
        n = value / top
        summand = n * n - compensation
        preliminary = total + summand
        compensation = (preliminary - total) - summand
        total = preliminary
    return math.sqrt(total) * top


def js_hypot_array(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``js_hypot`` elementwise (the same operations on float64 arrays)."""
    a, b = np.abs(a), np.abs(b)
    top = np.maximum(a, b)
    safe = np.where(top == 0.0, 1.0, top)
    n0 = a / safe
    s0 = n0 * n0                                  # first summand, compensation 0
    total = 0.0 + s0
    compensation = (total - 0.0) - s0
    n1 = b / safe
    summand = n1 * n1 - compensation
    total = total + summand
    return np.where(top == 0.0, 0.0, np.sqrt(total) * top)


def normalize_angle(angle: float) -> float:
    """PaddockJS's normalizeAngle: into [-pi, pi) via JavaScript's remainder (C fmod)."""
    value = math.fmod(angle + PI, TWO_PI) - PI
    if value < -PI:
        value += TWO_PI
    return value


def normalize_angle_array(angle: np.ndarray) -> np.ndarray:
    value = np.fmod(angle + PI, TWO_PI) - PI
    return np.where(value < -PI, value + TWO_PI, value)


def clamp(value, lo, hi):
    """JavaScript's Math.min(Math.max(value, lo), hi) (hi wins when lo > hi)."""
    return min(max(value, lo), hi)


def wrap_distance(value: float, length: float) -> float:
    return math.fmod(math.fmod(value, length) + length, length)


def mulberry32(seed: int):
    """PaddockJS's createMulberry32: a function returning floats in [0, 1), bit for bit."""
    state = seed & MASK32

    def random() -> float:
        nonlocal state
        state = (state + 0x6D2B79F5) & MASK32
        t = state
        t = ((t ^ (t >> 15)) * (t | 1)) & MASK32
        t ^= (t + ((t ^ (t >> 7)) * (t | 61))) & MASK32
        return ((t ^ (t >> 14)) & MASK32) / 4294967296.0

    return random


def seeded_range(random, lo, hi):
    return lo + (hi - lo) * random()


def random_integer(random, lo, hi) -> int:
    return int(math.floor(seeded_range(random, lo, hi + 1)))


def clamp_integer(value, lo, hi) -> int:
    return int(js_round(clamp(value, lo, hi)))


def normalize_seed(seed) -> int:
    """PaddockJS's normalizeSeed: a finite number -> ToUint32 (truncated, modulo 2^32); anything else
    (a string, or a missing seed as 'f1-track') -> the FNV-1a hash of its UTF-16 code units."""
    if isinstance(seed, bool):
        seed = int(seed)
    if isinstance(seed, (int, float)) and math.isfinite(seed):
        return int(math.trunc(seed)) & MASK32
    text = "f1-track" if seed is None else str(seed)
    value = 2166136261
    units = text.encode("utf-16-le")
    for i in range(0, len(units), 2):
        value ^= units[i] | (units[i + 1] << 8)
        value = (value * 16777619) & MASK32
    return value


# --------------------------------------------------------------------------------------- options

def _deep_merge(base: dict, override: dict) -> dict:
    result = dict(base)
    for key, value in (override or {}).items():
        if isinstance(value, dict) and isinstance(result.get(key), dict):
            result[key] = _deep_merge(result[key], value)
        else:
            result[key] = value          # JSON null included (JavaScript skips only undefined)
    return result


def _first_set(*values):
    """JavaScript's ``a ?? b``."""
    for value in values:
        if value is not None:
            return value
    return None


def _expand_legacy(options: dict) -> dict:
    nxt = dict(options)
    if options.get("minLengthMeters") is not None or options.get("maxLengthMeters") is not None:
        length = dict(options.get("length") or {})
        if options.get("minLengthMeters") is not None:
            length["minMeters"] = options["minLengthMeters"]
        if options.get("maxLengthMeters") is not None:
            length["maxMeters"] = options["maxLengthMeters"]
        nxt["length"] = length
    if options.get("startStraightMeters") is not None:
        nxt["startStraight"] = dict(options.get("startStraight") or {},
                                    gridMeters=options["startStraightMeters"],
                                    exitMeters=options["startStraightMeters"])
    if options.get("includePitLane") is not None:
        nxt["pitLane"] = dict(options.get("pitLane") or {}, enabled=bool(options["includePitLane"]))
    return nxt


def _number(value, fallback, label, *, positive, integer=False, metres=False):
    if value is None:
        return fallback
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    if integer:
        ok = ok and float(value).is_integer() and value > 0
        if not ok:
            raise TrackGenerationError(f"Procedural track {label} must be a positive integer.")
        return int(value)
    ok = ok and (value > 0 if positive else value >= 0)
    if not ok:
        kind = "a positive number" if positive else "a non-negative number"
        raise TrackGenerationError(f"Procedural track {label} must be {kind}.")
    return float(value) * U if metres else float(value)


def resolve_generation_options(options: Optional[dict] = None) -> dict:
    """PaddockJS's resolveProceduralTrackOptions: a ``trackGeneration`` object (profile name plus
    overrides in metres, camelCase) -> the resolved options in sim units. Raises TrackGenerationError
    with PaddockJS's message for an unknown profile or a bad number."""
    options = dict(options or {})
    profile_name = options.get("profile", "race") if options.get("profile") is not None else "race"
    if not isinstance(profile_name, str) or profile_name not in PROFILES:
        raise TrackGenerationError(f"Unsupported procedural track profile: {profile_name}")
    merged = _deep_merge(_deep_merge({"profile": profile_name}, _expand_legacy(PROFILES[profile_name])),
                         _expand_legacy(options))
    g = lambda section: merged.get(section) if isinstance(merged.get(section), dict) else {}
    d = RACE_DEFAULTS
    resolved = {
        "profile": profile_name,
        "length": {
            "min": _number(g("length").get("minMeters"), d["length"]["min"], "length.minMeters", positive=True, metres=True),
            "max": _number(g("length").get("maxMeters"), d["length"]["max"], "length.maxMeters", positive=True, metres=True),
        },
        "startStraight": {
            key: _number(g("startStraight").get(f"{key}Meters"), d["startStraight"][key],
                         f"startStraight.{key}Meters", positive=False, metres=True)
            for key in ("grid", "exit", "blend", "lockExtra")
        },
        "pitLane": {"enabled": g("pitLane").get("enabled") is not False},
        "shape": {
            "scale": _number(g("shape").get("scale"), d["shape"]["scale"], "shape.scale", positive=True),
            "cornerDensity": _number(g("shape").get("cornerDensity"), d["shape"]["cornerDensity"],
                                     "shape.cornerDensity", positive=True),
            "variation": _number(g("shape").get("variation"), d["shape"]["variation"], "shape.variation",
                                 positive=False),
        },
        "validation": {
            "minClearanceMultiplier": _number(g("validation").get("minClearanceMultiplier"),
                                              d["validation"]["minClearanceMultiplier"],
                                              "validation.minClearanceMultiplier", positive=False),
            "minShapeVariation": _number(_first_set(g("validation").get("minShapeVariation"),
                                                    g("shape").get("variation")),
                                         d["validation"]["minShapeVariation"], "validation.minShapeVariation",
                                         positive=False),
            "minNonAdjacentArcDistance": _number(g("validation").get("minNonAdjacentArcMeters"),
                                                 d["validation"]["minNonAdjacentArcDistance"],
                                                 "validation.minNonAdjacentArcMeters", positive=False, metres=True),
            "maxLocalTurnRadians": _number(g("validation").get("maxLocalTurnRadians"),
                                           d["validation"]["maxLocalTurnRadians"],
                                           "validation.maxLocalTurnRadians", positive=True),
            "maxSampleHeadingDeltaRadians": _number(g("validation").get("maxSampleHeadingDeltaRadians"),
                                                    d["validation"]["maxSampleHeadingDeltaRadians"],
                                                    "validation.maxSampleHeadingDeltaRadians", positive=True),
        },
        "attempts": {
            "primary": _number(g("attempts").get("primary"), d["attempts"]["primary"], "attempts.primary",
                               positive=True, integer=True),
            "fallback": _number(g("attempts").get("fallback"), d["attempts"]["fallback"], "attempts.fallback",
                                positive=True, integer=True),
        },
    }
    if resolved["length"]["min"] > resolved["length"]["max"]:
        raise TrackGenerationError(
            "Procedural track length.minMeters must be less than or equal to length.maxMeters.")
    return resolved


# ------------------------------------------------------------------------------ control points

def _region_template(seed: int, *, fallback: bool, corner_density) -> tuple:
    random = mulberry32(seed)
    density = max(0.5, corner_density) if _finite(corner_density) else 1.0
    extra_columns = int(js_round((density - 1) * 4))
    extra_features = int(js_round((density - 1) * 3))
    if fallback:
        lim = dict(minColumns=9, maxColumns=13, minRows=6, maxRows=8, minFeatures=3, maxFeatures=5)
    else:
        lim = dict(minColumns=10, maxColumns=14 + extra_columns, minRows=7,
                   maxRows=8 + max(0, int(js_round(extra_columns / 2))), minFeatures=4, maxFeatures=6 + extra_features)
    columns = random_integer(random, lim["minColumns"], lim["maxColumns"])
    rows = random_integer(random, lim["minRows"], lim["maxRows"])
    top = [1] * columns
    bottom = [rows - 2] * columns
    top_cursor = random_integer(random, 1, 2)
    bottom_cursor = rows - random_integer(random, 2, 3)
    for column in range(1, columns - 1):
        top_cursor += random_integer(random, -1, 1)
        bottom_cursor += random_integer(random, -1, 1)
        top_cursor = clamp_integer(top_cursor, 1, rows - 4)
        bottom_cursor = clamp_integer(bottom_cursor, top_cursor + 2, rows - 2)
        top[column] = top_cursor
        bottom[column] = bottom_cursor
    feature_count = random_integer(random, lim["minFeatures"], lim["maxFeatures"])
    for _ in range(feature_count):
        column = random_integer(random, 2, columns - 3)
        width = random_integer(random, 1, 2)
        carves_top = random() < 0.5
        amount = 1 if random() < 0.76 else 2
        for offset in range(width):
            target = clamp_integer(column + offset, 1, columns - 2)
            if carves_top:
                top[target] = clamp_integer(top[target] + amount, 1, bottom[target] - 2)
                top[target - 1] = clamp_integer(top[target - 1] - 1, 1, bottom[target - 1] - 2)
            else:
                bottom[target] = clamp_integer(bottom[target] - amount, top[target] + 2, rows - 2)
                bottom[target - 1] = clamp_integer(bottom[target - 1] + 1, top[target - 1] + 2, rows - 2)
    cells = [(column, row) for column in range(1, columns - 1) for row in range(top[column], bottom[column] + 1)]
    return columns, rows, cells


def _trace_boundary(cells) -> list:
    selected = set(cells)
    edges = []
    for x, y in cells:
        if (x, y - 1) not in selected:
            edges.append(((x, y), (x + 1, y)))
        if (x + 1, y) not in selected:
            edges.append(((x + 1, y), (x + 1, y + 1)))
        if (x, y + 1) not in selected:
            edges.append(((x + 1, y + 1), (x, y + 1)))
        if (x - 1, y) not in selected:
            edges.append(((x, y + 1), (x, y)))
    outgoing = {}
    for start, end in edges:
        outgoing.setdefault(start, []).append(end)
    start = edges[0][0]
    current = start
    boundary = [start]
    for _ in range(len(edges)):
        ends = outgoing.get(current)
        if not ends:
            break
        current = ends.pop(0)
        if current == start:
            return boundary
        boundary.append(current)
    return boundary


def _smooth(points, amount=0.34, rounds=2):
    for _ in range(rounds):
        nxt = []
        n = len(points)
        for i, (px, py) in enumerate(points):
            fx, fy = points[(i + 1) % n]
            nxt.append((px + (fx - px) * amount, py + (fy - py) * amount))
            nxt.append((px + (fx - px) * (1 - amount), py + (fy - py) * (1 - amount)))
        points = nxt
    return points


def _finite(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _region_controls(seed: int, shape: dict, fallback: bool) -> list:
    seed = normalize_seed(seed)
    random = mulberry32(seed)
    columns, rows, cells = _region_template(seed, fallback=fallback, corner_density=shape.get("cornerDensity"))
    scale = max(0.05, shape["scale"]) if _finite(shape.get("scale")) else 1.0
    center_x = 0.5 + seeded_range(random, -0.015, 0.015)
    center_y = 0.5 + seeded_range(random, -0.015, 0.015)
    scale_x = seeded_range(random, 0.9, 0.98) * scale
    scale_y = seeded_range(random, 0.9, 0.98) * scale
    phase_x = seeded_range(random, 0, PI * 2)
    phase_y = seeded_range(random, 0, PI * 2)
    warp_x = seeded_range(random, 0.018, 0.044)
    warp_y = seeded_range(random, 0.018, 0.052)
    usable_w = WORLD_W - TRACK_BOUNDARY_PADDING * 2
    usable_h = WORLD_H - TRACK_BOUNDARY_PADDING * 2
    world = []
    for x, y in _trace_boundary(cells):
        nx_ = x / columns
        ny_ = y / rows
        rx = nx_ - 0.5
        ry = ny_ - 0.5
        edge = clamp((abs(rx) + abs(ry) - 0.22) / 0.36, 0, 1)
        wx = math.sin(ny_ * PI * 4.4 + phase_x) * warp_x * edge
        wy = math.sin(nx_ * PI * 4.2 + phase_y) * warp_y * edge
        world.append((TRACK_BOUNDARY_PADDING + clamp(center_x + rx * scale_x + wx, 0.04, 0.96) * usable_w,
                      TRACK_BOUNDARY_PADDING + clamp(center_y + ry * scale_y + wy, 0.06, 0.94) * usable_h))
    return _rotate(_smooth(world), random)


def _rotate(controls, random):
    rotation = int(math.floor(seeded_range(random, 0, len(controls))))
    return controls[rotation:] + controls[:rotation]


def _shape_statistics(controls):
    cx, cy = WORLD_W / 2, WORLD_H / 2
    radii = [js_hypot(x - cx, y - cy) for x, y in controls]
    total = 0.0
    for r in radii:
        total += r
    mean = total / max(1, len(radii))
    return radii, mean


def _variation(radii, mean):
    total = 0.0
    for r in radii:
        total += (r - mean) * (r - mean)
    return math.sqrt(total / max(1, len(radii))) / mean


def _strengthen(controls, minimum):
    radii, mean = _shape_statistics(controls)
    variation = _variation(radii, mean) if mean > 0 else 0.0
    if variation > minimum + 0.015:
        return controls
    cx, cy = WORLD_W / 2, WORLD_H / 2
    out = []
    for (x, y), radius in zip(controls, radii):
        if radius <= 0:
            out.append((x, y))
            continue
        scale = (mean + (radius - mean) * 1.18) / radius
        out.append((clamp(cx + (x - cx) * scale, TRACK_BOUNDARY_PADDING, WORLD_W - TRACK_BOUNDARY_PADDING),
                    clamp(cy + (y - cy) * scale, TRACK_BOUNDARY_PADDING, WORLD_H - TRACK_BOUNDARY_PADDING)))
    return out


def centerline_controls(seed: int, shape: dict) -> list:
    """PaddockJS's generateCenterlineControls (sim units)."""
    return _strengthen(_region_controls(seed, shape, False), shape["variation"])


def fallback_centerline_controls(seed: int, shape: dict) -> list:
    return _strengthen(_region_controls((seed ^ 0xA5A5A5A5) & MASK32, shape, True), shape["variation"])


def default_controls() -> list:
    return [(WORLD_W * fx, WORLD_H * fy) for fx, fy in CENTERLINE_CONTROL_FRACTIONS]


def safe_fallback_centerline_controls(seed: int, shape: dict) -> list:
    scale = (0.78 + ((seed >> 3) % 4) * 0.02) * (max(0.05, shape["scale"]) if _finite(shape.get("scale")) else 1)
    mirror_x = -1 if seed & 1 else 1
    mirror_y = -1 if seed & 2 else 1
    cx, cy = WORLD_W / 2, WORLD_H / 2
    controls = [(cx + (x - cx) * scale * mirror_x, cy + (y - cy) * scale * mirror_y) for x, y in default_controls()]
    return _rotate(controls, mulberry32((seed ^ 0x9E3779B9) & MASK32))


# ------------------------------------------------------------------------------- centreline

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
    radii, mean = _shape_statistics(controls)
    return mean > 0 and _variation(radii, mean) > minimum


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


def _valid(controls, s: Samples, total, options) -> bool:
    validation = options["validation"]
    return (options["length"]["min"] <= total <= options["length"]["max"]
            and _shape_ok(controls, validation["minShapeVariation"])
            and _inside_world(s)
            and _clearance_ok(s, total, TRACK_WIDTH * validation["minClearanceMultiplier"],
                              validation["minNonAdjacentArcDistance"])
            and sharpness_problem(s, validation) is None
            and not self_intersects(s))


# ------------------------------------------------------------------------------------- DRS zones

def _drs_zones(s: Samples, total) -> list:
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


# -------------------------------------------------------------------------------------- pit lane

def _point_at(s: Samples, total, along):
    """pointAt: (x, y, heading, normal_x, normal_y, distance) linearly between samples."""
    wrapped = wrap_distance(along, total)
    low = int(np.searchsorted(s.distance, wrapped, side="left"))
    low = min(low, len(s.x) - 1)
    prev = max(0, low - 1)
    span = max(1.0, float(s.distance[low] - s.distance[prev]))
    amount = clamp((wrapped - float(s.distance[prev])) / span, 0, 1)
    lerp = lambda arr: float(arr[prev]) + (float(arr[low]) - float(arr[prev])) * amount
    heading = float(s.heading[prev]) + normalize_angle(float(s.heading[low]) - float(s.heading[prev])) * amount
    return dict(x=lerp(s.x), y=lerp(s.y), heading=heading, normal_x=lerp(s.normal_x), normal_y=lerp(s.normal_y),
                distance=wrapped)


def _normalize(vx, vy):
    length = js_hypot(vx, vy) or 1.0
    return vx / length, vy / length, length


def _point_clearance(x, y):
    return min(x - PIT_WORLD_PADDING, WORLD_W - PIT_WORLD_PADDING - x, y - PIT_WORLD_PADDING,
               WORLD_H - PIT_WORLD_PADDING - y)


def _nearest_cross_track_error(s: Samples, x, y):
    """|signed offset| from the nearest sample (PaddockJS's track state before the query index exists)."""
    n = len(s.x) - 1
    dx = x - s.x[:n]
    dy = y - s.y[:n]
    i = int(np.argmin(dx * dx + dy * dy))
    return abs(float(dx[i]) * float(s.normal_x[i]) + float(dy[i]) * float(s.normal_y[i]))


def _box_run_length():
    return (PIT_BOX_COUNT * PIT_BOX_LENGTH + PIT_TEAM_COUNT * max(0, PIT_BOXES_PER_TEAM - 1) * PIT_BOX_PAIR_GAP
            + max(0, PIT_TEAM_COUNT - 1) * PIT_TEAM_GAP)


def _pit_layout():
    run = _box_run_length()
    length = run + PIT_LANE_ENTRY_BUFFER + PIT_LANE_EXIT_BUFFER
    return dict(runLength=run, length=length, entryDistance=-length * PIT_LANE_FINISH_RATIO,
                exitDistance=length * (1 - PIT_LANE_FINISH_RATIO))


def _project(start, forward, normal, along, lateral):
    return (start[0] + forward[0] * along + normal[0] * lateral, start[1] + forward[1] * along + normal[1] * lateral)


WORKING_LANE_OFFSET = PIT_LANE_WIDTH / 2 + PIT_WORKING_LANE_GAP + PIT_WORKING_LANE_WIDTH / 2
BOX_LATERAL = WORKING_LANE_OFFSET + PIT_WORKING_LANE_WIDTH / 2 + PIT_BOX_TO_LANE_GAP + PIT_BOX_DEPTH / 2


def _lane_endpoints(basis, side, offset, layout):
    finish, forward, normal = basis
    return (_project(finish, forward, normal, layout["entryDistance"], side * offset),
            _project(finish, forward, normal, layout["exitDistance"], side * offset))


def _score_placement(s, basis, side, offset, layout, width, kerb):
    start, end = _lane_endpoints(basis, side, offset, layout)
    finish, _forward_, normal = basis
    wcx, wcy = WORLD_W / 2, WORLD_H / 2
    mid = ((start[0] + end[0]) / 2, (start[1] + end[1]) / 2)
    outward = js_hypot(mid[0] - wcx, mid[1] - wcy) - js_hypot(finish[0] - wcx, finish[1] - wcy)
    lx, ly, llen = _normalize(end[0] - start[0], end[1] - start[1])
    snx, sny, _ = _normalize(normal[0] * side, normal[1] * side)
    min_clear = math.inf
    min_track = math.inf
    edge = width / 2 + kerb + PIT_TRACK_CLEARANCE_MARGIN
    for index in range(49):
        along = llen * (index / 48)
        px, py = start[0] + lx * along, start[1] + ly * along
        bx, by = px + snx * BOX_LATERAL, py + sny * BOX_LATERAL
        min_clear = min(min_clear, _point_clearance(px, py), _point_clearance(bx, by))
        min_track = min(min_track, _nearest_cross_track_error(s, px, py) - edge)
    return dict(side=side, offset=offset, world=min_clear, track=min_track, outward=outward,
                score=min_track * 5 + min_clear + outward * 3)


def _choose_placement(s, basis, base_offset, layout, width, kerb):
    candidates = []
    for step in range(10):
        offset = base_offset + step * PIT_LANE_OFFSET_SEARCH_STEP
        candidates.append(_score_placement(s, basis, -1, offset, layout, width, kerb))
        candidates.append(_score_placement(s, basis, 1, offset, layout, width, kerb))
    valid = [c for c in candidates if c["world"] > 0 and c["track"] > 0]
    if valid:
        return sorted(valid, key=lambda c: (-int(c["outward"] > 0), -c["track"], -c["world"], c["offset"]))[0]
    return sorted(candidates, key=lambda c: -c["score"])[0]


def _angle_between(ax, ay, bx, by):
    ax, ay, _ = _normalize(ax, ay)
    bx, by, _ = _normalize(bx, by)
    return math.acos(clamp(ax * bx + ay * by, -1, 1))


def _access_connection(s, total, lane_point, lane_forward, direction, start_d, end_d, fallback_d, width):
    def connection(along):
        tp = _point_at(s, total, along)
        signed = (lane_point[0] - tp["x"]) * tp["normal_x"] + (lane_point[1] - tp["y"]) * tp["normal_y"]
        lane_side = 1 if signed >= 0 else -1
        inset = lane_side * max(0.0, width / 2 - PIT_ACCESS_TRACK_OVERLAP)
        connect = (tp["x"] + tp["normal_x"] * inset, tp["y"] + tp["normal_y"] * inset)
        if direction == "entry":
            rx, ry, rlen = _normalize(lane_point[0] - connect[0], lane_point[1] - connect[1])
        else:
            rx, ry, rlen = _normalize(connect[0] - lane_point[0], connect[1] - lane_point[1])
        track_angle = _angle_between(rx, ry, math.cos(tp["heading"]), math.sin(tp["heading"]))
        lane_angle = _angle_between(rx, ry, lane_forward[0], lane_forward[1])
        facing = abs(signed) - width / 2
        score = track_angle * 1100 + lane_angle * 900 + rlen * 0.32 - max(0.0, facing) * 0.18
        return dict(distanceFromStart=along, trackDistance=wrap_distance(tp["distance"], total), trackPoint=tp,
                    trackConnectPoint=connect, pathLength=rlen, trackAngle=track_angle, laneAngle=lane_angle,
                    score=score)

    lo, hi = min(start_d, end_d), max(start_d, end_d)
    best = fallback = None
    along = lo
    while along <= hi:
        c = connection(along)
        fallback = c if fallback is None or c["score"] < fallback["score"] else fallback
        if not (c["trackAngle"] > 1.15 or c["laneAngle"] > 1.15):
            best = c if best is None or c["score"] < best["score"] else best
        along += PIT_ACCESS_SEARCH_STEP
    return best or fallback or connection(fallback_d)


def _bezier(p0, p1, p2, p3, steps=PIT_ACCESS_SAMPLE_STEPS):
    out = []
    for index in range(steps + 1):
        t = index / steps
        mt = 1 - t
        mt2 = mt * mt
        t2 = t * t
        out.append(tuple(mt2 * mt * p0[k] + 3 * mt2 * t * p1[k] + 3 * mt * t2 * p2[k] + t2 * t * p3[k] for k in (0, 1)))
    return out


def _access_road(start, end, start_forward, end_forward, tangent):
    return _bezier(start, (start[0] + start_forward[0] * tangent, start[1] + start_forward[1] * tangent),
                   (end[0] - end_forward[0] * tangent, end[1] - end_forward[1] * tangent), end)


@dataclass(frozen=True)
class PitLane:
    """PaddockJS's pit lane (createPitLaneModel), metres. side: -1 left / +1 right of the start
    straight (along PaddockJS's normal, our right normal); entry/exit roads are cubic Beziers of
    PIT_ACCESS_SAMPLE_STEPS + 1 points (their control polygons in ``*_controls``)."""
    side: int
    offset: float
    width: float
    entry_track_distance: float
    exit_track_distance: float
    lane_start: tuple
    lane_end: tuple
    entry_road: np.ndarray          # float64[25, 2], track connection -> lane start
    exit_road: np.ndarray           # float64[25, 2], lane end -> track connection
    entry_controls: np.ndarray      # float64[4, 2]
    exit_controls: np.ndarray       # float64[4, 2]
    service_normal: tuple
    working_lane_offset: float
    boxes: np.ndarray               # float64[20, 2] garage box centres
    box_lane_distance: np.ndarray   # float64[20] m along the lane from its start
    service_areas: np.ndarray       # float64[10, 2] service area centres (one per team)
    service_lane_distance: np.ndarray  # float64[10] m along the lane from its start


def pit_lane(s: Samples, total: float, width: float = TRACK_WIDTH, kerb: float = KERB_WIDTH) -> PitLane:
    """PaddockJS's createPitLaneModel on samples (sim units) of a lap of ``total`` sim units, for a
    track ``width`` and ``kerb`` wide (sim units); the result in metres."""
    layout = _pit_layout()
    finish = _point_at(s, total, 0)
    basis = ((finish["x"], finish["y"]), (math.cos(finish["heading"]), math.sin(finish["heading"])),
             (finish["normal_x"], finish["normal_y"]))
    base_offset = width / 2 + kerb + PIT_LANE_EDGE_GAP + PIT_LANE_WIDTH / 2
    placement = _choose_placement(s, basis, base_offset, layout, width, kerb)
    side, offset = placement["side"], placement["offset"]
    lane_start, lane_end = _lane_endpoints(basis, side, offset, layout)
    lx, ly, llen = _normalize(lane_end[0] - lane_start[0], lane_end[1] - lane_start[1])
    access = clamp(max(0.0, offset - width / 2) * 0.9, PIT_ACCESS_MIN_LENGTH, PIT_ACCESS_MAX_LENGTH)
    normal = basis[2]
    snx, sny, _ = _normalize(normal[0] * side, normal[1] * side)
    entry = _access_connection(s, total, lane_start, (lx, ly), "entry",
                               layout["entryDistance"] - PIT_ENTRY_SEARCH_BEFORE,
                               layout["entryDistance"] + PIT_ENTRY_SEARCH_AFTER, layout["entryDistance"] - access, width)
    exit_ = _access_connection(s, total, lane_end, (lx, ly), "exit",
                               layout["exitDistance"] - PIT_EXIT_SEARCH_BEFORE,
                               layout["exitDistance"] + PIT_EXIT_SEARCH_AFTER, layout["exitDistance"] + access, width)
    entry_tangent = clamp(entry["pathLength"] * PIT_ACCESS_TANGENT_RATIO, PIT_LANE_WIDTH, PIT_ACCESS_MAX_LENGTH)
    exit_tangent = clamp(exit_["pathLength"] * PIT_ACCESS_TANGENT_RATIO, PIT_LANE_WIDTH, PIT_ACCESS_MAX_LENGTH)
    eh = entry["trackPoint"]["heading"]
    xh = exit_["trackPoint"]["heading"]
    entry_fwd, exit_fwd = (math.cos(eh), math.sin(eh)), (math.cos(xh), math.sin(xh))
    ec = entry["trackConnectPoint"]
    xc = exit_["trackConnectPoint"]
    entry_controls = [ec, (ec[0] + entry_fwd[0] * entry_tangent, ec[1] + entry_fwd[1] * entry_tangent),
                      (lane_start[0] - lx * entry_tangent, lane_start[1] - ly * entry_tangent), lane_start]
    exit_controls = [lane_end, (lane_end[0] + lx * exit_tangent, lane_end[1] + ly * exit_tangent),
                     (xc[0] - exit_fwd[0] * exit_tangent, xc[1] - exit_fwd[1] * exit_tangent), xc]
    entry_road = _access_road(ec, lane_start, entry_fwd, (lx, ly), entry_tangent)
    exit_road = _access_road(lane_end, xc, (lx, ly), exit_fwd, exit_tangent)

    run = _box_run_length()
    cursor = max(PIT_SERVICE_QUEUE_GAP + PIT_BOX_LENGTH / 2, (llen - run) / 2)
    boxes, box_d, services, service_d = [], [], [], []
    for index in range(PIT_BOX_COUNT):
        along = cursor + PIT_BOX_LENGTH / 2
        target = (lane_start[0] + lx * along, lane_start[1] + ly * along)
        boxes.append((target[0] + snx * BOX_LATERAL, target[1] + sny * BOX_LATERAL))
        box_d.append(along)
        team, team_box = divmod(index, PIT_BOXES_PER_TEAM)
        if team_box == PIT_BOXES_PER_TEAM - 1:
            service = (box_d[index - (PIT_BOXES_PER_TEAM - 1)] + along) / 2
            services.append(_project(lane_start, (lx, ly), (snx, sny), service, WORKING_LANE_OFFSET))
            service_d.append(service)
        cursor += PIT_BOX_LENGTH
        if team_box == 0:
            cursor += PIT_BOX_PAIR_GAP
        elif team < PIT_TEAM_COUNT - 1:
            cursor += PIT_TEAM_GAP
    m = lambda pts: np.asarray(pts, np.float64) / U
    return PitLane(
        side=int(side), offset=offset / U, width=PIT_LANE_WIDTH / U,
        entry_track_distance=entry["trackDistance"] / U, exit_track_distance=exit_["trackDistance"] / U,
        lane_start=(lane_start[0] / U, lane_start[1] / U), lane_end=(lane_end[0] / U, lane_end[1] / U),
        entry_road=m(entry_road), exit_road=m(exit_road), entry_controls=m(entry_controls),
        exit_controls=m(exit_controls), service_normal=(snx, sny), working_lane_offset=WORKING_LANE_OFFSET / U,
        boxes=m(boxes), box_lane_distance=np.asarray(box_d) / U, service_areas=m(services),
        service_lane_distance=np.asarray(service_d) / U)


# ------------------------------------------------------------------------------------ the track

@dataclass(frozen=True)
class PaddockJSTrack:
    """A track as PaddockJS 2.0.0 builds it, in metres (PaddockJS's frame: x right, y down).

    x, y, distance: float64[3601] centreline samples (the last repeats the first, distance = length);
    heading: float64[3601] rad; seed: the candidate seed that passed validation (PaddockJS's
    ``track.seed``, reported as ``info.trackSeed``); requested_seed: the normalised ``trackSeed``."""
    name: str
    requested_seed: int
    seed: int
    length: float
    x: np.ndarray
    y: np.ndarray
    distance: np.ndarray
    heading: np.ndarray
    controls: np.ndarray
    drs_zones: tuple
    pit_lane: Optional[PitLane]
    options: dict


def _name(seed: int) -> str:
    digits = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"
    text = ""
    value = seed
    while True:
        value, r = divmod(value, 36)
        text = digits[r] + text
        if value == 0:
            break
    return "Generated GP " + text.rjust(6, "0")[-6:]


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


def _build(controls, options):
    return build_samples(controls, options["startStraight"])


def generate_track(seed=None, options: Optional[dict] = None) -> PaddockJSTrack:
    """The track PaddockJS 2.0.0 builds for ``trackSeed: seed`` and ``trackGeneration: options``
    (createProceduralTrack then buildTrackModel)."""
    requested = normalize_seed(seed)
    resolved = resolve_generation_options(options)
    shape = resolved["shape"]
    chosen = None
    for attempt in range(resolved["attempts"]["primary"]):
        candidate = (requested + attempt * 2654435761) & MASK32
        controls = centerline_controls(candidate, shape)
        samples, total = _build(controls, resolved)
        if _valid(controls, samples, total, resolved):
            chosen = (_name(candidate), candidate, controls, samples, total)
            break
    if chosen is None:
        for attempt in range(resolved["attempts"]["fallback"]):
            candidate = (requested ^ (((attempt + 1) * 2246822519) & MASK32)) & MASK32
            controls = fallback_centerline_controls(candidate, shape)
            samples, total = _build(controls, resolved)
            if _valid(controls, samples, total, resolved):
                chosen = (_name(requested), candidate, controls, samples, total)
                break
    if chosen is None:
        controls = safe_fallback_centerline_controls(requested, shape)
        samples, total = _build(controls, resolved)
        chosen = (_name(requested), requested, controls, samples, total)
    name, candidate, controls, samples, total = chosen
    pit = pit_lane(samples, total) if resolved["pitLane"]["enabled"] else None
    return PaddockJSTrack(
        name=name, requested_seed=requested, seed=candidate, length=total / U,
        x=samples.x / U, y=samples.y / U, distance=samples.distance / U, heading=samples.heading.copy(),
        controls=np.asarray(controls, np.float64) / U, drs_zones=tuple(_drs_zones(samples, total)),
        pit_lane=pit, options=resolved)
