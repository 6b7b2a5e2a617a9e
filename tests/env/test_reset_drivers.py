"""reset_drivers: an episode boundary for some drivers inside the running world."""

import numpy as np
import pytest

from tests.helpers.env import act, all_act, car_bytes, make_env, slot
from paddock_ma.errors import INVALID_REQUEST, UNKNOWN_DRIVER, PaddockError
from paddock_ma.sim.core import layout as L


def _world_bytes(env):
    st = env.engine.state
    return st.world_f.tobytes() + st.world_i.tobytes()


def test_new_episode_controls_cleared_rest_untouched():
    env = make_env(drivers=4, rules={"modules": {"pit_stops": {"enabled": True}}})
    env.reset()
    for _ in range(4):
        r = env.step({"car-00": act(0.3, 0.9, 0.0, pit_intent=1), "car-01": act(-0.2, 0.7, 0.1)})
    assert r["observation"]["car-00"]["object"]["self"]["pit_intent"] == 1
    c0 = slot(env, "car-00")
    others = [c for c in range(4) if c != c0]
    before = {c: car_bytes(env, c) for c in others}
    world = _world_bytes(env)
    flags = env.engine.state.car_flags.tobytes()
    r = env.reset_drivers({"car-00": {"distance_meters": 1200, "offset_meters": 3, "speed_kph": 80,
                                      "heading_error_radians": 0.2}})
    assert {c: car_bytes(env, c) for c in others} == before          # every other car untouched
    assert _world_bytes(env) == world                                  # world clock, step, RNG untouched
    assert env.engine.state.car_flags.tobytes() == flags
    info = r["info"]
    assert info["step"] == 4 and info["elapsed_seconds"] == pytest.approx(4 / 60)
    assert info["drivers"]["car-00"] == {"terminated": False, "truncated": False, "end_reason": None,
                                         "episode_id": 1, "episode_step": 0}
    assert info["drivers"]["car-01"]["episode_id"] == 0 and info["drivers"]["car-01"]["episode_step"] == 4
    s = r["observation"]["car-00"]["object"]["self"]
    assert s["pit_intent"] == 0
    # the last tick's telemetry is the old episode's: a placed car reports none of it
    assert (s["lateral_g"], s["longitudinal_g"], s["grip_usage"], s["traction_limited"]) == (0.0, 0.0, 0.0, False)
    assert s["applied_controls"] == {"steering": 0.0, "steering_radians": 0.0, "throttle": 0.0, "brake": 0.0}
    cf = env.engine.state.cars_f[0, c0]
    assert (cf[L.F_STEER_CMD], cf[L.F_THROTTLE_CMD], cf[L.F_BRAKE_CMD]) == (0.0, 0.0, 0.0)
    # placed as asked: absolute race distance, offset, speed, heading error
    assert s["race_distance_meters"] == pytest.approx(1200.0)
    assert cf[L.F_OFFSET] == pytest.approx(3.0, abs=1e-6)        # the body centre (the observation
    assert s["track_offset_meters"] > 3.0 + 0.76                   # reports PaddockJS's outer patch edge)
    assert s["speed_kph"] == pytest.approx(80.0)
    assert s["track_heading_error_radians"] == pytest.approx(0.2, abs=1e-9)
    assert r["reward"] is None
    # the next step continues the global step and the driver's own episode from 0
    r = env.step(all_act(env))
    assert r["info"]["step"] == 5 and r["info"]["drivers"]["car-00"]["episode_step"] == 1


