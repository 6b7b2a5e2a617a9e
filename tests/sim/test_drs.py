"""DRS (paddock_ma.sim.race.drs, PaddockJS 2.0.0's ``timing/drsTiming.js``): the latch on hand-built
state, the drag and power multipliers of both physics modes, a race on a trackSeed track (zones on the
track, determinism, the snapshot round trip) and the state views."""

import numpy as np
import pytest

from paddock_ma.sim.core import layout as L
from paddock_ma.sim.core.state import SnapshotError, WorldState
from paddock_ma.sim.core.state_check import check_state
from paddock_ma.sim.race.drs import update_drs_world
from paddock_ma.sim.race.start import new_race
from paddock_ma.sim.step import step_state
from paddock_ma.sim.track.load import load_track
from paddock_ma.sim.vehicle.dynamics import integrate_car
from paddock_ma.sim.vehicle.wheels import classify_car

LENGTH = 1000.0
STARTS = np.array([100.0, 600.0])
ENDS = np.array([300.0, 1050.0])          # the second zone wraps the line, to 50 m
FLAGS = L.FLAG_COLLIDES | L.FLAG_CLASSIFIED


def make(n=2, detection=1.0):
    """One world of ``n`` active classified cars, no zone latched, progress 0."""
    s = dict(cf=np.zeros((1, n, L.NF)), ci=np.zeros((1, n, L.NI), np.int32), wf=np.zeros((1, L.NWF)),
             wi=np.zeros((1, L.NWI), np.int64), fl=np.full((1, n), FLAGS, np.int32), ru=np.zeros((1, L.NR)))
    s["ci"][0, :, L.I_ACTIVE] = 1
    s["wi"][0, L.WI_RACE_MODE] = L.MODE_GREEN
    s["ru"][0, L.R_DRS_DETECTION] = detection
    return s


def move(s, moves, t):
    """Cars ``c`` move from progress a to b (``moves``: {c: (a, b)}, m); then the latch runs at time t (s)."""
    s["wf"][0, L.WF_TIME] = t
    for c in range(s["cf"].shape[1]):
        a, b = moves.get(c, (s["cf"][0, c, L.F_PJS_PROGRESS],) * 2)
        s["cf"][0, c, L.F_PJS_PREV_PROGRESS] = a
        s["cf"][0, c, L.F_PJS_PROGRESS] = b
    n = s["cf"].shape[1]
    update_drs_world(STARTS, ENDS, LENGTH, s["cf"], s["ci"], s["fl"], s["wf"], s["wi"], s["ru"], 0, n,
                     np.empty(n, np.int8), np.empty(n, np.int64))


def drs(s, c):
    """(latched zone + 1, enabled, active) of car c."""
    i = s["ci"][0, c]
    return int(i[L.I_DRS_ZONE]), int(i[L.I_DRS_ENABLED]), int(i[L.I_DRS_ACTIVE])


@pytest.mark.parametrize("gap,opens", [(0.5, True), (1.0, True), (1.2, False)])
def test_opens_only_within_the_detection_time_of_the_car_ahead(gap, opens):
    s = make()
    move(s, {0: (95.0, 101.0), 1: (80.0, 86.0)}, 10.0)         # car 0 crosses the start first
    assert drs(s, 0) == (1, 0, 0)                              # nobody ahead of it: latched, closed
    assert drs(s, 1) == (0, 0, 0)
    move(s, {0: (101.0, 120.0), 1: (86.0, 100.5)}, 10.0 + gap)  # car 1 crosses, car 0 10-20 m ahead
    assert drs(s, 1) == (1, int(opens), int(opens))
    assert s["ci"][0, 1, L.I_DRS_PASSAGE_0] == 1 and s["cf"][0, 1, L.F_DRS_TIME_0] == 10.0 + gap


def test_detection_seconds_is_the_rule():
    s = make(detection=2.0)
    move(s, {0: (95.0, 101.0), 1: (80.0, 86.0)}, 10.0)
    move(s, {0: (101.0, 140.0), 1: (86.0, 100.5)}, 11.8)
    assert drs(s, 1) == (1, 1, 1)


