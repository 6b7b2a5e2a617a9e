"""Race rules on hand-built state: placement, laps and timing, start lights, red flag, stalled DNF,
counters and race order (paddock_ma.sim.race.rules, race.control, race.placement), driven tick by tick on the oval track."""

import math

import numpy as np
import pytest

from paddock_ma.sim.core import layout as L
from paddock_ma.sim.race.placement import grid_slot, place_car
from paddock_ma.sim.race.pit_service import pit_lane_is_open
from paddock_ma.sim.race.control import car_is_held, init_world, race_control_tick, update_ranks
from paddock_ma.sim.track.load import oval_track
from paddock_ma.sim.track.geometry import point_at
from tests.helpers.kinematic import kinematic_tick

DT = L.DT
FLAGS = (L.FLAG_COLLIDES | L.FLAG_RAY_VISIBLE | L.FLAG_RADAR_VISIBLE | L.FLAG_CLASSIFIED
         | L.FLAG_PIT_OCCUPIES)


@pytest.fixture(scope="module")
def tr():
    return oval_track()


def make(n=2, **overrides):
    """One world of ``n`` active cars with PaddockJS default rules (spec 4.4), rolling start."""
    s = dict(
        cf=np.zeros((1, n, L.NF)), ci=np.zeros((1, n, L.NI), np.int32),
        wf=np.zeros((1, L.NWF)), wi=np.zeros((1, L.NWI), np.int64),
        cp=np.full((1, n, L.NP), 0.5), fl=np.full((1, n), FLAGS, np.int32), ru=np.zeros((1, L.NR)),
    )
    ru = s["ru"]
    defaults = dict(total_laps=5, standing_start=0, pit_stops=0, pit_speed_limit=80 * L.MPS_PER_KPH,
                    pit_stop_seconds=2.8, pit_max_concurrent=3, pit_min_gap=20, stall_seconds=10,
                    light_count=5, light_interval=0.72, lights_out_hold=0.78, pit_issue_chance=0.12,
                    pit_issue_max_delay=4.0)
    defaults.update(overrides)
    for k, v in defaults.items():
        ru[0, getattr(L, "R_" + k.upper())] = v
    s["ci"][0, :, L.I_ACTIVE] = 1
    init_world(s["wf"], s["wi"], ru, 0)
    return s


def test_grid_slots_follow_the_spec():
    # Spec 2.4: standing -6 - 8 i m, rolling -30 - 35 i m, offsets -3.2 / +3.2 alternating.
    assert grid_slot(0, True) == (-6.0, -3.2)
    assert grid_slot(3, True) == (-30.0, 3.2)
    assert grid_slot(2, False) == (-100.0, -3.2)
    assert grid_slot(1, False) == (-65.0, 3.2)


