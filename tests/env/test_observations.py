"""Observations: object (real units) and float32 vector with schema, profiles, output modes, specs,
sensor configuration, and the sense contract (vector <-> object <-> brute-force oracle)."""

import math

import numpy as np
import pytest

from tests.helpers.env import act, all_act, make_env, slot
from paddock_ma.sim.core import layout as L
from paddock_ma.sim.sensing.vectors import SURFACE_CODE
from tests.helpers.vector_oracle import expected_vector
from tests.helpers import road_edge_oracle
from tests.helpers.sense_oracle import (
    nearest_sample_index, oracle_lookahead, oracle_radar, oracle_rays, oracle_self,
)

SENSE_PLACEMENTS = {
    # in the first curve near the right white line, heading out of the track
    "car-00": {"distance_meters": 600, "offset_meters": 5.0, "speed_kph": 90, "heading_error_radians": 0.1},
    # on the left side just before the pit entry (2185 m, pit lane on the left)
    "car-01": {"distance_meters": 2205, "offset_meters": -8.3, "speed_kph": 80, "heading_error_radians": -0.15},
    # targets for car-00's car rays and radar
    "car-02": {"distance_meters": 612, "offset_meters": 6.0, "speed_kph": 70},
    "car-03": {"distance_meters": 585, "offset_meters": -4.0, "speed_kph": 100},
    # in the gravel, controlled: origin on an illegal surface
    "car-04": {"distance_meters": 1300, "offset_meters": 15.0, "speed_kph": 40, "heading_error_radians": 0.5},
    "car-05": {"distance_meters": 1290, "offset_meters": 3.0, "speed_kph": 60},
    # on the pit lane (offset -31 m from s = 2295 m to 86 m on the oval): pit surfaces count as inside
    "car-06": {"distance_meters": 2350, "offset_meters": -31.0, "speed_kph": 60},
    # on the pit-entry connector
    "car-07": {"distance_meters": 2250, "offset_meters": -20.0, "speed_kph": 70, "heading_error_radians": -0.3},
}
CONTROLLED = ["car-00", "car-01", "car-04", "car-06", "car-07"]


def sense_env(profile, output="full", **extra):
    cfg = dict(drivers=8, controlled_drivers=CONTROLLED, scenario={"placements": SENSE_PLACEMENTS},
               observation={"profile": profile, "output": output},
               rules={"modules": {"pit_stops": {"enabled": True}}})    # car-06 and car-07's pit intents
    if profile == "physical-driver":
        cfg["observation"]["lookahead_meters"] = [10.0, 60.0, 150.0]
        cfg["sensors"] = {"rays": {"layout": "driver-front-heavy",
                                   "channels": ["road_edge", "kerb", "illegal_surface", "car"]},
                          "nearby_cars": {"max_cars": 3, "radius_meters": 60.0}}
    cfg.update(extra)
    return make_env(**cfg)


def assert_vector_matches_object(env, driver, o):
    spec = env.get_observation_spec()
    spec_d = spec["per_driver"].get(driver, spec)
    schema = o["schema"]
    assert schema == spec_d["vector"]["schema"]
    assert o["vector"].dtype == np.float32 and o["vector"].shape == (spec_d["vector"]["size"],)
    want = expected_vector(o["object"], spec_d["object"], env.engine.track.length)
    names = [e["name"] for e in schema]
    assert len(set(names)) == len(names)
    assert set(names) == set(want), (set(names) ^ set(want))
    for i, name in enumerate(names):
        assert float(o["vector"][i]) == pytest.approx(np.float32(want[name]), rel=2e-6, abs=2e-6), name


