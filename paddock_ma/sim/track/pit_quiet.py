"""How far along a ray the pit complex's surface answer holds: ``pit_surface_quiet``, which lets the
ray march skip whole metres near the pit lane (``sensing.march_skip``) without changing a hit.

The answer of ``track.surface.pit_surface`` changes only where the ray crosses a line of the complex's
bounds, a line of its road grid, a box's edge, or where a candidate road segment's offset crosses its
half width; this module measures the nearest of those along the ray (metres).
"""

import math

import numpy as np

from ..core.jit import kernel
from .surface import PITG_BOUNDS, PITG_GRID, PITG_N_QUAD, PITG_N_SEG, PITG_QUAD0, PITG_SEG0, QUAD_SIZE, SEG_SIZE, in_pit_bounds, road_radius, seg_candidate, seg_projection


@kernel(inline="always")
def _line_time(q, rate, line, best):
    """min(best, the distance (m) along a ray, moving q by ``rate`` a metre, to the line q = ``line``)."""
    if rate > 0.0:
        return min(best, abs(q - line) / rate)
    return best


@kernel(inline="always")
def _quad_distance(g, o, x, y):
    """Distance (m) from (x, y) to the edges of the rectangle at g[o]."""
    best = np.inf
    j = 3
    for i in range(4):
        ax = g[o + 2 * j]
        ay = g[o + 2 * j + 1]
        dx = g[o + 2 * i] - ax
        dy = g[o + 2 * i + 1] - ay
        t = ((x - ax) * dx + (y - ay) * dy) / (dx * dx + dy * dy)
        t = min(max(t, 0.0), 1.0)
        ex = x - ax - t * dx
        ey = y - ay - t * dy
        best = min(best, math.sqrt(ex * ex + ey * ey))
        j = i
    return best


@kernel(inline="always")
def pit_surface_quiet(tr, x, y, rdx, rdy):
    """How far (m) along the unit ray (rdx, rdy) from (x, y) ``pit_surface`` keeps answering as it does
    at (x, y) whether the point is on a pit surface and whether on a pit box; inf without a pit lane.

    ``pit_surface``'s answer changes only where the ray crosses a line of the bounds (in or out of
    the complex), a line of the road grid's cell (another set of candidate segments), a rectangle's
    edge (a box) or where a candidate segment's offset from its line (which changes by |ray . normal| a
    metre) crosses its half width. The result is shortened by 1e-9 of itself and 1e-7 m for rounding."""
    g = tr.pit_geom
    if g.shape[0] == 0:
        return np.inf
    ax = abs(rdx)
    ay = abs(rdy)
    t = np.inf
    for k in range(2):
        t = _line_time(x, ax, g[PITG_BOUNDS + k], t)
        t = _line_time(y, ay, g[PITG_BOUNDS + 2 + k], t)
    if in_pit_bounds(g, x, y):
        r, col, row = road_radius(g, x, y)
        cell = g[PITG_GRID + 2]
        for k in range(2):
            t = _line_time(x, ax, g[PITG_GRID] + (col + k) * cell, t)
            t = _line_time(y, ay, g[PITG_GRID + 1] + (row + k) * cell, t)
        nq = int(g[PITG_N_QUAD])
        q0 = int(g[PITG_QUAD0])
        for k in range(nq):
            t = min(t, _quad_distance(g, q0 + QUAD_SIZE * k, x, y))
        n = int(g[PITG_N_SEG])
        for k in range(n):
            o = PITG_SEG0 + SEG_SIZE * k
            if not seg_candidate(g, o, r, col, row):
                continue
            off, _qx, _qy, nx, ny = seg_projection(g, o, x, y)
            t = _line_time(abs(off), abs(rdx * nx + rdy * ny), g[o + 4], t)
    return max(0.0, t * (1.0 - 1e-9) - 1e-7)
