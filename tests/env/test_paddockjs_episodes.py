"""PaddockJS 2.0.0's interaction profiles, its thirteen metrics and its result-level end reasons (issue 14,
"Profiles and episodes")."""

import json
from pathlib import Path

import numpy as np
import pytest

from tests.helpers.env import act, make_env
from paddock_ma.env.config.participants import PROFILES
from paddock_ma.env.config.root import EnvConfig
from paddock_ma.env.environment import result_end_reason
from paddock_ma.env.episodes import DESTROY_REASON_NAMES, METRIC_NAMES, metrics_dicts, metrics_row
from paddock_ma.env.reset.interactions import FLAG_BY_NAME, driver_flags
from paddock_ma.paddockjs.naming import wire_name
from paddock_ma.sim.core import layout as L

ROOT = Path(__file__).resolve().parents[2]

# PaddockJS 2.0.0's profiles and the flags each has true (src/simulation/participants)
PADDOCKJS_PROFILES = {
    "normal": {"collidable", "detectable_by_rays", "detectable_as_nearby", "blocks_pit_lane", "affects_race_order"},
    "isolated-training": {"affects_race_order"},
    "batch-training": set(),
    "phantom-race": {"detectable_by_rays", "detectable_as_nearby", "affects_race_order"},
    "time-trial-overlay": set(),
}
PADDOCKJS_METRICS = ["progressDeltaMeters", "legalProgressDeltaMeters", "offTrack", "kerb", "fullyOutsideWhiteLine",
                     "severeCut", "destroyed", "destroyReason", "under30kph", "spinOrBackwards", "completedLap",
                     "lapTimeSeconds", "contactCount"]


def _flags_on(flags: int) -> set:
    return {name for name, bit in FLAG_BY_NAME.items() if flags & bit}


def _config(interactions) -> EnvConfig:
    return EnvConfig.from_dict({"drivers": 3, "controlled_drivers": ["car-00"], "participant_interactions": interactions})


@pytest.mark.parametrize("profile", sorted(PADDOCKJS_PROFILES))
def test_the_five_profiles_have_paddockjs_flags(profile):
    assert profile in PROFILES
    config = _config({"default_profile": profile})
    assert _flags_on(driver_flags(config, "car-01")) == PADDOCKJS_PROFILES[profile]
    assert driver_flags(config, "car-00") & L.FLAG_CONTROLLED and not driver_flags(config, "car-01") & L.FLAG_CONTROLLED


@pytest.mark.parametrize("flag", sorted(FLAG_BY_NAME))
def test_any_flag_is_overridable_per_driver(flag):
    for profile, on in PADDOCKJS_PROFILES.items():
        for value in (True, False):
            # with a profile of its own, and without one (the default profile's flags, then the override)
            for override in ({"profile": profile, flag: value}, {flag: value}):
                config = _config({"default_profile": profile if "profile" not in override else "normal",
                                  "drivers": {"car-01": override}})
                want = (on | {flag}) if value else (on - {flag})
                assert _flags_on(driver_flags(config, "car-01")) == want, (profile, override)
                assert _flags_on(driver_flags(config, "car-02")) == PADDOCKJS_PROFILES[
                    "normal" if "profile" in override else profile]


def test_profiles_and_overrides_reach_the_cars_and_their_wire_names():
    env = make_env(participant_interactions={"default_profile": "isolated-training",
                                             "drivers": {"car-01": {"profile": "phantom-race", "blocks_pit_lane": True},
                                                         "car-02": {"collidable": True}}})
    env.reset()
    flags = {d: int(f) for d, f in zip(env.engine.driver_ids, env.engine.state.car_flags[0])}
    assert _flags_on(flags["car-00"]) == {"affects_race_order"}
    assert _flags_on(flags["car-01"]) == PADDOCKJS_PROFILES["phantom-race"] | {"blocks_pit_lane"}
    assert _flags_on(flags["car-02"]) == {"affects_race_order", "collidable"}
    assert {wire_name(n) for n in FLAG_BY_NAME} == {"collidable", "detectableByRays", "detectableAsNearby",
                                                   "blocksPitLane", "affectsRaceOrder"}
    with pytest.raises(Exception, match="ghost"):
        _config({"default_profile": "ghost"})


