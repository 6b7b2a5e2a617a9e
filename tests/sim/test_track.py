"""Tracks: indexed queries against a brute-force oracle, file loading, procedural generation, pit lane."""

import json
import math

import numpy as np
import pytest
from numba import njit

from paddock_ma.sim.core import layout as L
from paddock_ma.sim.track.geometry import edge_distances, locate, point_at
from paddock_ma.sim.track.load import TrackFormatError, list_tracks, load_track, oval_track, procedural_track
from paddock_ma.sim.track.build import validate_centreline
from paddock_ma.sim.track.point_surface import edge_distance_at, surface_at, surface_fast
from paddock_ma.sim.track.surface import PIT_CONN_STEPS, PIT_WORK_GAP, PIT_WORK_WIDTH, pit_point_at

SHIPPED = ["grand-prix", "oval", "technical"]
N_POINTS = 100_000


# ------------------------------------------------------------------------------------------------
# Brute-force oracle (plain numpy): nearest point over ALL centreline segments, exact projection
# ------------------------------------------------------------------------------------------------
def oracle_project(tr, x, y, chunk=400):
    """(dist, seg, s, signed offset) of the nearest centreline point, for float64[P] points."""
    ax, ay = tr.cx[:-1], tr.cy[:-1]
    dx, dy = np.diff(tr.cx), np.diff(tr.cy)
    ll = dx * dx + dy * dy
    n = len(x)
    dist = np.empty(n); seg = np.empty(n, np.int64); s = np.empty(n); off = np.empty(n)
    for a in range(0, n, chunk):
        qx = x[a:a + chunk, None] - ax[None, :]
        qy = y[a:a + chunk, None] - ay[None, :]
        t = np.clip((qx * dx + qy * dy) / ll, 0.0, 1.0)
        d2 = (qx - t * dx) ** 2 + (qy - t * dy) ** 2
        i = np.argmin(d2, axis=1)
        r = np.arange(len(i))
        ti = t[r, i]
        dist[a:a + chunk] = np.sqrt(d2[r, i])
        seg[a:a + chunk] = i
        s[a:a + chunk] = (tr.cs[i] + ti * (tr.cs[i + 1] - tr.cs[i])) % tr.length
        cross = dx[i] * qy[r, i] - dy[i] * qx[r, i]
        off[a:a + chunk] = np.where(cross >= 0.0, 1.0, -1.0) * dist[a:a + chunk]
    return dist, seg, s, off


