"""The track's edge lines and where a ray first meets them: PaddockJS 2.0.0's
``findIndexedTrackBandBoundaries`` (``src/environment/sensors/indexedRayBands.js``).

PaddockJS draws a track band's edge as the centreline samples offset along their own normals: segment
``i``'s edge line at offset ``o`` joins ``c_i + o n_i`` to ``c_{i+1} + o n_{i+1}`` (c the sample, n its
right normal). A ray's boundary distance at ``o`` is its nearest intersection with any segment's edge
line at ``+o`` or ``-o`` within the ray's length, whatever part of the lap that segment belongs to.
PaddockJS finds the segments through its spatial grid; every segment whose edge line the ray meets is
among them, so the answer is the nearest intersection over all segments, which this module computes
with a grid of its own.

Four lines per segment: the white lines (+-half_width, ``LINE_TRACK_*``) and the kerbs' outer edges
(+-kerb_edge, ``LINE_KERB_*``); line id = 4 * segment + kind. ``edge_line_grid`` lists, per cell of
a uniform grid (``EDGE_CELL`` m), the lines whose bounding box touches it (CSR: ``start`` int64[cells
+ 1] into entries of ``ENTRY`` floats: the line's ends and kind, white lines first in every cell), so
that a walk reads each cell's lines from one contiguous run of memory; ``sensing.geometry.
sensor_geometry`` packs the grid into the track's ``geo`` array and ``edge_line_hits`` walks the cells
a ray crosses in order, stopping once the nearest hit so far lies within the cells already walked.
"""

import math

import numpy as np

from ..core.jit import allocating_kernel, kernel

EDGE_CELL = 4.0          # m, cell of the edge-line grid (4 m: ~14 lines tested a ray, 8 m: ~25)
EDGE_MARGIN = 1e-3       # m, a line's bounding box is widened by this before it is listed
LINES_PER_SEGMENT = 4
LINE_TRACK_RIGHT, LINE_TRACK_LEFT, LINE_KERB_RIGHT, LINE_KERB_LEFT = 0, 1, 2, 3
# PaddockJS's raySegmentIntersectionDistance tolerances: parallel below 1e-9 sim units (1/12 m), and
# a hit counts within 1e-6 of either end of the segment's parameter range
PARALLEL = 1e-9 / 12.0
END_SLACK = 1e-6
NONE = 1.0e30            # no hit
# the grid header: origin (m), cell (m), columns, rows
H_X0, H_Y0, H_CELL, H_NX, H_NY = 0, 1, 2, 3, 4
N_HEADER = 5
# a cell's entry: the line's ends (m) and its kind (LINE_*)
E_AX, E_AY, E_BX, E_BY, E_KIND = 0, 1, 2, 3, 4
ENTRY = 5


@kernel(inline="always")
def line_ends(cx, cy, cnx, cny, hw, ke, line):
    """(x0, y0, x1, y1) m of edge line ``line`` (4 * segment + kind)."""
    i = line // LINES_PER_SEGMENT
    kind = line - i * LINES_PER_SEGMENT
    if kind == LINE_TRACK_RIGHT:
        o = hw
    elif kind == LINE_TRACK_LEFT:
        o = -hw
    elif kind == LINE_KERB_RIGHT:
        o = ke
    else:
        o = -ke
    return cx[i] + cnx[i] * o, cy[i] + cny[i] * o, cx[i + 1] + cnx[i + 1] * o, cy[i + 1] + cny[i + 1] * o


@allocating_kernel
def edge_line_grid(cx, cy, cnx, cny, hw, ke):
    """The grid of the edge lines of the centreline (cx, cy float64[N+1] m, its right normals cnx,
    cny) at +-hw and +-ke (m) -> (header float64[N_HEADER], start int64[cells + 1], entries
    float64[start[-1], ENTRY]): cell (gx, gy) (index gy * columns + gx) lists entries[start[k]:start[k
    + 1]], each a line's ends (``line_ends``) and kind, the white lines first, each group in increasing
    line id."""
    n_lines = (cx.shape[0] - 1) * LINES_PER_SEGMENT
    x0 = np.inf
    y0 = np.inf
    x1 = -np.inf
    y1 = -np.inf
    for line in range(n_lines):
        ax, ay, bx, by = line_ends(cx, cy, cnx, cny, hw, ke, line)
        x0 = min(x0, ax, bx)
        y0 = min(y0, ay, by)
        x1 = max(x1, ax, bx)
        y1 = max(y1, ay, by)
    x0 -= EDGE_CELL
    y0 -= EDGE_CELL
    nx = int(math.ceil((x1 + EDGE_CELL - x0) / EDGE_CELL))
    ny = int(math.ceil((y1 + EDGE_CELL - y0) / EDGE_CELL))
    header = np.array([x0, y0, EDGE_CELL, float(nx), float(ny)])
    start = np.zeros(nx * ny + 1, dtype=np.int64)
    entries = np.empty((0, ENTRY), dtype=np.float64)
    for kerb_group in (False, True):
        _list_lines(cx, cy, cnx, cny, hw, ke, x0, y0, nx, True, kerb_group, start, entries)
    for k in range(nx * ny):
        start[k + 1] += start[k]
    entries = np.empty((start[nx * ny], ENTRY), dtype=np.float64)
    cursor = start[:-1].copy()
    for kerb_group in (False, True):
        _list_lines(cx, cy, cnx, cny, hw, ke, x0, y0, nx, False, kerb_group, cursor, entries)
    return header, start, entries