def test_the_thirteen_metrics_in_paddockjs_order():
    assert [wire_name(n) for n in METRIC_NAMES] == PADDOCKJS_METRICS
    env = make_env()
    r = env.reset()
    for result in (r, env.step({"car-00": act(), "car-01": act()})):
        for m in result["metrics"].values():
            assert [wire_name(k) for k in m] == PADDOCKJS_METRICS
            assert m["fully_outside_white_line"] is False and m["destroy_reason"] is None
            assert np.array_equal(metrics_row(m), metrics_row(metrics_dicts(metrics_row(m)[None])[0]), equal_nan=True)
    assert DESTROY_REASON_NAMES == (None, "barrier")


@pytest.mark.parametrize("offset,outside", [(9.2, True), (-9.2, True), (8.0, False), (0.0, False)])
def test_fully_outside_white_line_is_every_patch_past_one_line(offset, outside):
    # wheels 0.76 m either side of the car's axis, patches 0.19 m half-wide: heading along the track,
    # every patch clears the 7.5 m line once the car's axis is past 7.5 + 0.76 + 0.19 = 8.45 m
    env = make_env(scenario={"placements": {"car-00": {"distance_meters": 100, "offset_meters": offset,
                                                       "speed_kph": 0}}})
    r = env.reset()
    assert r["metrics"]["car-00"]["fully_outside_white_line"] is outside
    assert r["metrics"]["car-01"]["fully_outside_white_line"] is False


def test_a_destroyed_car_reports_the_barrier():
    env = make_env(scenario={"placements": {"car-00": {"distance_meters": 100, "offset_meters": 36,
                                                       "speed_kph": 100, "heading_error_radians": 0.6}}})
    env.reset()
    for _ in range(60):
        r = env.step({d: act() for d, run in zip(env.controlled, env.engine.running_mask()[0]) if run})
        if r["metrics"]["car-00"]["destroyed"]:
            break
    assert r["metrics"]["car-00"]["destroy_reason"] == "barrier"
    assert r["metrics"]["car-01"]["destroy_reason"] is None


def _ended(terminated, truncated, reason):
    return {"terminated": terminated, "truncated": truncated, "end_reason": reason}


def test_result_end_reasons_follow_paddockjs():
    destroyed, stalled = _ended(True, False, "destroyed"), _ended(True, False, "stalled-off-track")
    finished, capped = _ended(True, False, "race-finish"), _ended(False, True, "max-steps")
    assert result_end_reason([destroyed]) == "destroyed"                  # one driver: its own reason
    assert result_end_reason([destroyed, destroyed]) == "all-drivers-terminated"
    assert result_end_reason([destroyed, stalled]) == "all-drivers-terminated"
    assert result_end_reason([finished, finished]) == "race-finish"
    assert result_end_reason([destroyed, finished]) == "race-finish"      # the race finished: 2.0.0's first rule
    assert result_end_reason([capped, capped]) == "max-steps"
    assert result_end_reason([destroyed, capped]) == "mixed"              # the guide's done mixed batch


def test_all_destroyed_drivers_end_with_all_drivers_terminated():
    into_wall = {"distance_meters": 100, "offset_meters": 36, "speed_kph": 100, "heading_error_radians": 0.6}
    env = make_env(scenario={"placements": {"car-00": into_wall, "car-01": dict(into_wall, distance_meters=140)}})
    r = env.reset()
    while not r["done"]:
        r = env.step({d: act() for d, run in zip(env.controlled, env.engine.running_mask()[0]) if run})
    assert r["terminated"] and not r["truncated"]
    assert r["info"]["end_reason"] == "all-drivers-terminated"
    assert {d["end_reason"] for d in r["info"]["drivers"].values()} == {"destroyed"}


def test_fully_outside_white_line_is_this_tracks_line(tmp_path):
    # a track 6 m wide to each side: a car whose axis is 7.5 m out has every patch past its line
    # (6 + 0.76 + 0.19 = 6.95 m), which the shipped tracks' 7.5 m line would not say
    track = json.loads((ROOT / "envs" / "tracks" / "oval.json").read_text())
    track.update(name="narrow-oval", half_width=6.0)
    (tmp_path / "narrow.json").write_text(json.dumps(track))
    env = make_env(track=str(tmp_path / "narrow.json"),
                   scenario={"placements": {"car-00": {"distance_meters": 100, "offset_meters": 7.5,
                                                       "speed_kph": 0}}})
    assert env.reset()["metrics"]["car-00"]["fully_outside_white_line"] is True
