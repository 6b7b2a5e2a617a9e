"""Scenarios: participants, presets, explicit placements, relative traffic (applied at reset)."""

import math

import numpy as np
import pytest

from tests.helpers.env import act, make_env
from tests.helpers.sense_oracle import nearest_sample_index, sample_heading, wrap
from paddock_ma.sim.track.geometry import point_at
from paddock_ma.sim.track.load import load_track

OVAL = load_track("oval")


def _self(r, d):
    return r["observation"][d]["object"]["self"]


def _cars(r):
    return {c["id"]: c for c in r["state"]["snapshot"]["cars"]}


def test_participants_all_controlled_only_and_list():
    r = make_env(drivers=4, controlled_drivers=["car-01"]).reset()
    assert list(_cars(r)) == ["car-00", "car-01", "car-02", "car-03"]
    r = make_env(drivers=4, controlled_drivers=["car-01", "car-03"], scenario={"participants": "controlled-only"}).reset()
    assert list(_cars(r)) == ["car-01", "car-03"]
    assert _self(r, "car-01")["race_distance_meters"] == pytest.approx(-30.0)   # rolling grid slot 0
    assert _self(r, "car-03")["race_distance_meters"] == pytest.approx(-65.0)   # slot 1
    env = make_env(drivers=4, controlled_drivers=["car-02"], scenario={"participants": ["car-00", "car-02"]})
    r = env.reset()
    assert list(_cars(r)) == ["car-00", "car-02"]
    assert r["observation"]["car-02"]["object"]["race"]["total_cars"] == 2
    r = env.step({"car-02": act()})
    assert len(r["state"]["snapshot"]["cars"]) == 2


def test_participants_must_include_controlled():
    from paddock_ma.errors import ConfigError
    with pytest.raises(ConfigError) as info:
        make_env(drivers=4, controlled_drivers=["car-01"], scenario={"participants": ["car-00", "car-02"]})
    assert str(info.value) == "scenario.participants: must include every controlled driver; 'car-01' is missing"
    with pytest.raises(ConfigError) as info:
        make_env(drivers=4, scenario={"participants": ["car-00", "car-01", "car-7"]})
    assert info.value.field == "scenario.participants[2]"


def _cornering_distance(tr):
    # 70 m before the centreline sample of highest |curvature| at s >= 350 m (spec 6.11), by brute force
    best_s, best_k = None, -1.0
    for s, k in zip(tr.cs[:-1], tr.ccurv[:-1]):
        if s >= 350.0 and abs(k) > best_k:
            best_s, best_k = s, abs(k)
    return (best_s - 70.0) % tr.length


@pytest.mark.parametrize("preset,distance,offset,speed,heading", [
    ("cornering", _cornering_distance(OVAL), 0.0, 135.0, 0.0),
    ("off-track-recovery", 0.42 * OVAL.length, 7.5 + 7.0, 52.0, -0.45),
    ("pit-entry", (OVAL.pit_entry_s - 170.0) % OVAL.length, 0.0, 120.0, 0.0),
])
def test_single_car_presets(preset, distance, offset, speed, heading):
    env = make_env(drivers=4, controlled_drivers=["car-02", "car-00"], scenario={"preset": preset},
                   rules={"standing_start": True})
    r = env.reset()
    s = _self(r, "car-02")
    assert s["race_distance_meters"] == pytest.approx(distance, abs=1e-6)
    # the placement's offset is the body centre's: the state snapshot's (the observation reports
    # PaddockJS's outer patch edge)
    assert _cars(r)["car-02"]["signed_offset_meters"] == pytest.approx(offset, abs=1e-6)
    assert s["speed_kph"] == pytest.approx(speed)
    # placed at the centreline's heading at that distance (interpolated) plus the preset's error; the
    # error is reported, as PaddockJS reports it, against the heading of the car's nearest centreline
    # sample (its progress is that sample's): the preset's plus the centreline's turn in between
    x, y, h, _ = point_at(OVAL, distance)
    j = nearest_sample_index(OVAL, x - math.sin(h) * offset, y + math.cos(h) * offset)
    reported = wrap(h + heading - sample_heading(OVAL, j))
    assert s["track_heading_error_radians"] == pytest.approx(reported, abs=1e-9)
    assert reported == pytest.approx(heading, abs=0.01)
    cars = _cars(r)
    assert cars["car-02"]["grid_locked"] is False
    # only the first controlled driver moves; the others stay on the standing grid
    assert cars["car-00"]["race_distance_meters"] == pytest.approx(-6.0) and cars["car-00"]["grid_locked"]
    assert cars["car-01"]["race_distance_meters"] == pytest.approx(-14.0)
    if preset == "off-track-recovery":
        assert s["surface"] == "gravel" and not s["on_track"]
    if preset == "cornering":
        ahead = s["lap_progress_meters"] + 70.0
        idx = int(np.argmin(np.abs(OVAL.cs - ahead)))
        assert abs(OVAL.ccurv[idx]) == pytest.approx(np.abs(OVAL.ccurv[:-1][OVAL.cs[:-1] >= 350]).max(), rel=1e-3)


