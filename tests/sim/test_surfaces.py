"""Wheel surfaces and barrier contact with hand-placed cars on the oval."""

import math

import numpy as np
import pytest

from paddock_ma.sim.core import layout as L
from paddock_ma.sim.vehicle.surface_table import SURFACE_PRIORITY
from paddock_ma.sim.vehicle.wheels import classify_car
from paddock_ma.sim.track.load import load_track, oval_track
from paddock_ma.sim.track.geometry import point_at

WHEELS = [L.I_WHEEL_SURFACE_FL, L.I_WHEEL_SURFACE_FR, L.I_WHEEL_SURFACE_RL, L.I_WHEEL_SURFACE_RR]
OFFSETS = [L.F_WHEEL_OFFSET_FL, L.F_WHEEL_OFFSET_FR, L.F_WHEEL_OFFSET_RL, L.F_WHEEL_OFFSET_RR]
T, K, GV, GS, B = L.SURF_TRACK, L.SURF_KERB, L.SURF_GRAVEL, L.SURF_GRASS, L.SURF_BARRIER


@pytest.fixture(scope="module")
def tr():
    return oval_track()


def place(tr, s, offset, yaw=0.0, hint=-1):
    """One car at lap distance s (m), lateral offset (m, + right), heading = track heading + yaw."""
    cf = np.zeros((1, 2, L.NF))
    ci = np.zeros((1, 2, L.NI), np.int32)
    x, y, h, k = point_at(tr, s)
    cf[0, 0, L.F_X] = x - math.sin(h) * offset
    cf[0, 0, L.F_Y] = y + math.cos(h) * offset
    cf[0, 0, L.F_HEADING] = h + yaw
    ci[0, 0, L.I_SEG_HINT] = hint
    barrier = classify_car(tr, cf, ci, 0, 0)
    return barrier, cf[0, 0], ci[0, 0]


def wheels(ci):
    return [int(ci[w]) for w in WHEELS]


def test_centred_car_is_all_track_and_position_is_written(tr):
    barrier, f, i = place(tr, 1000.0, 0.0, yaw=0.3, hint=0)   # a far-off hint still finds the car
    assert not barrier
    assert wheels(i) == [T, T, T, T] and i[L.I_SURFACE] == T
    assert i[L.I_ON_TRACK] == 1 and i[L.I_IN_PIT_LANE] == 0
    assert f[L.F_PROGRESS] == pytest.approx(1000.0, abs=1e-6)
    assert f[L.F_OFFSET] == pytest.approx(0.0, abs=1e-6)
    assert f[L.F_HEADING_ERROR] == pytest.approx(0.3, abs=1e-6)
    seg = i[L.I_SEG_HINT]                                        # the segment holding s = 1000 m
    assert tr.cs[seg] <= 1000.0 <= tr.cs[seg + 1]
    # a yawed car's wheels sit at the rotated patch positions: lateral offsets -+0.76 cos(0.3) -+ 1.8 sin(0.3)
    fl = -0.76 * math.cos(0.3) + 1.8 * math.sin(0.3)
    assert f[L.F_WHEEL_OFFSET_FL] == pytest.approx(fl, abs=0.02)


def test_kerb_wheels_at_8m(tr):
    # right wheels at 8.76 m (kerb: 7.5-9 m), left at 7.24 m whose patch reaches 7.24 + 0.19 < 7.5
    barrier, f, i = place(tr, 1000.0, 8.0)
    assert wheels(i) == [T, K, T, K]
    assert i[L.I_SURFACE] == K and i[L.I_ON_TRACK] == 1 and not barrier
    assert [f[o] for o in OFFSETS] == pytest.approx([7.24, 8.76, 7.24, 8.76], abs=1e-6)
    barrier, f, i = place(tr, 1000.0, -8.0)
    assert wheels(i) == [K, T, K, T]