def test_place_car_resets_state_and_poses_on_the_normal(tr):
    s = make(1)
    cf, ci = s["cf"], s["ci"]
    ci[0, 0, L.I_CNT_CONTACTS] = 4
    ci[0, 0, L.I_DESTROYED] = 1
    ci[0, 0, L.I_GRID_LOCKED] = 1
    ci[0, 0, L.I_PIT_STATUS] = L.PIT_SERVICING
    ci[0, 0, L.I_EPISODE_ID] = 7
    cf[0, 0, L.F_TIRE_ENERGY] = 42.0
    cf[0, 0, L.F_STALL_TIME] = 3.0
    rd = 1.5 * tr.length + 10.0
    place_car(tr, cf, ci, 0, 0, rd, 4.0, 30.0, 0.2, 12.5)
    x, y, h, _ = point_at(tr, rd % tr.length)
    assert cf[0, 0, L.F_X] == pytest.approx(x - 4.0 * math.sin(h))
    assert cf[0, 0, L.F_Y] == pytest.approx(y + 4.0 * math.cos(h))
    assert math.cos(cf[0, 0, L.F_HEADING] - h - 0.2) == pytest.approx(1.0)
    assert -math.pi < cf[0, 0, L.F_HEADING] <= math.pi
    assert cf[0, 0, L.F_VX] == pytest.approx(30.0 * math.cos(h + 0.2))
    assert cf[0, 0, L.F_PROGRESS] == pytest.approx(rd % tr.length, abs=1e-6)
    assert cf[0, 0, L.F_OFFSET] == pytest.approx(4.0, abs=1e-6)
    assert cf[0, 0, L.F_RACE_DISTANCE] == rd
    assert ci[0, 0, L.I_LAP] == 2 and ci[0, 0, L.I_COMPLETED_LAPS] == 1
    # placed part-way round a lap: no lap or sector clock until the next line (a partial lap has no time)
    assert cf[0, 0, L.F_LAP_START_TIME] == L.NO_CLOCK and cf[0, 0, L.F_SECTOR_START_TIME] == L.NO_CLOCK
    place_car(tr, cf, ci, 0, 0, 2 * tr.length, 4.0, 30.0, 0.2, 12.5)     # on the line: the clock runs
    assert cf[0, 0, L.F_LAP_START_TIME] == 12.5 and cf[0, 0, L.F_SECTOR_START_TIME] == 12.5
    assert ci[0, 0, L.I_CNT_CONTACTS] == 0 and ci[0, 0, L.I_DESTROYED] == 0
    assert ci[0, 0, L.I_GRID_LOCKED] == 0 and ci[0, 0, L.I_PIT_STATUS] == L.PIT_PENDING
    assert cf[0, 0, L.F_STALL_TIME] == 0.0
    # Not the placement's business: episode fields and tyres.
    assert ci[0, 0, L.I_EPISODE_ID] == 7 and cf[0, 0, L.F_TIRE_ENERGY] == 42.0


def test_constant_speed_lap_time_and_sectors(tr):
    s = make(1)
    cf, ci = s["cf"], s["ci"]
    v = 50.0
    place_car(tr, cf, ci, 0, 0, -20.0, 0.0, v, 0.0)
    for _ in range(int((tr.length + 40.0) / v / DT)):
        kinematic_tick(tr, s)   # counters are never cleared here (no env step): they total the run
    assert ci[0, 0, L.I_CNT_LAPS] == 1 and ci[0, 0, L.I_COMPLETED_LAPS] == 1 and ci[0, 0, L.I_LAP] == 2
    # Constant speed: the lap from the line back to the line takes L / v. The crossing time is
    # interpolated inside the tick, so the error is far below one tick (16.7 ms, the error without
    # interpolation); 1e-6 s leaves room for the centreline projection's rounding.
    lap = cf[0, 0, L.F_LAST_LAP_TIME]
    assert lap == pytest.approx(tr.length / v, abs=1e-6)
    assert cf[0, 0, L.F_BEST_LAP_TIME] == lap
    sectors = cf[0, 0, L.F_SECTOR1_TIME:L.F_SECTOR3_TIME + 1]
    assert sectors.sum() == pytest.approx(lap, abs=1e-9)
    lengths = np.diff(np.append(tr.sector_s, tr.length))
    np.testing.assert_allclose(sectors, lengths / v, atol=1e-6)
    assert cf[0, 0, L.F_RACE_DISTANCE] == pytest.approx(-20.0 + v * DT * int((tr.length + 40.0) / v / DT),
                                                        abs=0.05)


def test_partial_first_lap_has_no_time(tr):
    """Issue 14, defect 9: a car placed 8 m before the line completes a lap when it crosses it, but that
    partial lap (and its partial sector) has no time; the next full lap has the whole lap's time."""
    s = make(1)
    cf, ci = s["cf"], s["ci"]
    v = 50.0
    place_car(tr, cf, ci, 0, 0, tr.length - 8.0, 0.0, v, 0.0)
    for _ in range(int(20.0 / v / DT)):          # 20 m: over the line
        kinematic_tick(tr, s)
    assert ci[0, 0, L.I_CNT_LAPS] == 1 and ci[0, 0, L.I_COMPLETED_LAPS] == 1
    assert cf[0, 0, L.F_LAST_LAP_TIME] == 0.0 and cf[0, 0, L.F_BEST_LAP_TIME] == 0.0
    assert cf[0, 0, L.F_SECTOR3_TIME] == 0.0      # the partial third sector has no time either
    for _ in range(int(tr.length / v / DT)):      # a full lap more
        kinematic_tick(tr, s)
    assert ci[0, 0, L.I_CNT_LAPS] == 2
    assert cf[0, 0, L.F_LAST_LAP_TIME] == pytest.approx(tr.length / v, abs=1e-6)
    # placed exactly on the line (or on the grid behind it), the first lap is a whole one
    place_car(tr, cf, ci, 0, 0, tr.length, 0.0, v, 0.0, s["wf"][0, L.WF_TIME])
    for _ in range(int((tr.length + 20.0) / v / DT)):
        kinematic_tick(tr, s)
    assert cf[0, 0, L.F_LAST_LAP_TIME] == pytest.approx(tr.length / v, abs=1e-6)