def assert_object_matches_oracle(env, driver, obj, tol):
    b = env.engine
    st = b.state
    tr = b.track
    c = slot(env, driver)
    cf, ci, flags = st.cars_f, st.cars_i, st.car_flags
    s = obj["self"]
    # self, against the state and locate
    assert s["speed_kph"] == pytest.approx(cf[0, c, L.F_SPEED] * 3.6)
    assert s["heading_radians"] == cf[0, c, L.F_HEADING]
    # PaddockJS's pit override: a policy car reads the pit surfaces with a committed stop (intent 2) or
    # one under way
    pit_allowed = (ci[0, c, L.I_MANUAL] == 0 or ci[0, c, L.I_PIT_INTENT] >= 2
                   or ci[0, c, L.I_PIT_STATUS] in (L.PIT_ENTERING, L.PIT_QUEUED, L.PIT_SERVICING, L.PIT_EXITING))
    o = oracle_self(tr, cf, 0, c, pit=pit_allowed)
    # PaddockJS's offset: the contact-patch edge farthest from the centreline (pit surfaces: the patch
    # centre's), the patches measured from the car's nearest sample along its normal
    he = o["heading_error"]
    reach = abs(math.sin(he)) * L.PATCH_LENGTH / 2 + abs(math.cos(he)) * L.PATCH_WIDTH / 2
    # (in the pit lane: the centre's offset, or the offset of the worst of the patch's five sampled points,
    # as near the pit entry and exit)
    edges = [o["centre_offset"] if o["analytic_pit"] else sampled[1] if sampled
             else max(woff - reach, woff + reach, key=abs) for (_, woff), sampled in zip(o["patches"], o["sampled"])]
    outer = max(edges, key=abs)
    assert s["track_offset_meters"] == pytest.approx(outer, abs=1e-6)
    # (a policy car on PaddockJS's pit route: its progress is its centre state's lap distance, as PaddockJS's)
    progress = o["centre_distance"] if ci[0, c, L.I_PIT_ROUTE] != L.ROUTE_NONE else o["progress"]
    assert s["lap_progress_meters"] == pytest.approx(progress, abs=1e-6)
    assert s["track_heading_error_radians"] == pytest.approx(o["heading_error"], abs=1e-9)
    assert obj["track"]["curvature"] == pytest.approx(o["curvature"], abs=1e-9)
    legal = {L.SURF_TRACK, L.SURF_KERB, L.SURF_PIT_ENTRY, L.SURF_PIT_LANE, L.SURF_PIT_EXIT, L.SURF_PIT_BOX}
    rel = obj["track_relation"]
    assert rel["left_boundary_meters"] == pytest.approx(tr.half_width + outer, abs=0.02)
    assert rel["right_boundary_meters"] == pytest.approx(tr.half_width - outer, abs=0.02)
    for (corners, _), woff, p in zip(o["patches"], edges, obj["contact_patches"]):
        wheel = p["id"]
        assert L.SURFACE_NAMES.index(p["surface"]) in corners, (driver, wheel, corners, p)
        assert p["surface_code"] == SURFACE_CODE[L.SURFACE_NAMES.index(p["surface"])]
        assert p["signed_offset_meters"] == pytest.approx(woff, abs=1e-6)
        assert p["cross_track_error_meters"] == pytest.approx(abs(woff), abs=1e-6)
    codes = [L.SURFACE_NAMES.index(p["surface"]) for p in obj["contact_patches"]]
    assert s["on_track"] == all(code in legal for code in codes)
    # lookahead
    look = oracle_lookahead(tr, o["sample_s"], [q["distance_meters"] for q in obj["track"]["lookahead"]])
    for q, (k, dh) in zip(obj["track"]["lookahead"], look):
        assert q["curvature"] == pytest.approx(k, abs=1e-7)
        assert q["heading_delta_radians"] == pytest.approx(dh, abs=1e-6)
    # rays
    destroyed = bool(ci[0, c, L.I_DESTROYED])
    for n, (ray, orc) in enumerate(zip(obj["rays"], oracle_rays(tr, cf, ci, flags, 0, c, obj["rays"]))):
        what = f"{driver} ray {n} ({ray['angle_degrees']} deg)"
        length = ray["length_meters"]
        if destroyed:
            for ch in ("track", "kerb", "illegal_surface", "car"):
                if ch in ray:
                    assert not ray[ch]["hit"] and ray[ch]["distance_meters"] == length
            continue
        x, y, h = cf[0, c, L.F_X], cf[0, c, L.F_Y], cf[0, c, L.F_HEADING]
        # PaddockJS's includePitLane: the car in the pit lane, or its centre's (or ray origin's) state
        include_pit = road_edge_oracle.include_pit_lane(tr, x, y, bool(ci[0, c, L.I_IN_PIT_LANE]), pit_allowed)
        if "track" in ray:
            # PaddockJS's road edge (edge lines, straight edge or 1 m march), its own oracle
            hit, d, kind, _ = road_edge_oracle.road_edge(
                tr, x, y, h, math.radians(ray["angle_degrees"]), length, tr.cs[nearest_sample_index(tr, x, y)],
                debug=tol < 0.05, include_pit=include_pit)
            assert ray["track"]["hit"] == bool(hit), (what, ray["track"], d)
            assert ray["track"]["distance_meters"] == pytest.approx(d, abs=1e-4 * max(1.0, d)), (what, ray["track"])
            assert ray["track"]["kind"] == (None, "exit", "entry")[kind], what
        if "kerb" in ray or "illegal_surface" in ray:
            want, _ = road_edge_oracle.surface_rays(
                tr, x, y, h, math.radians(ray["angle_degrees"]), length, tr.cs[nearest_sample_index(tr, x, y)],
                debug=tol < 0.05, include_pit=include_pit, pit_override=pit_allowed)
            for key, name in (("kerb", "kerb"), ("illegal_surface", "illegal")):
                if key in ray:
                    hit, d = want[name]
                    assert ray[key]["hit"] == bool(hit), (what, key, ray[key], d)
                    assert ray[key]["distance_meters"] == pytest.approx(d, abs=1e-4 * max(1.0, d)), (what, key)
        if "car" in ray:
            t, j = orc["car"]
            if j is None:
                assert ray["car"] == {"hit": False, "distance_meters": length, "driver_id": None,
                                      "relative_speed_kph": 0.0}, what
            else:
                assert ray["car"]["hit"] and ray["car"]["driver_id"] == b.driver_ids[j], what
                assert t - 0.0101 <= ray["car"]["distance_meters"] <= t + 1e-6, (what, t, ray["car"])
                assert ray["car"]["relative_speed_kph"] == pytest.approx(
                    (cf[0, j, L.F_SPEED] - cf[0, c, L.F_SPEED]) * 3.6, abs=1e-3)
    # radar
    spec = env.get_observation_spec()
    near = spec["per_driver"].get(driver, spec)["object"]["nearby_cars"]
    want = oracle_radar(cf, ci, flags, 0, c, near["max_cars"] if near["enabled"] else 0, near["radius_meters"])
    assert [n["id"] for n in obj["nearby_cars"]] == [b.driver_ids[j] for j, _ in want]
    for got, (j, fields) in zip(obj["nearby_cars"], want):
        for key, value in fields.items():
            if key in got:
                assert got[key] == pytest.approx(value, abs=1e-4), (driver, key)
        rich = spec["object"]["profile"] == "physical-driver"     # the physical driver's richer radar
        assert ("closing_rate_meters_per_second" in got) == rich
        if rich:
            assert got["closing_rate_meters_per_second"] == pytest.approx(fields["closing_speed_meters_per_second"],
                                                                          abs=1e-4)
            assert got["behind"] == (not got["ahead"])


