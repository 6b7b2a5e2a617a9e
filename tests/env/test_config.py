"""EnvConfig.from_dict validation, round trip, and the catalogue's make()."""

import pytest

from paddock_ma.catalog import env_config, list_envs, make
from paddock_ma.env.batch_env import BatchEnv
from paddock_ma.env.config.root import EnvConfig
from paddock_ma.env.environment import PaddockEnv
from paddock_ma.errors import INVALID_CONFIG, ConfigError, PaddockError


def _err(d) -> ConfigError:
    with pytest.raises(ConfigError) as info:
        EnvConfig.from_dict(d)
    assert info.value.code == INVALID_CONFIG
    return info.value


def test_unknown_key_names_path_and_suggests():
    e = _err({"frame_skp": 2})
    assert e.field == "frame_skp"
    assert str(e).startswith("frame_skp: unknown key (did you mean 'frame_skip'?); known keys: drivers, ")
    e = _err({"sensors": {"rays": {"chanels": ["kerb"]}}})
    assert e.field == "sensors.rays.chanels"
    assert str(e) == ("sensors.rays.chanels: unknown key (did you mean 'channels'?); known keys: enabled, "
                      "layout, channels, precision, length_meters, rays")


def test_wrong_type_names_key_value_and_expected_type():
    assert str(_err({"frame_skip": "2"})) == "frame_skip: got '2'; expected an integer"
    assert str(_err({"observation": {"include_schema": 1}})) == \
        "observation.include_schema: got 1; expected true or false"
    assert str(_err({"sensors": {"rays": {"length_meters": float("nan")}}})) == \
        "sensors.rays.length_meters: got nan; expected a finite number"
    assert str(_err({"rules": "fast"})) == "rules: got 'fast'; expected an object"


def test_bad_value_names_key_value_and_allowed():
    assert str(_err({"frame_skip": 0})) == "frame_skip: got 0; expected an integer >= 1"
    assert str(_err({"episode": {"max_steps": 0}})) == "episode.max_steps: got 0; expected >= 1"
    assert str(_err({"physics_mode": "arcad"})) == \
        "physics_mode: got 'arcad'; expected one of 'arcade', 'simulator' (did you mean 'arcade'?)"
    e = _err({"sensors": {"rays": {"channels": ["kerbs"]}}})
    assert e.field == "sensors.rays.channels[0]"
    assert "got 'kerbs'; expected one of 'road_edge', 'kerb', 'illegal_surface', 'car' (did you mean 'kerb'?)" \
        in str(e)
    e = _err({"drivers": 3, "controlled_drivers": ["car-09"]})
    assert str(e) == ("controlled_drivers[0]: got 'car-09', which is not a driver id (did you mean 'car-02'?); "
                      "drivers: car-00, car-01, car-02")
    e = _err({"scenario": {"preset": "corner"}})
    assert e.field == "scenario.preset" and "'cornering'" in str(e) and "got 'corner'" in str(e)


def test_round_trip_to_dict_from_dict():
    c = EnvConfig.from_dict({
        "drivers": 3, "controlled_drivers": ["car-00", "car-02"], "frame_skip": 3, "physics_mode": "arcade",
        "sensors": {"rays": {"rays": [{"id": "f", "angle_degrees": 0, "length_meters": 50}],
                             "channels": ["kerb", "car"]}},
        "sensors_by_driver": {"car-02": {"nearby_cars": {"max_cars": 2}}},
        "scenario": {"placements": {"car-01": {"distance_meters": 5, "offset_meters": 1.5}},
                     "traffic": [{"driver_id": "car-02", "relative_to": "car-01", "delta_distance_meters": 20}]},
        "participant_interactions": {"drivers": {"car-01": {"profile": "phantom-race"}}},
        "rules": {"modules": {"tire_degradation": {"enabled": False}}},
    })
    d = c.to_dict()
    again = EnvConfig.from_dict(d)
    assert again == c
    assert again.to_dict() == d
    assert d["sensors"]["rays"]["rays"] == [{"id": "f", "angle_degrees": 0.0, "length_meters": 50.0}]
    assert d["sensors_by_driver"]["car-02"]["nearby_cars"]["max_cars"] == 2


