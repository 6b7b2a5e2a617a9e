"""PaddockEnv: drivers, frame skip, physics modes, rule overrides, per-driver episodes, result shape,
events, metrics, info, state output and the reward callback."""

import math

import numpy as np
import pytest

from tests.helpers.env import act, all_act, make_env, slot
from paddock_ma.env.episodes import METRIC_NAMES
from paddock_ma.env.environment import RewardCallbackError
from paddock_ma.errors import INTERNAL_ERROR, PaddockError
from paddock_ma.sim.core import layout as L

RESULT_KEYS = {"observation", "reward", "terminated", "truncated", "done", "events", "metrics", "state", "info"}


def test_drivers_and_controlled_drivers():
    env = make_env(drivers=5, controlled_drivers=["car-03", "car-01"])
    r = env.reset()
    assert set(r) == RESULT_KEYS
    assert list(r["observation"]) == ["car-03", "car-01"]
    assert r["info"]["controlled_drivers"] == ["car-03", "car-01"]
    assert [c["id"] for c in r["state"]["snapshot"]["cars"]] == ["car-00", "car-01", "car-02", "car-03", "car-04"]
    flags = [c["interaction_flags"] & L.FLAG_CONTROLLED for c in r["state"]["snapshot"]["cars"]]
    assert flags == [0, L.FLAG_CONTROLLED, 0, L.FLAG_CONTROLLED, 0]
    r = env.step({"car-03": act(), "car-01": act()})
    assert r["observation"]["car-03"]["object"]["self"]["id"] == "car-03"
    # the built-in drivers drive the other cars: they move with no action from us
    cars = {c["id"]: c for c in r["state"]["snapshot"]["cars"]}
    assert cars["car-00"]["speed_kph"] > 50 and cars["car-00"]["throttle"] > 0   # rolling start ~84 km/h


@pytest.mark.parametrize("k", [1, 4])
def test_frame_skip_runs_k_ticks_per_step(k):
    env = make_env(frame_skip=k)
    env.reset()
    for n in range(1, 4):
        r = env.step(all_act(env))
        assert r["info"]["elapsed_seconds"] == pytest.approx(n * k / 60.0, abs=1e-12)
        assert r["state"]["snapshot"]["tick"] == n * k
        assert r["info"]["step"] == n
        assert r["info"]["drivers"]["car-00"]["episode_step"] == n


def test_physics_mode_arcade_has_no_velocity():
    env = make_env(physics_mode="arcade")
    env.reset()
    r = env.step(all_act(env, throttle=1.0))
    self_obj = r["observation"]["car-00"]["object"]["self"]
    assert self_obj["velocity_x"] is None and self_obj["velocity_y"] is None
    assert all(c["velocity_x"] is None and c["velocity_y"] is None for c in r["state"]["snapshot"]["cars"])
    assert self_obj["speed_kph"] > 50


def test_physics_mode_simulator_reports_velocity():
    env = make_env(physics_mode="simulator")
    env.reset()
    r = env.step(all_act(env, throttle=1.0))
    s = r["observation"]["car-00"]["object"]["self"]
    speed = math.hypot(s["velocity_x"], s["velocity_y"])
    assert speed == pytest.approx(s["speed_meters_per_second"], rel=0.05)   # planar speed ~ |v| (small slip)
    car = r["state"]["snapshot"]["cars"][0]
    assert car["velocity_x"] == s["velocity_x"]