def test_lap_wrap_and_backwards_driving(tr):
    s = make(1)
    cf, ci = s["cf"], s["ci"]
    # Just before the line on lap 3: crossing it must add a few metres, not subtract a lap.
    place_car(tr, cf, ci, 0, 0, 3 * tr.length - 3.0, 0.0, 30.0, 0.0)
    for _ in range(12):
        kinematic_tick(tr, s)
    assert cf[0, 0, L.F_RACE_DISTANCE] == pytest.approx(3 * tr.length - 3.0 + 12 * 30.0 * DT, abs=0.02)
    assert ci[0, 0, L.I_COMPLETED_LAPS] == 3 and ci[0, 0, L.I_CNT_LAPS] == 1
    # Backwards across the line: race distance falls below 3 L, no lap is taken away or re-counted.
    cf[0, 0, L.F_SPEED] = -30.0
    ci[0, 0, L.I_CNT_LAPS] = 0
    rd0 = cf[0, 0, L.F_RACE_DISTANCE]
    for _ in range(30):
        kinematic_tick(tr, s)
    assert cf[0, 0, L.F_RACE_DISTANCE] == pytest.approx(rd0 - 30 * 30.0 * DT, abs=0.02)
    assert cf[0, 0, L.F_RACE_DISTANCE] < 3 * tr.length
    assert cf[0, 0, L.F_STEP_PROGRESS] < 0.0
    # Driving backwards on track counts as spinning/backwards (heading error 180 deg > 0.45 pi).
    assert ci[0, 0, L.I_CNT_SPIN_TICKS] == 30
    cf[0, 0, L.F_SPEED] = 30.0
    for _ in range(40):
        kinematic_tick(tr, s)
    assert ci[0, 0, L.I_COMPLETED_LAPS] == 3 and ci[0, 0, L.I_CNT_LAPS] == 0


def test_standing_start_holds_until_lights_out(tr):
    s = make(2, standing_start=1)
    init_world(s["wf"], s["wi"], s["ru"], 0)
    cf, ci = s["cf"], s["ci"]
    for c in range(2):
        rd, off = grid_slot(c, True)
        place_car(tr, cf, ci, 0, c, rd, off, 0.0, 0.0)
        cf[0, c, L.F_SPEED] = 20.0  # a stray speed: the lock must still hold the car
    ci[0, :, L.I_GRID_LOCKED] = 1
    # Spec 4.2: 5 lights x 0.72 s + 0.78 s hold = 4.38 s -> the first tick at or after it is 263.
    assert s["wf"][0, L.WF_LIGHTS_OUT_AT] == pytest.approx(4.38)
    for k in range(1, 263):
        kinematic_tick(tr, s)
        assert s["wi"][0, L.WI_RACE_MODE] == L.MODE_PRE_START, k
    assert cf[0, 0, L.F_RACE_DISTANCE] == pytest.approx(-6.0, abs=1e-6)
    cf[0, :, L.F_SPEED] = 20.0
    kinematic_tick(tr, s)
    assert s["wi"][0, L.WI_RACE_MODE] == L.MODE_GREEN
    assert s["wf"][0, L.WF_TIME] == pytest.approx(263 * DT)
    assert (ci[0, :, L.I_GRID_LOCKED] == 0).all()
    assert cf[0, 0, L.F_RACE_DISTANCE] == pytest.approx(-6.0 + 20.0 * DT, abs=1e-3)