@kernel
def _list_lines(cx, cy, cnx, cny, hw, ke, x0, y0, nx, counting, kerb_group, cursor, entries):
    """One pass of ``edge_line_grid`` over the white lines (or, when ``kerb_group``, the kerbs' outer
    lines): when ``counting``, add 1 to ``cursor[k + 1]`` per line touching cell k; else write each
    line's entry at ``entries[cursor[k]]`` and advance the cursor."""
    for line in range((cx.shape[0] - 1) * LINES_PER_SEGMENT):
        kind = line % LINES_PER_SEGMENT
        if (kind >= LINE_KERB_RIGHT) != kerb_group:
            continue
        ax, ay, bx, by = line_ends(cx, cy, cnx, cny, hw, ke, line)
        gx0 = int(math.floor((min(ax, bx) - EDGE_MARGIN - x0) / EDGE_CELL))
        gx1 = int(math.floor((max(ax, bx) + EDGE_MARGIN - x0) / EDGE_CELL))
        gy0 = int(math.floor((min(ay, by) - EDGE_MARGIN - y0) / EDGE_CELL))
        gy1 = int(math.floor((max(ay, by) + EDGE_MARGIN - y0) / EDGE_CELL))
        for gy in range(gy0, gy1 + 1):
            for gx in range(gx0, gx1 + 1):
                k = gy * nx + gx
                if counting:
                    cursor[k + 1] += 1
                else:
                    e = entries[cursor[k]]
                    e[E_AX] = ax
                    e[E_AY] = ay
                    e[E_BX] = bx
                    e[E_BY] = by
                    e[E_KIND] = kind
                    cursor[k] += 1


@kernel(inline="always")
def _intersect(ox, oy, dx, dy, ax, ay, bx, by, length):
    """PaddockJS's ``raySegmentIntersectionDistance``: distance (m) along the ray (origin, unit
    direction) to the segment a-b, or NONE when parallel, behind, beyond ``length`` or off the segment."""
    sx = bx - ax
    sy = by - ay
    den = dx * sy - dy * sx
    if abs(den) < PARALLEL:
        return NONE
    qx = ax - ox
    qy = ay - oy
    t = (qx * sy - qy * sx) / den
    u = (qx * dy - qy * dx) / den
    if t < 0.0 or t > length:
        return NONE
    if u < -END_SLACK or u > 1.0 + END_SLACK:
        return NONE
    return t


@kernel
def edge_line_hits(geo, grid_at, ox, oy, dx, dy, length, want_kerb):
    """Nearest intersections (m) of the ray from (ox, oy) along the unit (dx, dy), within ``length`` m,
    with the white lines and, when ``want_kerb``, the kerbs' outer edges -> (track_edge, kerb_outer),
    NONE where the ray meets none. ``geo[grid_at:]`` holds the grid as ``sensor_geometry`` packs it:
    header, then the cells' starts, then the entries, ENTRY floats each."""
    x0 = geo[grid_at + H_X0]
    y0 = geo[grid_at + H_Y0]
    cell = geo[grid_at + H_CELL]
    nx = int(geo[grid_at + H_NX])
    ny = int(geo[grid_at + H_NY])
    starts = grid_at + N_HEADER
    entries_at = starts + nx * ny + 1
    best_edge = NONE
    best_kerb = NONE if want_kerb else -1.0
    # clip the ray to the grid's box
    t0 = 0.0
    t1 = length
    bx1 = x0 + nx * cell
    by1 = y0 + ny * cell
    if abs(dx) < 1e-12:
        if ox < x0 or ox > bx1:
            return best_edge, NONE
    else:
        ta = (x0 - ox) / dx
        tb = (bx1 - ox) / dx
        t0 = max(t0, min(ta, tb))
        t1 = min(t1, max(ta, tb))
    if abs(dy) < 1e-12:
        if oy < y0 or oy > by1:
            return best_edge, NONE
    else:
        ta = (y0 - oy) / dy
        tb = (by1 - oy) / dy
        t0 = max(t0, min(ta, tb))
        t1 = min(t1, max(ta, tb))
    if t0 > t1:
        return best_edge, NONE
    # walk the cells from t0 (Amanatides-Woo)
    gx = min(max(int(math.floor((ox + dx * t0 - x0) / cell)), 0), nx - 1)
    gy = min(max(int(math.floor((oy + dy * t0 - y0) / cell)), 0), ny - 1)
    step_x = 1 if dx > 0.0 else -1
    step_y = 1 if dy > 0.0 else -1
    if abs(dx) < 1e-12:
        next_x = NONE
        delta_x = NONE
    else:
        next_x = (x0 + (gx + (1 if dx > 0.0 else 0)) * cell - ox) / dx
        delta_x = cell / abs(dx)
    if abs(dy) < 1e-12:
        next_y = NONE
        delta_y = NONE
    else:
        next_y = (y0 + (gy + (1 if dy > 0.0 else 0)) * cell - oy) / dy
        delta_y = cell / abs(dy)
    n_kinds = LINES_PER_SEGMENT if want_kerb else 2
    while True:
        k = gy * nx + gx
        for q in range(int(geo[starts + k]), int(geo[starts + k + 1])):
            e = entries_at + ENTRY * q
            kind = int(geo[e + E_KIND])
            if kind >= n_kinds:
                break                      # the kerb lines follow the white lines
            t = _intersect(ox, oy, dx, dy, geo[e + E_AX], geo[e + E_AY], geo[e + E_BX], geo[e + E_BY], length)
            if kind < 2:
                if t < best_edge:
                    best_edge = t
            elif t < best_kerb:
                best_kerb = t
        t_exit = min(next_x, next_y, t1)
        if max(best_edge, best_kerb) <= t_exit or t_exit >= t1:
            break
        if next_x < next_y:
            gx += step_x
            next_x += delta_x
        else:
            gy += step_y
            next_y += delta_y
        if gx < 0 or gy < 0 or gx >= nx or gy >= ny:
            break
    return best_edge, (best_kerb if want_kerb else NONE)