def test_standing_start_holds_cars_until_lights_out():
    # 2 lights 0.2 s apart + 0.1 s hold: lights out at 0.5 s (spec 4.2); frame skip 3 -> step 10
    env = make_env(frame_skip=3, rules={"standing_start": True, "start_light_count": 2, "start_light_interval": 0.2,
                                        "start_lights_out_hold": 0.1})
    env.reset()
    for n in range(1, 15):
        r = env.step(all_act(env, throttle=1.0))
        car = r["state"]["snapshot"]["cars"][slot(env, "car-00")]
        applied = r["observation"]["car-00"]["object"]["self"]["applied_controls"]
        if r["info"]["elapsed_seconds"] < 0.5 - 1e-9:
            assert car["grid_locked"] and car["speed_kph"] == 0.0 and r["state"]["snapshot"]["race_mode"] == "pre-start"
            assert applied["throttle"] == 0.0
        elif n >= 11:
            assert not car["grid_locked"] and car["speed_kph"] > 0.0
            assert applied["throttle"] == 1.0
    rolling = make_env(rules={"standing_start": False})
    rolling.reset()
    r = rolling.step(all_act(rolling, throttle=1.0))
    assert not r["state"]["snapshot"]["cars"][0]["grid_locked"] and r["state"]["snapshot"]["race_mode"] == "green"


@pytest.mark.parametrize("enabled", [True, False])
def test_tire_degradation_switch(enabled):
    env = make_env(frame_skip=6, rules={"modules": {"tire_degradation": {"enabled": enabled}}})
    env.reset()
    for _ in range(20):
        r = env.step(all_act(env, throttle=1.0, steering=0.05))
    energy = r["observation"]["car-00"]["object"]["self"]["tire_energy"]
    if enabled:
        assert energy < 100.0
    else:
        assert energy == 100.0
        assert all(c["tire_energy"] == 100.0 for c in r["state"]["snapshot"]["cars"])


def test_max_steps_per_driver_episode():
    env = make_env(episode={"max_steps": 5})
    env.reset()
    for _ in range(3):
        r = env.step(all_act(env))
    env.reset_drivers({"car-01": None})
    for n in range(4, 6):
        r = env.step(all_act(env))
    d = r["info"]["drivers"]
    assert d["car-00"] == {"terminated": False, "truncated": True, "end_reason": "max-steps",
                           "episode_id": 0, "episode_step": 5}
    assert d["car-01"]["truncated"] is False and d["car-01"]["episode_step"] == 2 and d["car-01"]["episode_id"] == 1
    assert r["done"] is False and r["truncated"] is False
    for n in range(3):
        r = env.step(all_act(env))           # only car-01 runs on
    d = r["info"]["drivers"]
    assert d["car-01"]["truncated"] and d["car-01"]["episode_step"] == 5 and d["car-01"]["end_reason"] == "max-steps"
    assert d["car-00"]["episode_step"] == 5   # an ended episode does not count on
    assert r["info"]["step"] == 8             # the global step is never rewound
    assert r["done"] and r["truncated"] and not r["terminated"]


def _destroy_car00(**extra):
    """car-00 placed in the grass at 36 m, heading into the barrier (41 m) at 100 km/h."""
    env = make_env(scenario={"placements": {"car-00": {"distance_meters": 100, "offset_meters": 36,
                                                       "speed_kph": 100, "heading_error_radians": 0.6}}}, **extra)
    env.reset()
    for _ in range(60):
        r = env.step(all_act(env))
        if r["info"]["drivers"]["car-00"]["terminated"]:
            return env, r
    raise AssertionError("car-00 never reached the barrier")


@pytest.mark.parametrize("mode", ["simulator", "arcade"])
def test_destroyed_end_reason_metrics_and_events(mode):
    env, r = _destroy_car00(physics_mode=mode)
    assert r["info"]["drivers"]["car-00"]["end_reason"] == "destroyed"
    assert r["metrics"]["car-00"]["destroyed"] is True and r["metrics"]["car-00"]["spin_or_backwards"] is True
    assert r["observation"]["car-00"]["object"]["self"]["destroyed"] is True
    assert [e["driver_ids"] for e in r["events"] if e["type"] == "destroyed"] == [["car-00"]]
    assert any(e["type"] == "destroyed" for e in r["observation"]["car-00"]["events"])
    assert not any(e["type"] == "destroyed" for e in r["observation"]["car-01"]["events"])
    assert r["done"] is False                 # car-01 still runs
    assert r["info"]["drivers"]["car-01"]["terminated"] is False


