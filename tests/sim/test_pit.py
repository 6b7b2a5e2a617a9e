"""Pit stops on hand-built state (paddock_ma.sim.race.pit_service, and its entry via paddock_ma.sim.race.rules): entry decision,
scripted route, queueing, service time and its randomness, red flag, on the oval track."""

import math

import numpy as np
import pytest

from paddock_ma.sim.core import layout as L
from paddock_ma.sim.race import pit_service as P
from paddock_ma.sim.core.rng import rng_uniform
from paddock_ma.sim.track.load import oval_track
from paddock_ma.sim.track.geometry import point_at
from tests.helpers.kinematic import kinematic_tick, pit_world, place_before_pit

DT = L.DT
ACTIVE = (L.PIT_ENTERING, L.PIT_QUEUED, L.PIT_SERVICING, L.PIT_EXITING)


@pytest.fixture(scope="module")
def tr():
    return oval_track()


def run_stop(tr, s, max_ticks=4000):
    """Tick until every car with intent has completed a stop; per-tick status history [T, C]."""
    hist = []
    for _ in range(max_ticks):
        kinematic_tick(tr, s)
        hist.append(s["ci"][0, :, L.I_PIT_STATUS].copy())
        if all(st == L.PIT_COMPLETED or s["ci"][0, c, L.I_PIT_STOPS] > 0
               for c, st in enumerate(hist[-1])):
            break
    return np.array(hist)


def test_committed_stop_full_cycle(tr):
    s = pit_world(1)
    cf, ci = s["cf"], s["ci"]
    place_before_pit(tr, s, 0, 400.0)
    rd, hist = [], []
    off_track = 0
    for _ in range(4000):
        kinematic_tick(tr, s)
        hist.append(ci[0, 0, L.I_PIT_STATUS])
        rd.append(cf[0, 0, L.F_RACE_DISTANCE])
        # pit surfaces and the approach are legal, but where PaddockJS's wheels read the main track's
        # bands: crossing the 1.5 m gap to the working lane, and on the connector beyond its 35 m window
        # while the car's centre is still within the kerb (test_the_route_runs_on_pit_surfaces)
        off_track += ci[0, 0, L.I_ON_TRACK] == 0
        assert ci[0, 0, L.I_ON_TRACK] == 1 or hist[-1] != L.PIT_SERVICING
        if hist[-1] == L.PIT_COMPLETED:
            break
    assert off_track < 150
    hist = np.array(hist)
    # Statuses in order, each phase entered once: pending, entering, servicing, exiting, completed.
    changes = [hist[0]] + [b for a, b in zip(hist[:-1], hist[1:]) if a != b]
    assert changes == [L.PIT_PENDING, L.PIT_ENTERING, L.PIT_SERVICING, L.PIT_EXITING, L.PIT_COMPLETED]
    # The stop starts 250 m before the entry (spec 4.6 start condition): 150 m at 60 m/s = 2.5 s.
    first = int(np.argmax(hist == L.PIT_ENTERING))
    assert first == pytest.approx(150.0 / 60.0 / DT, abs=1.5)
    assert ci[0, 0, L.I_COMPOUND] == L.COMPOUND_H and cf[0, 0, L.F_TIRE_ENERGY] == 100.0
    assert ci[0, 0, L.I_USED_COMPOUNDS] == (1 << L.COMPOUND_S) | (1 << L.COMPOUND_H)
    assert ci[0, 0, L.I_PIT_STOPS] == 1 and ci[0, 0, L.I_PIT_INTENT] == 0
    assert ci[0, 0, L.I_CNT_PIT_ENTRY] == 1 and ci[0, 0, L.I_CNT_PIT_STOP_DONE] == 1
    assert ci[0, 0, L.I_CNT_PIT_EXIT] == 1
    # Service: the default 2.8 s stop (spec 4.4) = 168 ticks, at rest.
    assert (hist == L.PIT_SERVICING).sum() == 168
    # Race distance never goes backwards through the stop, and the lap is counted inside the pit
    # (the oval's pit straddles the line: entry at L - 264 m, exit at 196 m).
    assert np.all(np.diff(rd) >= -1e-9)
    assert ci[0, 0, L.I_COMPLETED_LAPS] == 2
    # Rejoining: on the track at the exit, at >= 95 km/h (spec 4.6), heading along the track.
    x, y, h, _ = point_at(tr, tr.pit_exit_s)
    assert math.hypot(cf[0, 0, L.F_X] - x, cf[0, 0, L.F_Y] - y) < 8.0
    assert cf[0, 0, L.F_SPEED] >= 95.0 * L.MPS_PER_KPH
    assert math.cos(cf[0, 0, L.F_HEADING] - h) == pytest.approx(1.0)
    assert abs(cf[0, 0, L.F_PROGRESS] - tr.pit_exit_s) < 1.0
    assert cf[0, 0, L.F_VX] == pytest.approx(cf[0, 0, L.F_SPEED] * math.cos(cf[0, 0, L.F_HEADING]))
    # The car runs on after the stop and is not stopped again (intent was reset).
    for _ in range(60):
        kinematic_tick(tr, s)
    assert ci[0, 0, L.I_PIT_STATUS] == L.PIT_COMPLETED and ci[0, 0, L.I_CNT_PIT_ENTRY] == 1