@pytest.mark.parametrize("profile", ["default", "physical-driver"])
def test_sense_contract(profile):
    env = sense_env(profile)
    compact = sense_env(profile, output="vector", result={"state_output": "none"})
    results = [(env.reset(), compact.reset())]
    for step in range(3):
        # car-06 and car-07 commit to a stop (intent 2, at the first step: car-07's stop then starts, and an
        # intent is refused while it runs): PaddockJS's pit override lets a policy car read the pit surfaces
        # only then; car-01 does not, and reads the main track's bands beside the pit entry
        intent = {"pit_intent": 2} if step == 0 else {}
        actions = {"car-00": act(0.2, 0.8, 0.0), "car-01": act(-0.1, 0.5, 0.0), "car-04": act(0.3, 0.3, 0.0),
                   "car-06": act(0.0, 0.3, 0.0, **intent), "car-07": act(0.1, 0.3, 0.0, **intent)}
        results.append((env.step(actions), compact.step(actions)))
    for r, rc in (results[0], results[-1]):
        for d in CONTROLLED:
            o = r["observation"][d]
            assert_vector_matches_object(env, d, o)
            # vector-only output equals the full output's vector for the same state
            assert set(rc["observation"][d]) == {"vector", "schema", "events"}
            assert rc["observation"][d]["vector"].tobytes() == o["vector"].tobytes()
        assert rc["state"] is None
    # the object against brute force, on the final state (cars moving)
    r = results[-1][0]
    for d in CONTROLLED:
        assert_object_matches_oracle(env, d, r["observation"][d]["object"], tol=0.1 + 0.011)
    # the placements exercise what they should
    objs = {d: r["observation"][d]["object"] for d in CONTROLLED}
    assert any(ray["car"]["hit"] for ray in objs["car-00"]["rays"])
    assert len(objs["car-00"]["nearby_cars"]) >= 2
    assert not objs["car-04"]["self"]["on_track"]
    assert objs["car-06"]["self"]["surface"] == "pit-lane" and objs["car-06"]["self"]["on_track"]
    assert objs["car-07"]["self"]["surface"] == "pit-entry" and objs["car-07"]["self"]["in_pit_lane"]
    if profile == "physical-driver":
        assert objs["car-04"]["rays"][0]["illegal_surface"] == {"hit": True, "distance_meters": 0.0}
        assert any(ray["track"]["kind"] == "entry" for ray in objs["car-04"]["rays"])
        assert any(ray["kerb"]["hit"] for ray in objs["car-00"]["rays"])


