"""Top-down ``rgb_array`` rendering of one world with numpy only (no display, no drawing library).

The background is the track's raster of surface codes (``TrackArrays.grid_surf``, one code per
``grid_cell`` metres) resampled to the output size: grass, gravel, kerb, asphalt, barrier and the pit
surfaces each get a colour. Cars are oriented rectangles in colours no surface has: each controlled
driver its own (``driver_colours``: saturated hues, by controlled index), the built-in drivers by
interaction profile (normal white, phantom-race pale amber, batch-training pale blue), destroyed cars
grey. A car is drawn at least ``MIN_CAR_PIXELS`` long so it stays visible on a small image (its true size
is 4.65 x 1.24 m).
With ``rays=True`` each controlled car's rays are drawn to their road-edge distance.

Image rows grow with world y and columns with world x (the simulator's y axis points "down" on screen,
so a right turn looks like a right turn).
"""

from __future__ import annotations

import hashlib

import numpy as np

from ...sim.core import layout as L

# RGB per surface code (layout.SURF_*): track, kerb, gravel, grass, barrier, pit entry, lane, exit, box
SURFACE_COLOURS = np.array([
    (92, 92, 96),     # track asphalt
    (200, 40, 40),    # kerb
    (196, 176, 120),  # gravel
    (60, 130, 60),    # grass
    (30, 30, 30),     # barrier / outside
    (120, 120, 140),  # pit entry
    (140, 140, 160),  # pit lane
    (120, 120, 140),  # pit exit
    (170, 170, 190),  # pit box
], np.uint8)
# Built-in drivers by profile (pale, so the controlled drivers' saturated colours stand out)
PROFILE_COLOURS = {"normal": (245, 245, 245), "phantom-race": (250, 205, 130), "batch-training": (165, 200, 255)}
DESTROYED_COLOUR = (150, 150, 150)
# The controlled drivers' colours, in controlled order; more drivers get further hues (driver_colours)
CONTROLLED_COLOURS = np.array([(0, 230, 255), (255, 0, 220), (255, 230, 0), (255, 110, 0), (120, 255, 0),
                               (150, 90, 255), (0, 255, 150), (255, 120, 170)], np.uint8)
RAY_COLOUR = (250, 250, 120)
MIN_CAR_PIXELS = 8.0

# Backgrounds by (digest of the track's surface raster, size): a key of the content, which no other
# track can share, unlike an id() that a new object may reuse once the old one is gone.
_BACKGROUNDS: dict = {}


def track_background(track, size: int):
    """The track's surfaces as an RGB image about ``size`` px on its longer side: (uint8[h, w, 3]
    read-only, pixels per metre). Cached by the raster's content, so every frame of a track reuses it."""
    key = (hashlib.blake2b(track.grid_surf.tobytes(), digest_size=16).digest(), track.grid_surf.shape,
           float(track.grid_cell), size)
    hit = _BACKGROUNDS.get(key)
    if hit is not None:
        return hit
    ny, nx = track.grid_surf.shape
    scale = size / max(nx, ny)                                  # pixels per raster cell
    h, w = max(1, int(round(ny * scale))), max(1, int(round(nx * scale)))
    rows = np.minimum((np.arange(h) / scale).astype(np.int64), ny - 1)
    cols = np.minimum((np.arange(w) / scale).astype(np.int64), nx - 1)
    codes = track.grid_surf[rows[:, None], cols[None, :]].astype(np.int64)
    codes = np.clip(codes, 0, len(SURFACE_COLOURS) - 1)
    bg = SURFACE_COLOURS[codes]
    bg.flags.writeable = False                                  # shared: callers draw on a copy
    px_per_m = scale / track.grid_cell
    if len(_BACKGROUNDS) > 16:
        _BACKGROUNDS.clear()
    _BACKGROUNDS[key] = (bg, px_per_m)
    return bg, px_per_m


