"""Built-in driver: races on every shipped track, stays on the legal surface, rejoins, traffic,
pit intent."""

import math

import numpy as np
import pytest

from paddock_ma.sim.core import layout as L
from paddock_ma.sim.driver.builtin import ai_actions
from paddock_ma.sim.race.start import new_race
from paddock_ma.sim.race.placement import place_car
from paddock_ma.sim.step import step_state
from paddock_ma.sim.track.load import list_tracks, load_track, oval_track

MODES = [pytest.param(L.PHYSICS_SIMULATOR, id="simulator"),
         pytest.param(L.PHYSICS_ARCADE, id="arcade")]


def ai_controls(tr, cars_f, cars_i, car_params, car_flags, rules, world_i, w, c, n_cars):
    """The built-in driver's (steer, throttle, brake) for car ``c`` of world ``w`` (of a one-world state)
    through the public ``ai_actions``, which decides exactly as a tick does."""
    assert cars_f.shape[0] == 1 and w == 0
    out = np.zeros((1, 1, 3), np.float32)
    ai_actions(tr, cars_f, cars_i, car_params, car_flags, rules, np.array([c], np.int64), out)
    return tuple(float(v) for v in out[0, 0])


def run_until(state, done, max_seconds, ticks_per_step=60):
    """Step (one numba call per second of race) until done(state) or max_seconds; returns the summed
    per-step event counters of world 0 (they are cleared at every env step)."""
    counts = np.zeros((state.num_cars, L.NI), np.int64)
    for _ in range(int(max_seconds * 60 / ticks_per_step)):
        step_state(state, n_ticks=ticks_per_step)
        counts += state.cars_i[0]
        if done(state):
            break
    return counts


def all_finished(state):
    ci = state.cars_i[0]
    return bool(np.all((ci[:, L.I_FINISHED] == 1) | (ci[:, L.I_DESTROYED] == 1)))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", list_tracks())
def test_twenty_cars_race_three_laps_on_every_track(name, mode):
    # Acceptance test of the built-in driver: a standing-start, 3-lap race of 20 neutral cars.
    tr = load_track(name)
    state = new_race(tr, 1, 20, seed=3, total_laps=3, physics_mode=mode)
    # Laps average ~170-240 km/h here (2.7 km in ~55 s on the twistiest track), so 3 laps plus
    # the start fit easily in 3 * L / (30 m/s) + 60 s.
    run_until(state, all_finished, 3 * tr.length / 30.0 + 60.0)
    ci = state.cars_i[0]
    best = state.cars_f[0, :, L.F_BEST_LAP_TIME]
    assert ci[:, L.I_DESTROYED].sum() == 0
    assert np.all(ci[:, L.I_FINISHED] == 1)
    assert np.all(best > 0.0)
    # Every car's best lap within 15 % of the fastest car's (the acceptance bound).
    assert best.max() <= 1.15 * best.min(), best
    # Plausible pace: average lap speed between 120 and 330 km/h (F1 race laps average ~200-250).
    v_avg = tr.length / best.min() * 3.6
    assert 120.0 < v_avg < 330.0


@pytest.mark.parametrize("mode", MODES)
def test_single_car_laps_the_oval_on_the_legal_surface(mode):
    tr = oval_track()
    state = new_race(tr, 1, 1, seed=1, total_laps=2, physics_mode=mode, standing_start=0)
    counts = run_until(state, lambda s: s.cars_i[0, 0, L.I_COMPLETED_LAPS] >= 1, 120.0, 30)
    assert state.cars_i[0, 0, L.I_COMPLETED_LAPS] >= 1
    assert counts[0, L.I_CNT_OFFTRACK_TICKS] == 0
    assert counts[0, L.I_CNT_DESTROYED] == 0
    # Oval: 2 x 750 m straights + two R = 150 m bends, 2.45 km. Corner speed sqrt(a_lat * R) with
    # 25-70 m/s^2 of lateral grip is 220-370 km/h, so a flying lap takes roughly 25-45 s.
    lap = state.cars_f[0, 0, L.F_LAST_LAP_TIME]
    assert 25.0 < lap < 50.0


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("offset,heading_error", [(28.0, 0.3), (-15.0, -0.3), (-30.0, 0.0)])
def test_car_off_the_track_rejoins(mode, offset, heading_error):
    # Grass (21-41 m) or gravel (9-21 m), pointing slightly away from the track at 15 m/s.
    tr = oval_track()
    state = new_race(tr, 1, 1, seed=1, total_laps=5, physics_mode=mode, standing_start=0)
    # s = 1200 m: the back straight, far from the pit lane (pit surfaces are legal).
    place_car(tr, state.cars_f, state.cars_i, 0, 0, 1200.0, offset, 15.0, heading_error)
    run_until(state, lambda s: False, 1.0, 60)
    assert state.cars_i[0, 0, L.I_ON_TRACK] == 0          # really off after the first second
    assert state.cars_i[0, 0, L.I_AI_REJOIN] > 0
    back = run_until(state, lambda s: s.cars_i[0, 0, L.I_ON_TRACK] == 1
                     and abs(s.cars_f[0, 0, L.F_OFFSET]) < tr.half_width, 30.0, 10)
    assert state.cars_i[0, 0, L.I_ON_TRACK] == 1
    assert back[0, L.I_CNT_DESTROYED] == 0
    # Once back it races on: another 20 s on the legal surface, going forward.
    rd = state.cars_f[0, 0, L.F_RACE_DISTANCE]
    counts = run_until(state, lambda s: False, 20.0)
    assert counts[0, L.I_CNT_OFFTRACK_TICKS] == 0
    assert state.cars_f[0, 0, L.F_RACE_DISTANCE] - rd > 20.0 * 40.0   # > 144 km/h on average