def test_make_with_overrides_and_unknown_id():
    ids = [e["id"] for e in list_envs()]
    assert "paddock/oval-batch-v0" in ids
    c = env_config("paddock/oval-batch-v0", drivers=3, controlled_drivers=["car-01"], episode={"max_steps": 7})
    assert c.track == "oval" and c.frame_skip == 4          # from the manifest
    assert len(c.drivers) == 3 and c.controlled_drivers == ("car-01",)
    assert c.episode.max_steps == 7
    assert c.participant_interactions.default_profile == "batch-training"  # deep merge keeps siblings
    env = make("paddock/oval-batch-v0", drivers=2, controlled_drivers=["car-00"], seed=1)
    assert isinstance(env, PaddockEnv) and env.config.frame_skip == 4
    batch = make("paddock/oval-batch-v0", num_worlds=2, drivers=2, controlled_drivers=["car-00"])
    assert isinstance(batch, BatchEnv) and batch.num_worlds == 2
    with pytest.raises(PaddockError) as info:
        make("paddock/ovl-batch-v0")
    assert info.value.code == INVALID_CONFIG and info.value.field == "env_id"
    assert str(info.value).startswith("env_id: unknown environment 'paddock/ovl-batch-v0' "
                                      "(did you mean 'paddock/oval-batch-v0'?); known: ")
    with pytest.raises(ConfigError) as info:
        make("paddock/oval-batch-v0", frame_skip=0)
    assert info.value.field == "frame_skip"


def test_unknown_track_and_driver_count():
    with pytest.raises(ConfigError) as info:
        PaddockEnv({"drivers": 2, "track": "ovall"})
    assert info.value.field == "track" and str(info.value).startswith("track: got 'ovall'")
    assert str(_err({"drivers": 65})) == "drivers: got 65; expected 1..64 drivers"
    assert str(_err({"drivers": 2, "reward": 3})) == "reward: got 3; expected a callable reward(context) or None"
    e = _err({"drivers": [{"id": "a"}, {"id": "a"}], "controlled_drivers": ["a"]})
    assert str(e) == "drivers: duplicate driver ids ['a']; ids must be unique"
    e = _err({"drivers": [{"id": "a", "ratings": {"mechanicalGrip": 120}}], "controlled_drivers": ["a"]})
    assert str(e) == "drivers.a.ratings.mechanicalGrip: got 120.0; ratings are 0..100 with 50 neutral"


def test_merged_is_the_one_way_to_derive_a_config():
    import dataclasses

    def reward(ctx):
        return 1.0

    base = EnvConfig.from_dict({"drivers": 3, "reward": reward, "episode": {"max_steps": 50}})
    out = base.merged({"episode": {"end_on_race_finish": False}, "seed": 4})
    assert out.episode.max_steps == 50 and out.episode.end_on_race_finish is False and out.seed == 4
    assert out.reward is reward and base.seed is None             # the reward is carried over, base untouched
    assert base.merged({}) is base and base.merged(None) is base
    assert base.merged({"reward": None}).reward is None
    with pytest.raises(ConfigError) as exc:
        base.merged({"reward": "fast"})
    assert exc.value.field == "reward"
    with pytest.raises(ConfigError) as exc:
        base.merged({"episode": {"max_stepz": 3}})
    assert exc.value.field == "episode.max_stepz"
    with pytest.raises(dataclasses.FrozenInstanceError):
        out.seed = 1
    # the catalogue, the adapters and PaddockEnv's reset options derive configs through it
    from paddock_ma.catalog import env_config, resolve_config
    assert env_config("paddock/oval-batch-v0", reward=reward).reward is reward
    assert resolve_config(base, {"seed": 9}).reward is reward


def test_rule_defaults_are_defined_once_in_the_sim():
    """The config's rule defaults are the sim's RULE_DEFAULTS: a default config gives the sim's default
    rules vector bit for bit."""
    from paddock_ma.env.reset.start import rules_from_config
    from paddock_ma.sim.race.start import rules_vector
    assert rules_from_config(EnvConfig()).tobytes() == rules_vector().tobytes()