def test_stalled_off_track_end_reason():
    env = make_env(rules={"modules": {"stalled_dnf": {"enabled": True, "seconds": 0.5}}},
                   scenario={"placements": {"car-00": {"distance_meters": 100, "offset_meters": 15, "speed_kph": 0}}})
    env.reset()
    for n in range(1, 60):
        r = env.step(all_act(env, throttle=0.0, brake=1.0))
        if r["info"]["drivers"]["car-00"]["terminated"]:
            break
    assert r["info"]["drivers"]["car-00"]["end_reason"] == "stalled-off-track"
    assert r["metrics"]["car-00"]["destroyed"] is False
    assert n * env.config.frame_skip / 60.0 == pytest.approx(0.5, abs=2 / 60)   # after 0.5 s stalled in gravel


def test_done_with_mixed_terminated_and_truncated():
    env, r = _destroy_car00(episode={"max_steps": 30})
    k = r["info"]["drivers"]["car-00"]["episode_step"]
    assert k < 30
    while not r["done"]:
        r = env.step({"car-01": act()})
    d = r["info"]["drivers"]
    assert d["car-00"]["terminated"] and d["car-00"]["end_reason"] == "destroyed"
    assert d["car-01"]["truncated"] and d["car-01"]["end_reason"] == "max-steps"
    assert r["done"] is True and r["terminated"] is False and r["truncated"] is True
    assert r["info"]["step"] == 30


def test_step_result_shape_metrics_and_info():
    env = make_env()
    r0 = env.reset()
    assert r0["reward"] is None and r0["events"] == [] and r0["info"]["step"] == 0
    r = env.step(all_act(env, throttle=1.0))
    assert set(r) == RESULT_KEYS
    assert r["reward"] is None                # no callback
    assert r["terminated"] is False and r["truncated"] is False and r["done"] is False
    for d in ("car-00", "car-01"):
        m = r["metrics"][d]
        assert list(m) == list(METRIC_NAMES)
        assert m["progress_delta_meters"] > 0.3   # ~84 km/h rolling start: 23 m/s * 1/60 s = 0.39 m
        assert m["legal_progress_delta_meters"] == pytest.approx(m["progress_delta_meters"])
        assert m["off_track"] is False and m["destroyed"] is False and m["lap_time_seconds"] is None
        assert m["contact_count"] == 0
        assert r["info"]["drivers"][d] == {"terminated": False, "truncated": False, "end_reason": None,
                                           "episode_id": 0, "episode_step": 1}
        o = r["observation"][d]
        assert set(o) == {"object", "vector", "schema", "events"}
    assert r["info"]["step"] == 1 and r["info"]["seed"] == 11 and r["info"]["track"] == "oval"
    assert r["info"]["action_errors"] == []


def test_contact_event_counted_once_per_involved_driver():
    env = make_env(scenario={"placements": {"car-00": {"distance_meters": 100, "speed_kph": 50},
                                            "car-01": {"distance_meters": 90, "speed_kph": 120}}})
    env.reset()
    for _ in range(40):
        r = env.step({"car-00": act(0, 0, 1), "car-01": act(0, 1, 0)})
        if r["events"]:
            break
    collisions = [e for e in r["events"] if e["type"] == "collision"]
    assert len(collisions) == 1
    e = collisions[0]
    assert sorted(e["driver_ids"]) == ["car-00", "car-01"]
    assert r["metrics"]["car-00"]["contact_count"] == 1 and r["metrics"]["car-01"]["contact_count"] == 1
    assert r["observation"]["car-00"]["events"] == [e] and r["observation"]["car-01"]["events"] == [e]
    assert e["at"] == pytest.approx(r["info"]["elapsed_seconds"])