@pytest.mark.parametrize("box", [0, 4, 9])
def test_the_route_runs_on_pit_surfaces(tr, box):
    """Issue 14, defect 4: from the connector to the exit the route's wheels are on pit surfaces (the
    easing into and out of the box included), never grass, gravel or barrier, and the car is on track;
    but while a wheel crosses PaddockJS's 1.5 m gap between the fast lane and the working lane (its
    service areas lie on the working lane: PaddockJS's cars cross the gap too), and on the connector
    where PaddockJS's wheel rule reads the main track's bands (the car's centre within the kerb, more
    than 35 m from the pit entry or exit: the outer wheels read gravel); never destroyed."""
    from paddock_ma.sim.track.surface import PIT_WORK_GAP, pit_lane_frame

    s = pit_world(1)
    cf, ci = s["cf"], s["ci"]
    place_before_pit(tr, s, 0, 300.0, box=box)
    pit = {L.SURF_PIT_ENTRY, L.SURF_PIT_LANE, L.SURF_PIT_EXIT, L.SURF_PIT_BOX}
    legal = pit | {L.SURF_TRACK, L.SURF_KERB}
    sx, sy, dx, dy, nx, ny, _ = pit_lane_frame(tr.px, tr.py, tr.pit_side)
    hw = tr.pit_width / 2
    reach = math.hypot(L.WHEEL_X + L.PATCH_LENGTH / 2, L.WHEEL_Y + L.PATCH_WIDTH / 2)
    seen = set()
    gap_ticks = 0
    for _ in range(4000):
        kinematic_tick(tr, s)
        assert ci[0, 0, L.I_DESTROYED] == 0
        if ci[0, 0, L.I_PIT_STATUS] == L.PIT_COMPLETED:
            break
        if ci[0, 0, L.I_PIT_STATUS] in ACTIVE:
            wheels = {int(ci[0, 0, f]) for f in L.WHEEL_SURFACE_FIELDS}
            seen |= wheels
            v = (cf[0, 0, L.F_X] - sx) * nx + (cf[0, 0, L.F_Y] - sy) * ny
            centre_on_kerb = abs(cf[0, 0, L.F_OFFSET]) <= tr.kerb_edge + reach
            if hw - reach < v < hw + PIT_WORK_GAP + reach or centre_on_kerb:
                gap_ticks += not wheels <= legal
                continue
            assert wheels <= legal, [L.SURFACE_NAMES[x] for x in wheels]
            assert ci[0, 0, L.I_ON_TRACK] == 1 and ci[0, 0, L.I_IN_PIT_LANE] == 1
    assert ci[0, 0, L.I_PIT_STOPS] == 1 and {L.SURF_PIT_LANE, L.SURF_PIT_BOX} <= seen
    assert gap_ticks < 150          # the crossings in and out of the box, about a second each


def test_route_speeds_respect_the_pit_limit(tr):
    s = pit_world(1)
    cf, ci = s["cf"], s["ci"]
    place_before_pit(tr, s, 0, 240.0, speed=80.0)
    limit = 80.0 * L.MPS_PER_KPH
    prev = cf[0, 0, L.F_SPEED]
    for _ in range(4000):
        kinematic_tick(tr, s)
        st = ci[0, 0, L.I_PIT_STATUS]
        ps = cf[0, 0, L.F_PIT_PATH_S]
        if st in (L.PIT_ENTERING, L.PIT_EXITING) and tr.pit_lane_start + 1.0 < ps < tr.pit_lane_end:
            assert cf[0, 0, L.F_SPEED] <= limit + 1e-9
        if st in ACTIVE:
            # Spec cap 150 km/h off the limiter: a car arriving faster (288 km/h here) only slows.
            assert cf[0, 0, L.F_SPEED] <= max(150.0 * L.MPS_PER_KPH, prev) + 1e-9
        prev = cf[0, 0, L.F_SPEED]
        if st == L.PIT_COMPLETED:
            break
    assert ci[0, 0, L.I_PIT_STOPS] == 1