def oracle_pit(tr, x, y):
    """Pit surface code per point (-1 none), from PaddockJS's pit complex written out independently
    (``nearestPitLaneState``): the rectangles (service and queue areas, two garages a team) are the pit
    box; else the entry road, fast lane, working lane and exit road, each segment a strip of half the
    road's width about its line, among the segments PaddockJS's 32 m road grid offers; the nearest road
    wins. Nothing outside the complex's bounds."""
    out = np.full(len(x), -1)
    m = len(tr.px)
    if m == 0:
        return out
    p = np.stack([x, y], axis=1)
    i0, i1 = PIT_CONN_STEPS, m - 1 - PIT_CONN_STEPS
    start = np.array([tr.px[i0], tr.py[i0]])
    end = np.array([tr.px[i1], tr.py[i1]])
    lane_len = np.linalg.norm(end - start)
    f = (end - start) / lane_len
    n = np.array([-f[1], f[0]]) * tr.pit_side
    hw = tr.pit_width / 2
    work = hw + 1.5 + 4.0
    routes = [(L.SURF_PIT_ENTRY, [np.array([tr.px[k], tr.py[k]]) for k in range(i0 + 1)], hw),
              (L.SURF_PIT_LANE, [start, end], hw),
              (L.SURF_PIT_LANE, [start + n * work, start + f * lane_len + n * work], 4.0),
              (L.SURF_PIT_EXIT, [np.array([tr.px[k], tr.py[k]]) for k in range(i1, m)], hw)]
    rects = []
    for bx, by, bs in zip(tr.box_x, tr.box_y, tr.box_path_s):
        u = bs - tr.pit_lane_start
        rects.append((np.array([bx, by]), 11.0, 5.0))
        rects.append((start + f * max(6.0, u - 12.0) + n * work, 11.0 * 0.72, 5.0))
        for k in (-1, 1):
            rects.append((start + f * (u + 6.5 * k) + n * (work + 4.0 + 1.5 + 2.25), 9.0, 4.5))
    pts = [q for _, qs, _ in routes for q in qs]
    for c, ln, dp in rects:
        pts += [c + f * a * ln / 2 + n * b * dp / 2 for a in (-1, 1) for b in (-1, 1)]
    pts = np.array(pts)
    lo, hi = pts.min(axis=0) - 9.0, pts.max(axis=0) + 9.0
    inb = np.all((p >= lo) & (p <= hi), axis=1)
    box = np.zeros(len(x), bool)
    for c, ln, dp in rects:
        q = p - c
        box |= (np.abs(q @ f) <= ln / 2) & (np.abs(q @ n) <= dp / 2)
    # the road grid: cells of 32 m from the bounds less a cell; a segment covers the cells of its box
    # widened by a cell; a point takes the segments of its cell, else of its 3 x 3 cells, else all
    g0 = lo - 32.0
    shape = np.maximum(1, np.ceil((hi + 32.0 - g0) / 32.0)).astype(int)
    cell = np.floor((p - g0) / 32.0)
    segs = [(ri, a, b, half) for ri, (_, qs, half) in enumerate(routes) for a, b in zip(qs[:-1], qs[1:])]
    cand = {}
    for r in (0, 1):
        cand[r] = np.zeros((len(x), len(segs)), bool)
        for k, (_, a, b, _) in enumerate(segs):
            c0 = np.clip(np.floor((np.minimum(a, b) - 32.0 - g0) / 32.0), 0, shape - 1)
            c1 = np.clip(np.floor((np.maximum(a, b) + 32.0 - g0) / 32.0), 0, shape - 1)
            cand[r][:, k] = np.all((c0 <= cell + r) & (c1 >= cell - r), axis=1)
    use = np.where(cand[0].any(axis=1)[:, None], cand[0],
                   np.where(cand[1].any(axis=1)[:, None], cand[1], True))
    lateral = np.full((len(x), 4), np.inf)
    for k, (ri, a, b, half) in enumerate(segs):
        e = (b - a) / np.linalg.norm(b - a)
        off = np.abs((p - a) @ np.array([-e[1], e[0]]))
        lateral[:, ri] = np.where(use[:, k], np.minimum(lateral[:, ri], off), lateral[:, ri])
    halves = np.array([hw, hw, 4.0, hw])
    lateral = np.where(lateral <= halves[None, :], lateral, np.inf)
    best = np.argmin(lateral, axis=1)
    road = np.isfinite(lateral.min(axis=1))
    codes = np.array([L.SURF_PIT_ENTRY, L.SURF_PIT_LANE, L.SURF_PIT_LANE, L.SURF_PIT_EXIT])
    out[inb & road] = codes[best[inb & road]]
    out[inb & box] = L.SURF_PIT_BOX
    return out


def oracle_surface(tr, x, y):
    dist, seg, s, off = oracle_project(tr, x, y)
    code = np.select([dist <= tr.half_width, dist <= tr.kerb_edge, dist <= tr.gravel_edge, dist <= tr.grass_edge],
                     [L.SURF_TRACK, L.SURF_KERB, L.SURF_GRAVEL, L.SURF_GRASS], L.SURF_BARRIER)
    pit = oracle_pit(tr, x, y)
    # PaddockJS's pit override: a pit box anywhere, another pit surface beyond the kerb
    use = (pit == L.SURF_PIT_BOX) | ((dist > tr.kerb_edge) & (pit >= 0))
    code[use] = pit[use]
    return code, dist, s, off


@njit(cache=True)
def _batch(tr, x, y, hints):
    n = x.shape[0]
    seg = np.empty(n, np.int64); s = np.empty(n); off = np.empty(n)
    code = np.empty(n, np.int64); fast = np.empty(n, np.int64); edge = np.empty(n)
    for i in range(n):
        sg, ss, o, h, k = locate(tr, x[i], y[i], hints[i])
        seg[i] = sg; s[i] = ss; off[i] = o
        c, o2, sg2 = surface_at(tr, x[i], y[i], hints[i])
        code[i] = c
        fast[i] = surface_fast(tr, x[i], y[i])
        edge[i] = edge_distance_at(tr, x[i], y[i])
    return seg, s, off, code, fast, edge