@pytest.mark.parametrize("output", ["full", "minimal", "none"])
def test_state_output(output):
    env = make_env(result={"state_output": output})
    env.reset()
    r = env.step(all_act(env))
    if output == "none":
        assert r["state"] is None
        return
    snap = r["state"]["snapshot"]
    assert len(snap["cars"]) == 4 and snap["step"] == 1
    car = snap["cars"][0]
    assert {"id", "x", "y", "heading", "speed_kph", "race_distance_meters", "surface"} <= set(car)
    if output == "full":
        assert "checksum" in snap and "wheels" in car and "velocity_x" in car
        assert snap["checksum"] == f"{env.checksum():016x}"
    else:       # PaddockJS's minimal snapshot: wheels and track state, no setup, rules or dynamics extras
        assert "checksum" not in snap and "rules" not in snap and "velocity_x" not in car and "setup" not in car
        assert "wheels" in car and "track_state" in car


def test_reward_callback_context_and_timing():
    calls = []

    def reward(ctx):
        calls.append(ctx)
        return ctx["metrics"]["progress_delta_meters"] * 2.0

    env = make_env(reward=reward)
    r = env.reset()
    assert r["reward"] is None and calls == []
    env.reset_drivers({"car-00": None})
    assert calls == []
    r = env.step({"car-00": act(0.1, 1.0, 0.0), "car-01": act()})
    assert len(calls) == 2
    ctx = {c["driver_id"]: c for c in calls}
    assert set(ctx["car-00"]) >= {"metrics", "episode", "observation", "action", "events"}
    assert ctx["car-00"]["metrics"] == r["metrics"]["car-00"]
    assert ctx["car-00"]["episode"] == r["info"]["drivers"]["car-00"]
    assert ctx["car-00"]["observation"] is r["observation"]["car-00"]
    assert ctx["car-00"]["action"] == act(0.1, 1.0, 0.0)
    assert ctx["car-00"]["events"] == []
    assert r["reward"] == {d: pytest.approx(2.0 * r["metrics"][d]["progress_delta_meters"]) for d in ("car-00", "car-01")}
    env.get_observation()
    env.get_state()
    assert len(calls) == 2                      # reads are reward-neutral


def test_reward_callback_exception_names_driver():
    def reward(ctx):
        if ctx["driver_id"] == "car-01":
            raise ZeroDivisionError("boom")
        return 1.0

    env = make_env(reward=reward)
    env.reset()
    with pytest.raises(RewardCallbackError) as info:
        env.step(all_act(env))
    assert isinstance(info.value, PaddockError) and info.value.code == INTERNAL_ERROR
    assert info.value.driver_id == "car-01"
    assert str(info.value) == "reward callback failed for driver 'car-01': ZeroDivisionError: boom"
    assert isinstance(info.value.__cause__, ZeroDivisionError)


def test_reset_rebuilds_and_is_reproducible():
    env = make_env()
    env.reset(seed=5)
    for _ in range(3):
        env.step(all_act(env, steering=0.2))
    a = env.checksum()
    r = env.reset(seed=5)
    assert r["info"]["step"] == 0 and r["info"]["elapsed_seconds"] == 0.0
    for _ in range(3):
        env.step(all_act(env, steering=0.2))
    assert env.checksum() == a


def test_calls_before_reset_are_errors():
    env = make_env()
    with pytest.raises(PaddockError) as info:
        env.step(all_act(env))
    assert info.value.code == "not_reset"


def test_contact_events_with_three_cars_in_one_step():
    """A car touching two others in one step: one collision event per contact pair, so every involved
    driver's events include its contact (event building from the step's contact counters)."""
    from paddock_ma.env.views.events import world_events
    env = make_env(drivers=3, controlled_drivers=["car-00", "car-01", "car-02"])
    env.reset()
    ci = env.engine.state.cars_i[0]
    ci[0, L.I_CNT_CONTACTS], ci[0, L.I_CONTACT_SLOTS_LO] = 2, 0b110   # car-00 hit car-01 and car-02
    ci[1, L.I_CNT_CONTACTS], ci[1, L.I_CONTACT_SLOTS_LO] = 1, 0b001
    ci[2, L.I_CNT_CONTACTS], ci[2, L.I_CONTACT_SLOTS_LO] = 1, 0b001
    events, per = world_events(env.engine, 0)
    pairs = sorted((tuple(sorted(e["driver_ids"])), e["count"]) for e in events if e["type"] == "collision")
    assert pairs == [(("car-00", "car-01"), 1), (("car-00", "car-02"), 1)]
    assert {d: len(v) for d, v in per.items()} == {"car-00": 2, "car-01": 1, "car-02": 1}


