"""Car-car contact kernel: separation, impulse, events, cooldowns and interaction flags."""

import numpy as np
import pytest

from paddock_ma.sim.core import layout as L
from paddock_ma.sim.race.collisions import box_overlap, resolve_contacts

DT = L.DT
ALL_FLAGS = (L.FLAG_COLLIDES | L.FLAG_RAY_VISIBLE | L.FLAG_RADAR_VISIBLE | L.FLAG_CLASSIFIED
             | L.FLAG_PIT_OCCUPIES)


def make(n=2, mode=L.PHYSICS_SIMULATOR, flags=ALL_FLAGS):
    cars_f = np.zeros((1, n, L.NF))
    cars_i = np.zeros((1, n, L.NI), dtype=np.int32)
    cars_i[0, :, L.I_ACTIVE] = 1
    cars_i[0, :, L.I_LAST_CONTACT_WITH] = -1
    car_flags = np.full((1, n), flags, dtype=np.int32)
    rules = np.zeros((1, L.NR))
    rules[0, L.R_PHYSICS_MODE] = mode
    rules[0, L.R_RESTITUTION] = 0.18   # PaddockJS default (spec 3.6)
    return cars_f, cars_i, car_flags, rules


def place(cars_f, c, x, y, h, v):
    cars_f[0, c, L.F_X] = x
    cars_f[0, c, L.F_Y] = y
    cars_f[0, c, L.F_HEADING] = h
    cars_f[0, c, L.F_SPEED] = v
    cars_f[0, c, L.F_VX] = v * np.cos(h)
    cars_f[0, c, L.F_VY] = v * np.sin(h)


def overlap(cars_f, i, j):
    a, b = cars_f[0, i], cars_f[0, j]
    return box_overlap(a[L.F_X], a[L.F_Y], a[L.F_HEADING], b[L.F_X], b[L.F_Y], b[L.F_HEADING])[0]


def test_sat_matches_hand_geometry():
    # Side by side, same heading, centres 1.0 m apart laterally: width 1.24 -> 0.24 m overlap.
    d, ax, ay = box_overlap(0.0, 0.0, 0.0, 0.0, 1.0, 0.0)
    assert d == pytest.approx(0.24)
    assert (ax, ay) == pytest.approx((0.0, 1.0))
    # Nose to tail 4.0 m apart: length 4.65 -> 0.65 m overlap along x.
    d, ax, ay = box_overlap(0.0, 0.0, 0.0, 4.0, 0.0, 0.0)
    assert d == pytest.approx(0.65)
    assert (ax, ay) == pytest.approx((1.0, 0.0))
    # Crossed at right angles, centres 3 m apart along car 1's axis: 2.325 + 0.62 - 3 < 0.
    assert box_overlap(0.0, 0.0, 0.0, 3.0, 0.0, np.pi / 2)[0] <= 0.0
    # Both heading along the diagonal (1, 1), centres 4.243 m apart along it: nose-to-tail
    # overlap 4.65 - 4.243 = 0.407 m; heading across the diagonal instead: 4.243 m sideways, none.
    assert box_overlap(0.0, 0.0, np.pi / 4, 3.0, 3.0, np.pi / 4)[0] == pytest.approx(
        4.65 - np.hypot(3.0, 3.0))
    assert box_overlap(0.0, 0.0, -np.pi / 4, 3.0, 3.0, -np.pi / 4)[0] <= 0.0


@pytest.mark.parametrize("mode", [L.PHYSICS_SIMULATOR, L.PHYSICS_ARCADE])
def test_overlap_separates_and_counts_once_within_cooldown(mode):
    cars_f, cars_i, flags, rules = make(mode=mode)
    place(cars_f, 0, 0.0, 0.0, 0.0, 20.0)
    place(cars_f, 1, 0.5, 0.9, 0.0, 20.0)     # 0.34 m lateral overlap
    n = resolve_contacts(cars_f, cars_i, flags, rules, 0, 2, DT)
    assert n == 1
    assert overlap(cars_f, 0, 1) <= 0.0
    assert list(cars_i[0, :, L.I_CNT_CONTACTS]) == [1, 1]
    assert list(cars_i[0, :, L.I_LAST_CONTACT_WITH]) == [1, 0]
    assert cars_f[0, 0, L.F_CONTACT_COOLDOWN] == 1.0
    # Bump them together again on several ticks inside the 1 s cooldown: still one event each.
    for k in range(30):
        if k % 5 == 0:
            cars_f[0, 1, L.F_Y] = cars_f[0, 0, L.F_Y] + 0.9
        resolve_contacts(cars_f, cars_i, flags, rules, 0, 2, DT)
    assert list(cars_i[0, :, L.I_CNT_CONTACTS]) == [1, 1]
    # Apart for longer than the cooldown (70 ticks > 1 s), then a new contact counts again.
    cars_f[0, 1, L.F_Y] = 10.0
    for _ in range(70):
        resolve_contacts(cars_f, cars_i, flags, rules, 0, 2, DT)
    assert cars_f[0, 0, L.F_CONTACT_COOLDOWN] == 0.0
    cars_f[0, 1, L.F_Y] = cars_f[0, 0, L.F_Y] + 0.9
    assert resolve_contacts(cars_f, cars_i, flags, rules, 0, 2, DT) == 1
    assert list(cars_i[0, :, L.I_CNT_CONTACTS]) == [2, 2]


