"""PaddockJS's ``trackGeneration`` in a config, and racing on a track without a pit lane.

``trackGeneration`` shapes the ``trackSeed`` track as PaddockJS's generator does; its training profiles
have no pit lane, so pit stops are off there (PaddockJS: its pit-lane status reads "unavailable"), no
car has a pit box, the snapshot's ``track.pitLane`` is null and every pit entry of the observation
reads its neutral value (the one it has with pit stops off).
"""

import numpy as np
import pytest

from paddock_ma import PaddockEnv
from paddock_ma.env.batch_env import BatchEnv
from paddock_ma.env.config.root import EnvConfig
from paddock_ma.errors import ConfigError, PaddockError
from paddock_ma.sim.core import layout as L
from paddock_ma.sim.track.load import paddockjs_track_document

SHORT = {"profile": "training-short"}
BASE = {"drivers": 3, "controlledDrivers": ["car-00"], "trackSeed": 4101, "trackGeneration": SHORT,
        "totalLaps": 3, "rules": {"standingStart": False, "modules": {"pitStops": {"enabled": True}}}}


def config(**extra) -> EnvConfig:
    return EnvConfig.from_paddockjs({**BASE, **extra})


def test_track_generation_loads_and_round_trips():
    cfg = config()
    assert cfg.track == "paddockjs:4101" and cfg.track_generation == SHORT
    assert EnvConfig.from_dict(cfg.to_dict()) == cfg
    assert EnvConfig.from_paddockjs(cfg.to_dict()) == cfg
    # Python spelling of PaddockJS's option keys is read as PaddockJS's spelling
    snake = EnvConfig.from_dict({"track_seed": 7, "track_generation": {"profile": "race", "pit_lane": {"enabled": False},
                                                                     "length": {"min_meters": 900}}})
    assert snake.track_generation == {"profile": "race", "pitLane": {"enabled": False}, "length": {"minMeters": 900}}


@pytest.mark.parametrize("doc, words", [
    ({"trackSeed": 1, "trackGeneration": {"profile": "training-long"}},
     "Unsupported procedural track profile: training-long"),
    ({"trackSeed": 1, "trackGeneration": {"length": {"minMeters": -5}}},
     "Procedural track length.minMeters must be a positive number."),
    ({"trackSeed": 1, "trackGeneration": "training-short"}, "expected an object such as"),
    ({"trackGeneration": SHORT}, "give track_seed"),
])
def test_bad_track_generation_is_a_config_error_naming_it(doc, words):
    with pytest.raises(ConfigError) as info:
        EnvConfig.from_paddockjs({"drivers": 2, **doc})
    assert info.value.field == "track_generation" and words in str(info.value)


@pytest.mark.parametrize("physics_mode", ["arcade", "simulator"])
def test_no_pit_track_steps_with_pit_stops_off(physics_mode):
    """Both physics modes race on a track without a pit lane: their wheel classification's pit-entry
    window (which reads the pit geometry) finds no pit there."""
    env = PaddockEnv(config(physicsMode=physics_mode))
    assert env.engine.config.physics_mode == physics_mode
    try:
        assert not env.engine.pit_stops_enabled            # the config turns them on; the track has no pit lane
        result = env.reset()
        for _ in range(600):          # car-00 drives straight off the track; the built-in drivers race on
            if not result["done"]:
                last = result = env.step({"car-00": {"steering": 0.0, "throttle": 0.6, "brake": 0.0}})
            else:
                env.engine.step(np.zeros((1, 1, 3), np.float32))
        result = last
        state = env.engine.state
        assert (state.cars_i[0, :, L.I_PIT_BOX] == -1).all()                       # no box assigned
        assert (state.cars_i[0, :, L.I_IN_PIT_LANE] == 0).all()
        assert (state.cars_i[0, :, L.I_CNT_PIT_ENTRY] == 0).all()
        assert state.rules[0, L.R_PIT_STOPS] == 0.0
        assert np.isfinite(result["observation"]["car-00"]["vector"]).all()
        obj = result["observation"]["car-00"]["object"]
        assert obj["race"]["pit_lane_open"] is False and obj["self"]["in_pit_lane"] is False
        assert obj["self"]["pit_lane_part"] is None and obj["self"]["pit_box_id"] is None
        assert (state.cars_f[0, 1:, L.F_RACE_DISTANCE] > 100.0).all()               # they drove on
    finally:
        env.close()


def test_the_snapshot_has_no_pit_lane():
    env = PaddockEnv(config())
    try:
        env.reset()
        full = env.get_state("full")["snapshot"]
        assert full["track"]["pit_lane"] is None
        assert full["track"]["generation_options"]["pit_lane"] == {"enabled": False}
        assert full["race_control"]["pit_lane_status"]["enabled"] is False
        assert full["race_control"]["pit_lane_status"]["reason"] == "unavailable"
        assert all(car["pit_stop"] is None for car in full["cars"])
        minimal = env.get_state("minimal")["snapshot"]
        assert minimal["track"]["pit_lane"] is None
    finally:
        env.close()


def test_a_pit_intent_is_refused_on_a_track_without_a_pit_lane():
    env = PaddockEnv(config())
    try:
        env.reset()
        with pytest.raises(PaddockError) as info:
            env.step({"car-00": {"steering": 0.0, "throttle": 0.5, "brake": 0.0, "pit_intent": 2}})
        assert "a track without a pit lane" in info.value.message
    finally:
        env.close()


def test_the_same_config_on_a_race_profile_keeps_its_pit_lane():
    batch = BatchEnv(config(trackGeneration={"profile": "race"}), 1)
    assert batch.pit_stops_enabled and len(batch.track.px) > 0


def test_a_paddockjs_track_object_without_a_pit_lane_loads_without_one():
    controls = [{"x": 3000 + 2400 * np.cos(a), "y": 3000 + 1600 * np.sin(a)}       # sim units
                for a in np.linspace(0, 2 * np.pi, 12, endpoint=False)]
    with_pit = paddockjs_track_document({"centerlineControls": controls})
    without = paddockjs_track_document({"centerlineControls": controls, "pitLane": {"enabled": False}})
    assert len(with_pit.px) > 0 and len(without.px) == 0
    np.testing.assert_array_equal(with_pit.cx, without.cx)