def test_placement_inside_barrier_is_terminal_with_miss_rays():
    env = make_env(observation={"profile": "physical-driver"},
                   sensors={"rays": {"channels": ["road_edge", "kerb", "illegal_surface", "car"]}})
    env.reset()
    env.step(all_act(env))
    r = env.reset_drivers({"car-01": {"distance_meters": 500, "offset_meters": 45, "speed_kph": 100}})
    d = r["info"]["drivers"]
    assert d["car-01"]["terminated"] and d["car-01"]["end_reason"] == "destroyed" and d["car-01"]["episode_id"] == 1
    assert d["car-00"] == {"terminated": False, "truncated": False, "end_reason": None, "episode_id": 0,
                           "episode_step": 1}
    assert r["metrics"]["car-01"]["destroyed"] is True
    o = r["observation"]["car-01"]
    assert o["object"]["self"]["destroyed"] and o["object"]["self"]["speed_kph"] == 0.0
    for ray in o["object"]["rays"]:
        for ch in ("track", "kerb", "illegal_surface", "car"):
            assert ray[ch]["hit"] is False and ray[ch]["distance_meters"] == ray["length_meters"]
    v = dict(zip([e["name"] for e in o["schema"]], o["vector"].tolist()))
    ratios = [val for name, val in v.items() if name.startswith("rays[") and name.endswith("distanceRatio")]
    hits = [val for name, val in v.items() if name.startswith("rays[") and name.endswith(".hit")]
    assert len(ratios) == 8 * 4 and all(x == 1.0 for x in ratios) and all(x == 0.0 for x in hits)
    assert r["done"] is False            # car-00 still runs
    # stepping without car-01 is fine, and so is an action for it (accepted and ignored, as a PaddockJS
    # trainer sends one for every driver)
    r = env.step({"car-00": act()})
    assert r["info"]["drivers"]["car-01"]["episode_step"] == 0
    r = env.step({"car-00": act(), "car-01": act()})
    assert r["info"]["drivers"]["car-01"]["episode_step"] == 0 and r["info"]["drivers"]["car-01"]["terminated"]
    # a recovery start inside the legal band (gravel at 15 m) is a normal start
    r = env.reset_drivers({"car-01": {"distance_meters": 500, "offset_meters": 15, "speed_kph": 60}})
    assert r["info"]["drivers"]["car-01"]["terminated"] is False and r["info"]["drivers"]["car-01"]["episode_id"] == 2
    assert r["observation"]["car-01"]["object"]["self"]["surface"] == "gravel"


def test_observation_scope_reset():
    env = make_env(drivers=4, controlled_drivers=["car-00", "car-01", "car-02"])
    env.reset()
    env.step(all_act(env))
    r = env.reset_drivers({"car-02": {"distance_meters": 300}}, observation_scope="reset", state_output="none")
    assert list(r["observation"]) == ["car-02"] and list(r["metrics"]) == ["car-02"]
    assert r["info"]["controlled_drivers"] == ["car-02"]
    assert list(r["info"]["drivers"]) == ["car-00", "car-01", "car-02"]
    assert r["state"] is None
    assert r["done"] is False
    # scope from the config
    env = make_env(drivers=4, controlled_drivers=["car-00", "car-01", "car-02"],
                   result={"reset_drivers_observation_scope": "reset"})
    env.reset()
    r = env.reset_drivers({"car-00": None, "car-01": {"distance_meters": 40}})
    assert list(r["observation"]) == ["car-00", "car-01"] and r["info"]["controlled_drivers"] == ["car-00", "car-01"]
    assert r["state"] is not None
    # get_observation() is the latest result's observation: after a reset-scoped call, the reset drivers'
    # (PaddockJS 2.0 does the same; its controller loop merges them into its own cache)
    assert list(env.get_observation()) == ["car-00", "car-01"]
    r = env.reset_drivers({"car-00": None}, observation_scope="all")
    assert list(r["observation"]) == ["car-00", "car-01", "car-02"]


def test_reset_driver_terminal_does_not_end_others_and_done_when_all_terminal():
    env = make_env()
    env.reset()
    r = env.reset_drivers({"car-00": {"distance_meters": 500, "offset_meters": -45}}, observation_scope="reset")
    assert r["info"]["drivers"]["car-00"]["terminated"]
    assert r["done"] is True                       # every *reported* driver is terminal
    assert r["info"]["drivers"]["car-01"]["terminated"] is False
    r = env.reset_drivers({"car-00": {"distance_meters": 500, "offset_meters": -45}})
    assert r["done"] is False                      # car-01 is reported and running