def test_sense_contract_debug_precision():
    env = sense_env("physical-driver", sensors={"rays": {"layout": "driver-front-heavy", "precision": "debug"},
                                                "nearby_cars": {"max_cars": 3, "radius_meters": 60.0}})
    r = env.reset()
    for d in CONTROLLED:
        assert_vector_matches_object(env, d, r["observation"][d])
        assert_object_matches_oracle(env, d, r["observation"][d]["object"], tol=0.01 + 0.011)


def test_object_real_units_and_default_vector_layout():
    env = make_env()
    r = env.reset()
    o = r["observation"]["car-00"]
    # PaddockJS 2.0.0's default vector: 24 + 2*4 lookahead + 7*8 rays + 8*6 radar = 136
    assert o["vector"].shape == (136,) and o["vector"].dtype == np.float32
    assert [e["name"] for e in o["schema"][:3]] == ["self.speedKph", "self.speedMetersPerSecond",
                                                   "self.steeringAngleRadians"]
    assert o["schema"][11] == {"name": "self.trackOffsetMeters", "unit": "m", "scale": "fixed:meters"}
    obj = o["object"]
    assert set(obj) == {"profile", "self", "track_relation", "contact_patches", "race", "track", "rays", "nearby_cars"}
    assert [q["distance_meters"] for q in obj["track"]["lookahead"]] == [20.0, 50.0, 100.0, 150.0]
    assert [ray["angle_degrees"] for ray in obj["rays"]] == [-135.0, -60.0, -20.0, 0.0, 20.0, 60.0, 135.0, 180.0]
    assert all(ray["length_meters"] == 120.0 and set(ray) == {"id", "angle_degrees", "length_meters", "track", "car"}
               for ray in obj["rays"])
    assert obj["profile"] == "default" and len(obj["contact_patches"]) == 4       # every profile, as PaddockJS
    # rolling grid: 84 km/h, centre 3.2 m left (slot 0): PaddockJS's offset is the outer patch edge's,
    # -3.2 - 0.76 (patch centre) - 0.19 (half the patch width) = -4.15 m, as its golden reset reads
    assert obj["self"]["speed_kph"] == pytest.approx(84.0)
    assert obj["self"]["track_offset_meters"] == pytest.approx(-4.15, abs=1e-6)
    assert obj["track"]["length_meters"] == pytest.approx(2448.5547, abs=1e-3)
    assert obj["race"]["total_cars"] == 4 and obj["race"]["position"] == 1
    assert_vector_matches_object(env, "car-00", o)


