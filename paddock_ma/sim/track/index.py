"""Query index of a track: a raster over the track's bounding box (cell ~1 m).

* ``grid_seg[ny, nx]`` int32: the centreline segment nearest to each cell centre (exact, by
  projection), or -1 when every segment is farther than its reach (grass_edge + 10 m; around the start
  straight, far enough to cover the pit area).
* ``grid_surf[ny, nx]`` int8: the exact surface code (``surface_at``) at each cell centre (the raster
  covers the pit complex's bounds, to which PaddockJS's pit road strips reach).
* ``grid_edge[ny, nx]`` float32: a lower bound (m) of the distance from ANY point of the cell to the
  nearest surface boundary, for sphere tracing: the Euclidean distance between cell centres to the
  nearest cell whose surface differs from a 4-neighbour's (a chamfer transform, scaled down to a lower
  bound of the Euclidean one), minus 1.75 cells (half a cell for where the boundary lies between
  centres, ~0.71 cell for the query point's place in its cell, and slack), clamped at 0.

Build time is dominated by the nearest-segment stamping (every segment visits the cells within
``reach``) and runs in well under a second for a 6 km track.
"""

import math

import numpy as np

from .preview import PREVIEW_D, build_ai_preview
from ..core.jit import allocating_kernel, kernel
from ..core.layout import SURF_BARRIER
from .geometry import TrackArrays, seg_d2, band_code
from .surface import PITG_BOUNDS, pit_override, pit_surface

# m beyond the grass edge every segment stamps the raster (the barrier band; the march's skips rely on it)
BARRIER_STAMP_DEPTH = 10.0


@allocating_kernel
def _stamp_nearest(cx, cy, x0, y0, cell, nx, ny, reach_seg):
    """Nearest segment per cell centre within ``reach_seg[i]`` m of segment i (float64[N]).

    cx, cy: float64[N+1] m. Returns int32[ny, nx], -1 where no segment reaches."""
    n = cx.shape[0] - 1
    seg = np.full((ny, nx), -1, dtype=np.int32)
    best = np.full((ny, nx), np.inf, dtype=np.float64)
    for i in range(n):
        reach = reach_seg[i]
        r2 = reach * reach
        ax = cx[i]
        ay = cy[i]
        dx = cx[i + 1] - ax
        dy = cy[i + 1] - ay
        ll = dx * dx + dy * dy
        gx0 = max(0, int(math.floor((min(ax, ax + dx) - reach - x0) / cell)))
        gx1 = min(nx - 1, int(math.floor((max(ax, ax + dx) + reach - x0) / cell)))
        gy0 = max(0, int(math.floor((min(ay, ay + dy) - reach - y0) / cell)))
        gy1 = min(ny - 1, int(math.floor((max(ay, ay + dy) + reach - y0) / cell)))
        for gy in range(gy0, gy1 + 1):
            py = y0 + (gy + 0.5) * cell - ay
            for gx in range(gx0, gx1 + 1):
                px = x0 + (gx + 0.5) * cell - ax
                t = (px * dx + py * dy) / ll
                if t < 0.0:
                    t = 0.0
                elif t > 1.0:
                    t = 1.0
                ex = px - t * dx
                ey = py - t * dy
                d2 = ex * ex + ey * ey
                if d2 <= r2 and d2 < best[gy, gx]:
                    best[gy, gx] = d2
                    seg[gy, gx] = i
    return seg, best


@kernel
def _fix_far_cells(tr, best, small_reach):
    """Cells stamped only by a long-reach segment (farther than ``small_reach`` m from it) may have an
    unstamped nearer segment: on a pit surface, find their nearest segment over all segments;
    elsewhere they are farther than small_reach from every segment, so clear them to -1."""
    ny, nx = tr.grid_seg.shape
    n = tr.cx.shape[0] - 1
    r2 = small_reach * small_reach
    for gy in range(ny):
        y = tr.grid_y0 + (gy + 0.5) * tr.grid_cell
        for gx in range(nx):
            if tr.grid_seg[gy, gx] < 0 or best[gy, gx] <= r2:
                continue
            x = tr.grid_x0 + (gx + 0.5) * tr.grid_cell
            if pit_surface(tr, x, y) < 0:
                tr.grid_seg[gy, gx] = -1
                continue
            bd = np.inf
            bi = -1
            for i in range(n):
                d2, t = seg_d2(tr, i, x, y)
                if d2 < bd:
                    bd = d2
                    bi = i
            tr.grid_seg[gy, gx] = bi


@allocating_kernel
def _classify_cells(tr, nx, ny):
    """Exact surface code at every cell centre -> int8[ny, nx] (barrier where grid_seg is -1)."""
    out = np.full((ny, nx), SURF_BARRIER, dtype=np.int8)
    for gy in range(ny):
        y = tr.grid_y0 + (gy + 0.5) * tr.grid_cell
        for gx in range(nx):
            g = tr.grid_seg[gy, gx]
            if g < 0:
                continue
            x = tr.grid_x0 + (gx + 0.5) * tr.grid_cell
            # g is the exact nearest segment of this cell centre, so the exact distance is one test
            d2, t = seg_d2(tr, g, x, y)
            a = math.sqrt(d2)
            code = band_code(tr, a)
            p = pit_override(tr, x, y, a, tr.kerb_edge)
            if p >= 0:
                code = p
            out[gy, gx] = code
    return out


