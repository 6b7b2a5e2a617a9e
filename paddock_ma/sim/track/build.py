"""Building tracks: closed spline -> uniform centreline -> start straight -> pit lane -> query index.

Pipeline (``build_track``): a periodic centripetal Catmull-Rom spline through the control points (or
a given dense centreline) is sampled densely (~0.4 m); the start straight is forced by blending the
samples toward the straight line through the finish line (control point 0) along its heading, fully
within ``straight`` m before/after the line and with a smoothstep taper beyond; the result is resampled
to uniform spacing (~2 m) and heading, right normal and signed curvature come from the samples'
real geometry; then ``pit_lane.build_pit`` places the pit and ``index.build_index`` the raster.

``validate_centreline`` checks a built centreline: radius of curvature >= MIN_RADIUS everywhere, and
parts of the lap more than ``2 pi grass_edge`` apart along the track stay at least ``2 grass_edge``
apart (runoff areas do not overlap, so the centreline cannot cross itself). PaddockJS's tracks, which
passed PaddockJS's own checks (its training profiles' parts come as close as ~20 m), are held only
to ``query_separation``: what the track queries assume of a valid track.
"""

import math

import numpy as np

from .pit_lane import build_pit
from .geometry import TrackArrays
from .index import build_index

HALF_WIDTH = 7.5
KERB_WIDTH = 1.5
GRAVEL_WIDTH = 12.0
GRASS_WIDTH = 20.0
MIN_RADIUS = 20.0          # m, tightest allowed centreline radius
DENSE_STEP = 0.4           # m, spline sampling before the uniform resample
DEFAULT_SPACING = 2.0      # m between centreline samples
STRAIGHT_TAPER = 300.0     # m of smoothstep blend beyond the fully straight part


class TrackGeometryError(ValueError):
    """A centreline that fails validation (too tight, or parts of the lap too close together)."""


def catmull_rom_closed(points: np.ndarray, step: float = DENSE_STEP, alpha: float = 0.5) -> np.ndarray:
    """Dense samples (float64[K', 2], m) of the closed centripetal Catmull-Rom spline through
    ``points`` (float64[K, 2], m), starting at points[0], the closing point not repeated."""
    p = np.asarray(points, dtype=np.float64)
    k = len(p)
    out = []
    for j in range(k):
        p0, p1, p2, p3 = p[(j - 1) % k], p[j], p[(j + 1) % k], p[(j + 2) % k]
        t0 = 0.0
        t1 = t0 + max(np.linalg.norm(p1 - p0), 1e-9) ** alpha
        t2 = t1 + max(np.linalg.norm(p2 - p1), 1e-9) ** alpha
        t3 = t2 + max(np.linalg.norm(p3 - p2), 1e-9) ** alpha
        m = max(4, int(math.ceil(np.linalg.norm(p2 - p1) / step * 1.3)))
        t = (t1 + (t2 - t1) * np.arange(m) / m)[:, None]
        a1 = (t1 - t) / (t1 - t0) * p0 + (t - t0) / (t1 - t0) * p1
        a2 = (t2 - t) / (t2 - t1) * p1 + (t - t1) / (t2 - t1) * p2
        a3 = (t3 - t) / (t3 - t2) * p2 + (t - t2) / (t3 - t2) * p3
        b1 = (t2 - t) / (t2 - t0) * a1 + (t - t0) / (t2 - t0) * a2
        b2 = (t3 - t) / (t3 - t1) * a2 + (t - t1) / (t3 - t1) * a3
        out.append((t2 - t) / (t2 - t1) * b1 + (t - t1) / (t2 - t1) * b2)
    return np.concatenate(out, axis=0)


def _arc(poly: np.ndarray) -> np.ndarray:
    """Cumulative distance (m) along the closed polyline, length K+1 (last = lap length)."""
    closed = np.vstack([poly, poly[:1]])
    return np.concatenate([[0.0], np.cumsum(np.hypot(*np.diff(closed, axis=0).T))])