def test_pile_up_collision_counts_are_per_pair():
    """Issue 14, defect 9: three cars nose to tail; car-01 touches car-00 and car-02 in one step. Each
    pair's event counts that pair's contacts (1), not car-01's total (2)."""
    cfg = {"drivers": 3, "controlled_drivers": ["car-00", "car-01", "car-02"],
           "scenario": {"placements": {f"car-0{i}": {"distance_meters": 500.0 + 3.5 * i, "speed_kph": 0.0}
                                       for i in range(3)}}}
    env = make_env(**cfg)
    env.reset()
    r = env.step(all_act(env, throttle=0.0, brake=1.0))
    collisions = {tuple(e["driver_ids"]): e["count"] for e in r["events"] if e["type"] == "collision"}
    assert collisions == {("car-00", "car-01"): 1, ("car-01", "car-02"): 1}
    assert [r["metrics"][d]["contact_count"] for d in ("car-00", "car-01", "car-02")] == [1, 2, 1]
    # the same from the partner bits when a car touched its partner twice in one (long) step
    from paddock_ma.env.views.events import pair_contacts
    ci = np.zeros((3, L.NI), np.int32)
    ci[0, L.I_CNT_CONTACTS], ci[0, L.I_CONTACT_SLOTS_LO] = 2, 0b010     # car-00: twice with car-01
    ci[1, L.I_CNT_CONTACTS], ci[1, L.I_CONTACT_SLOTS_LO] = 3, 0b101     # car-01: car-00 twice, car-02 once
    ci[2, L.I_CNT_CONTACTS], ci[2, L.I_CONTACT_SLOTS_LO] = 1, 0b010
    assert pair_contacts(ci, 0, 1) == 2 and pair_contacts(ci, 1, 2) == 1
    # slots 31 and 63 use the int32 sign bit
    from paddock_ma.env.views.events import contact_partners
    row = np.zeros(L.NI, np.int32)
    row[L.I_CONTACT_SLOTS_LO], row[L.I_CONTACT_SLOTS_HI] = np.int32(-2**31), np.int32(-2**31 + 1)
    assert contact_partners(row) == [31, 32, 63]


@pytest.mark.parametrize("end_on_finish", [True, False])
def test_race_finish_terminates(end_on_finish):
    length = 2448.5547135243096
    env = make_env(drivers=2, total_laps=1, frame_skip=4, episode={"end_on_race_finish": end_on_finish},
                   scenario={"placements": {"car-00": {"distance_meters": length - 15, "speed_kph": 100},
                                            "car-01": {"distance_meters": length - 30, "offset_meters": 3,
                                                       "speed_kph": 100}}})
    env.reset()
    laps = 0
    for _ in range(30):
        r = env.step(all_act(env, throttle=1.0))
        for e in r["events"]:
            if e["type"] == "lap-completed":
                laps += 1
                d = e["driver_ids"][0]
                assert r["metrics"][d]["lap_completed"] is True
                # placed 15-30 m before the line: a partial first lap, which has no lap time
                assert r["metrics"][d]["lap_time_seconds"] is None and e["lap_time_seconds"] is None
        if r["state"]["snapshot"]["race_finished"]:
            break
    assert laps == 2 and r["state"]["snapshot"]["race_finished"]
    if end_on_finish:
        assert r["done"] and r["terminated"] and not r["truncated"]
        assert {d["end_reason"] for d in r["info"]["drivers"].values()} == {"race-finish"}
        assert r["info"]["end_reason"] == "race-finish"
    else:
        assert not r["done"] and r["info"]["drivers"]["car-00"]["end_reason"] is None


