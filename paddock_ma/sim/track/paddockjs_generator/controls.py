"""Control points of a generated track: a seeded region of grid cells, traced and smoothed.

``centerline_controls(seed, shape)`` -> 60-120 (x, y) points in sim units (the primary attempt);
``fallback_centerline_controls`` and ``safe_fallback_centerline_controls`` the later attempts."""

import math

from .jsmath import (MASK32, PI, TRACK_BOUNDARY_PADDING, WORLD_H, WORLD_W, clamp, clamp_integer, js_hypot,
                     js_round, mulberry32, normalize_seed, random_integer, seeded_range)
from ....value_rules import is_finite_number

# PaddockJS's default track (TRACK.centerlineControls), as fractions of the world
CENTERLINE_CONTROL_FRACTIONS = [
    (0.05, 0.56), (0.10, 0.81), (0.23, 0.91), (0.35, 0.80), (0.48, 0.90), (0.59, 0.75),
    (0.71, 0.87), (0.82, 0.72), (0.94, 0.66), (0.96, 0.47), (0.88, 0.33), (0.74, 0.31),
    (0.64, 0.18), (0.54, 0.31), (0.43, 0.13), (0.29, 0.18), (0.17, 0.31), (0.08, 0.43),
]


def _region_template(seed: int, *, fallback: bool, corner_density) -> tuple:
    random = mulberry32(seed)
    density = max(0.5, corner_density) if is_finite_number(corner_density) else 1.0
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


def _region_controls(seed: int, shape: dict, fallback: bool) -> list:
    seed = normalize_seed(seed)
    random = mulberry32(seed)
    columns, rows, cells = _region_template(seed, fallback=fallback, corner_density=shape.get("cornerDensity"))
    scale = max(0.05, shape["scale"]) if is_finite_number(shape.get("scale")) else 1.0
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


def shape_statistics(controls):
    cx, cy = WORLD_W / 2, WORLD_H / 2
    radii = [js_hypot(x - cx, y - cy) for x, y in controls]
    total = 0.0
    for r in radii:
        total += r
    mean = total / max(1, len(radii))
    return radii, mean


def shape_variation(radii, mean):
    total = 0.0
    for r in radii:
        total += (r - mean) * (r - mean)
    return math.sqrt(total / max(1, len(radii))) / mean


def _strengthen(controls, minimum):
    radii, mean = shape_statistics(controls)
    variation = shape_variation(radii, mean) if mean > 0 else 0.0
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
    scale = (0.78 + ((seed >> 3) % 4) * 0.02) * (max(0.05, shape["scale"]) if is_finite_number(shape.get("scale")) else 1)
    mirror_x = -1 if seed & 1 else 1
    mirror_y = -1 if seed & 2 else 1
    cx, cy = WORLD_W / 2, WORLD_H / 2
    controls = [(cx + (x - cx) * scale * mirror_x, cy + (y - cy) * scale * mirror_y) for x, y in default_controls()]
    return _rotate(controls, mulberry32((seed ^ 0x9E3779B9) & MASK32))