def straighten_start(poly: np.ndarray, before: float, after: float, taper: float = STRAIGHT_TAPER) -> np.ndarray:
    """Blend a dense closed polyline (float64[K, 2]) toward the straight line through poly[0] along
    its heading: fully within ``before`` m before and ``after`` m after, smoothstep over ``taper``."""
    if before <= 0.0 and after <= 0.0:
        return poly
    s = _arc(poly)
    L = s[-1]
    s = s[:-1]
    d = np.where(s <= 0.5 * L, s, s - L)          # signed distance from the line along the lap
    tang = poly[1] - poly[-1]
    direction = tang / np.linalg.norm(tang)
    lim = np.where(d >= 0.0, after, before)
    x = np.clip((np.abs(d) - lim) / max(taper, 1e-9), 0.0, 1.0)
    w = 1.0 - x * x * (3.0 - 2.0 * x)              # 1 inside, smoothstep down to 0
    target = poly[0][None, :] + d[:, None] * direction[None, :]
    return poly + w[:, None] * (target - poly)


def resample(poly: np.ndarray, spacing: float = DEFAULT_SPACING):
    """Uniform samples of a dense closed polyline: (cx, cy, cs) float64[N+1] with sample N = sample 0."""
    s = _arc(poly)
    L = s[-1]
    n = max(16, int(round(L / spacing)))
    closed = np.vstack([poly, poly[:1]])
    si = L * np.arange(n) / n
    cx = np.interp(si, s, closed[:, 0])
    cy = np.interp(si, s, closed[:, 1])
    cx = np.append(cx, cx[0])
    cy = np.append(cy, cy[0])
    cs = np.concatenate([[0.0], np.cumsum(np.hypot(np.diff(cx), np.diff(cy)))])
    return cx, cy, cs


def sample_geometry(cx, cy, cs):
    """Heading (central difference), right normal and signed curvature (dh/ds, + = right) per sample.

    All float64[N+1], the last entry repeating the first."""
    x, y = cx[:-1], cy[:-1]
    h = np.arctan2(np.roll(y, -1) - np.roll(y, 1), np.roll(x, -1) - np.roll(x, 1))
    ds = np.diff(cs)
    span = np.roll(ds, 1) + ds                      # s[i+1] - s[i-1]
    dh = np.remainder(np.roll(h, -1) - np.roll(h, 1) + np.pi, 2.0 * np.pi) - np.pi
    k = dh / span                                   # heading change over that span
    close = lambda a: np.append(a, a[0])
    return close(h), close(-np.sin(h)), close(np.cos(h)), close(k)


def query_separation(ccurv, kerb_edge, gravel_edge, grass_edge) -> float:
    """The least distance (m) between non-adjacent parts of a centreline at which the track queries
    stay exact: ``locate`` trusts a walk that ends within gravel_edge / 2 of the centreline, the ray
    march a descent within its trust radius (the tightest corner radius clamped to [kerb_edge + 2,
    grass_edge], ``sensing.geometry.sensor_geometry``); no other part may be nearer there, so parts
    are at least twice the larger of the two apart."""
    kmax = float(np.max(np.abs(ccurv)))
    trust = min(max(1.0 / kmax if kmax > 0.0 else math.inf, kerb_edge + 2.0), grass_edge)
    return 2.0 * max(trust, 0.5 * gravel_edge)


def validate_centreline(cx, cy, cs, ccurv, grass_edge, min_radius=MIN_RADIUS, min_separation=None):
    """Raise TrackGeometryError when the centreline is too tight (radius below ``min_radius`` m; None
    skips that check) or comes too close to itself: parts more than ``2 pi grass_edge`` apart along
    the lap nearer than ``min_separation`` m (None: ``2 grass_edge``, runoff areas apart)."""
    kmax = float(np.max(np.abs(ccurv)))
    if min_radius is not None and kmax > 1.0 / min_radius:
        i = int(np.argmax(np.abs(ccurv)))
        raise TrackGeometryError(
            f"corner radius {1.0 / kmax:.1f} m at s={cs[i]:.0f} m is below the minimum {min_radius:.0f} m")
    L = cs[-1]
    step = max(1, int(round(8.0 / (L / (len(cs) - 1)))))
    px, py, ss = cx[:-1:step], cy[:-1:step], cs[:-1:step]
    d = np.hypot(px[:, None] - px[None, :], py[:, None] - py[None, :])
    along = np.abs(ss[:, None] - ss[None, :])
    along = np.minimum(along, L - along)
    mask = along > 2.0 * math.pi * grass_edge
    need = 2.0 * grass_edge if min_separation is None else float(min_separation)
    why = "self-intersecting or overlapping runoff" if min_separation is None else \
        "closer than the track queries allow"
    if np.any(mask):
        dm = np.where(mask, d, np.inf)
        i, j = np.unravel_index(int(np.argmin(dm)), dm.shape)
        if dm[i, j] < need:
            raise TrackGeometryError(
                f"the centreline at s={ss[i]:.0f} m comes within {dm[i, j]:.1f} m of s={ss[j]:.0f} m, needs "
                f">= {need:.0f} m ({why})")