def test_other_passage_or_car_behind_does_not_open():
    s = make(3)
    # cars 1 and 2 crossed the zone twice, car 0 (ahead now) once: not the same passage
    s["ci"][0, 1, L.I_DRS_PASSAGE_0] = 1
    s["ci"][0, 2, L.I_DRS_PASSAGE_0] = 1
    move(s, {0: (95.0, 101.0), 1: (40.0, 50.0), 2: (10.0, 20.0)}, 5.0)
    move(s, {0: (101.0, 130.0), 1: (50.0, 100.2), 2: (20.0, 30.0)}, 5.5)
    assert drs(s, 1) == (1, 0, 0)
    # car 2 crosses right behind car 1 (0.2 s, the same passage): car 1 is its reference, not car 0
    move(s, {0: (130.0, 160.0), 1: (100.2, 130.0), 2: (30.0, 100.1)}, 5.7)
    assert drs(s, 2) == (1, 1, 1)


def test_closes_leaving_the_zone_and_wrapping_zone():
    s = make()
    move(s, {0: (595.0, 601.0), 1: (580.0, 590.0)}, 1.0)
    move(s, {0: (601.0, 640.0), 1: (590.0, 600.5)}, 1.4)
    assert drs(s, 1) == (2, 1, 1)
    move(s, {0: (640.0, 10.0), 1: (600.5, 990.0)}, 8.0)        # still inside: 600 m to 50 m over the line
    assert drs(s, 1) == (2, 1, 1)
    move(s, {1: (990.0, 20.0)}, 8.2)
    assert drs(s, 1) == (2, 1, 1)
    move(s, {1: (20.0, 55.0)}, 8.6)                            # out at 50 m: the latch clears
    assert drs(s, 1) == (0, 0, 0)


def test_same_tick_crossings_latch_in_race_order():
    # both cross in one tick; the car ahead on the road is ahead in race distance: its crossing is
    # recorded first and the car behind opens (0 s apart)
    s = make()
    s["cf"][0, :, L.F_PJS_RACE_DISTANCE] = [2090.0, 2085.0]
    move(s, {0: (99.0, 104.0), 1: (94.0, 100.5)}, 3.0)
    assert drs(s, 1) == (1, 1, 1)
    # the same, but the car ahead on the road is a lap down (behind in race order): it latches after
    # the car behind, which sees no crossing of it on this passage
    s = make()
    s["cf"][0, :, L.F_PJS_RACE_DISTANCE] = [1090.0, 2085.0]
    move(s, {0: (99.0, 104.0), 1: (94.0, 100.5)}, 3.0)
    assert drs(s, 1) == (1, 0, 0)


def test_finished_destroyed_unclassified_and_red_flag_have_no_drs():
    for field, value in ((L.I_FINISHED, 1), (L.I_DESTROYED, 1), (L.I_RETIRED, 1), (L.I_PIT_STATUS, L.PIT_SERVICING)):
        s = make()
        move(s, {0: (95.0, 101.0), 1: (80.0, 86.0)}, 1.0)
        move(s, {0: (101.0, 120.0), 1: (86.0, 100.5)}, 1.5)
        assert drs(s, 1) == (1, 1, 1)
        s["ci"][0, 1, field] = value
        move(s, {}, 1.6)
        assert drs(s, 1) == (0, 0, 0), field
    s = make()
    move(s, {0: (95.0, 101.0), 1: (80.0, 86.0)}, 1.0)
    move(s, {0: (101.0, 120.0), 1: (86.0, 100.5)}, 1.5)
    s["wi"][0, L.WI_RACE_MODE] = L.MODE_RED_FLAG
    move(s, {}, 1.6)
    assert drs(s, 1) == (0, 0, 0)
    s = make()
    s["fl"][0, 1] = L.FLAG_COLLIDES                             # not in the race order
    move(s, {0: (95.0, 101.0), 1: (80.0, 86.0)}, 1.0)
    move(s, {0: (101.0, 120.0), 1: (86.0, 100.5)}, 1.5)
    assert drs(s, 1) == (0, 0, 0)