def test_physical_driver_profile():
    env = make_env(observation={"profile": "physical-driver"})
    r = env.reset()
    o = r["observation"]["car-00"]
    obj = o["object"]
    assert obj["track"]["lookahead"] == []      # no lookahead unless lookahead_meters is given
    assert [p["id"] for p in obj["contact_patches"]] == ["front-left", "front-right", "rear-left", "rear-right"]
    assert {"left_boundary_meters", "right_boundary_meters", "legal_width_meters"} <= set(obj["track_relation"])
    assert obj["profile"] == "physical-driver" and "yaw_rate_radians_per_second" in obj["self"]
    # road edge and car by default (as every profile), yet the kerb and illegal-surface slots of every
    # ray are in the vector (miss values); no barrier channel
    assert set(obj["rays"][0]) == {"id", "angle_degrees", "length_meters", "track", "car"}
    names = [e["name"] for e in o["schema"]]
    assert "rays[0].kerb.distanceRatio" in names and "rays[7].illegalSurface.hit" in names
    assert not any("barrier" in n.lower() for n in names)
    assert not any(n.startswith("track.lookahead") for n in names)
    # PaddockJS 2.0.0: 24 + 20 physical + 8 rays * 11 + 6 radar * 13 = 210
    assert len(names) == 24 + 20 + 8 * 11 + 6 * 13 == 210
    assert obj["track_relation"]["left_boundary_meters"] == pytest.approx(7.5 - 4.15, abs=1e-6)   # PaddockJS golden: 3.35
    assert_vector_matches_object(env, "car-00", o)
    env2 = make_env(observation={"profile": "physical-driver", "lookahead_meters": [30.0]})
    assert [q["distance_meters"] for q in env2.reset()["observation"]["car-00"]["object"]["track"]["lookahead"]] == [30.0]


def test_invalid_lookahead_falls_back_to_default():
    with pytest.warns(UserWarning, match="lookahead_meters"):
        env = make_env(observation={"lookahead_meters": [20.0, -5.0]})
    r = env.reset()
    assert [q["distance_meters"] for q in r["observation"]["car-00"]["object"]["track"]["lookahead"]] == \
        [20.0, 50.0, 100.0, 150.0]


@pytest.mark.parametrize("value", [float("nan"), "far", 5, True, [float("nan")], [None], ["50"], [20.0, None],
                                   [20.0, float("inf")], {"a": 1}])
@pytest.mark.parametrize("profile", ["default", "physical-driver"])
def test_any_invalid_lookahead_value_falls_back_to_the_defaults(value, profile):
    """Issue 14, defect 5: the guide says invalid ``lookahead_meters`` values fall back to [20, 50, 100,
    150] (in every profile: the value was given), so fixed schemas stay usable; a warning names it."""
    with pytest.warns(UserWarning, match="observation.lookahead_meters"):
        env = make_env(observation={"profile": profile, "lookahead_meters": value})
    assert env.config.observation.lookahead_meters == (20.0, 50.0, 100.0, 150.0)
    r = env.reset()
    assert [q["distance_meters"] for q in r["observation"]["car-00"]["object"]["track"]["lookahead"]] == \
        [20.0, 50.0, 100.0, 150.0]
    assert env.config.merged({}).observation.lookahead_meters == (20.0, 50.0, 100.0, 150.0)