@pytest.mark.parametrize("mode", [L.PHYSICS_SIMULATOR, L.PHYSICS_ARCADE])
def test_head_on_closing_speed_reduces(mode):
    cars_f, cars_i, flags, rules = make(mode=mode)
    place(cars_f, 0, 0.0, 0.0, 0.0, 30.0)
    place(cars_f, 1, 4.2, 0.0, np.pi, 30.0)   # noses overlap by 0.45 m, closing at 60 m/s
    before = (cars_f[0, 1, L.F_VX] - cars_f[0, 0, L.F_VX])
    assert before == pytest.approx(-60.0)
    resolve_contacts(cars_f, cars_i, flags, rules, 0, 2, DT)
    after = (cars_f[0, 1, L.F_VX] - cars_f[0, 0, L.F_VX])
    # Restitution 0.18 reverses the normal velocity: simulator +0.18 * 60 = 10.8 m/s apart;
    # arcade cars cannot reverse, so both stop (0 closing speed).
    if mode == L.PHYSICS_SIMULATOR:
        assert after == pytest.approx(0.18 * 60.0)
    else:
        assert after == pytest.approx(0.0, abs=1e-9)
    assert abs(after) < abs(before)
    assert cars_f[0, 0, L.F_X] < 0.0 and cars_f[0, 1, L.F_X] > 4.2   # pushed apart
    for c in range(2):
        h = cars_f[0, c, L.F_HEADING]
        fwd = cars_f[0, c, L.F_VX] * np.cos(h) + cars_f[0, c, L.F_VY] * np.sin(h)
        assert cars_f[0, c, L.F_SPEED] == pytest.approx(fwd)   # speed = body-forward component
        if mode == L.PHYSICS_ARCADE:
            assert cars_f[0, c, L.F_SPEED] >= 0.0


def test_equal_speeds_symmetric_response():
    # Mirror-symmetric side impact in simulator mode: parallel cars at 25 m/s forward, drifting
    # toward each other at 1 m/s each, bodies overlapping 0.24 m.
    cars_f, cars_i, flags, rules = make()
    place(cars_f, 0, 0.0, -0.5, 0.0, 25.0)
    place(cars_f, 1, 0.0, 0.5, 0.0, 25.0)
    cars_f[0, 0, L.F_VY] = 1.0
    cars_f[0, 1, L.F_VY] = -1.0
    p0 = cars_f[0, :, :].copy()
    resolve_contacts(cars_f, cars_i, flags, rules, 0, 2, DT)
    d0 = cars_f[0, 0] - p0[0]
    d1 = cars_f[0, 1] - p0[1]
    # Mirror about y = 0: x and speed changes equal; y, vy and heading changes opposite.
    for f in (L.F_X, L.F_VX, L.F_SPEED):
        assert d0[f] == pytest.approx(d1[f], abs=1e-12)
    for f in (L.F_Y, L.F_VY, L.F_HEADING):
        assert d0[f] == pytest.approx(-d1[f], abs=1e-12)
    assert d0[L.F_Y] < 0.0 < d1[L.F_Y]
    assert d0[L.F_HEADING] < 0.0            # the left-hand car turns further left, away
    # Lateral velocities reversed with restitution 0.18: -1 -> +0.18 for car 0.
    assert cars_f[0, 0, L.F_VY] == pytest.approx(-0.18)
    assert cars_f[0, 1, L.F_VY] == pytest.approx(0.18)


def test_oblique_contact_conserves_momentum_and_does_not_add_energy():
    # Converging at +-5 degrees (not mirror-exact for SAT: the axis comes from car 0's frame).
    cars_f, cars_i, flags, rules = make()
    a = np.radians(5.0)
    place(cars_f, 0, 0.0, -0.5, a, 25.0)
    place(cars_f, 1, 0.3, 0.5, -a, 30.0)
    v0 = cars_f[0, :, [L.F_VX, L.F_VY]].copy()
    resolve_contacts(cars_f, cars_i, flags, rules, 0, 2, DT)
    v1 = cars_f[0, :, [L.F_VX, L.F_VY]]
    # Equal masses: the impulse is internal, so the summed world velocity is unchanged.
    np.testing.assert_allclose(v1.sum(axis=1), v0.sum(axis=1), atol=1e-12)
    # Restitution < 1: kinetic energy does not grow.
    assert (v1 ** 2).sum() <= (v0 ** 2).sum() + 1e-9
    assert not np.allclose(v1, v0)