def test_race_distance_follows_paddockjs_progress(pjs):
    """The wheel classification advances PaddockJS's race distance by the wrapped change of the nearest
    sample's lap distance; not from a placement's unset progress (-1), nor on PaddockJS's pit route."""
    cf, ci = np.zeros((1, 1, L.NF)), np.zeros((1, 1, L.NI), np.int32)
    ci[0, 0, L.I_ACTIVE] = 1
    cf[0, 0, L.F_PJS_PROGRESS] = -1.0
    cf[0, 0, L.F_PJS_RACE_DISTANCE] = 500.0

    def at(sample, route=L.ROUTE_NONE):
        cf[0, 0, L.F_X], cf[0, 0, L.F_Y], cf[0, 0, L.F_HEADING] = pjs.cx[sample], pjs.cy[sample], pjs.ch[sample]
        ci[0, 0, L.I_PIT_ROUTE] = route
        classify_car(pjs, cf, ci, 0, 0)
        assert cf[0, 0, L.F_PJS_PROGRESS] == pjs.cs[sample]
        return cf[0, 0, L.F_PJS_RACE_DISTANCE]

    last = len(pjs.cs) - 2                                      # the sample before the line
    assert at(last - 3) == 500.0                                # first classification: no change
    step = pjs.cs[last] - pjs.cs[last - 3]
    assert at(last) == pytest.approx(500.0 + step)
    over = (pjs.length - pjs.cs[last]) + pjs.cs[2]              # over the line: forwards
    assert at(2) == pytest.approx(500.0 + step + over)
    assert at(1) == pytest.approx(500.0 + step + over - pjs.cs[2] + pjs.cs[1])   # backwards
    before = cf[0, 0, L.F_PJS_RACE_DISTANCE]
    assert at(40, route=L.ROUTE_ENTRY) == before                # the pit route sets it itself


@pytest.mark.parametrize("mode", [L.PHYSICS_ARCADE, L.PHYSICS_SIMULATOR])
def test_drs_raises_the_top_speed(mode):
    """Flat out on track for 60 s: DRS's lower drag and higher power give a higher speed (arcade x0.42
    drag, x1.08 power, +6 % drive; simulator x0.46 drag, x1.07 power)."""
    top = []
    for active in (0, 1):
        cf = np.zeros((1, 1, L.NF))
        ci = np.zeros((1, 1, L.NI), np.int32)
        cp = np.zeros((1, 1, L.NP))
        cp[0, 0, [L.P_MASS, L.P_POWER, L.P_BRAKE, L.P_DRAG_CD, L.P_DOWNFORCE_CL, L.P_TIRE_GRIP, L.P_TIRE_CARE]] = (
            798.0, 5000.0, 22000.0, 0.78, 3.1, 1.8, 1.0)      # below the 330 km/h cap without DRS
        ru = np.zeros((1, L.NR))
        ru[0, L.R_PHYSICS_MODE] = mode
        ci[0, 0, L.I_ACTIVE] = 1
        ci[0, 0, L.I_COMPOUND] = L.COMPOUND_M
        ci[0, 0, L.I_DRS_ACTIVE] = active
        cf[0, 0, L.F_TIRE_ENERGY] = 100.0
        cf[0, 0, L.F_SPEED] = cf[0, 0, L.F_VX] = 50.0
        for _ in range(3600):
            integrate_car(cf, ci, cp, ru, 0, 0, 0.0, 1.0, 0.0, L.DT)
        top.append(cf[0, 0, L.F_SPEED])
    assert top[0] < L.MAX_SPEED - 1.0 and top[1] > top[0] + 5.0, top


@pytest.fixture(scope="module")
def pjs():
    """PaddockJS's trackSeed 2601 track: DRS zones start at 0, 4,303 and 7,777 m."""
    return load_track("paddockjs:2601")