def test_absent_or_empty_lookahead_follows_the_profile():
    """Not given (or None): four samples by default, none under physical-driver; an explicit empty
    list means no samples under physical-driver (PaddockJS 2.0.0) and the defaults otherwise."""
    from paddock_ma.env.config.root import EnvConfig
    def look(**obs):
        return EnvConfig.from_dict({"observation": obs}).observation.lookahead_meters
    assert look() is None and look(lookahead_meters=None) is None
    assert look(profile="physical-driver", lookahead_meters=[]) == ()
    assert look(lookahead_meters=[]) == (20.0, 50.0, 100.0, 150.0)
    assert look(lookahead_meters=[30, 60.5]) == (30.0, 60.5)


@pytest.mark.parametrize("output,include_schema,keys", [
    ("full", True, {"object", "vector", "schema", "events"}),
    ("full", False, {"object", "vector", "events"}),
    ("vector", True, {"vector", "schema", "events"}),
    ("vector", False, {"vector", "events"}),
    ("object", True, {"object", "events"}),
])
def test_output_modes(output, include_schema, keys):
    env = make_env(observation={"output": output, "include_schema": include_schema})
    r = env.reset()
    assert set(r["observation"]["car-00"]) == keys
    r = env.step(all_act(env))
    assert set(r["observation"]["car-01"]) == keys
    spec = env.get_observation_spec()
    assert spec["output"] == output and spec["vector"]["size"] == 136


def test_observation_spec_per_driver():
    env = make_env(drivers=4, controlled_drivers=["car-00", "car-01", "car-02"],
                   sensors_by_driver={"car-01": {"rays": {"rays": [{"id": "front", "angle_degrees": 0,
                                                                    "length_meters": 200}]},
                                                 "nearby_cars": {"max_cars": 2}}})
    spec = env.get_observation_spec()
    assert spec["version"] == 2 and spec["controlled_drivers"] == ["car-00", "car-01", "car-02"]
    assert spec["vector"]["size"] == 136
    assert list(spec["per_driver"]) == ["car-01"]
    sch = spec["per_driver"]["car-01"]["vector"]["schema"]
    assert len(sch) == 24 + 8 + 7 * 1 + 8 * 2 == spec["per_driver"]["car-01"]["vector"]["size"]
    assert spec["per_driver"]["car-01"]["object"]["rays"]["rays"] == [
        {"id": "front", "angle_degrees": 0.0, "length_meters": 200.0}]
    r = env.reset()
    assert r["observation"]["car-01"]["vector"].shape == (len(sch),)
    assert r["observation"]["car-01"]["schema"] == sch
    assert r["observation"]["car-00"]["vector"].shape == (136,)
    assert r["observation"]["car-01"]["object"]["rays"][0]["length_meters"] == 200.0
    for d in ("car-00", "car-01", "car-02"):
        assert_vector_matches_object(env, d, r["observation"][d])