def test_overtaking_pack_preset():
    env = make_env(drivers=5, controlled_drivers=["car-00"], scenario={"preset": "overtaking-pack"})
    r = env.reset()
    cars = _cars(r)
    for i in range(4):      # PaddockJS 2.0.0: the i-th car at 0.35 L + (i - 1) 18 m, 135 - 3 i km/h
        c = cars[f"car-{i:02d}"]
        assert c["race_distance_meters"] == pytest.approx(0.35 * OVAL.length + 18.0 * (i - 1))
        assert c["signed_offset_meters"] == pytest.approx(-2.2 if i % 2 == 0 else 2.2, abs=1e-6)
        assert c["speed_kph"] == pytest.approx(135.0 - 3.0 * i)
    assert cars["car-04"]["race_distance_meters"] == pytest.approx(-30.0 - 35.0 * 4)   # 5th car on the grid


def test_overtaking_pack_takes_the_first_four_in_race_order():
    """Issue 14, defect 9: the pack is the first four cars in race order at the start, not in driver
    order: a car out of race order (batch-training) is ranked after every racing car."""
    env = make_env(drivers=6, controlled_drivers=["car-00"], scenario={"preset": "overtaking-pack"},
                   participant_interactions={"drivers": {"car-01": {"profile": "batch-training"}}})
    cars = _cars(env.reset())
    pack = ["car-00", "car-02", "car-03", "car-04"]
    for i, d in enumerate(pack):
        assert cars[d]["race_distance_meters"] == pytest.approx(0.35 * OVAL.length + 18.0 * (i - 1)), d
        assert cars[d]["speed_kph"] == pytest.approx(135.0 - 3.0 * i)
    assert cars["car-01"]["race_distance_meters"] < 0.0 and cars["car-05"]["race_distance_meters"] < 0.0


def test_explicit_placements_override_preset_and_traffic_is_relative():
    env = make_env(drivers=4, controlled_drivers=["car-00", "car-01"], scenario={
        "preset": "cornering",
        "placements": {"car-00": {"distance_meters": 2600.0, "offset_meters": -2.0, "speed_kph": 90,
                                  "heading_error_radians": 0.1},
                       "car-03": {"distance_meters": -20.0}},
        "traffic": [{"driver_id": "car-01", "relative_to": "car-00", "delta_distance_meters": 25.0,
                     "offset_meters": 3.0},
                    {"driver_id": "car-02", "relative_to": "car-00", "delta_distance_meters": -10.0,
                     "speed_kph": 50.0, "heading_error_radians": -0.05}]})
    r = env.reset()
    cars = _cars(r)
    s0 = _self(r, "car-00")
    # absolute race distance: 2600 m is on lap 2, 151.4 m into it
    assert s0["race_distance_meters"] == pytest.approx(2600.0)
    assert s0["lap_progress_meters"] == pytest.approx(2600.0 - OVAL.length, abs=1e-6)
    assert cars["car-00"]["signed_offset_meters"] == pytest.approx(-2.0, abs=1e-6)
    assert s0["speed_kph"] == pytest.approx(90.0)
    assert cars["car-01"]["race_distance_meters"] == pytest.approx(2625.0)
    assert cars["car-01"]["signed_offset_meters"] == pytest.approx(3.0, abs=1e-6)
    assert cars["car-01"]["speed_kph"] == pytest.approx(90.0)                 # the reference car's speed
    assert cars["car-02"]["race_distance_meters"] == pytest.approx(2590.0)
    assert cars["car-02"]["speed_kph"] == pytest.approx(50.0)
    assert cars["car-03"]["race_distance_meters"] == pytest.approx(0.0)       # max(0, distance)
    # the placed cars then move only through actions / the built-in driver
    r = env.step({"car-00": act(0.0, 0.5, 0.0), "car-01": act(0.0, 0.5, 0.0)})
    assert _self(r, "car-00")["race_distance_meters"] == pytest.approx(2600.0 + 25.0 / 60.0, abs=0.05)


def test_scenario_placement_validation():
    from paddock_ma.errors import ConfigError
    with pytest.raises(ConfigError) as info:
        make_env(scenario={"placements": {"car-00": {"offset_meters": 1.0}}})
    assert info.value.field == "scenario.placements.car-00.distance_meters"
    with pytest.raises(ConfigError) as info:
        make_env(scenario={"traffic": [{"driver_id": "car-01", "relative_to": "car-9", "delta_distance_meters": 5}]})
    assert info.value.field == "scenario.traffic[0].relative_to"
    with pytest.raises(ConfigError) as info:
        make_env(scenario={"non_controlled": "policy"})
    assert info.value.field == "scenario.non_controlled"