def test_reset_drivers_errors():
    env = make_env()
    with pytest.raises(PaddockError) as info:
        env.reset_drivers({"car-00": None})
    assert info.value.code == "not_reset"
    env.reset()
    before = env.checksum()
    with pytest.raises(PaddockError) as info:
        env.reset_drivers({"car-02": None})
    assert info.value.code == UNKNOWN_DRIVER and info.value.field == "placements.car-02"
    assert info.value.message.startswith("placements.car-02: 'car-02' is not a controlled driver")
    with pytest.raises(PaddockError) as info:
        env.reset_drivers({"car-00": {"distance": 5}})
    assert info.value.code == INVALID_REQUEST and info.value.field == "placements.car-00.distance"
    for bad, field in (({"distance_meters": 5, "speed_kph": 1e308}, "speed_kph"),
                       ({"distance_meters": 5, "heading_error_radians": 4.0}, "heading_error_radians"),
                       ({"distance_meters": 5, "offset_meters": -101.0}, "offset_meters"),
                       ({"offset_meters": 1.0}, "distance_meters")):
        with pytest.raises(PaddockError) as info:
            env.reset_drivers({"car-00": bad})
        assert info.value.code == INVALID_REQUEST and info.value.field == f"placements.car-00.{field}", bad
        assert "Error" not in info.value.message and "__" not in info.value.message
    assert env.checksum() == before
    with pytest.raises(PaddockError) as info:
        env.reset_drivers({})
    assert info.value.code == INVALID_REQUEST
    with pytest.raises(PaddockError) as info:
        env.reset_drivers({"car-00": None}, observation_scope="some")
    assert info.value.code == INVALID_REQUEST and info.value.field == "observation_scope"
    assert env.checksum() == before


def test_other_drivers_sense_the_placed_car():
    """Scope 'all': every reported observation is built from the state after the placement."""
    env = make_env(scenario={"placements": {"car-00": {"distance_meters": 100, "speed_kph": 50},
                                            "car-01": {"distance_meters": 400, "speed_kph": 50}}})
    env.reset()
    r = env.reset_drivers({"car-01": {"distance_meters": 115, "offset_meters": 0, "speed_kph": 50}})
    o = r["observation"]["car-00"]["object"]
    front = next(x for x in o["rays"] if x["angle_degrees"] == 0.0)
    assert front["car"]["hit"] and front["car"]["driver_id"] == "car-01"
    assert front["car"]["distance_meters"] == pytest.approx(15.0 - 4.65 / 2, abs=0.05)
    assert [n["id"] for n in o["nearby_cars"]][0] == "car-01"
    # and the vector agrees with the object
    v = dict(zip([e["name"] for e in r["observation"]["car-00"]["schema"]], r["observation"]["car-00"]["vector"]))
    assert v["rays[3].car.hit"] == 1.0 and v["nearbyCars[0].present"] == 1.0