def test_ray_layouts_explicit_rays_and_channels():
    env = make_env(sensors={"rays": {"layout": "driver-front-heavy"}})
    rays = env.reset()["observation"]["car-00"]["object"]["rays"]
    assert [r["angle_degrees"] for r in rays] == [-140.0, -100.0, -70.0, -50.0, -35.0, -20.0, -10.0, 0.0, 10.0, 20.0,
                                                   35.0, 50.0, 70.0, 100.0, 140.0, 180.0]
    env = make_env(sensors={"rays": {"channels": ["kerb", "illegal_surface"],
                                     "rays": [{"id": "front", "angle_degrees": 0, "length_meters": 260},
                                              {"id": "right", "angle_degrees": 90, "length_meters": 80}]}})
    r = env.reset()
    o = r["observation"]["car-00"]
    assert [(x["id"], x["angle_degrees"], x["length_meters"]) for x in o["object"]["rays"]] == \
        [("front", 0.0, 260.0), ("right", 90.0, 80.0)]
    assert all(set(x) == {"id", "angle_degrees", "length_meters", "kerb", "illegal_surface"} for x in o["object"]["rays"])
    ray_names = [e["name"] for e in o["schema"] if e["name"].startswith("rays")]
    # every ray has its 7 default-profile slots whatever channels are asked for (PaddockJS 2.0.0)
    assert ray_names == [f"rays[{i}].{n}" for i in range(2) for n in (
        "track.distanceRatio", "track.hit", "track.kindExit", "track.kindEntry", "car.distanceRatio", "car.hit",
        "car.relativeSpeedKph")]
    # car-00 sits at offset -3.2 on the rolling grid: 90 deg right crosses the right kerb at 7.5 + 3.2 = 10.7 m
    right = o["object"]["rays"][1]
    # (PaddockJS's edge lines: exact, to float32)
    assert right["kerb"]["hit"] and right["kerb"]["distance_meters"] == pytest.approx(10.7, abs=1e-3)
    assert right["illegal_surface"]["hit"] and right["illegal_surface"]["distance_meters"] == pytest.approx(12.2, abs=1e-3)
    assert_vector_matches_object(env, "car-00", o)
    env = make_env(sensors={"rays": {"enabled": False}, "nearby_cars": {"enabled": False}})
    o = env.reset()["observation"]["car-00"]
    assert o["object"]["rays"] == [] and o["object"]["nearby_cars"] == [] and o["vector"].shape == (24 + 8,)


def test_radar_k_and_radius():
    # rolling grid: 35 m between slots, so with radius 40 m car-00 sees only car-01 (35.1 m) ...
    env = make_env(drivers=4, sensors={"nearby_cars": {"max_cars": 2, "radius_meters": 40.0}})
    r = env.reset()
    near = r["observation"]["car-00"]["object"]["nearby_cars"]
    assert [n["id"] for n in near] == ["car-01"]
    assert near[0]["relative_distance_meters"] == pytest.approx(math.hypot(35.0, 6.4), abs=0.05)
    assert near[0]["ahead"] is False and near[0]["relative_forward_meters"] < 0
    # ... and car-01 sees car-00 and car-02 but only k = 2 of them
    near = r["observation"]["car-01"]["object"]["nearby_cars"]
    assert sorted(n["id"] for n in near) == ["car-00", "car-02"]
    env = make_env(drivers=4, sensors={"nearby_cars": {"max_cars": 1, "radius_meters": 200.0}})
    r = env.reset()
    # car-00 and car-02 are both 35.6 m from car-01 (straight, mirrored offsets): the tie goes to race order
    assert [n["id"] for n in r["observation"]["car-01"]["object"]["nearby_cars"]] == ["car-00"]
    assert len([e for e in r["observation"]["car-01"]["schema"] if e["name"].startswith("nearbyCars")]) == 8
    assert_vector_matches_object(env, "car-01", r["observation"]["car-01"])


def test_per_driver_radar_radius():
    """Issue 14, defect 6: drivers may have their own ``nearby_cars.radius_meters`` (PaddockJS allows
    per-driver sensor shapes); each one's radar, vector and spec use its own radius."""
    env = make_env(drivers=4, sensors={"nearby_cars": {"max_cars": 2, "radius_meters": 150.0}},
                   sensors_by_driver={"car-01": {"nearby_cars": {"max_cars": 2, "radius_meters": 30.0}}})
    r = env.reset()
    # rolling grid, 35.6 m between neighbours: car-00 (150 m) sees car-01 and car-02; car-01 (30 m) nobody
    assert [n["id"] for n in r["observation"]["car-00"]["object"]["nearby_cars"]] == ["car-01", "car-02"]
    assert r["observation"]["car-01"]["object"]["nearby_cars"] == []
    spec = env.get_observation_spec()
    assert spec["per_driver"]["car-01"]["object"]["nearby_cars"]["radius_meters"] == 30.0
    assert spec["object"]["nearby_cars"]["radius_meters"] == 150.0
    for d in ("car-00", "car-01"):
        assert_vector_matches_object(env, d, r["observation"][d])
    v = dict(zip([e["name"] for e in r["observation"]["car-01"]["schema"]], r["observation"]["car-01"]["vector"]))
    assert v["nearbyCars[0].present"] == 0.0 and v["nearbyCars[0].relativeDistanceRatio"] == 1.0


