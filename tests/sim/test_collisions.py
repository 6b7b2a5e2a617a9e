"""Car-car contact kernel: detection (with the swept test), PaddockJS 2.0.0's separation, speed
response and heading nudge, events, cooldowns and interaction flags."""

import numpy as np
import pytest

from paddock_ma.sim.core import layout as L
from paddock_ma.sim.race.collisions import box_overlap, detect_contact, resolve_contacts

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
    # the pose at the start of the tick (the step sets it before integrating): no motion this tick
    cars_f[0, c, L.F_PREV_X] = x
    cars_f[0, c, L.F_PREV_Y] = y
    cars_f[0, c, L.F_PREV_HEADING] = h


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
def test_head_on_contact_follows_paddockjs(mode):
    cars_f, cars_i, flags, rules = make(mode=mode)
    place(cars_f, 0, 0.0, 0.0, 0.0, 30.0)
    place(cars_f, 1, 4.2, 0.0, np.pi, 30.0)   # noses overlap by 0.45 m, closing at 60 m/s
    resolve_contacts(cars_f, cars_i, flags, rules, 0, 2, DT)
    # PaddockJS: each car moves depth / 2 + 0.65 u along the axis; the closing speed 60 m/s times
    # (0.34 + restitution) is capped at 16 u/s and taken off both cars moving into the contact, then
    # both speeds x 0.997; the heading nudge is -/+ axis_y (0 here)
    move = 0.45 / 2 + 0.65 / 12
    assert cars_f[0, 0, L.F_X] == pytest.approx(-move) and cars_f[0, 1, L.F_X] == pytest.approx(4.2 + move)
    assert overlap(cars_f, 0, 1) <= 0.0
    v = (30.0 - 16.0 / 12.0) * 0.997
    assert cars_f[0, 0, L.F_SPEED] == pytest.approx(v) and cars_f[0, 1, L.F_SPEED] == pytest.approx(v)
    # (PaddockJS's normalizeAngle maps pi to -pi)
    assert cars_f[0, 0, L.F_HEADING] == 0.0 and abs(cars_f[0, 1, L.F_HEADING]) == pytest.approx(np.pi)
    # tick-start poses move with the cars (the swept test of a later pass starts from there)
    assert cars_f[0, 0, L.F_PREV_X] == pytest.approx(-move)
    if mode == L.PHYSICS_ARCADE:   # arcade cars move along their heading at their speed
        assert cars_f[0, 0, L.F_VX] == pytest.approx(v) and cars_f[0, 1, L.F_VX] == pytest.approx(-v)
    else:                          # PaddockJS leaves a simulator car's world velocity alone
        assert cars_f[0, 0, L.F_VX] == 30.0 and cars_f[0, 1, L.F_VX] == pytest.approx(-30.0)


def test_side_contact_is_mirror_symmetric():
    # Parallel cars at 25 m/s, bodies overlapping 0.24 m side by side.
    cars_f, cars_i, flags, rules = make()
    place(cars_f, 0, 0.0, -0.5, 0.0, 25.0)
    place(cars_f, 1, 0.0, 0.5, 0.0, 25.0)
    p0 = cars_f[0, :, :].copy()
    resolve_contacts(cars_f, cars_i, flags, rules, 0, 2, DT)
    d0 = cars_f[0, 0] - p0[0]
    d1 = cars_f[0, 1] - p0[1]
    # Mirror about y = 0: x and speed changes equal; y and heading changes opposite.
    for f in (L.F_X, L.F_SPEED):
        assert d0[f] == pytest.approx(d1[f], abs=1e-12)
    for f in (L.F_Y, L.F_HEADING):
        assert d0[f] == pytest.approx(-d1[f], abs=1e-12)
    assert d0[L.F_Y] < 0.0 < d1[L.F_Y]
    assert d0[L.F_HEADING] < 0.0            # the left-hand car turns further left, away
    # No closing along the headings: only the 0.3 % contact loss
    assert cars_f[0, 0, L.F_SPEED] == pytest.approx(25.0 * 0.997)


def test_oblique_contact_only_slows():
    # Converging at +-5 degrees: the speeds drop by at most 16 u/s plus 0.3 %, never grow.
    for mode in (L.PHYSICS_SIMULATOR, L.PHYSICS_ARCADE):
        cars_f, cars_i, flags, rules = make(mode=mode)
        a = np.radians(5.0)
        place(cars_f, 0, 0.0, -0.5, a, 25.0)
        place(cars_f, 1, 0.3, 0.5, -a, 30.0)
        resolve_contacts(cars_f, cars_i, flags, rules, 0, 2, DT)
        for c, v in ((0, 25.0), (1, 30.0)):
            assert (v - 16.0 / 12.0) * 0.997 - 1e-9 <= cars_f[0, c, L.F_SPEED] < v


def test_swept_contact_catches_cars_that_passed_through_each_other():
    # Car 0 crossed car 1's flank within one tick: no overlap at either end, one half-way.
    cars_f, cars_i, flags, rules = make()
    place(cars_f, 0, 5.0, 0.0, 0.0, 20.0)
    cars_f[0, 0, L.F_PREV_X] = -5.0
    place(cars_f, 1, 0.0, 1.0, 0.0, 0.0)
    assert overlap(cars_f, 0, 1) <= 0.0
    depth, ax, ay = detect_contact(cars_f, 0, 0, 1)
    assert depth == pytest.approx(0.24) and (ax, ay) == pytest.approx((0.0, 1.0))
    assert resolve_contacts(cars_f, cars_i, flags, rules, 0, 2, DT) == 1


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