def test_perfect_stop_lasts_exactly_the_stop_time(tr):
    s = pit_world(1, pit_variability=1, pit_perfect=1, pit_stop_seconds=3.5)
    s["cp"][0, 0, L.P_PIT_CREW_SPEED] = 0.0         # a slow crew would add 0.6 s if it counted
    place_before_pit(tr, s, 0, 200.0)
    counter0 = s["wi"][0, L.WI_RNG_COUNTER]
    hist = run_stop(tr, s)
    assert (hist[:, 0] == L.PIT_SERVICING).sum() == round(3.5 / DT)
    assert s["wi"][0, L.WI_RNG_COUNTER] == counter0          # perfect stops draw nothing


def _service_ticks(tr, seed, speed=0.5, consistency=0.5, reliability=0.5):
    s = pit_world(1, seed=seed, pit_variability=1)
    s["cp"][0, 0, L.P_PIT_CREW_SPEED] = speed
    s["cp"][0, 0, L.P_PIT_CREW_CONSISTENCY] = consistency
    s["cp"][0, 0, L.P_PIT_CREW_RELIABILITY] = reliability
    place_before_pit(tr, s, 0, 200.0)
    wi0 = s["wi"].copy()
    hist = run_stop(tr, s)
    # Replay the formula (spec 4.6) with the world's RNG stream from the same state.
    u1, u2, u3 = (rng_uniform(wi0, 0) for _ in range(3))
    issue = 0.35 + u3 * 4.0 * (1 - reliability) if u2 < 0.12 * (1 - reliability) else 0.0
    expect = max(1.6, 2.8 + (0.5 - speed) * 1.2 + (u1 - 0.5) * (1 - consistency) * 1.4 + issue)
    return (hist[:, 0] == L.PIT_SERVICING).sum(), expect


def test_variable_stops_draw_from_the_world_rng(tr):
    n1, e1 = _service_ticks(tr, seed=11)
    n1b, _ = _service_ticks(tr, seed=11)
    assert n1 == n1b                                            # same seed, same stop
    assert n1 == math.ceil(e1 / DT - 1e-6)                      # the formula, to the tick
    durations = {_service_ticks(tr, seed=sd)[0] for sd in (11, 12, 13, 14)}
    assert len(durations) > 1                                   # seeds differ
    # A slow, inconsistent, unreliable crew on average is slower than a fast reliable one.
    slow = np.mean([_service_ticks(tr, sd, 0.0, 0.0, 0.0)[0] for sd in range(4)])
    fast = np.mean([_service_ticks(tr, sd, 1.0, 1.0, 1.0)[0] for sd in range(4)])
    assert slow > fast
    assert fast == round(max(1.6, 2.8 - 0.6) / DT)              # fast crew: 2.2 s, no jitter/issue


def test_service_seconds_floor():
    ru = np.zeros((1, L.NR))
    ru[0, L.R_PIT_STOP_SECONDS] = 1.0
    cp = np.full((1, 1, L.NP), 1.0)
    wi = np.zeros((1, L.NWI), np.int64)
    assert P.service_seconds(cp, wi, ru, 0, 0) == 1.0           # variability off: the base
    ru[0, L.R_PIT_VARIABILITY] = 1
    ru[0, L.R_PIT_STOP_SECONDS] = 2.0
    # Fast crew: 2.0 - 0.6 = 1.4 s, floored at min(1.6, base) = 1.6 s.
    assert P.service_seconds(cp, wi, ru, 0, 0) == 1.6


def test_queue_when_the_team_box_is_busy(tr):
    s = pit_world(2)
    ci = s["ci"]
    place_before_pit(tr, s, 0, 230.0, box=3)
    place_before_pit(tr, s, 1, 260.0, box=3)          # same team, 30 m behind
    hist = run_stop(tr, s, 6000)
    a, b = hist[:, 0], hist[:, 1]
    assert (b == L.PIT_QUEUED).any() and not (a == L.PIT_QUEUED).any()
    # The second car is serviced only after the first has left service, never at the same time.
    assert not ((a == L.PIT_SERVICING) & (b == L.PIT_SERVICING)).any()
    assert int(np.argmax(b == L.PIT_SERVICING)) > int(np.argmax(a == L.PIT_EXITING))
    assert (b == L.PIT_SERVICING).sum() == 168
    assert list(ci[0, :, L.I_PIT_STOPS]) == [1, 1]
    assert list(ci[0, :, L.I_CNT_PIT_STOP_DONE]) == [1, 1]