def test_errors_name_the_field_the_value_and_the_fix():
    """Issue 14, defect 8: errors that named nothing."""
    # a list where the config object belongs
    with pytest.raises(ConfigError) as info:
        PaddockEnv(["drivers", 2])
    assert info.value.field == "config"
    assert "got ['drivers', 2]" in str(info.value) and "{'drivers': 2}" in str(info.value)
    # an unknown rating names the driver, the rating and the supported ones
    e = _err({"drivers": [{"id": "a", "ratings": {"powr": 60}}]})
    assert e.field == "drivers.a.ratings.powr"
    assert "unknown rating 'powr' (did you mean 'power'?)" in str(e) and "mechanicalGrip" in str(e)
    # PaddockJS personality ratings are refused by name, not silently ignored
    for rating in ("riskTolerance", "patience", "consistency"):
        e = _err({"drivers": [{"id": "a", "ratings": {rating: 70}}]})
        assert e.field == f"drivers.a.ratings.{rating}" and "does not model" in str(e) and "remove it" in str(e)
    e = _err({"drivers": [{"id": "a", "ratings": {"power": 120}}]})
    assert str(e) == "drivers.a.ratings.power: got 120.0; ratings are 0..100 with 50 neutral"
    # a union of choices says each choice once
    e = _err({"scenario": {"participants": "some"}})
    assert str(e) == "scenario.participants: got 'some'; expected one of 'all', 'controlled-only' or a list"
    # a list goes to the list's own error, with its index
    e = _err({"drivers": 2, "scenario": {"participants": ["car-00", 5]}})
    assert str(e) == "scenario.participants[1]: got 5; expected a non-empty string"


def test_pit_crew_through_config():
    """Issue 14, defect 7: a team's pit crew (speed, consistency, reliability) reaches the simulation,
    shared by the drivers of one pit box, and shapes the varied service time."""
    from paddock_ma.sim.core import layout as L
    from paddock_ma.sim.race.pit_service import service_seconds
    drivers = [{"id": "a", "team": 0, "pit_crew": {"speed": 1.0, "consistency": 0.9, "reliability": 1.0}},
               {"id": "b", "team": 0}, {"id": "c", "team": 1}]
    batch = BatchEnv({"track": "oval", "drivers": drivers, "controlled_drivers": ["a"],
                      "rules": {"modules": {"pit_stops": {"enabled": True, "variability": {"enabled": True}}}}})
    batch.reset(seed=5)
    p = batch.state.car_params[0]
    crew = [L.P_PIT_CREW_SPEED, L.P_PIT_CREW_CONSISTENCY, L.P_PIT_CREW_RELIABILITY]
    assert p[0, crew].tolist() == [1.0, 0.9, 1.0] and p[1, crew].tolist() == [1.0, 0.9, 1.0]   # team-mates
    assert p[2, crew].tolist() == [0.5, 0.5, 0.5]                                               # neutral
    # the fast crew services quicker than the neutral one from the same random draws
    fast = service_seconds(batch.state.car_params, batch.state.world_i.copy(), batch.state.rules, 0, 0)
    neutral = service_seconds(batch.state.car_params, batch.state.world_i.copy(), batch.state.rules, 0, 2)
    assert fast < neutral
    # team-mates naming different crews, and crews outside 0..1, are errors naming the driver
    with pytest.raises(ConfigError) as info:
        BatchEnv({"track": "oval", "controlled_drivers": ["a"],
                  "drivers": [dict(drivers[0]), {"id": "b", "team": 0, "pit_crew": {"speed": 0.1}}]})
    assert info.value.field == "drivers.b.pit_crew" and "'a'" in str(info.value)
    e = _err({"drivers": [{"id": "a", "pit_crew": {"reliability": 1.5}}]})
    assert str(e) == "drivers.a.pit_crew.reliability: got 1.5; expected 0..1 (0.5 neutral)"