def _points(tr, n, rng):
    """60% around the centreline (offsets within +-50 m), 25% anywhere on the raster, 15% on the pit."""
    n1, n2 = int(0.6 * n), int(0.25 * n)
    n3 = n - n1 - n2
    i = rng.integers(0, len(tr.cx) - 1, n1)
    t = rng.random(n1); o = rng.uniform(-50, 50, n1)
    x1 = tr.cx[i] + t * (tr.cx[i + 1] - tr.cx[i]) + o * tr.cnx[i]
    y1 = tr.cy[i] + t * (tr.cy[i + 1] - tr.cy[i]) + o * tr.cny[i]
    ny, nx = tr.grid_seg.shape
    x2 = tr.grid_x0 + rng.random(n2) * nx * tr.grid_cell
    y2 = tr.grid_y0 + rng.random(n2) * ny * tr.grid_cell
    k = rng.integers(0, len(tr.px), n3)
    x3 = tr.px[k] + rng.uniform(-25, 25, n3)
    y3 = tr.py[k] + rng.uniform(-25, 25, n3)
    return np.concatenate([x1, x2, x3]), np.concatenate([y1, y2, y3])


@pytest.fixture(scope="module", params=SHIPPED)
def shipped(request):
    return request.param, load_track(request.param)


@pytest.mark.parametrize("hint_kind", ["none", "random"])
def test_index_matches_bruteforce_oracle(shipped, hint_kind):
    name, tr = shipped
    rng = np.random.default_rng(1234)
    x, y = _points(tr, N_POINTS, rng)
    n = len(tr.cx) - 1
    hints = np.full(len(x), -1, np.int64) if hint_kind == "none" else rng.integers(0, n, len(x))
    seg, s, off, code, fast, edge = _batch(tr, x, y, hints)
    ocode, odist, os_, ooff = oracle_surface(tr, x, y)
    # Distance to the centreline: the index answer is a true polyline distance, so it can only be
    # >= the oracle's. It is exact unless the point sits near the medial axis between two parts of
    # the track, where the raster cell's nearest segment (exact at the cell centre) may differ from
    # the point's: then the error is bounded by the cell diagonal (1.42 m for 1 m cells).
    gap = np.abs(off) - odist
    assert gap.min() > -1e-9
    assert gap.max() <= math.sqrt(2) * tr.grid_cell + 1e-9
    exact = gap <= 1e-7
    assert exact.mean() > 0.999, f"{name}: only {exact.mean():.5f} exact"
    # Where the distance is exact, the signed offset and distance along the lap agree (projection,
    # not nearest sample: tolerance 1e-6 m, far below the 2 m sample spacing)
    ds = np.abs(s - os_); ds = np.minimum(ds, tr.length - ds)
    assert np.all(np.abs(off - ooff)[exact] < 1e-6)
    assert np.all(ds[exact] < 1e-6)
    # Exact surface: identical wherever the distance is exact, except float ties on a boundary
    diff = (code != ocode) & exact
    assert diff.sum() == 0, (name, np.flatnonzero(diff)[:5])
    # Raster surface: exact at cell centres, so it can differ from the point's surface only within
    # one cell of a boundary; the conservative edge field must then read 0 there.
    bad = fast != ocode
    assert bad.mean() < 0.03
    # (but between two pit roads: where PaddockJS's nearest road switches from an access road's strip to
    # the fast lane's, a sliver of the other road can be thinner than a cell, invisible to the raster)
    roads = [L.SURF_PIT_ENTRY, L.SURF_PIT_LANE, L.SURF_PIT_EXIT]
    bad &= ~(np.isin(fast, roads) & np.isin(ocode, roads))
    assert np.all(edge[bad] <= 1e-6)
    # The edge field is a lower bound of the distance to the nearest main-band boundary (checked
    # where no pit surface is within reach, i.e. the oracle pit test says none at 20 m around)
    far_pit = oracle_pit(tr, x, y) < 0
    limits = np.array([tr.half_width, tr.kerb_edge, tr.gravel_edge, tr.grass_edge])
    true_edge = np.abs(odist[:, None] - limits[None, :]).min(axis=1)
    sel = far_pit & exact & (np.hypot(x[:, None] - tr.px[None, ::4], y[:, None] - tr.py[None, ::4]).min(axis=1) > 80)
    assert sel.sum() > 1000
    assert np.all(edge[sel] <= true_edge[sel] + 1e-6)
    print(f"{name}: L={tr.length:.1f} m, exact {exact.mean():.5f}, raster mismatches {bad.mean():.4f}")