def test_start_released_when_no_car_is_locked(tr):
    s = make(1, standing_start=1)
    init_world(s["wf"], s["wi"], s["ru"], 0)
    place_car(tr, s["cf"], s["ci"], 0, 0, 100.0, 0.0, 30.0, 0.0)   # scenario placement unlocks
    kinematic_tick(tr, s)
    assert s["wi"][0, L.WI_RACE_MODE] == L.MODE_GREEN


def test_red_flag_holds_closes_pit_and_restarts(tr):
    s = make(2)
    cf, ci, wi = s["cf"], s["ci"], s["wi"]
    place_car(tr, cf, ci, 0, 0, 500.0, 0.0, 40.0, 0.0)
    place_car(tr, cf, ci, 0, 1, 400.0, 0.0, 40.0, 0.0)
    kinematic_tick(tr, s)
    wi[0, L.WI_RED_FLAG] = 1
    kinematic_tick(tr, s)
    assert wi[0, L.WI_RACE_MODE] == L.MODE_RED_FLAG
    assert s["wf"][0, L.WF_RED_FLAG_TIME] == pytest.approx(2 * DT)
    assert car_is_held(ci, wi, 0, 0) and not pit_lane_is_open(wi, 0)
    rd = cf[0, :, L.F_RACE_DISTANCE].copy()
    ranks = ci[0, :, L.I_RANK].copy()
    for _ in range(30):
        kinematic_tick(tr, s)
    np.testing.assert_array_equal(cf[0, :, L.F_RACE_DISTANCE], rd)
    np.testing.assert_array_equal(ci[0, :, L.I_RANK], ranks)
    wi[0, L.WI_RED_FLAG] = 0
    race_control_tick(cf, ci, s["wf"], wi, s["ru"], 0, 2, DT)
    assert wi[0, L.WI_RACE_MODE] == L.MODE_GREEN and pit_lane_is_open(wi, 0)
    # Spec 4.3: cars restart at >= 60 km/h.
    assert (cf[0, :, L.F_SPEED] >= 60.0 * L.MPS_PER_KPH - 1e-12).all()


def test_red_flag_ignored_before_the_start(tr):
    s = make(1, standing_start=1)
    init_world(s["wf"], s["wi"], s["ru"], 0)
    place_car(tr, s["cf"], s["ci"], 0, 0, -6.0, -3.2, 0.0, 0.0)
    s["ci"][0, 0, L.I_GRID_LOCKED] = 1
    s["wi"][0, L.WI_RED_FLAG] = 1
    kinematic_tick(tr, s)
    assert s["wi"][0, L.WI_RACE_MODE] == L.MODE_PRE_START


@pytest.mark.parametrize("enabled", [1, 0])
def test_stalled_dnf(tr, enabled):
    s = make(2, stalled_dnf=enabled, stall_seconds=2.0)
    cf, ci = s["cf"], s["ci"]
    # Car 0 stopped in the gravel (|offset| 14.5 m is between kerb 9 m and gravel 21 m, the spec's
    # off-track-recovery preset); car 1 crawls at 10 km/h in the gravel: above the 5 km/h stall speed.
    place_car(tr, cf, ci, 0, 0, 600.0, 14.5, 0.0, 0.0)
    place_car(tr, cf, ci, 0, 1, 700.0, 14.5, 10.0 * L.MPS_PER_KPH, 0.0)
    for _ in range(int(2.0 / DT) + 2):
        kinematic_tick(tr, s)
    assert ci[0, 0, L.I_ON_TRACK] == 0
    assert ci[0, 1, L.I_RETIRED] == 0
    if enabled:
        assert ci[0, 0, L.I_RETIRED] == 1 and ci[0, 0, L.I_TERMINATED] == 1
        assert ci[0, 0, L.I_END_REASON] == L.END_STALLED and ci[0, 0, L.I_DESTROYED] == 0
        assert car_is_held(ci, s["wi"], 0, 0)
    else:
        assert ci[0, 0, L.I_RETIRED] == 0 and ci[0, 0, L.I_END_REASON] == L.END_NONE
        assert cf[0, 0, L.F_STALL_TIME] == 0.0