def test_patch_extent_decides(tr):
    # patch centre at 7.4 m (track) but its outer edge at 7.59 m: worst = kerb (analytic extent)
    barrier, f, i = place(tr, 1000.0, 7.4 - 0.76)
    assert wheels(i) == [T, K, T, K]
    # gravel/grass boundary at 21 m: a patch straddling it (centre at 21.0 m, outer edge at 21.19 m)
    # reads grass, the band of its outer edge (PaddockJS's ``analyticWheelState``), not the worse
    # gravel its inner half is on; the car's worst surface is still the left patches' gravel
    barrier, f, i = place(tr, 1000.0, 21.0 - 0.76)
    assert wheels(i) == [GV, GS, GV, GS] and i[L.I_SURFACE] == GV
    barrier, f, i = place(tr, 1000.0, 20.7 - 0.76)          # outer edge at 20.89 m: still gravel
    assert wheels(i) == [GV, GV, GV, GV]
    barrier, f, i = place(tr, 1000.0, 21.3 - 0.76)
    assert wheels(i) == [GV, GS, GV, GS] and i[L.I_SURFACE] == GV


def test_gravel_at_15m(tr):
    barrier, f, i = place(tr, 1000.0, 15.0)
    assert wheels(i) == [GV] * 4 and i[L.I_ON_TRACK] == 0 and not barrier


def test_barrier_contact_by_the_car_footprint(tr):
    # PaddockJS's ``applyRunoffResponse``: the car's 5.63 x 1.9 m visual footprint (half width 0.95 m,
    # half length 2.815 m) reaching past the barrier's inner face, the runoff's outer edge (41 m on the
    # oval) less half the 0.55 m barrier: 40.725 m, measured from the centre sample along its normal
    barrier, f, i = place(tr, 1000.0, 40.8 - 0.95)           # footprint side at 40.8 m
    assert barrier
    assert wheels(i) == [GS, GS, GS, GS]                     # the patches (outer edge 40.8 m): grass
    barrier, f, i = place(tr, 1000.0, 40.65 - 0.95)          # footprint side at 40.65 m: not yet
    assert not barrier
    barrier, f, i = place(tr, 1000.0, -(40.8 - 0.95))        # the same on the left
    assert barrier
    assert not place(tr, 1000.0, -(40.65 - 0.95))[0]
    # a car across the track: its nose (half length 2.815 m) reaches the wall first
    barrier, f, i = place(tr, 1000.0, 40.8 - 2.815, yaw=math.pi / 2)
    assert barrier
    barrier, f, i = place(tr, 1000.0, 40.65 - 2.815, yaw=math.pi / 2)
    assert not barrier
    # in a corner too (right-hand semicircle, outside = left)
    s_mid = 375 + 0.5 * 150 * math.pi
    assert place(tr, s_mid, -(40.8 - 0.95))[0]
    assert not place(tr, s_mid, -(40.65 - 0.95))[0]


def test_a_wheel_on_the_barrier_touches_the_wall(tr):
    """Issue 14, defect 3: the barrier's inner face is the grass edge (41 m on the oval); a wheel whose
    patch reaches past it reads ``barrier`` and the car is destroyed, though no body corner is past it."""
    # patch outer edge at 41.05 m, body side at 40.72 m
    barrier, f, i = place(tr, 1000.0, 41.05 - 0.95)
    assert wheels(i) == [GS, B, GS, B] and barrier
    barrier, f, i = place(tr, 1000.0, 40.675 - 0.95)        # footprint 5 cm short of the wall's face
    assert wheels(i) == [GS] * 4 and not barrier
    # the case: 39.06 m off, 0.6 rad heading error, the front-right wheel's patch past the wall
    barrier, f, i = place(tr, 1000.0, 39.06, yaw=0.6)
    assert i[L.I_WHEEL_SURFACE_FR] == B and barrier
    # over a sweep, a barrier wheel always means contact
    for off in np.linspace(38.0, 40.5, 26):
        for yaw in np.linspace(-0.8, 0.8, 9):
            barrier, f, i = place(tr, 700.0, float(off), yaw=float(yaw))
            if B in wheels(i):
                assert barrier, (off, yaw)