def test_raster_is_exact_at_cell_centres(shipped):
    name, tr = shipped
    rng = np.random.default_rng(7)
    ny, nx = tr.grid_surf.shape
    gx = rng.integers(0, nx, 20_000); gy = rng.integers(0, ny, 20_000)
    x = tr.grid_x0 + (gx + 0.5) * tr.grid_cell; y = tr.grid_y0 + (gy + 0.5) * tr.grid_cell
    ocode, odist, _, _ = oracle_surface(tr, x, y)
    raster = tr.grid_surf[gy, gx]
    assert np.all(raster == ocode)
    seg = tr.grid_seg[gy, gx]
    ok = seg >= 0
    _, oseg, _, _ = oracle_project(tr, x[ok], y[ok])
    assert np.mean(seg[ok] == oseg) > 0.9999   # ties only (two equally near segments)
    assert np.all(odist[~ok] > tr.grass_edge)   # cells with no segment lie beyond the barrier line


@njit(cache=True)
def _follow(tr, n_steps, ds, offset):
    """Drive along the centreline at `offset` with the previous answer as hint; total seconds-free
    checksum and the worst |s error| so the loop cannot be optimised away."""
    hint = 0
    worst = 0.0
    acc = 0.0
    for k in range(n_steps):
        s = (k * ds) % tr.length
        x, y, h, c = point_at(tr, s)
        x -= math.sin(h) * offset
        y += math.cos(h) * offset
        seg, s2, off, h2, c2 = locate(tr, x, y, hint)
        hint = seg
        acc += off
        e = abs(s2 - s)
        e = min(e, tr.length - e)
        if e > worst:
            worst = e
    return worst, acc


def test_locate_with_good_hint_is_consistent():
    tr = load_track("grand-prix")
    # offset 3 m: point_at interpolates the heading, while the projection uses the segment's own
    # direction; they differ by up to half the heading change of a segment (2 m / 27 m radius / 2 =
    # 0.037 rad), which moves the projection by 3 m x 0.037 = 0.11 m at most
    worst, _ = _follow(tr, 100_000, 1.4, 3.0)
    assert worst < 0.15
    # its speed (ns per call) is a benchmark figure: ``paddock-ma bench`` (BENCHMARKS.md)


def test_point_at_and_edge_distances():
    tr = oval_track()
    x, y, h, k = point_at(tr, tr.length + 10.0)
    x2, y2, h2, k2 = point_at(tr, 10.0)
    assert (x, y) == pytest.approx((x2, y2))
    assert h == pytest.approx(tr.ch[0], abs=1e-9)        # the start straight heads along sample 0
    left, right = edge_distances(tr, 2.0)
    assert (left, right) == (9.5, 5.5)
    # the oval is 2 x 750 m straights + 2 semicircles of 150 m radius: 1500 + 300 pi = 2442.5 m; the
    # spline rounds the straight-to-curve joins, so allow 1%
    assert tr.length == pytest.approx(1500 + 300 * math.pi, rel=0.01)
    assert tr.sector_s == pytest.approx([0, tr.length / 3, 2 * tr.length / 3])


def test_shipped_tracks_lengths_and_validity():
    assert list_tracks() == SHIPPED
    lengths = {}
    for name in SHIPPED:
        tr = load_track(name)
        validate_centreline(tr.cx, tr.cy, tr.cs, tr.ccurv, tr.grass_edge)
        ds = np.diff(tr.cs)
        assert ds.max() - ds.min() < 0.05 and abs(ds.mean() - 2.0) < 0.05   # uniform ~2 m samples
        assert np.allclose(np.hypot(tr.cnx, tr.cny), 1.0)
        lengths[name] = tr.length
    print("lap lengths:", {k: round(v, 1) for k, v in lengths.items()})
    assert 2000 <= lengths["oval"] <= 3000
    assert 4000 <= lengths["grand-prix"] <= 6000
    assert 2500 <= lengths["technical"] <= 3500
    gp = load_track("grand-prix")
    radii = 1.0 / np.maximum(np.abs(gp.ccurv), 1e-9)
    assert radii.min() < 35.0                       # a hairpin
    assert np.any((radii > 120) & (radii < 400))    # fast sweepers
    tech = load_track("technical")
    # twisty: over 20% of the lap in corners tighter than 100 m (measured 27%, grand-prix 7%), and
    # more than twice the grand prix's heading change per km (measured 7.0 vs 3.1 rad/km)
    assert (np.abs(tech.ccurv) > 1 / 100).mean() > 0.2
    turn_per_km = lambda t: np.abs(t.ccurv[:-1] * np.diff(t.cs)).sum() / t.length * 1000
    assert turn_per_km(tech) > 2 * turn_per_km(gp)