def test_stall_clock_resets_on_track(tr):
    s = make(1, stalled_dnf=1, stall_seconds=2.0)
    cf, ci = s["cf"], s["ci"]
    place_car(tr, cf, ci, 0, 0, 600.0, 14.5, 0.0, 0.0)
    for _ in range(60):
        kinematic_tick(tr, s)
    assert cf[0, 0, L.F_STALL_TIME] == pytest.approx(1.0)
    cf[0, 0, L.F_OFFSET] = 0.0   # the kinematic driver keeps F_OFFSET: back on the asphalt
    kinematic_tick(tr, s)
    assert ci[0, 0, L.I_ON_TRACK] == 1 and cf[0, 0, L.F_STALL_TIME] == 0.0


def test_tick_counters(tr):
    s = make(3)
    cf, ci = s["cf"], s["ci"]
    # Car 0: on the kerb (offset 8.0 m: right wheels at 8.76 m, inside kerb 7.5..9 m).
    # Car 1: all four wheels in the gravel on the right (offset 14 m) -> off track and a severe cut.
    # Car 2: on the asphalt at 20 km/h -> slow.
    place_car(tr, cf, ci, 0, 0, 300.0, 8.0, 50.0, 0.0)
    place_car(tr, cf, ci, 0, 1, 600.0, 14.0, 50.0, 0.0)
    place_car(tr, cf, ci, 0, 2, 900.0, 0.0, 20.0 * L.MPS_PER_KPH, 0.0)
    for _ in range(10):
        kinematic_tick(tr, s)
    assert ci[0, 0, L.I_CNT_KERB_TICKS] == 10 and ci[0, 0, L.I_CNT_OFFTRACK_TICKS] == 0
    assert ci[0, 0, L.I_CNT_SEVERE_CUT_TICKS] == 0 and ci[0, 0, L.I_CNT_SLOW_TICKS] == 0
    assert ci[0, 1, L.I_CNT_OFFTRACK_TICKS] == 10 and ci[0, 1, L.I_CNT_SEVERE_CUT_TICKS] == 10
    assert ci[0, 1, L.I_CNT_KERB_TICKS] == 0
    assert ci[0, 2, L.I_CNT_SLOW_TICKS] == 10 and ci[0, 2, L.I_CNT_OFFTRACK_TICKS] == 0
    assert ci[0, 2, L.I_CNT_SPIN_TICKS] == 0
    # Legal progress excludes the off-track car's distance; all progress counts it.
    assert cf[0, 1, L.F_STEP_PROGRESS] == pytest.approx(10 * 50.0 * DT, rel=0.1)
    assert cf[0, 1, L.F_STEP_LEGAL_PROGRESS] == 0.0
    assert cf[0, 0, L.F_STEP_LEGAL_PROGRESS] == pytest.approx(cf[0, 0, L.F_STEP_PROGRESS])


def test_finish_and_race_order(tr):
    s = make(4, total_laps=2)
    cf, ci, fl, wi = s["cf"], s["ci"], s["fl"], s["wi"]
    fl[0, 3] &= ~L.FLAG_CLASSIFIED            # a batch-training style car: not classified
    place_car(tr, cf, ci, 0, 0, 2 * tr.length - 10.0, 0.0, 50.0, 0.0)   # 0.2 s from the flag
    place_car(tr, cf, ci, 0, 1, 2 * tr.length - 30.0, 0.0, 50.0, 0.0)   # 0.6 s
    place_car(tr, cf, ci, 0, 2, 2 * tr.length - 60.0, 0.0, 30.0, 0.0)   # 2.0 s
    place_car(tr, cf, ci, 0, 3, 2 * tr.length - 1.0, 0.0, 50.0, 0.0)
    kinematic_tick(tr, s)
    assert list(ci[0, :, L.I_RANK]) == [1, 2, 3, 0]
    for _ in range(20):
        kinematic_tick(tr, s)
    assert ci[0, 0, L.I_FINISHED] == 1 and ci[0, 1, L.I_FINISHED] == 0
    # 10 m at 50 m/s from t = 0: the flag falls at 0.2 s, interpolated inside the tick.
    assert cf[0, 0, L.F_FINISH_TIME] == pytest.approx(0.2, abs=1e-6)
    assert ci[0, 0, L.I_LAP] == 2                     # clamped to the race's laps
    for _ in range(20):
        kinematic_tick(tr, s)
    assert ci[0, 1, L.I_FINISHED] == 1 and ci[0, 2, L.I_FINISHED] == 0
    # Car 2 is behind on distance; make it leader on the road: finished cars still rank first.
    cf[0, 2, L.F_SPEED] = 0.0
    kinematic_tick(tr, s)
    assert list(ci[0, :, L.I_RANK]) == [1, 2, 3, 0]
    assert wi[0, L.WI_RACE_FINISHED] == 0        # a stopped car keeps the race open (spec 4.2)
    cf[0, 2, L.F_SPEED] = 30.0
    for _ in range(80):
        kinematic_tick(tr, s)
    assert ci[0, 2, L.I_FINISHED] == 1 and cf[0, 2, L.F_FINISH_TIME] > cf[0, 1, L.F_FINISH_TIME]
    assert list(ci[0, :, L.I_RANK]) == [1, 2, 3, 0]
    assert wi[0, L.WI_RACE_FINISHED] == 1 and wi[0, L.WI_RACE_MODE] == L.MODE_SAFETY_CAR
    assert not car_is_held(ci, wi, 0, 0)           # finished cars keep driving