def _two_cars_on_straight(ahead_flags):
    tr = oval_track()
    state = new_race(tr, 1, 2, seed=1, total_laps=5, physics_mode=L.PHYSICS_SIMULATOR,
                     standing_start=0)
    # The oval's start straight: s = 100 m is straight for hundreds of metres.
    place_car(tr, state.cars_f, state.cars_i, 0, 0, 100.0, 0.0, 60.0, 0.0)
    place_car(tr, state.cars_f, state.cars_i, 0, 1, 112.0, 0.0, 20.0, 0.0)
    state.cars_i[0, :, L.I_ON_TRACK] = 1
    state.cars_f[0, :, L.F_AI_LANE_OFFSET] = 0.0
    state.car_flags[0, 1] = ahead_flags
    return tr, state


def test_slow_colliding_car_ahead_makes_the_driver_brake_and_pull_out():
    tr, state = _two_cars_on_straight(L.FLAG_COLLIDES | L.FLAG_RAY_VISIBLE | L.FLAG_CLASSIFIED)
    steer, throttle, brake = ai_controls(tr, state.cars_f, state.cars_i, state.car_params,
                                         state.car_flags, state.rules, state.world_i, 0, 0, 2)
    # 12 m behind a car 40 m/s slower: inside the following gap (7 + 0.25 * 60 = 22 m).
    assert brake > 0.0 and throttle == 0.0
    assert abs(state.cars_f[0, 0, L.F_AI_LANE_OFFSET]) > 0.0   # the lane starts moving to pass


def test_non_colliding_car_ahead_is_ignored():
    # A phantom / batch-training car cannot be hit, so the built-in driver drives through it.
    tr, state = _two_cars_on_straight(L.FLAG_RAY_VISIBLE | L.FLAG_CLASSIFIED)
    steer, throttle, brake = ai_controls(tr, state.cars_f, state.cars_i, state.car_params,
                                         state.car_flags, state.rules, state.world_i, 0, 0, 2)
    assert brake == 0.0 and throttle > 0.5
    assert state.cars_f[0, 0, L.F_AI_LANE_OFFSET] == 0.0
    assert abs(steer) < 0.05


@pytest.mark.parametrize("mode", MODES)
def test_driver_gets_round_a_stopped_car_without_contact(mode):
    # A policy car parked on the racing line of the oval's back straight; an AI car arrives from
    # 80 m behind at 144 km/h. It must pull out, pass, and never touch it.
    tr = oval_track()
    state = new_race(tr, 1, 2, seed=1, total_laps=5, physics_mode=mode, standing_start=0,
                     controlled=(1,))
    place_car(tr, state.cars_f, state.cars_i, 0, 0, 1120.0, 0.0, 40.0, 0.0)
    place_car(tr, state.cars_f, state.cars_i, 0, 1, 1200.0, 0.0, 0.0, 0.0)
    state.cars_f[0, 0, L.F_AI_LANE_OFFSET] = 0.0
    state.cars_f[0, 1, L.F_THROTTLE_CMD] = 0.0
    state.cars_f[0, 1, L.F_BRAKE_CMD] = 1.0
    counts = run_until(state, lambda s: False, 8.0, 10)
    assert counts[:, L.I_CNT_CONTACTS].sum() == 0
    assert counts[0, L.I_CNT_OFFTRACK_TICKS] == 0
    rd = state.cars_f[0, :, L.F_RACE_DISTANCE]
    assert rd[0] > rd[1] + 50.0            # well past the parked car