def test_curvature_sign_and_value_on_oval():
    tr = oval_track()
    # mid-corner of the right-hand semicircle: radius 150 m, turning right (+)
    x, y, h, k = point_at(tr, 375 + 0.5 * 150 * math.pi)
    assert k == pytest.approx(1 / 150, rel=0.15)
    assert abs(point_at(tr, 100.0)[3]) < 1e-4


# ------------------------------------------------------------------------------------------------
# Files
# ------------------------------------------------------------------------------------------------
def _write(tmp_path, doc, name="bad.json"):
    p = tmp_path / name
    p.write_text(doc if isinstance(doc, str) else json.dumps(doc))
    return p


GOOD_POINTS = json.load(open(__file__.rsplit("/tests/", 1)[0] + "/envs/tracks/oval.json"))["points"]


@pytest.mark.parametrize("doc, field, words", [
    ({"points": GOOD_POINTS}, "name", "required"),
    ({"name": "x", "points": [[0, 0], [100, 0], [100, 100]]}, "points", "needs at least 8 [x, y] pairs, got 3"),
    ({"name": "x", "points": [[0, 0]] * 3 + [["a", 1]] + [[5, 5]] * 5}, "points[3]", "finite numbers"),
    ({"name": "x", "points": GOOD_POINTS, "spacing": "2"}, "spacing", "finite number"),
    ({"name": "x", "points": GOOD_POINTS, "colour": 1}, "colour", "unknown field"),
    ({"name": "x"}, "points", "exactly one of"),
    # a figure eight: the centreline crosses itself
    ({"name": "x", "points": [[600 + 500 * math.sin(a), 600 + 250 * math.sin(2 * a)]
                              for a in np.linspace(0, 2 * math.pi, 24, endpoint=False)]}, "points", "comes within"),
    ("{not json", "<document>", "invalid JSON"),
])
def test_malformed_files_are_rejected_naming_file_and_field(tmp_path, doc, field, words):
    p = _write(tmp_path, doc)
    with pytest.raises(TrackFormatError) as err:
        load_track(p)
    msg = str(err.value)
    assert str(p) in msg and f"field '{field}'" in msg and words in msg, msg
    assert isinstance(err.value, ValueError)


def test_unknown_track_name():
    with pytest.raises(TrackFormatError, match="no such track file"):
        load_track("no-such-track")


def test_file_with_centerline_and_widths(tmp_path):
    tr0 = oval_track()
    doc = {"name": "dense", "centerline": np.column_stack([tr0.cx[:-1], tr0.cy[:-1]]).tolist(),
           "straight": [0, 0], "half_width": 6.0}
    tr = load_track(_write(tmp_path, doc, "dense.json"))
    assert tr.length == pytest.approx(tr0.length, rel=1e-3)
    assert tr.half_width == 6.0 and tr.kerb_edge == 7.5 and tr.grass_edge == 39.5


# ------------------------------------------------------------------------------------------------
# Procedural tracks
# ------------------------------------------------------------------------------------------------
def test_procedural_is_deterministic_and_seed_dependent():
    build = procedural_track.__wrapped__          # bypass the cache
    a, b, c = build(5), build(5), build(6)
    for f in ("cx", "cy", "grid_seg", "grid_surf", "px", "box_x"):
        assert np.array_equal(getattr(a, f), getattr(b, f))
    assert a.length != c.length
    assert procedural_track(5) is procedural_track(5)   # cached
    assert load_track("procedural:5").length == a.length


