"""What surface lies at a point: the exact ``surface_at`` (the main track's band, overridden by the pit
complex's surfaces as ``track.surface`` reads them) and the raster's fast reads (``surface_fast``,
``edge_distance_at``: the grids ``track.index`` builds)."""

import math

import numpy as np

from ..core.jit import kernel
from ..core.layout import SURF_BARRIER
from .geometry import band_code, locate
from .surface import in_pit_bounds, pit_override_call


@kernel(inline="always")
def surface_at(tr, x, y, hint):
    """Exact surface at (x, y) (m): the main-track band of the nearest centreline point, overridden by
    a pit surface as PaddockJS overrides it (``pit_overrides``: a pit box anywhere, another pit
    surface beyond the kerb, |offset| > kerb_edge).

    hint: int segment hint as for ``locate``. Returns (surface code int, offset float64 m, seg int).
    """
    seg, s, offset, h, k = locate(tr, x, y, hint)
    a = abs(offset)
    code = band_code(tr, a)
    if in_pit_bounds(tr.pit_geom, x, y):
        p = pit_override_call(tr, x, y, a, tr.kerb_edge)
        if p >= 0:
            code = p
    return code, offset, seg


@kernel(inline="always")
def surface_fast(tr, x, y):
    """Surface code at (x, y) (m) read from the raster (exact at cell centres; may differ within one
    cell of a boundary). Off the raster: barrier."""
    ny, nx = tr.grid_surf.shape
    gx = int(math.floor((x - tr.grid_x0) / tr.grid_cell))
    gy = int(math.floor((y - tr.grid_y0) / tr.grid_cell))
    if 0 <= gx < nx and 0 <= gy < ny:
        return np.int64(tr.grid_surf[gy, gx])
    return np.int64(SURF_BARRIER)


@kernel(inline="always")
def edge_distance_at(tr, x, y):
    """Lower bound (m) of the distance from (x, y) to the nearest surface boundary (raster, 0 near
    one; off the raster 0)."""
    ny, nx = tr.grid_edge.shape
    gx = int(math.floor((x - tr.grid_x0) / tr.grid_cell))
    gy = int(math.floor((y - tr.grid_y0) / tr.grid_cell))
    if 0 <= gx < nx and 0 <= gy < ny:
        return np.float64(tr.grid_edge[gy, gx])
    return 0.0