def test_batch_reset_drivers_rejects_bad_placements_and_changes_nothing():
    """Issue 14, defect 1: the array forms of BatchEnv.reset_drivers are checked at the boundary."""
    from tests.helpers.env import config, world_bytes
    from paddock_ma.env.batch_env import BatchEnv
    batch = BatchEnv(config(), 2)
    batch.reset(seed=3)
    batch.step(np.tile(np.array([0.0, 0.5, 0.0], np.float32), (2, 2, 1)))
    mask = np.zeros((2, 2), bool)
    mask[1, 0] = True

    def arrays(**over):
        out = {"distance_meters": np.full((2, 2), 400.0), "offset_meters": np.zeros((2, 2)),
               "speed_kph": np.full((2, 2), 80.0), "heading_error_radians": np.zeros((2, 2))}
        out.update(over)
        return out

    bad = {np.nan: "nan", np.inf: "inf", -np.inf: "-inf"}
    cases = []
    for key in ("distance_meters", "offset_meters", "heading_error_radians"):
        for value, text in bad.items():
            a = np.full((2, 2), 1.0)
            a[1, 0] = value
            cases.append((arrays(**{key: a}), f"placement.{key}", f"got {text} for world 1 car-00"))
    a = np.full((2, 2), 80.0)
    a[1, 0] = np.inf                                  # NaN speed means "keep"; infinite is an error
    cases.append((arrays(speed_kph=a), "placement.speed_kph", "got inf for world 1 car-00"))
    cases.append((arrays(distance_meters=np.zeros(3)), "placement.distance_meters", "shape (3,)"))
    cases.append((arrays(offset_meters=["a", "b", "c", "d"]), "placement.offset_meters", "'a'"))
    cases.append((arrays(spead_kph=np.zeros((2, 2))), "placement.spead_kph", "speed_kph"))
    cases.append(([(400.0, float("nan"), None, 0.0)], "placement[0]", "got nan at index 1 for world 1 car-00"))
    cases.append(([(400.0, "left", None, 0.0)], "placement[0]", "got 'left' at index 1 for world 1 car-00"))
    cases.append(([(400.0, 0.0)], "placement[0]", "got (400.0, 0.0) for world 1 car-00"))
    cases.append(([(400.0, 0.0, None, 0.0)] * 2, "placement", "got 2 placements for 1 reset car(s) (world 1 car-00)"))
    before = world_bytes(batch)
    obs = batch.latest_obs.copy()
    for placement, field, shown in cases:
        with pytest.raises(PaddockError) as info:
            batch.reset_drivers(mask, placement)
        err = info.value
        assert err.code == INVALID_REQUEST and err.field == field, (field, err)
        assert shown in err.message and ("expected" in err.message or "known keys" in err.message), err.message
        assert world_bytes(batch) == before and np.array_equal(batch.latest_obs, obs)
    # the valid forms still work, and only the masked car moves
    r = batch.reset_drivers(mask, arrays())
    assert r.reset_mask[1, 0] and r.episode_id[1, 0] == 1 and r.episode_id[0, 0] == 0
    r = batch.reset_drivers(mask, [(400.0, 1.0, None, 0.0)])
    assert r.episode_id[1, 0] == 2


def test_a_wheel_on_the_barrier_destroys_the_car():
    """Issue 14, defect 3: touching the barrier's inner face destroys, and the surfaces say so."""
    env = make_env(observation={"profile": "physical-driver"})
    env.reset()
    seen_barrier = 0
    for offset in (38.6, 38.9, 39.06, 39.3, 39.6, 40.0):
        for heading in (-0.6, -0.3, 0.0, 0.3, 0.6):
            r = env.reset_drivers({"car-00": {"distance_meters": 500, "offset_meters": offset,
                                              "heading_error_radians": heading, "speed_kph": 60}})
            destroyed = r["metrics"]["car-00"]["destroyed"]
            c = env.engine.state.cars_i[0, slot(env, "car-00")]
            wheels = [L.SURFACE_NAMES[c[f]] for f in L.WHEEL_SURFACE_FIELDS]
            if "barrier" in wheels:
                seen_barrier += 1
                assert destroyed, (offset, heading, wheels)
    assert seen_barrier >= 3
    # the case: 39.06 m, heading error 0.6 rad, front-right wheel at 40.7 m
    r = env.reset_drivers({"car-00": {"distance_meters": 500, "offset_meters": 39.06,
                                      "heading_error_radians": 0.6}})
    assert r["metrics"]["car-00"]["destroyed"] is True
    assert r["info"]["drivers"]["car-00"]["end_reason"] == "destroyed"