def test_trackseed_track_has_paddockjs_zones(pjs):
    from paddock_ma.sim.track.paddockjs_track import paddockjs_track_info
    info = paddockjs_track_info(2601)
    assert len(pjs.drs_start) == len(info.drs_zones) == 3
    np.testing.assert_allclose(pjs.drs_start, [z["startRatio"] * info.length for z in info.drs_zones], atol=1e-9)
    assert (pjs.drs_end > pjs.drs_start).all()
    assert len(load_track("grand-prix").drs_start) == 0          # our own tracks have none


def standing_race(track, seed=5):
    """Eight built-in cars from a standing start: they cross the line (a zone start) close together."""
    return new_race(track, 2, 8, seed=seed, standing_start=1, total_laps=3)


def test_race_opens_drs_deterministically_and_snapshots_it(pjs):
    a, b = standing_race(pjs), standing_race(pjs)
    opened = np.zeros((2, 8), bool)
    for step in range(160):
        step_state(a, n_ticks=4)
        step_state(b, n_ticks=4)
        np.testing.assert_array_equal(a.checksums(), b.checksums())
        opened |= a.cars_i[:, :, L.I_DRS_ACTIVE] != 0
        if step == 120:
            doc = a.snapshot()
            mid = a.copy()
    assert opened.sum() >= 4, opened                  # cars following within 1 s over the line open DRS
    assert (a.cars_i[:, :, L.I_DRS_PASSAGE_0] >= 1).all()
    # snapshot round trip: the DRS state comes back and the race goes on identically
    back = WorldState.from_snapshot(doc, pjs)
    for name in ("cars_f", "cars_i"):
        np.testing.assert_array_equal(getattr(back, name), getattr(mid, name))
    for _ in range(39):
        step_state(back, n_ticks=4)
    np.testing.assert_array_equal(back.checksums(), a.checksums())


def test_old_snapshot_and_bad_zone_are_refused(pjs):
    state = standing_race(pjs)
    doc = state.snapshot()
    old = dict(doc, version=1)
    with pytest.raises(SnapshotError, match="snapshot.version: this build reads version 2, got 1"):
        WorldState.from_snapshot(old, pjs)
    arrays = state.copy().arrays()
    arrays["cars_i"][0, 3, L.I_DRS_ZONE] = 4                    # the track has three zones
    assert "I_DRS_ZONE" in check_state(arrays, pjs)


def test_state_views_report_drs():
    """A PaddockEnv on trackSeed 2601 from a standing start: the state's cars carry PaddockJS's DRS keys,
    a latched zone's id is one of the track's, eligible equals active."""
    from paddock_ma.env.config.root import EnvConfig
    from paddock_ma.env.environment import PaddockEnv
    from paddock_ma.env.views.paddockjs_state import paddockjs_snapshot
    from paddock_ma.env.views.timing_view import timing_fields
    env = PaddockEnv(EnvConfig.from_dict({"track_seed": 2601, "drivers": 6, "controlled_drivers": ["car-05"],
                                          "physics_mode": "arcade", "frame_skip": 4,
                                          "rules": {"drs_detection_seconds": 1.5}}))
    env.reset(seed=3)
    assert env.engine.state.rules[env.w, L.R_DRS_DETECTION] == 1.5
    seen = False
    for _ in range(150):
        env.step({"car-05": {"steering": 0.0, "throttle": 0.0, "brake": 1.0}})   # the last car stays on the grid
        snap = paddockjs_snapshot(env.engine, env.w, "full")
        zones = [z["id"] for z in snap["track"]["drs_zones"]]
        assert snap["rules"]["drs_detection_seconds"] == 1.5
        for car, timing in zip(snap["cars"], timing_fields(env.engine, env.w)):
            assert car["drs_eligible"] == car["drs_active"] == timing["drs_active"]
            assert car["drs_zone_id"] is None or car["drs_zone_id"] in zones
            assert not car["drs_active"] or car["drs_zone_enabled"]
            seen = seen or car["drs_active"]
    env.close()
    assert seen