def test_pit_surfaces(tr):
    side = tr.pit_side
    # fast lane, 31 m on the pit side at the finish line
    barrier, f, i = place(tr, 20.0, side * 31.0)
    assert wheels(i) == [L.SURF_PIT_LANE] * 4
    assert i[L.I_ON_TRACK] == 1 and i[L.I_IN_PIT_LANE] == 1 and not barrier
    # parked in a service box (42.5 m from the centreline, beyond the barrier line): pit-box, no barrier
    x, y = tr.box_x[3], tr.box_y[3]
    cf = np.zeros((1, 1, L.NF)); ci = np.zeros((1, 1, L.NI), np.int32)
    cf[0, 0, L.F_X], cf[0, 0, L.F_Y], cf[0, 0, L.F_HEADING] = x, y, tr.ch[0]
    ci[0, 0, L.I_SEG_HINT] = -1
    barrier = classify_car(tr, cf, ci, 0, 0)
    assert wheels(ci[0, 0]) == [L.SURF_PIT_BOX] * 4 and not barrier
    assert abs(cf[0, 0, L.F_OFFSET]) > tr.grass_edge
    assert ci[0, 0, L.I_IN_PIT_LANE] == 1 and ci[0, 0, L.I_SURFACE] == L.SURF_PIT_BOX
    # the same offset on the other side is the barrier
    assert place(tr, 20.0, -side * 42.5)[0]
    # on the entry connector (its middle point)
    k = 12
    cf[0, 0, L.F_X], cf[0, 0, L.F_Y], cf[0, 0, L.F_HEADING] = tr.px[k], tr.py[k], tr.ph[k]
    classify_car(tr, cf, ci, 0, 0)
    assert wheels(ci[0, 0]) == [L.SURF_PIT_ENTRY] * 4
    k = len(tr.px) - 13
    cf[0, 0, L.F_X], cf[0, 0, L.F_Y], cf[0, 0, L.F_HEADING] = tr.px[k], tr.py[k], tr.ph[k]
    classify_car(tr, cf, ci, 0, 0)
    assert wheels(ci[0, 0]) == [L.SURF_PIT_EXIT] * 4
    # on the kerb next to the pit entry the main track wins (|offset| <= 9 m)
    barrier, f, i = place(tr, tr.pit_entry_s + 5.0, side * 8.0)
    assert i[L.I_SURFACE] == K


def test_priority_table():
    codes = range(L.N_SURFACES)
    order = sorted(codes, key=lambda c: SURFACE_PRIORITY[c])
    names = [L.SURFACE_NAMES[c] for c in order]
    assert names[0] == "track" and names[-3:] == ["grass", "gravel", "barrier"]


def test_patch_point_nearest_sample_is_paddockjs_window_search():
    # Near the pit entry and exit PaddockJS measures each patch point from its own nearest sample among
    # the 240 either side of the car's. 28.6 m inside the technical track's 35-55 m corner after its pit
    # exit (car-00 of its runoff-gravel-grass simulator trace, step 146, rear-right patch centre) a walk
    # from the car's sample stops at sample 453; the nearest is 451 (PaddockJS's offset 28.5924 m).
    import json
    from pathlib import Path
    from paddock_ma.sim.track.load import paddockjs_track_document
    from paddock_ma.sim.track.nearest_sample import nearest_sample_in_window
    fixture = Path(__file__).resolve().parents[1] / "fixtures" / "paddockjs-2.0.0" / "tracks" / "technical.object.json"
    t = paddockjs_track_document(json.loads(fixture.read_text())["track"])
    x, y, h = 1719.10489, 1114.477662, 0.423289       # the car (m, rad) after that step
    qx = x - L.WHEEL_X * math.cos(h) - L.WHEEL_Y * math.sin(h)
    qy = y - L.WHEEL_X * math.sin(h) + L.WHEEL_Y * math.cos(h)
    n = len(t.cx) - 1
    window = np.arange(456 - 240, 456 + 241) % n
    want = int(window[np.argmin((t.cx[window] - qx) ** 2 + (t.cy[window] - qy) ** 2)])
    assert want == 451
    j = nearest_sample_in_window(t.cx, t.cy, t.cs, t.length, 456, qx, qy)
    assert j == want
    offset = (qx - t.cx[j]) * t.cnx[j] + (qy - t.cy[j]) * t.cny[j]
    assert abs(offset - 28.5924) < 1e-4


def _test_track(name):
    """A track by ``load_track`` name, or "technical-object": PaddockJS's technical track object (fixture)."""
    import json
    from pathlib import Path
    from paddock_ma.sim.track.load import paddockjs_track_document
    if name == "technical-object":
        fixture = Path(__file__).resolve().parents[1] / "fixtures" / "paddockjs-2.0.0" / "tracks" / "technical.object.json"
        return paddockjs_track_document(json.loads(fixture.read_text())["track"])
    return load_track(name)