def build_track(points=None, *, centreline=None, spacing=DEFAULT_SPACING, straight=(300.0, 300.0),
                half_width=HALF_WIDTH, kerb_width=KERB_WIDTH, gravel_width=GRAVEL_WIDTH,
                grass_width=GRASS_WIDTH, validate=True, cell=1.0) -> TrackArrays:
    """Build a TrackArrays from control points or a dense centreline (m, direction of travel).

    points: float64[K >= 8, 2] control points of a closed spline, points[0] on the finish line;
    centreline: float64[K >= 16, 2] dense closed polyline (used as is) instead of points;
    spacing: m between centreline samples; straight: (before, after) m of forced straight at the line.
    Raises TrackGeometryError when ``validate`` and the centreline fails ``validate_centreline``.
    """
    if centreline is not None:
        dense = np.asarray(centreline, dtype=np.float64)
        s = _arc(dense)
        dense = np.column_stack([np.interp(np.arange(0.0, s[-1], DENSE_STEP), s, np.append(dense[:, 0], dense[0, 0])),
                                 np.interp(np.arange(0.0, s[-1], DENSE_STEP), s, np.append(dense[:, 1], dense[0, 1]))])
    else:
        dense = catmull_rom_closed(np.asarray(points, dtype=np.float64))
    dense = straighten_start(dense, float(straight[0]), float(straight[1]))
    return finish_build(dense, spacing, half_width, kerb_width, gravel_width, grass_width, validate, cell)


def finish_build(dense, spacing, half_width, kerb_width, gravel_width, grass_width, validate, cell):
    cx, cy, cs = resample(dense, spacing)
    return build_from_samples(cx, cy, cs, half_width, kerb_width, gravel_width, grass_width,
                              validate=validate, cell=cell)


def build_from_samples(cx, cy, cs, half_width=HALF_WIDTH, kerb_width=KERB_WIDTH, gravel_width=GRAVEL_WIDTH,
                       grass_width=GRASS_WIDTH, *, validate=True, min_radius=MIN_RADIUS, pit=None,
                       runoff_apart=True, cell=1.0) -> TrackArrays:
    """A TrackArrays on the centreline samples as given (no resampling).

    cx, cy, cs: float64[N+1] sample positions (m) and cumulative distances (m), sample N repeating
    sample 0 with cs[N] the lap length; the spacing may vary (PaddockJS's samples do).
    validate: run ``validate_centreline`` with ``min_radius`` (None: skip the radius check) and, when
    ``runoff_apart``, runoff areas apart, else parts only ``query_separation`` apart.
    pit: the pit fields of TrackArrays (``build_pit``'s dict) when the pit lane is given
    (``pit_lane.no_pit_fields()`` for a track without one), else they are placed by ``build_pit``.
    """
    cx, cy, cs = (np.ascontiguousarray(a, dtype=np.float64) for a in (cx, cy, cs))
    ch, cnx, cny, ccurv = sample_geometry(cx, cy, cs)
    kerb_edge = half_width + kerb_width
    gravel_edge = kerb_edge + gravel_width
    grass_edge = gravel_edge + grass_width
    if validate:
        separation = None if runoff_apart else query_separation(ccurv, kerb_edge, gravel_edge, grass_edge)
        validate_centreline(cx, cy, cs, ccurv, grass_edge, min_radius=min_radius, min_separation=separation)
    L = float(cs[-1])
    fields = dict(cx=cx, cy=cy, cs=cs, ch=ch, cnx=cnx, cny=cny, ccurv=ccurv, length=L,
                  half_width=float(half_width), kerb_edge=float(kerb_edge), gravel_edge=float(gravel_edge),
                  grass_edge=float(grass_edge), sector_s=np.array([0.0, L / 3.0, 2.0 * L / 3.0]))
    if pit is None:
        try:
            pit = build_pit(cx, cy, cs, ch, ccurv, kerb_edge)
        except ValueError as exc:
            raise TrackGeometryError(str(exc)) from None
    fields.update(pit)
    return build_index(fields, cell=cell)