def test_twenty_procedural_seeds_valid_and_fast():
    build = procedural_track.__wrapped__
    build(100)   # compile / warm
    lengths = []
    for seed in range(20):
        tr = build(seed * 7919 + 1)
        validate_centreline(tr.cx, tr.cy, tr.cs, tr.ccurv, tr.grass_edge)
        assert np.abs(tr.ccurv).max() <= 1 / 20 + 1e-12
        # start straight: heading within 0.01 rad of the line's over 400 m either side
        for s in np.linspace(-400, 400, 17):
            assert abs(math.remainder(point_at(tr, s)[2] - tr.ch[0], 2 * math.pi)) < 0.01
        lengths.append(round(tr.length))
    print("procedural lap lengths (m):", lengths)
    # the build time (spec: under 1 s per track) is a benchmark figure: ``paddock-ma bench``
    assert 3000 <= min(lengths) and max(lengths) <= 7000


# ------------------------------------------------------------------------------------------------
# Pit lane
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", SHIPPED + ["procedural:3"])
def test_pit_lane_geometry(name):
    tr = load_track(name)
    Lp = tr.length
    # entry before the line (in the lap's last stretch), exit after it
    assert 150 < Lp - tr.pit_entry_s < 600
    assert 50 < tr.pit_exit_s < 600
    # path starts and ends on the asphalt, at the stated track distances
    for k, s_expect in ((0, tr.pit_entry_s), (-1, tr.pit_exit_s)):
        seg, s, off, h, c = locate(tr, tr.px[k], tr.py[k], -1)
        assert abs(off) <= tr.half_width
        # the end point is the centreline point at s_expect moved 2 m along the interpolated normal;
        # where the track curves, the segment's normal differs slightly: 2 m x ~1e-3 rad
        assert abs(math.remainder(s - s_expect, Lp)) < 0.01
    assert tr.ps[0] == 0 and tr.ps[-1] == pytest.approx(tr.pit_length)
    assert np.all(np.diff(tr.ps) > 0) and np.diff(tr.ps).max() < 10.0
    assert 0 < tr.pit_lane_start < tr.pit_lane_end < tr.pit_length
    # fast lane: parallel to the start straight, clear of the track and kerb
    for ps in np.linspace(tr.pit_lane_start, tr.pit_lane_end, 25):
        x, y, h = pit_point_at(tr, ps)
        seg, s, off, th, c = locate(tr, x, y, -1)
        assert abs(math.remainder(h - tr.ch[0], 2 * math.pi)) < 1e-9
        assert abs(math.remainder(th - tr.ch[0], 2 * math.pi)) < 1e-3
        assert abs(off) - tr.pit_width / 2 > tr.kerb_edge
        assert np.sign(off) == tr.pit_side
        # (an access road's end segments lie along the lane's centre line: PaddockJS's strips of equal
        # offset there, the entry road's first, then the fast lane's, then the exit road's)
        assert surface_at(tr, x, y, seg)[0] in (L.SURF_PIT_ENTRY, L.SURF_PIT_LANE, L.SURF_PIT_EXIT)
    # the whole path is drivable: every metre is a pit surface, or track/kerb near its ends
    for ps in np.arange(0.0, tr.pit_length, 1.0):
        x, y, h = pit_point_at(tr, ps)
        code = surface_at(tr, x, y, -1)[0]
        assert code in (L.SURF_TRACK, L.SURF_KERB, L.SURF_PIT_ENTRY, L.SURF_PIT_LANE, L.SURF_PIT_EXIT), (ps, code)
    # boxes: 10, one per team, beside the fast lane at their path distance, on the working lane's centre
    # line, reachable across the working lane (every point between the lane and the box centre is a pit
    # surface, but PaddockJS's 1.5 m gap between the fast lane and the working lane)
    assert len(tr.box_x) == 10
    assert np.all(np.diff(tr.box_path_s) > 0)
    assert tr.pit_lane_start < tr.box_path_s[0] and tr.box_path_s[-1] < tr.pit_lane_end
    for bx, by, bs in zip(tr.box_x, tr.box_y, tr.box_path_s):
        x, y, h = pit_point_at(tr, bs)
        lateral = tr.pit_width / 2 + PIT_WORK_GAP + PIT_WORK_WIDTH / 2
        assert math.hypot(bx - x, by - y) == pytest.approx(lateral)
        assert surface_at(tr, bx, by, -1)[0] == L.SURF_PIT_BOX
        for f in np.linspace(0, 1, 12):
            if tr.pit_width / 2 < f * lateral < tr.pit_width / 2 + PIT_WORK_GAP:
                continue
            code = surface_at(tr, x + f * (bx - x), y + f * (by - y), -1)[0]
            assert code in (L.SURF_PIT_LANE, L.SURF_PIT_BOX)