def test_controls_are_normalised_and_grid_lock_brakes():
    tr = oval_track()
    state = new_race(tr, 1, 3, seed=1, total_laps=3, physics_mode=L.PHYSICS_SIMULATOR)
    args = (tr, state.cars_f, state.cars_i, state.car_params, state.car_flags, state.rules,
            state.world_i, 0)
    assert ai_controls(*args, 0, 3) == (0.0, 0.0, 1.0)   # standing start: held on the grid
    state.cars_i[0, :, L.I_GRID_LOCKED] = 0
    for c in range(3):
        # Spun round (facing backwards): full lock, never out of range.
        state.cars_f[0, c, L.F_HEADING] += np.pi * (0.5 + 0.5 * c)
        steer, throttle, brake = ai_controls(*args, c, 3)
        assert -1.0 <= steer <= 1.0 and 0.0 <= throttle <= 1.0 and 0.0 <= brake <= 1.0
        assert np.isfinite([steer, throttle, brake]).all()


@pytest.mark.parametrize("energy,expected", [(80.0, 0), (45.0, 1), (25.0, 2)])
def test_pit_intent_from_tyre_energy(energy, expected):
    tr = oval_track()
    state = new_race(tr, 1, 2, seed=1, total_laps=10, physics_mode=L.PHYSICS_SIMULATOR,
                     pit_stops=1, standing_start=0, controlled=(1,))
    state.cars_f[0, :, L.F_TIRE_ENERGY] = energy       # request below 50 %, commit below 30 %
    ai_controls(tr, state.cars_f, state.cars_i, state.car_params, state.car_flags, state.rules,
                state.world_i, 0, 0, 2)
    ai_controls(tr, state.cars_f, state.cars_i, state.car_params, state.car_flags, state.rules,
                state.world_i, 0, 1, 2)
    assert state.cars_i[0, 0, L.I_PIT_INTENT] == expected
    assert state.cars_i[0, 1, L.I_PIT_INTENT] == 0     # a policy-controlled car: never automatic
    # Pit stops switched off: no intent.
    state.rules[0, L.R_PIT_STOPS] = 0.0
    state.cars_i[0, 0, L.I_PIT_INTENT] = 0
    ai_controls(tr, state.cars_f, state.cars_i, state.car_params, state.car_flags, state.rules,
                state.world_i, 0, 0, 2)
    assert state.cars_i[0, 0, L.I_PIT_INTENT] == 0


def _follow_speed_by_definition(ds, dl, vj, gap):
    """The speed (m/s) from which a car decelerating at FOLLOW_DECEL stops ``gap`` m behind a car ``ds`` m
    ahead and ``dl`` m across moving at ``vj`` m/s; at least CREEP_SPEED unless about to touch it."""
    from paddock_ma.sim.driver import traffic as T
    follow_v = math.sqrt(vj * vj + 2.0 * T.FOLLOW_DECEL * max(ds - gap, 0.0))
    if ds > T.CREEP_GAP or abs(dl) > L.CAR_WIDTH:
        follow_v = max(follow_v, T.CREEP_SPEED)
    return follow_v


def _plain_scan(cars_f, cars_i, car_flags, c, length):
    """The built-in driver's traffic scan by its definition: every traffic car in slot order, the
    first nearest car in the way wins. (pass_lane, follow_v, block_l, block_r) as ``scan_traffic``."""
    from paddock_ma.sim.driver import traffic as T
    v, s, off = cars_f[0, c, L.F_SPEED], cars_f[0, c, L.F_PROGRESS], cars_f[0, c, L.F_OFFSET]
    lane = cars_f[0, c, L.F_AI_LANE_OFFSET]
    follow_v, best_ds, pass_lane, block_l, block_r = L.MAX_SPEED, 1e9, math.nan, False, False
    gap = T.FOLLOW_GAP0 + T.FOLLOW_GAP_T * max(v, 0.0)
    vp = max(v, 0.0)
    reach = max(T.TRAFFIC_AHEAD + vp + vp * vp / (2.0 * T.FOLLOW_DECEL), T.SIDE_BY_SIDE)
    for j in range(cars_f.shape[1]):
        if cars_i[0, j, L.I_ACTIVE] == 0 or cars_i[0, j, L.I_DESTROYED] != 0 or not car_flags[0, j] & L.FLAG_COLLIDES:
            continue
        ds = cars_f[0, j, L.F_PROGRESS] - s
        ds = ds - length if ds > 0.5 * length else (ds + length if ds < -0.5 * length else ds)
        if ds > reach or ds <= -T.SIDE_BY_SIDE or j == c:
            continue
        oj = cars_f[0, j, L.F_OFFSET]
        dl = oj - off
        if abs(ds) < T.SIDE_BY_SIDE:
            block_l = block_l or -T.PASS_GAP < dl < 0.0
            block_r = block_r or 0.0 <= dl < T.PASS_GAP
        if ds <= 0.0:
            continue
        vj = max(cars_f[0, j, L.F_SPEED], 0.0)
        closing = max(v - vj, 0.0)
        if ds > T.TRAFFIC_AHEAD + closing + closing * closing / (2.0 * T.FOLLOW_DECEL):
            continue
        if (abs(oj - lane) < T.PASS_GAP + 0.1 or abs(dl) < T.SAME_LANE) and ds < best_ds:
            best_ds = ds
            pass_lane = oj - T.PASS_GAP if oj >= off else oj + T.PASS_GAP
            if abs(dl) < T.FOLLOW_LANE:
                follow_v = _follow_speed_by_definition(ds, dl, vj, gap)
    return pass_lane, follow_v, block_l, block_r