def test_ranks_by_race_distance(tr):
    s = make(5)
    cf, ci = s["cf"], s["ci"]
    for c, rd in enumerate([100.0, 2600.0, -20.0, 900.0, 900.0]):
        place_car(tr, cf, ci, 0, c, rd, 0.0, 0.0, 0.0)
    ci[0, 2, L.I_ACTIVE] = 0
    update_ranks(cf, ci, s["fl"], s["wi"], 0, 5, np.empty(5, np.int64))
    # Ties on distance keep the lower slot ahead; the empty slot has rank 0.
    assert list(ci[0, :, L.I_RANK]) == [4, 1, 0, 2, 3]


def test_ranks_do_not_depend_on_the_last_ranks_the_sort_starts_from():
    # update_ranks starts its insertion sort from the cars' last ranks (cheap when few cars overtake);
    # the ranks must be the one order of the rule whatever those last ranks hold: stale, duplicated,
    # out of range, negative, or from other cars.
    rng = np.random.default_rng(11)
    n = 20
    s = make(n)
    cf, ci, fl, wi = s["cf"], s["ci"], s["fl"], s["wi"]
    order = np.empty(n, np.int64)
    for trial in range(3000):
        ci[0, :, L.I_ACTIVE] = rng.random(n) < 0.9
        fl[0, :] = np.where(rng.random(n) < 0.9, FLAGS, FLAGS & ~L.FLAG_CLASSIFIED)
        ci[0, :, L.I_FINISHED] = rng.random(n) < 0.3
        # few distinct values, so ties on distance and on finish time are common
        cf[0, :, L.F_RACE_DISTANCE] = rng.integers(-2, 6, n) * 250.0
        cf[0, :, L.F_FINISH_TIME] = rng.integers(0, 4, n) * 0.5
        if trial % 3 == 0:
            last = rng.integers(-2, n + 3, n)                      # anything
        elif trial % 3 == 1:
            last = rng.permutation(n) + 1                          # a stale order
        else:
            last = np.zeros(n, np.int64)                           # none yet: slot order
        ci[0, :, L.I_RANK] = last
        wi[0, L.WI_RACE_FINISHED] = 1                              # leave the race state alone
        update_ranks(cf, ci, fl, wi, 0, n, order)
        ranked = [c for c in range(n) if ci[0, c, L.I_ACTIVE] and fl[0, c] & L.FLAG_CLASSIFIED]
        # the rule: finished first by finish time, then race distance descending, then slot
        want_order = sorted(ranked, key=lambda c: (not ci[0, c, L.I_FINISHED],
                                                   cf[0, c, L.F_FINISH_TIME] if ci[0, c, L.I_FINISHED]
                                                   else -cf[0, c, L.F_RACE_DISTANCE], c))
        want = np.zeros(n, np.int64)
        for r, c in enumerate(want_order):
            want[c] = r + 1
        assert np.array_equal(ci[0, :, L.I_RANK], want), (trial, last)
