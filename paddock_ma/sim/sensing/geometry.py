"""Where a ray sample is, for the track rays (``sensing.road_edge``): the per-track sensor constants
(``sensor_geometry``: pit box, trust radius, band edges, raster origin, the edge-line grid), the
nearest centreline segment of a point by local descent or the raster, and its exact surface code."""

import math
from collections import namedtuple

import numpy as np

from ..core.jit import allocating_kernel, kernel
from ..core.layout import SURF_BARRIER
from ..track.surface import pit_bbox, pit_override
from ..track.geometry import GRID_WINDOW, seg_d2a, band_of
from .edge_lines import edge_line_grid

FAR = 1.0e30
_WALK_MAX = 48           # descent steps before falling back to the raster (a stale start)

# The fields of TrackArrays that ``pit_surface`` reads. Hot kernels take single arrays and this small
# view, never the whole TrackArrays tuple, so a call unpacks only what it reads.
PitView = namedtuple("PitView", ["pit_geom"])


# sensor_geometry() slots
G_PX0, G_PY0, G_PX1, G_PY1 = 0, 1, 2, 3
G_TRUST = 4
G_HW, G_KE, G_GRAVEL, G_GRASS = 5, 6, 7, 8
G_X0, G_Y0, G_CELL = 9, 10, 11
# where the edge-line grid of ``sensing.edge_lines`` starts (an index of geo, stored as a float)
G_EDGE_AT = 12
N_GEO = 13               # then the edge-line grid (``edge_line_grid``: header, cell starts, entries)


@allocating_kernel
def sensor_geometry(tr):
    """Per-track constants of the track rays -> float64[N_GEO + grid]: the box (x0, y0, x1, y1) m
    around every pit surface (``track.surface.pit_bbox``; outside it ``pit_surface`` is -1); the trust
    radius (m) within which the nearest centreline segment is followed by local descent instead of
    the raster (the tightest corner radius, clamped to [kerb_edge + 2, grass_edge]: that close to a
    segment, no other part of a valid track is nearer); the band edges and the raster origin and
    cell; and the grid of the track's edge lines (``sensing.edge_lines``, from ``geo[G_EDGE_AT]``
    on). The hot helpers take these and single arrays, never the TrackArrays tuple."""
    header, start, entries = edge_line_grid(tr.cx, tr.cy, tr.cnx, tr.cny, tr.half_width, tr.kerb_edge)
    flat_entries = entries.ravel()
    grid_at = N_GEO
    geo = np.zeros(grid_at + header.shape[0] + start.shape[0] + flat_entries.shape[0], dtype=np.float64)
    geo[G_EDGE_AT] = grid_at
    geo[grid_at:grid_at + header.shape[0]] = header
    at = grid_at + header.shape[0]
    geo[at:at + start.shape[0]] = start
    at += start.shape[0]
    geo[at:at + flat_entries.shape[0]] = flat_entries
    geo[G_PX0], geo[G_PY0], geo[G_PX1], geo[G_PY1] = pit_bbox(tr.pit_geom)
    kmax = np.abs(tr.ccurv).max()
    trust = 1.0 / kmax if kmax > 0.0 else FAR
    geo[G_TRUST] = min(max(trust, tr.kerb_edge + 2.0), tr.grass_edge)
    geo[G_HW] = tr.half_width
    geo[G_KE] = tr.kerb_edge
    geo[G_GRAVEL] = tr.gravel_edge
    geo[G_GRASS] = tr.grass_edge
    geo[G_X0] = tr.grid_x0
    geo[G_Y0] = tr.grid_y0
    geo[G_CELL] = tr.grid_cell
    return geo


@kernel(inline='always')
def _seg_d2(cx, cy, i, x, y):
    """Squared distance (m^2) from (x, y) to centreline segment i (``locate``'s arithmetic)."""
    return seg_d2a(cx, cy, i, x, y)[0]


@kernel(inline='always')
def nearest_segment(cx, cy, gseg, geo, x, y, seg):
    """|offset| (m) of (x, y) and its nearest centreline segment -> (a, seg).

    Local descent over segment distances from ``seg`` (the previous sample's), trusted within the
    trust radius; otherwise (or for seg < 0) the raster's nearest segment +- the window ``locate``
    uses, so the answer equals ``locate(tr, x, y, -1)``. Off the raster or where the raster has no
    segment: a conservative |offset| (raster margin, or grass edge + 20 m minus a cell; the point is
    barrier) and seg -1.
    """
    n = cx.shape[0] - 1
    if seg >= 0:
        d = _seg_d2(cx, cy, seg, x, y)
        moves = 0
        for step in (1, -1):          # downhill forward; backward only if forward did not move
            while moves < _WALK_MAX:
                j = seg + step
                if j == n:
                    j = 0
                elif j < 0:
                    j = n - 1
                dj = _seg_d2(cx, cy, j, x, y)
                if dj < d:
                    seg = j
                    d = dj
                    moves += 1
                else:
                    break
            if moves > 0:
                break
        a = math.sqrt(d)
        if a <= geo[G_TRUST] and moves < _WALK_MAX:
            return a, seg
    ny, nx = gseg.shape
    cell = geo[G_CELL]
    gx = int(math.floor((x - geo[G_X0]) / cell))
    gy = int(math.floor((y - geo[G_Y0]) / cell))
    if gx < 0 or gy < 0 or gx >= nx or gy >= ny:
        return geo[G_GRASS] + 1.0, -1
    g = gseg[gy, gx]
    if g < 0:
        return geo[G_GRASS] + 20.0 - 1.5 * cell, -1
    best = np.inf
    bi = g
    for k in range(g - GRID_WINDOW, g + GRID_WINDOW + 1):
        i = k
        if i < 0:
            i += n
        elif i >= n:
            i -= n
        d = _seg_d2(cx, cy, i, x, y)
        if d < best:
            best = d
            bi = i
    return math.sqrt(best), bi




@kernel(inline='always')
def _band(geo, a):
    """Main-track band of |offset| a (m): ``track.geometry.band_of`` with the edges kept in ``geo``."""
    return band_of(a, geo[G_HW], geo[G_KE], geo[G_GRAVEL], geo[G_GRASS])


@kernel(inline='always')
def surface_code(pv, geo, x, y, a, seg, want_pit):
    """Surface code at (x, y) of |offset| a: the band, or the pit surface over it where it overrides
    (``track.surface.pit_override``) when ``want_pit``
    (callers whose open channels treat pit surfaces like the band underneath skip the pit test).
    pv: PitView."""
    if seg < 0:
        return SURF_BARRIER
    code = _band(geo, a)
    if want_pit and geo[G_PX0] <= x <= geo[G_PX1] and geo[G_PY0] <= y <= geo[G_PY1]:
        p = pit_override(pv, x, y, a, geo[G_KE])
        if p >= 0:
            code = p
    return code


@kernel
def classify(tr, geo, x, y, seg):
    """Exact surface at (x, y) m, as ``surface_at(tr, x, y, -1)`` -> (code, |offset| m, seg).
    geo: ``sensor_geometry(tr)``; seg: a nearby segment to descend from, or -1."""
    return classify_arrays(tr.cx, tr.cy, tr.grid_seg, pit_view(tr), geo, x, y, seg)


@kernel
def classify_arrays(cx, cy, gseg, pv, geo, x, y, seg):
    a, seg = nearest_segment(cx, cy, gseg, geo, x, y, seg)
    return surface_code(pv, geo, x, y, a, seg, True), a, seg












@kernel
def pit_view(tr):
    """The PitView of a track (its pit arrays, no copy)."""
    return PitView(tr.pit_geom)