@pytest.mark.parametrize("flags_a,flags_b", [
    (ALL_FLAGS, ALL_FLAGS & ~L.FLAG_COLLIDES),   # batch-training car: no car-car contact
    (0, ALL_FLAGS),                              # phantom: nothing at all
    (0, 0),
])
def test_non_colliding_cars_pass_through(flags_a, flags_b):
    cars_f, cars_i, flags, rules = make()
    flags[0, 0] = flags_a
    flags[0, 1] = flags_b
    place(cars_f, 0, 0.0, 0.0, 0.0, 40.0)
    place(cars_f, 1, 2.0, 0.3, 0.0, 10.0)
    before = cars_f.copy()
    for _ in range(20):
        assert resolve_contacts(cars_f, cars_i, flags, rules, 0, 2, DT) == 0
    np.testing.assert_array_equal(cars_f, before)
    assert list(cars_i[0, :, L.I_CNT_CONTACTS]) == [0, 0]
    assert list(cars_i[0, :, L.I_LAST_CONTACT_WITH]) == [-1, -1]


def test_inactive_and_destroyed_cars_are_ignored():
    cars_f, cars_i, flags, rules = make(n=3)
    place(cars_f, 0, 0.0, 0.0, 0.0, 10.0)
    place(cars_f, 1, 0.5, 0.5, 0.0, 10.0)
    place(cars_f, 2, -0.5, -0.5, 0.0, 10.0)
    cars_i[0, 1, L.I_DESTROYED] = 1
    cars_i[0, 2, L.I_ACTIVE] = 0
    before = cars_f.copy()
    assert resolve_contacts(cars_f, cars_i, flags, rules, 0, 3, DT) == 0
    np.testing.assert_array_equal(cars_f, before)


def test_coincident_centres_no_nan_and_separate():
    cars_f, cars_i, flags, rules = make()
    place(cars_f, 0, 5.0, 5.0, 0.3, 0.0)
    place(cars_f, 1, 5.0, 5.0, 0.3, 0.0)
    for _ in range(5):
        resolve_contacts(cars_f, cars_i, flags, rules, 0, 2, DT)
        assert np.all(np.isfinite(cars_f))
    assert overlap(cars_f, 0, 1) <= 0.0
    assert list(cars_i[0, :, L.I_CNT_CONTACTS]) == [1, 1]


def test_pit_route_car_is_never_moved():
    cars_f, cars_i, flags, rules = make()
    place(cars_f, 0, 0.0, 0.0, 0.0, 8.0)
    place(cars_f, 1, 0.0, 1.0, 0.0, 20.0)
    cars_i[0, 0, L.I_PIT_STATUS] = L.PIT_SERVICING
    before = cars_f[0, 0].copy()
    resolve_contacts(cars_f, cars_i, flags, rules, 0, 2, DT)
    k = L.F_CONTACT_COOLDOWN
    np.testing.assert_array_equal(cars_f[0, 0, :k], before[:k])
    assert overlap(cars_f, 0, 1) <= 0.0      # the partner took the whole correction
    assert cars_f[0, 1, L.F_Y] > 1.2
    # Both on the pit route: skipped entirely.
    cars_f, cars_i, flags, rules = make()
    place(cars_f, 0, 0.0, 0.0, 0.0, 8.0)
    place(cars_f, 1, 0.0, 1.0, 0.0, 8.0)
    cars_i[0, :, L.I_PIT_STATUS] = L.PIT_EXITING
    before = cars_f.copy()
    assert resolve_contacts(cars_f, cars_i, flags, rules, 0, 2, DT) == 0
    np.testing.assert_array_equal(cars_f, before)


def test_pack_of_cars_resolves_in_three_passes_deterministically():
    # Five cars stacked 0.8 m apart sideways: chains of contacts; two runs give identical bytes.
    def run():
        cars_f, cars_i, flags, rules = make(n=5)
        for c in range(5):
            place(cars_f, c, 0.0, 0.8 * c, 0.0, 30.0)
        for _ in range(10):
            resolve_contacts(cars_f, cars_i, flags, rules, 0, 5, DT)
        return cars_f, cars_i
    f1, i1 = run()
    f2, i2 = run()
    assert f1.tobytes() == f2.tobytes() and i1.tobytes() == i2.tobytes()
    assert np.all(np.isfinite(f1))
    for i in range(5):
        for j in range(i + 1, 5):
            assert overlap(f1, i, j) <= 1e-9
    assert np.all(i1[0, :, L.I_CNT_CONTACTS] >= 1)