@allocating_kernel
def _edge_field(surf, cell):
    """Lower bound of the distance (m) to the nearest boundary cell -> float32[ny, nx].

    Boundary cells: cells whose surface differs from a 4-neighbour's. Two-pass chamfer transform with
    weights 1 and sqrt(2), which overestimates the Euclidean distance by at most 8.24%, so the result
    is divided by 1.0824; then 1.75 cells are taken off (see the module docstring)."""
    ny, nx = surf.shape
    d = np.full((ny, nx), np.float32(1e9), dtype=np.float32)
    for y in range(ny):
        for x in range(nx):
            c = surf[y, x]
            if ((x > 0 and surf[y, x - 1] != c) or (x < nx - 1 and surf[y, x + 1] != c)
                    or (y > 0 and surf[y - 1, x] != c) or (y < ny - 1 and surf[y + 1, x] != c)):
                d[y, x] = 0.0
    r2 = np.float32(math.sqrt(2.0))
    one = np.float32(1.0)
    for y in range(ny):
        for x in range(nx):
            v = d[y, x]
            if x > 0:
                v = min(v, d[y, x - 1] + one)
            if y > 0:
                v = min(v, d[y - 1, x] + one)
                if x > 0:
                    v = min(v, d[y - 1, x - 1] + r2)
                if x < nx - 1:
                    v = min(v, d[y - 1, x + 1] + r2)
            d[y, x] = v
    for y in range(ny - 1, -1, -1):
        for x in range(nx - 1, -1, -1):
            v = d[y, x]
            if x < nx - 1:
                v = min(v, d[y, x + 1] + one)
            if y < ny - 1:
                v = min(v, d[y + 1, x] + one)
                if x < nx - 1:
                    v = min(v, d[y + 1, x + 1] + r2)
                if x > 0:
                    v = min(v, d[y + 1, x - 1] + r2)
            d[y, x] = v
    out = np.empty((ny, nx), dtype=np.float32)
    for y in range(ny):
        for x in range(nx):
            out[y, x] = max(0.0, d[y, x] * cell / 1.0824 - 1.75 * cell)
    return out


def build_index(fields: dict, cell: float = 1.0, margin: float = 45.0) -> TrackArrays:
    """Add the raster fields to ``fields`` (every other TrackArrays field) and return the TrackArrays.

    The raster covers the bounding box of the centreline and the pit path plus ``margin`` m (and the
    pit's outer edge); ``reach`` covers the barrier band and the whole pit area.
    """
    # the pit complex's bounds (``pit_geom``): its roads' strips reach them (``surface.pit_state``)
    g = fields["pit_geom"]
    corner_x = g[PITG_BOUNDS:PITG_BOUNDS + 2][[0, 0, 1, 1]] if g.shape[0] else np.zeros(0)
    corner_y = g[PITG_BOUNDS + 2:PITG_BOUNDS + 4][[0, 1, 0, 1]] if g.shape[0] else np.zeros(0)
    xs = np.concatenate([fields["cx"], fields["px"], fields["box_x"], corner_x])
    ys = np.concatenate([fields["cy"], fields["py"], fields["box_y"], corner_y])
    x0 = math.floor(xs.min() - margin)
    y0 = math.floor(ys.min() - margin)
    nx = int(math.ceil((xs.max() + margin - x0) / cell))
    ny = int(math.ceil((ys.max() + margin - y0) / cell))
    # reach: every pit point must find its segment; barrier beyond grass_edge needs a margin too
    pit_far = 0.0
    if fields["px"].shape[0] > 0:
        px = np.concatenate([fields["px"], fields["box_x"], corner_x])
        py = np.concatenate([fields["py"], fields["box_y"], corner_y])
        d = np.hypot(px[:, None] - fields["cx"][None, :], py[:, None] - fields["cy"][None, :]).min(axis=1)
        pit_far = float(d.max())
    # the barrier band is stamped 10 m deep everywhere; around the start straight (pit entry to pit
    # exit, +-100 m) deep enough to cover the whole pit area
    cs = fields["cs"][:-1]
    # the pit entry lies before the line (late in the lap) and the exit after it (early in the lap)
    if fields["px"].shape[0] > 0:
        near_pit = (cs >= fields["pit_entry_s"] - 100.0) | (cs <= fields["pit_exit_s"] + 100.0)
    else:                   # no pit lane: the barrier band alone
        near_pit = np.zeros(cs.shape, bool)
    small = fields["grass_edge"] + BARRIER_STAMP_DEPTH
    reach = np.where(near_pit, max(small, pit_far + 25.0), small)
    seg, best = _stamp_nearest(fields["cx"], fields["cy"], float(x0), float(y0), float(cell), nx, ny,
                         reach.astype(np.float64))
    tmp = dict(fields)
    tmp.setdefault("drs_start", np.zeros(0, np.float64))    # no DRS zones unless the builder gives them
    tmp.setdefault("drs_end", np.zeros(0, np.float64))
    tmp.update(grid_x0=float(x0), grid_y0=float(y0), grid_cell=float(cell), grid_seg=seg,
               grid_surf=np.zeros((1, 1), np.int8), grid_edge=np.zeros((1, 1), np.float32),
               ai_preview=build_ai_preview(fields["cx"], fields["cy"], fields["cs"], fields["ch"],
                                           fields["ccurv"], float(fields["length"]), PREVIEW_D))
    tr = TrackArrays(**tmp)
    _fix_far_cells(tr, best, small)
    surf = _classify_cells(tr, nx, ny)
    edge = _edge_field(surf, float(cell))
    return read_only(tr._replace(grid_surf=surf, grid_edge=edge))


def read_only(tr: TrackArrays) -> TrackArrays:
    """``tr`` with every array marked read-only: a track is shared by every world (and, cached, by
    every env of the process), so a write through one of them would silently change all the others.
    Numba compiles kernels for read-only arrays as for writable ones; a kernel that writes to one is
    rejected at compile time."""
    for value in tr:
        if isinstance(value, np.ndarray):
            value.flags.writeable = False
    return tr