def test_traffic_scan_of_the_sorted_field_is_the_plain_scan():
    # ``gather_traffic`` sorts the field by lap distance so that ``scan_traffic`` visits only the run
    # of cars near a car. Its answers must be the plain scan's: fields bunched and spread, round the
    # start line, with cars at the same lap distance (ties go to the lower slot), at the window's edges,
    # inactive, destroyed and non-colliding ones.
    from paddock_ma.sim.driver import traffic as T
    from paddock_ma.sim.driver.traffic import gather_traffic, scan_traffic
    rng = np.random.default_rng(11)
    length = 1000.0
    n = 20
    cars_f = np.zeros((1, n, L.NF))
    cars_i = np.zeros((1, n, L.NI), np.int32)
    car_flags = np.zeros((1, n), np.int32)
    idx, buf = np.empty(n, np.int64), np.empty((3, n))
    checked = ties = 0
    for trial in range(400):
        spread = [10.0, 60.0, 400.0, length][trial % 4]
        start = rng.uniform(0.0, length)
        prog = (start + rng.uniform(0.0, spread, n)) % length
        dup = rng.integers(0, n, n // 4)
        prog[dup] = prog[rng.integers(0, n)]                 # several cars at one lap distance
        cars_f[0, :, L.F_PROGRESS] = prog
        cars_f[0, :, L.F_OFFSET] = rng.choice([-3.0, -1.0, 0.0, 0.5, 2.0], n) + rng.uniform(-0.3, 0.3, n)
        cars_f[0, :, L.F_SPEED] = rng.uniform(0.0, 90.0, n)
        cars_f[0, :, L.F_AI_LANE_OFFSET] = rng.uniform(-3.0, 3.0, n)
        cars_i[0, :, L.I_ACTIVE] = rng.random(n) > 0.05
        cars_i[0, :, L.I_DESTROYED] = rng.random(n) < 0.05
        car_flags[0] = np.where(rng.random(n) < 0.9, L.FLAG_COLLIDES, 0)
        m = gather_traffic(cars_f, cars_i, car_flags, 0, n, idx, buf[0], buf[1], buf[2])
        assert np.all(np.diff(buf[0, :m]) >= 0.0)
        for c in range(n):
            if trial % 5 == 0:
                # a car just inside the window's ends, where it still counts: stopped in our line just
                # short of the reach, or alongside just short of SIDE_BY_SIDE behind
                j = (c + 1) % n
                v = cars_f[0, c, L.F_SPEED]
                reach = max(T.TRAFFIC_AHEAD + v + v * v / (2.0 * T.FOLLOW_DECEL), T.SIDE_BY_SIDE)
                ahead = c % 2 == 1
                ds = reach - 1e-7 if ahead else -T.SIDE_BY_SIDE + 1e-7
                cars_f[0, j, L.F_PROGRESS] = (cars_f[0, c, L.F_PROGRESS] + ds) % length
                cars_f[0, j, L.F_OFFSET] = cars_f[0, c, L.F_OFFSET] + (0.0 if ahead else 1.0)
                cars_f[0, j, L.F_SPEED] = 0.0 if ahead else cars_f[0, j, L.F_SPEED]
                m = gather_traffic(cars_f, cars_i, car_flags, 0, n, idx, buf[0], buf[1], buf[2])
            want = _plain_scan(cars_f, cars_i, car_flags, c, length)
            got = scan_traffic(idx, buf[0], buf[1], buf[2], m, c, True, cars_f[0, c, L.F_SPEED],
                               cars_f[0, c, L.F_PROGRESS], cars_f[0, c, L.F_OFFSET],
                               cars_f[0, c, L.F_AI_LANE_OFFSET], length)
            assert (got[1:] == want[1:] and (got[0] == want[0] or (math.isnan(got[0]) and math.isnan(want[0])))), \
                (trial, c, got, want)
            checked += not math.isnan(want[0])
            same = prog == cars_f[0, c, L.F_PROGRESS]
            ties += same.sum() > 1
    assert checked > 1000 and ties > 500     # cars in the way were found, and ties met