def driver_colours(k: int) -> np.ndarray:
    """uint8[k, 3]: one colour per controlled driver, all distinct and none a surface's or a built-in
    car's: ``CONTROLLED_COLOURS`` first, then saturated hues stepped by the golden angle (reds, the kerbs'
    hue, skipped)."""
    out = [tuple(c) for c in CONTROLLED_COLOURS[:k]]
    taken = set(out) | {tuple(c) for c in SURFACE_COLOURS} | set(PROFILE_COLOURS.values()) | {DESTROYED_COLOUR}
    i = 0
    while len(out) < k:
        hue, i = (i * 0.618033988749895) % 1.0, i + 1
        if min(hue, 1.0 - hue) < 0.07:
            continue
        rgb = np.clip(np.abs((hue * 6.0 + np.array([0.0, 4.0, 2.0])) % 6.0 - 3.0) - 1.0, 0.0, 1.0)
        colour = tuple(int(round(55 + 200 * c)) for c in rgb)         # value 1, saturation ~0.8
        if colour not in taken:
            out.append(colour)
            taken.add(colour)
    return np.array(out, np.uint8).reshape(k, 3)


def _profile(flags: int) -> str:
    if flags & L.FLAG_COLLIDES:
        return "normal"
    if flags & (L.FLAG_RAY_VISIBLE | L.FLAG_RADAR_VISIBLE | L.FLAG_CLASSIFIED):
        return "phantom-race"
    return "batch-training"


def _draw_box(img, cx, cy, heading, length, width, colour):
    """Fill the oriented rectangle centred at pixel (cx, cy) (x = column, y = row)."""
    h, w = img.shape[:2]
    r = 0.5 * np.hypot(length, width) + 1
    c0, c1 = max(0, int(cx - r)), min(w, int(cx + r) + 1)
    r0, r1 = max(0, int(cy - r)), min(h, int(cy + r) + 1)
    if c0 >= c1 or r0 >= r1:
        return
    ys, xs = np.mgrid[r0:r1, c0:c1]
    dx, dy = xs + 0.5 - cx, ys + 0.5 - cy
    ch, sh = np.cos(heading), np.sin(heading)
    along = dx * ch + dy * sh
    across = -dx * sh + dy * ch
    inside = (np.abs(along) <= length / 2) & (np.abs(across) <= width / 2)
    img[r0:r1, c0:c1][inside] = colour


def _draw_line(img, x0, y0, x1, y1, colour):
    n = int(max(abs(x1 - x0), abs(y1 - y0))) + 1
    t = np.linspace(0.0, 1.0, n)
    xs = np.round(x0 + (x1 - x0) * t).astype(np.int64)
    ys = np.round(y0 + (y1 - y0) * t).astype(np.int64)
    ok = (xs >= 0) & (xs < img.shape[1]) & (ys >= 0) & (ys < img.shape[0])
    img[ys[ok], xs[ok]] = colour


def render_world(batch, w: int = 0, *, size: int = 640, rays: bool = False) -> np.ndarray:
    """uint8[H, W, 3] top-down image of world ``w`` of a reset BatchEnv; the longer side is ``size`` px."""
    track, st = batch.track, batch.state
    bg, ppm = track_background(track, int(size))
    img = bg.copy()
    x0, y0 = track.grid_x0, track.grid_y0
    cf, ci, flags = st.cars_f[w], st.cars_i[w], st.car_flags[w]
    enlarge = max(1.0, MIN_CAR_PIXELS / (L.CAR_LENGTH * ppm))
    length, width = L.CAR_LENGTH * ppm * enlarge, max(2.0, L.CAR_WIDTH * ppm * enlarge)
    controlled = {int(slot): colour for slot, colour in zip(batch.slots, driver_colours(len(batch.slots)))}
    if rays:
        for k, slot in enumerate(batch.slots):
            slot = int(slot)
            cx, cy = (cf[slot, L.F_X] - x0) * ppm, (cf[slot, L.F_Y] - y0) * ppm
            for r in range(int(batch.sensors.ray_count[slot])):
                ang = cf[slot, L.F_HEADING] + batch.sensors.ray_angle[slot, r]
                d = float(batch.sensors.ray_dist[w, slot, r, 0]) * ppm
                _draw_line(img, cx, cy, cx + d * np.cos(ang), cy + d * np.sin(ang), RAY_COLOUR)
    for slot in range(cf.shape[0]):
        if not ci[slot, L.I_ACTIVE]:
            continue
        colour = controlled.get(slot)
        if colour is None:
            colour = PROFILE_COLOURS[_profile(int(flags[slot]))]
        if ci[slot, L.I_DESTROYED]:
            colour = DESTROYED_COLOUR
        cx, cy = (cf[slot, L.F_X] - x0) * ppm, (cf[slot, L.F_Y] - y0) * ppm
        _draw_box(img, cx, cy, cf[slot, L.F_HEADING], length, width, np.asarray(colour, np.uint8))
    return img