def test_physical_driver_explicit_channels_are_honoured():
    env = make_env(observation={"profile": "physical-driver"}, sensors={"rays": {"channels": ["road_edge", "car"]}})
    o = env.reset()["observation"]["car-00"]
    assert set(o["object"]["rays"][0]) == {"id", "angle_degrees", "length_meters", "track", "car"}
    # the kerb and illegal-surface slots stay, with their miss values (ratio 1, hit 0)
    kerb = [i for i, e in enumerate(o["schema"]) if ".kerb." in e["name"] or "illegalSurface" in e["name"]]
    assert len(kerb) == 8 * 4 and all(o["vector"][i] == (1.0 if o["schema"][i]["name"].endswith("Ratio") else 0.0)
                                      for i in kerb)
    assert env.get_observation_spec()["object"]["rays"]["channels"] == ["road_edge", "car"]
    env = make_env(sensors={"rays": {"channels": ["car"]}})
    o = env.reset()["observation"]["car-00"]
    assert [e["name"] for e in o["schema"] if e["name"].startswith("rays[0]")] == \
        ["rays[0].track.distanceRatio", "rays[0].track.hit", "rays[0].track.kindExit", "rays[0].track.kindEntry",
         "rays[0].car.distanceRatio", "rays[0].car.hit", "rays[0].car.relativeSpeedKph"]


def test_precision_is_per_driver():
    """A debug-precision driver must not change another driver's driver-precision rays."""
    pl = {"car-00": {"distance_meters": 600, "offset_meters": 5.0, "heading_error_radians": 0.1, "speed_kph": 80},
          # near the pit entry (2185 m), where PaddockJS's road edge marches and its precision matters
          "car-01": {"distance_meters": 2200, "offset_meters": -4.0, "heading_error_radians": -0.2, "speed_kph": 80}}
    mixed = make_env(scenario={"placements": pl}, sensors_by_driver={"car-01": {"rays": {"precision": "debug"}}})
    plain = make_env(scenario={"placements": pl})
    debug = make_env(scenario={"placements": pl}, sensors={"rays": {"precision": "debug"}})
    rm, rp, rd = mixed.reset(), plain.reset(), debug.reset()
    assert rm["observation"]["car-00"]["vector"].tobytes() == rp["observation"]["car-00"]["vector"].tobytes()
    assert rm["observation"]["car-01"]["vector"].tobytes() == rd["observation"]["car-01"]["vector"].tobytes()
    assert rp["observation"]["car-01"]["vector"].tobytes() != rd["observation"]["car-01"]["vector"].tobytes()
    assert mixed.get_observation_spec()["per_driver"]["car-01"]["object"]["rays"]["precision"] == "debug"
    assert_object_matches_oracle(mixed, "car-01", rm["observation"]["car-01"]["object"], tol=0.01 + 0.011)
    assert_object_matches_oracle(mixed, "car-00", rm["observation"]["car-00"]["object"], tol=0.1 + 0.011)


def test_spec_top_level_schema_is_the_global_one():
    env = make_env(sensors_by_driver={"car-00": {"nearby_cars": {"max_cars": 1}}})
    spec = env.get_observation_spec()
    assert spec["vector"]["size"] == 136                       # the global sensors' schema
    assert list(spec["per_driver"]) == ["car-00"]
    assert spec["per_driver"]["car-00"]["vector"]["size"] == 136 - 5 * 8
    r = env.reset()
    for d in ("car-00", "car-01"):
        assert_vector_matches_object(env, d, r["observation"][d])