@pytest.mark.parametrize("case", ["other_box", "not_occupying"])
def test_no_queue_without_a_shared_occupied_box(tr, case):
    s = pit_world(2)
    place_before_pit(tr, s, 0, 230.0, box=3)
    place_before_pit(tr, s, 1, 260.0, box=4 if case == "other_box" else 3)
    if case == "not_occupying":
        s["fl"][0, 1] &= ~L.FLAG_PIT_OCCUPIES    # batch-training profile: no pit capacity
    hist = run_stop(tr, s, 6000)
    assert not (hist == L.PIT_QUEUED).any()
    assert ((hist[:, 0] == L.PIT_SERVICING) & (hist[:, 1] == L.PIT_SERVICING)).any()


def test_intent_one_respects_capacity_and_gap_intent_two_does_not(tr):
    s = pit_world(3, pit_max_concurrent=1)
    ci = s["ci"]
    place_before_pit(tr, s, 0, 230.0, box=0, intent=2)
    place_before_pit(tr, s, 1, 240.0, box=1, intent=1)     # 10 m behind car 0: within the 20 m gap, capacity 1
    place_before_pit(tr, s, 2, 245.0, box=2, intent=2)     # committed: always goes in
    for _ in range(30):
        kinematic_tick(tr, s)
    assert ci[0, 0, L.I_PIT_STATUS] == L.PIT_ENTERING
    assert ci[0, 2, L.I_PIT_STATUS] == L.PIT_ENTERING
    assert ci[0, 1, L.I_PIT_STATUS] == L.PIT_PENDING and ci[0, 1, L.I_CNT_PIT_ENTRY] == 0
    # Alone on track with free capacity, intent 1 enters.
    s = pit_world(1)
    place_before_pit(tr, s, 0, 230.0, intent=1)
    kinematic_tick(tr, s)
    assert s["ci"][0, 0, L.I_PIT_STATUS] == L.PIT_ENTERING


@pytest.mark.parametrize("case", ["disabled", "one_lap", "lane_closed", "red_flag", "too_early",
                                  "no_intent"])
def test_no_entry_when_not_allowed(tr, case):
    s = pit_world(1, pit_stops=0 if case == "disabled" else 1, total_laps=1 if case == "one_lap" else 5)
    place_before_pit(tr, s, 0, 300.0 if case == "too_early" else 200.0, intent=0 if case == "no_intent" else 2)
    if case == "lane_closed":
        s["wi"][0, L.WI_PIT_LANE_OPEN] = 0
    if case == "red_flag":
        s["wi"][0, L.WI_RED_FLAG] = 1
    kinematic_tick(tr, s)
    assert s["ci"][0, 0, L.I_PIT_STATUS] == L.PIT_PENDING
    assert s["ci"][0, 0, L.I_CNT_PIT_ENTRY] == 0


def test_red_flag_freezes_a_car_in_the_pit(tr):
    s = pit_world(1)
    cf, ci, wi = s["cf"], s["ci"], s["wi"]
    place_before_pit(tr, s, 0, 240.0)
    for _ in range(200):
        kinematic_tick(tr, s)
    assert ci[0, 0, L.I_PIT_STATUS] == L.PIT_ENTERING
    wi[0, L.WI_RED_FLAG] = 1
    kinematic_tick(tr, s)
    pose = cf[0, 0, [L.F_X, L.F_Y, L.F_PIT_PATH_S, L.F_RACE_DISTANCE]].copy()
    for _ in range(60):
        kinematic_tick(tr, s)
    np.testing.assert_array_equal(cf[0, 0, [L.F_X, L.F_Y, L.F_PIT_PATH_S, L.F_RACE_DISTANCE]], pose)
    assert cf[0, 0, L.F_SPEED] == 0.0
    wi[0, L.WI_RED_FLAG] = 0
    for _ in range(60):
        kinematic_tick(tr, s)
    assert cf[0, 0, L.F_PIT_PATH_S] > pose[2]


def test_pit_track_s_is_monotone_along_the_path(tr):
    path = np.linspace(-250.0, tr.pit_length, 400)
    s = np.array([P.pit_track_s(tr, p) for p in path])
    steps = (np.diff(s) + tr.length / 2) % tr.length - tr.length / 2
    assert (steps > 0).all()
    assert s[0] == pytest.approx((tr.pit_entry_s - 250.0) % tr.length)
    assert s[-1] == pytest.approx(tr.pit_exit_s % tr.length)
