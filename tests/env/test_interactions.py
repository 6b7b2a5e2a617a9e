"""participant_interactions: normal / batch-training / phantom-race profiles and visibility overrides."""

import pytest

from tests.helpers.env import act, make_env
from paddock_ma.sim.core import layout as L

# car-00 and car-01 side by side (0.5 m apart: bodies overlap), same speed, steering into each other
THROUGH = {"car-00": {"distance_meters": 100, "offset_meters": 0.0, "speed_kph": 100},
           "car-01": {"distance_meters": 100, "offset_meters": 0.5, "speed_kph": 100}}
INTO = {"car-00": act(0.3, 0.6, 0.0), "car-01": act(-0.3, 0.6, 0.0)}


def _pair(interactions, placements=THROUGH, **extra):
    env = make_env(drivers=2, controlled_drivers=["car-00", "car-01"], participant_interactions=interactions,
                   scenario={"placements": placements}, observation={"profile": "physical-driver"}, **extra)
    return env, env.reset()


def _seen(r, me, other):
    o = r["observation"][me]["object"]
    by_ray = any(ray["car"]["hit"] and ray["car"]["driver_id"] == other for ray in o["rays"])
    by_radar = any(n["id"] == other for n in o["nearby_cars"])
    return by_ray, by_radar


def test_batch_training_cars_pass_through_each_other_unseen():
    env, r = _pair({"default_profile": "batch-training"})
    results = [r]
    for _ in range(20):
        results.append(env.step(INTO))
    for r in results:
        for me, other in (("car-00", "car-01"), ("car-01", "car-00")):
            assert _seen(r, me, other) == (False, False)
            o = r["observation"][me]
            assert all(not ray["car"]["hit"] for ray in o["object"]["rays"])
            assert o["object"]["nearby_cars"] == []
            v = dict(zip([e["name"] for e in o["schema"]], o["vector"].tolist()))
            assert all(v[f"rays[{i}].car.distanceRatio"] == 1.0 and v[f"rays[{i}].car.hit"] == 0.0 for i in range(8))
            assert all(v[f"nearbyCars[{i}].present"] == 0.0 for i in range(6))
            assert r["metrics"][me]["contact_count"] == 0
        assert not any(e["type"] == "collision" for e in r["events"])
    # they really were driven through each other: the lateral order swapped
    offs = [r["observation"][d]["object"]["self"]["track_offset_meters"] for d in ("car-00", "car-01")]
    assert offs[0] > offs[1]
    # excluded from race order and classification, still in the state
    assert r["observation"]["car-00"]["object"]["race"]["position"] is None
    assert len(r["state"]["snapshot"]["cars"]) == 2


def test_normal_cars_collide():
    env, r = _pair({"default_profile": "normal"})
    contacts = 0
    for _ in range(20):
        r = env.step(INTO)
        contacts += r["metrics"]["car-00"]["contact_count"]
        assert r["metrics"]["car-00"]["contact_count"] == r["metrics"]["car-01"]["contact_count"]
    assert contacts >= 1
    assert _seen(r, "car-00", "car-01")[1]


def test_phantom_car_is_seen_but_not_hit():
    # car-01 (phantom) 12 m straight ahead of car-00 (normal), which drives into it from behind
    placements = {"car-00": {"distance_meters": 100, "offset_meters": 0.0, "speed_kph": 140},
                  "car-01": {"distance_meters": 112, "offset_meters": 0.0, "speed_kph": 40}}
    env, r = _pair({"drivers": {"car-01": {"profile": "phantom-race"}}}, placements, frame_skip=4)
    assert _seen(r, "car-00", "car-01") == (True, True)
    front = next(ray for ray in r["observation"]["car-00"]["object"]["rays"] if ray["angle_degrees"] == 0.0)
    assert front["car"]["driver_id"] == "car-01"
    assert front["car"]["distance_meters"] == pytest.approx(12.0 - 4.65 / 2, abs=0.05)
    passed = False
    for _ in range(20):
        r = env.step({"car-00": act(0.0, 1.0, 0.0), "car-01": act(0.0, 0.0, 1.0)})
        assert r["metrics"]["car-00"]["contact_count"] == 0 and r["metrics"]["car-01"]["contact_count"] == 0
        assert not any(e["type"] == "collision" for e in r["events"])
        s = {d: r["observation"][d]["object"]["self"]["race_distance_meters"] for d in ("car-00", "car-01")}
        passed |= s["car-00"] > s["car-01"] + 5
    assert passed                        # car-00 drove through the phantom car
    assert r["observation"]["car-01"]["object"]["race"]["position"] is not None   # still classified


@pytest.mark.parametrize("rays,nearby", [(True, False), (False, True), (True, True)])
def test_visibility_overrides(rays, nearby):
    env, r = _pair({"default_profile": "batch-training",
                    "drivers": {"car-01": {"detectable_by_rays": rays, "detectable_as_nearby": nearby}}},
                   {"car-00": {"distance_meters": 100, "offset_meters": 0.0, "speed_kph": 80},
                    "car-01": {"distance_meters": 115, "offset_meters": 0.0, "speed_kph": 80}})
    assert _seen(r, "car-00", "car-01") == (rays, nearby)
    assert _seen(r, "car-01", "car-00") == (False, False)      # hiding is a property of the target
    flags = {c["id"]: c["interaction_flags"] for c in r["state"]["snapshot"]["cars"]}
    assert not flags["car-01"] & L.FLAG_COLLIDES


def test_normal_default_flags():
    env, r = _pair({})
    flags = {c["id"]: c["interaction_flags"] for c in r["state"]["snapshot"]["cars"]}
    want = L.FLAG_COLLIDES | L.FLAG_RAY_VISIBLE | L.FLAG_RADAR_VISIBLE | L.FLAG_CLASSIFIED | L.FLAG_PIT_OCCUPIES
    assert flags == {"car-00": want | L.FLAG_CONTROLLED, "car-01": want | L.FLAG_CONTROLLED}