def oval_points(straight_len=750.0, radius=150.0, x0=800.0, y0=400.0) -> np.ndarray:
    """Control points (float64[K, 2], m) of a stadium oval driven clockwise on screen (turning right),
    starting at the middle of the top straight heading +x."""
    pts = []
    half = straight_len / 2.0
    cxr, cxl = x0 + half, x0 - half
    for u in np.linspace(0.0, half, 4, endpoint=False):            # top straight, to the right
        pts.append((x0 + u, y0 - radius))
    for a in np.linspace(-0.5 * np.pi, 0.5 * np.pi, 9):             # right semicircle, downward
        pts.append((cxr + radius * math.cos(a), y0 + radius * math.sin(a)))
    for u in np.linspace(half, -half, 8, endpoint=False)[1:]:       # bottom straight, to the left
        pts.append((x0 + u, y0 + radius))
    for a in np.linspace(0.5 * np.pi, 1.5 * np.pi, 9):              # left semicircle, upward
        pts.append((cxl + radius * math.cos(a), y0 + radius * math.sin(a)))
    for u in np.linspace(-half, 0.0, 4, endpoint=False)[1:]:
        pts.append((x0 + u, y0 - radius))
    return np.array(pts)


def procedural_centreline(seed: int):
    """(dense polyline float64[K, 2], attempt) of the first valid procedural candidate for ``seed``.

    Candidates: 10-14 points at jittered angles and random radii around a centre, stretched and
    rotated at random, through a centripetal Catmull-Rom spline; the finish line goes where the lap is
    straightest over +-500 m, then the start is straightened over 500 m each side. The first candidate
    (attempt 0, 1, ...) that passes ``validate_centreline`` and the pit placement wins.
    """
    grass_edge = HALF_WIDTH + KERB_WIDTH + GRAVEL_WIDTH + GRASS_WIDTH
    for attempt in range(200):
        rng = np.random.default_rng([int(seed) & 0xFFFFFFFFFFFF, attempt])
        k = int(rng.integers(10, 15))
        ang = (np.arange(k) + rng.uniform(-0.3, 0.3, k)) * (2.0 * np.pi / k)
        r = rng.uniform(430.0, 650.0) * rng.uniform(0.55, 1.0, k)
        stretch = rng.uniform(1.0, 1.5)
        rot = rng.uniform(0.0, 2.0 * np.pi)
        x, y = stretch * r * np.cos(ang), r * np.sin(ang)
        pts = np.column_stack([x * math.cos(rot) - y * math.sin(rot), x * math.sin(rot) + y * math.cos(rot)])
        dense = catmull_rom_closed(pts, step=1.0)
        s = _arc(dense)
        L = s[-1]
        if not 3000.0 <= L <= 7000.0:
            continue
        # finish line: least accumulated turning over +-500 m (heading change of the chord ends)
        cx, cy, cs = resample(dense, 4.0)
        h, _, _, kk = sample_geometry(cx, cy, cs)
        n = len(cx) - 1
        w = int(500.0 / (L / n))
        turn = np.abs(kk[:-1]) * (L / n)
        csum = np.concatenate([[0.0], np.cumsum(np.concatenate([turn, turn, turn]))])
        idx = np.arange(n) + n
        score = csum[idx + w] - csum[idx - w]
        start = int(np.argmin(score))
        poly = np.column_stack([cx[:-1], cy[:-1]])
        poly = np.roll(poly, -start, axis=0)
        poly = catmull_rom_closed(poly[::6])  # re-densify through the rotated samples (24 m apart)
        poly = straighten_start(poly, 500.0, 500.0)
        poly -= poly.min(axis=0) - 300.0     # keep coordinates positive, 300 m clear of the origin
        try:
            tcx, tcy, tcs = resample(poly, DEFAULT_SPACING)
            th, _, _, tk = sample_geometry(tcx, tcy, tcs)
            validate_centreline(tcx, tcy, tcs, tk, grass_edge)
            build_pit(tcx, tcy, tcs, th, tk, HALF_WIDTH + KERB_WIDTH)
        except ValueError:
            continue
        return poly, attempt
    raise TrackGeometryError(f"no valid procedural track for seed {seed} after 200 attempts")
