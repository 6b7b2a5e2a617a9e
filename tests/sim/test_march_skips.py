"""The track rays' march skips whole metres only where the answer cannot change: ``road_edge.track_rays``
marching with its skips (``sensing.march_skip``: ``sample_quiet``, ``projection_quiet``, the pit
surfaces' box and ``pit_test_quiet`` inside it) gives, bit for bit, what the same march gives when it measures every whole metre (its Python body with the skip
replaced by ``k + 1``), for rays forced onto the march from origins on the track, the kerb, the runoff,
beyond the grass, in the pit lane and around the pit box, in sample and projection mode, for a car in
the pit lane and not (its pit override allowed or not), each channel alone and all three together."""

import math

import numpy as np
import pytest

from paddock_ma.sim.core import layout as L
from paddock_ma.sim.sensing import road_edge as R
from paddock_ma.sim.sensing import track_state as S
from paddock_ma.sim.sensing.geometry import G_EDGE_AT, pit_view, sensor_geometry
from paddock_ma.sim.sensing.march import RAY_ILLEGAL, RAY_KERB, RAY_ROAD_EDGE
from paddock_ma.sim.track.geometry import locate
from paddock_ma.sim.track.nearest_sample import nearest_sample
from paddock_ma.sim.track.load import load_track
from tests.helpers.sensing import pose_at

TRACKS = ["grand-prix", "technical", "paddockjs:2601"]
CHANNELS = [(True, False, False), (False, True, False), (False, False, True), (True, True, True)]


def _origins(tr, rng, n):
    """Origins in every band, far beyond the grass, and around the pit lane (its points +- 30 m)."""
    out = []
    for i in range(n):
        kind = i % 5
        if kind == 4 and len(tr.px):
            j = rng.integers(0, len(tr.px))
            out.append((tr.px[j] + rng.uniform(-30, 30), tr.py[j] + rng.uniform(-30, 30), rng.uniform(-math.pi, math.pi)))
            continue
        edge = (tr.half_width, tr.kerb_edge, tr.grass_edge, tr.grass_edge + 90.0)[kind]
        off = rng.choice([-1.0, 1.0]) * rng.uniform(0.0, edge)
        out.append(pose_at(tr, rng.uniform(0.0, tr.length), off, rng.normal(0.0, 0.6)))
    return out


def _march(fn, tr, geo, pv, x, y, h, sample_mode, include_pit, channels, length, pit_allowed=True):
    """Every channel of ``channels`` by the march alone (no edge lines, no straight edge)."""
    seg = locate(tr, x, y, -1)[0]
    progress = tr.cs[nearest_sample(tr.cx, tr.cy, seg, x, y)]
    i0, count = S.hint_range(tr.cs, tr.length, progress)
    max_hint2 = (tr.grass_edge + S.HINT_MARGIN) ** 2
    oseg, _, off = S.track_state(tr.cx, tr.cy, tr.cs, tr.cnx, tr.cny, tr.grid_seg, geo, i0, count, progress,
                                 max_hint2, sample_mode, x, y)
    dist = np.zeros(4, np.float32)
    hit = np.zeros(4, np.int8)
    rt = S.RayTrack(tr.cx, tr.cy, tr.cs, tr.cnx, tr.cny, tr.grid_seg, pv, geo, int(geo[G_EDGE_AT]), max_hint2)
    origin = S.RayOrigin(i0, count, progress, sample_mode, oseg, off, False, False, include_pit, pit_allowed,
                         *channels, x, y)
    kind = fn(rt, origin, math.cos(h), math.sin(h), length, 0, dist, hit)
    return kind, dist, hit


@pytest.mark.parametrize("name", TRACKS)
def test_skipping_metres_changes_no_answer(name, monkeypatch):
    tr = load_track(name)
    geo = sensor_geometry(tr)
    pv = pit_view(tr)
    rng = np.random.default_rng(11)
    cases = []
    for x, y, h in _origins(tr, rng, 60):
        for sample_mode in (False, True):
            for include_pit in (False, True):
                channels = CHANNELS[rng.integers(0, len(CHANNELS))]
                cases.append((x, y, h + rng.uniform(-math.pi, math.pi), sample_mode, include_pit, channels,
                              rng.uniform(20.0, 240.0), include_pit or bool(rng.integers(0, 2))))
    skipping = [_march(R.track_rays, tr, geo, pv, *case) for case in cases]
    monkeypatch.setattr(R, "next_metre", lambda *a: a[-2] + 1.0)     # the every-metre march
    every_metre = [_march(R.track_rays.py_func, tr, geo, pv, *case) for case in cases]
    channel_index = (RAY_ROAD_EDGE, RAY_KERB, RAY_ILLEGAL)
    hits = 0
    for case, (k1, d1, h1), (k2, d2, h2) in zip(cases, skipping, every_metre):
        assert k1 == k2 and np.array_equal(d1, d2) and np.array_equal(h1, h2), (case, d1, d2)
        hits += int(sum(h2[i] for i, want in zip(channel_index, case[5]) if want))
    assert hits > len(cases) // 2       # the rays do cross bands: the comparison is not of misses alone


@pytest.mark.parametrize("name", TRACKS)
def test_pit_surface_keeps_its_answer_as_far_as_its_bound_says(name):
    """``pit_surface_quiet``: from points around the pit complex (lane, working lane, boxes, garages,
    connectors), whether ``pit_surface`` finds a pit surface, and whether a pit box, does not change at 200 points of the ray
    short of the bound; and the bound is not vacuous (most rays get a whole metre or more)."""
    from numba import njit

    from paddock_ma.sim.track.pit_quiet import pit_surface_quiet
    from paddock_ma.sim.track.surface import pit_surface

    tr = load_track(name)
    surface = njit(pit_surface.py_func)
    quiet = njit(pit_surface_quiet.py_func)
    rng = np.random.default_rng(5)
    anchors = np.concatenate([np.stack([tr.px, tr.py], 1), np.stack([tr.box_x, tr.box_y], 1)])
    long_enough = on_pit = 0
    for _ in range(2000):
        ax, ay = anchors[rng.integers(0, len(anchors))]
        x, y = ax + rng.uniform(-20.0, 20.0), ay + rng.uniform(-20.0, 20.0)
        h = rng.uniform(-math.pi, math.pi)
        dx, dy = math.cos(h), math.sin(h)
        t = quiet(tr, x, y, dx, dy)
        code = surface(tr, x, y)
        first = (code >= 0, code == L.SURF_PIT_BOX)
        on_pit += first[0]
        long_enough += t >= 1.0
        for s in np.linspace(0.0, t, 200, endpoint=False):
            code = surface(tr, x + dx * s, y + dy * s)
            assert (code >= 0, code == L.SURF_PIT_BOX) == first, (x, y, h, t, s)
    assert on_pit > 400 and long_enough > 1000, (on_pit, long_enough)