def test_held_and_terminal_cars_have_zero_velocity():
    env = make_env(rules={"standing_start": True})
    env.reset()
    r = env.step(all_act(env, throttle=1.0))
    s = r["observation"]["car-00"]["object"]["self"]
    assert (s["speed_kph"], s["velocity_x"], s["velocity_y"]) == (0.0, 0.0, 0.0)
    env, r = _destroy_car00()
    s = r["observation"]["car-00"]["object"]["self"]
    assert (s["speed_kph"], s["velocity_x"], s["velocity_y"]) == (0.0, 0.0, 0.0)


def test_reset_options_merge_and_validate():
    env = make_env()
    env.reset()
    r = env.reset(options={"frame_skip": 2, "controlled_drivers": ["car-02"]})
    assert list(r["observation"]) == ["car-02"] and env.config.frame_skip == 2
    assert env.config.track == "oval"                 # the rest of the config is kept
    r = env.step({"car-02": act()})
    assert r["info"]["elapsed_seconds"] == pytest.approx(2 / 60)
    with pytest.raises(PaddockError) as info:
        env.reset(options={"frame_skipp": 2})
    assert info.value.field == "frame_skipp"


def test_surface_and_heading_metrics():
    env = make_env(scenario={"placements": {
        "car-00": {"distance_meters": 100, "offset_meters": 8.0, "speed_kph": 60},     # wheels on the kerb
        "car-01": {"distance_meters": 300, "offset_meters": 14.0, "speed_kph": 60}}})  # all four in gravel
    env.reset()
    r = env.step(all_act(env, throttle=0.5))
    m0, m1 = r["metrics"]["car-00"], r["metrics"]["car-01"]
    assert (m0["kerb"], m0["off_track"], m0["severe_cut"]) == (True, False, False)
    assert m0["legal_progress_delta_meters"] == pytest.approx(m0["progress_delta_meters"]) and m0["progress_delta_meters"] > 0
    assert (m1["kerb"], m1["off_track"], m1["severe_cut"]) == (False, True, True)
    assert m1["legal_progress_delta_meters"] == 0.0 and m1["progress_delta_meters"] > 0.2   # 60 km/h: 0.28 m/tick
    assert m0["under_30_kph"] is False
    env = make_env(scenario={"placements": {
        "car-00": {"distance_meters": 100, "speed_kph": 60, "heading_error_radians": 3.0},  # driving backwards
        "car-01": {"distance_meters": 300, "speed_kph": 10}}})
    env.reset()
    r = env.step(all_act(env, throttle=0.5))
    assert r["metrics"]["car-00"]["spin_or_backwards"] is True
    assert r["metrics"]["car-00"]["progress_delta_meters"] < 0
    assert r["metrics"]["car-01"]["spin_or_backwards"] is False and r["metrics"]["car-01"]["under_30_kph"] is True


def test_race_control_events_lights_out_car_finish_and_race_finish():
    """A standing start emits start-lights-out once at 4.38 s; finishing emits car-finish per car and
    race-finish once every classified car is home."""
    from paddock_ma import PaddockEnv

    env = PaddockEnv({"drivers": 2, "controlled_drivers": ["car-00"], "track": "oval", "total_laps": 1,
                      "frame_skip": 4, "observation": {"output": "vector"}, "result": {"state_output": "none"}})
    env.reset(seed=0)
    seen = []
    drive = {"car-00": {"steering": 0.0, "throttle": 0.0, "brake": 1.0}}
    for _ in range(3000):
        r = env.step(drive)
        seen += [(e["type"], tuple(e["driver_ids"]), r["info"]["elapsed_seconds"]) for e in r["events"]
                 if e["type"] in ("start-lights-out", "car-finish", "race-finish")]
        if any(t == "car-finish" and d == ("car-01",) for t, d, _ in seen):
            break
    lights = [s for s in seen if s[0] == "start-lights-out"]
    assert len(lights) == 1 and 4.38 <= lights[0][2] < 4.38 + 4 / 60 + 1e-9
    assert [s[:2] for s in seen if s[0] == "car-finish"] == [("car-finish", ("car-01",))]
    assert not any(s[0] == "race-finish" for s in seen)   # car-00 is parked on the grid: the race stays open