def _hinted_points(t, rng, count, radius):
    """``count`` points at ``radius`` (m, float64[count]) in random directions from random samples of track
    ``t``, each hinted by a sample up to 40 from its own -> (samples, xs, ys, hints)."""
    n = len(t.cx) - 1
    base = rng.integers(0, n, count)
    angle = rng.uniform(-np.pi, np.pi, count)
    xs = t.cx[base] + radius * np.cos(angle)
    ys = t.cy[base] + radius * np.sin(angle)
    return base, xs, ys, (base + rng.integers(-40, 41, count)) % n


def _window_scan(t, j, x, y):
    """The plain scan the pruned search must equal: the 481 samples around j in window order, the
    first of equals."""
    n = len(t.cx) - 1
    window = np.arange(j - 240, j + 241) % n
    return int(window[np.argmin((t.cx[window] - x) ** 2 + (t.cy[window] - y) ** 2)])


@pytest.mark.parametrize("name", ["technical", "grand-prix", "paddockjs:2601", "technical-object"])
def test_pruned_window_search_equals_the_plain_scan(name):
    # Points up to 60 m from the track (inside tight corners, where the distances have local minima,
    # and beside the parts of the lap that come back near), hinted by a sample up to 40 away from
    # their nearest, plus ties: points equidistant from two samples (on a perpendicular bisector).
    from paddock_ma.sim.track.nearest_sample import nearest_sample_in_window
    t = _test_track(name)
    n = len(t.cx) - 1
    rng = np.random.default_rng(61)
    base, xs, ys, hints = _hinted_points(t, rng, 4000, rng.uniform(0.0, 60.0, 4000))
    a, b = base, (base + 1) % n                      # ties: the midpoint of two samples, pushed along the bisector
    mx, my = (t.cx[a] + t.cx[b]) / 2, (t.cy[a] + t.cy[b]) / 2
    push = rng.uniform(-20.0, 20.0, base.size)
    dx, dy = t.cx[b] - t.cx[a], t.cy[b] - t.cy[a]
    norm = np.hypot(dx, dy)
    xs = np.concatenate([xs, mx - dy / norm * push])
    ys = np.concatenate([ys, my + dx / norm * push])
    hints = np.concatenate([hints, a])
    got = [nearest_sample_in_window(t.cx, t.cy, t.cs, t.length, int(j), float(x), float(y))
           for j, x, y in zip(hints, xs, ys)]
    want = [_window_scan(t, int(j), x, y) for j, x, y in zip(hints, xs, ys)]
    assert got == want


@pytest.mark.parametrize("name", ["technical", "grand-prix", "paddockjs:2601", "technical-object"])
def test_shared_window_run_equals_the_plain_scan(name):
    # A car's 20 sampled patch points share one run of window positions (``window_run_near``): each
    # point's nearest sample in that run must be the plain scan's answer. Cars up to 60 m from the track
    # (hairpins bring other parts of the lap near: the run is then refused and the per-point search
    # used), hinted by a sample up to 40 away; points anywhere within the reach, on its rim too.
    from paddock_ma.sim.track.nearest_sample import nearest_sample_in_run, window_run_near
    from paddock_ma.sim.vehicle.wheels import PATCH_REACH
    t = _test_track(name)
    rng = np.random.default_rng(17)
    base, xs, ys, hints = _hinted_points(t, rng, 1500, rng.uniform(0.0, 60.0, 1500) ** 2 / 60.0)  # most near the centreline
    refused = 0
    for j, x, y in zip(hints, xs, ys):
        first, last = window_run_near(t.cx, t.cy, t.cs, t.length, int(j), float(x), float(y), PATCH_REACH)
        if first < 0:
            refused += 1
            continue
        r = PATCH_REACH * np.sqrt(rng.uniform(0.0, 1.0, 20))
        r[:4] = PATCH_REACH                                              # on the rim
        a = rng.uniform(-np.pi, np.pi, 20)
        for qx, qy in zip(x + r * np.cos(a), y + r * np.sin(a)):
            got = nearest_sample_in_run(t.cx, t.cy, int(j), first, last, float(qx), float(qy))
            assert got == _window_scan(t, int(j), qx, qy)
    assert refused < base.size // 4                                      # the shared run is the rule