@pytest.mark.parametrize("name", ["oval", "grand-prix"])
def test_pit_placement_probes_the_whole_complex(name):
    # Placing our pit lane checks the clearance of points of its outline: they must reach as far from
    # the fast lane as the complex ``pit_geometry`` lays out (the garages' outer edge), not stop short.
    from paddock_ma.sim.track import pit_lane as PL
    from paddock_ma.sim.track.surface import PIT_CONN_STEPS, PITG_N_QUAD, PITG_QUAD0, QUAD_GARAGE, QUAD_SIZE
    t = load_track(name)
    lay = next(lay for off in PL.LANE_OFFSETS
               for lay in [PL.pit_layout(t.cx, t.cy, t.cs, t.ch, t.ccurv, t.pit_side, off, t.kerb_edge)]
               if np.array_equal(lay["path"][:, 0], t.px))
    a = lay["path"][PIT_CONN_STEPS]
    b = lay["path"][len(lay["path"]) - 1 - PIT_CONN_STEPS]
    d = (b - a) / np.linalg.norm(b - a)
    normal = np.array([-d[1], d[0]]) * t.pit_side          # away from the track

    def across(points):
        return (points - a) @ normal

    g = t.pit_geom
    q0 = int(g[PITG_QUAD0])
    garages = [g[q0 + QUAD_SIZE * k:q0 + QUAD_SIZE * k + 8].reshape(4, 2) for k in range(int(g[PITG_N_QUAD]))
               if g[q0 + QUAD_SIZE * k + 8] == QUAD_GARAGE]
    outer = max(across(q).max() for q in garages)
    assert outer == pytest.approx(21.5, abs=1e-6)
    assert across(lay["probe"]).max() == pytest.approx(outer, abs=1e-6)


def _sample_at_by_the_wrap_rule(cs, length, s, walk):
    """sample_at's answer as its rule states it: the distance wrapped by s - floor(s / L) L, a first
    guess from it, a walk of at most ``walk`` steps, else a bisection."""
    s = s - math.floor(s / length) * length
    n = cs.shape[0] - 1
    i = min(int(s / length * n), n - 1)
    steps = 0
    while i > 0 and cs[i] > s and steps < walk:
        i, steps = i - 1, steps + 1
    while i < n - 1 and cs[i + 1] < s and steps < walk:
        i, steps = i + 1, steps + 1
    if (i > 0 and cs[i] > s) or (i < n - 1 and cs[i + 1] < s):
        i = max(int(np.searchsorted(cs[:n], s, side="right")) - 1, 0)
    return i, (s - cs[i]) / (cs[i + 1] - cs[i])


def test_sample_at_is_the_wrapped_interpolation_bit_for_bit():
    # sample_at skips the lap wrap (and its second division) inside the lap, where the wrap leaves the
    # distance as it is; its (segment, fraction) must be the wrap rule's for every distance, on uniform
    # samples and on PaddockJS's uneven ones, at the lap's ends and beyond them
    from paddock_ma.sim.track.geometry import SAMPLE_WALK, sample_at
    rng = np.random.default_rng(7)
    for tr in (load_track("grand-prix"), oval_track(), load_track("paddockjs:2601")):
        cs, length = tr.cs, tr.length
        ends = [0.0, -0.0, length, -length, np.nextafter(length, 0.0), np.nextafter(0.0, 1.0),
                -np.nextafter(0.0, 1.0), np.nextafter(length, 2 * length), 3 * length + 1e-9]
        for s in np.concatenate([rng.uniform(-2 * length, 3 * length, 4000), rng.uniform(0.0, length, 4000),
                                 cs, ends]):
            got = sample_at(cs, length, float(s))
            want = _sample_at_by_the_wrap_rule(cs, length, float(s), SAMPLE_WALK)
            assert got[0] == want[0] and got[1] == want[1], (s, got, want)
            assert math.copysign(1.0, got[1]) == math.copysign(1.0, want[1]), s