def _unmasked(g):
    """``pit_geom`` g with its mask replaced by one cell allowing roads and boxes everywhere: every point
    searched."""
    from paddock_ma.sim.track.surface import MASK_BOX, MASK_ROAD, PITG_MASK
    g = np.concatenate([g, [MASK_ROAD + MASK_BOX]])
    g[PITG_MASK:PITG_MASK + 6] = (len(g) - 1, g[PITG_MASK + 1] - 1e6, g[PITG_MASK + 2] - 1e6, 1e9, 1, 1)
    return g


@pytest.mark.parametrize("name", ["grand-prix", "paddockjs:2601", "technical-object"])
def test_pit_mask_changes_no_answer(name):
    # The mask lets ``pit_state`` answer "none" without its search; it must never change an answer. Points:
    # uniform over the complex's bounds, and a band of +-2 cm around every road strip's edge (its segment's
    # line at half its width, out to 40 m beyond the segment's ends) and every rectangle's edges.
    from collections import namedtuple
    from paddock_ma.sim.track.surface import PITG_BOUNDS, PITG_N_QUAD, PITG_N_SEG, PITG_QUAD0, PITG_SEG0, QUAD_SIZE, SEG_SIZE, pit_state
    t = _test_track(name)
    g = t.pit_geom
    assert g.shape[0] > 0
    Pit = namedtuple("Pit", ["pit_geom"])
    masked, plain = Pit(g), Pit(_unmasked(g))
    rng = np.random.default_rng(7)
    x0, x1, y0, y1 = g[PITG_BOUNDS:PITG_BOUNDS + 4]
    xs = [rng.uniform(x0, x1, 6000)]
    ys = [rng.uniform(y0, y1, 6000)]
    for k in range(int(g[PITG_N_SEG])):
        ax, ay, bx, by, half = g[PITG_SEG0 + SEG_SIZE * k:PITG_SEG0 + SEG_SIZE * k + 5]
        ln = math.hypot(bx - ax, by - ay)
        u = rng.uniform(-40.0 / ln, 1.0 + 40.0 / ln, 120)
        side = rng.choice([-1.0, 1.0], 120) * (half + rng.uniform(-0.02, 0.02, 120))
        xs.append(ax + u * (bx - ax) - side * (by - ay) / ln)
        ys.append(ay + u * (by - ay) + side * (bx - ax) / ln)
    for k in range(int(g[PITG_N_QUAD])):
        q = g[int(g[PITG_QUAD0]) + QUAD_SIZE * k:][:8]
        e = rng.integers(0, 4, 40)
        u = rng.uniform(0.0, 1.0, 40)
        jx, jy = rng.uniform(-0.02, 0.02, (2, 40))
        xs.append(q[2 * e] + u * (q[2 * ((e + 1) % 4)] - q[2 * e]) + jx)
        ys.append(q[2 * e + 1] + u * (q[2 * ((e + 1) % 4) + 1] - q[2 * e + 1]) + jy)
    xs, ys = np.concatenate(xs), np.concatenate(ys)
    got = [pit_state(masked, float(x), float(y)) for x, y in zip(xs, ys)]
    want = [pit_state(plain, float(x), float(y)) for x, y in zip(xs, ys)]
    assert got == want
    # ``pit_override`` (boxes only on the asphalt and kerb) is ``pit_overrides`` of the full answer
    from paddock_ma.sim.track.surface import pit_override, pit_overrides
    kerb = t.kerb_edge
    offsets = rng.uniform(0.0, 2.0 * kerb, xs.size)
    offsets[::7] = kerb                                  # the kerb's edge itself
    overridden = [pit_override(masked, float(x), float(y), float(a), kerb) for x, y, a in zip(xs, ys, offsets)]
    assert overridden == [w[0] if pit_overrides(w[0], a, kerb) else -1 for w, a in zip(want, offsets)]
    assert sum(o == L.SURF_PIT_BOX for o in overridden) > 50 and sum(o >= 0 for o in overridden) > 500
    # the mask does its job: most uniform points of the bounds are answered without a search
    from paddock_ma.sim.track.surface import pit_mask_at
    spared = np.mean([pit_mask_at(g, float(x), float(y)) == 0 for x, y in zip(xs[:6000], ys[:6000])])
    assert spared > 0.3
    # and a point on a road's strip is found: the test reaches pit surfaces
    assert sum(a[0] >= 0 for a in got) > 1000
