"""PaddockJS-shaped configs load as EnvConfig (issue 14, "Config and wire compatibility"): camelCase or
snake_case through the one name table, the legacy compact ray shape, trackSeed, trackQueryIndex, and
unknown keys refused by name."""

import dataclasses
import json
import typing
from pathlib import Path

import pytest

from paddock_ma.env.config.root import CONFIG_NAMES, EnvConfig
from paddock_ma.errors import INVALID_CONFIG, ConfigError
from paddock_ma.paddockjs.naming import python_name, wire_name

GOLDEN = Path(__file__).parent.parent / "fixtures" / "paddockjs-2.0.0"


def _err(doc) -> ConfigError:
    with pytest.raises(ConfigError) as info:
        EnvConfig.from_paddockjs(doc)
    assert info.value.code == INVALID_CONFIG
    return info.value


def _config_fields(cls, seen=None):
    """Every (section, field name) of the config dataclasses under ``cls``."""
    seen = set() if seen is None else seen
    if cls in seen:
        return
    seen.add(cls)
    hints = typing.get_type_hints(cls)
    for f in dataclasses.fields(cls):
        yield cls.__name__, f.name

        def nested(hint):
            if dataclasses.is_dataclass(hint):
                yield from _config_fields(hint, seen)
            for arg in typing.get_args(hint):
                yield from nested(arg)
        yield from nested(hints[f.name])


def test_every_config_key_has_one_wire_name():
    fields = list(_config_fields(EnvConfig))
    assert [(cls, name) for cls, name in fields if name not in CONFIG_NAMES] == []
    assert [(cls, name) for cls, name in fields if python_name(wire_name(name)) != name] == []


def test_the_golden_configs_load_in_camel_case():
    for name in ("default-profile", "physical-driver", "physical-driver-front-heavy", "batch-training"):
        doc = json.loads((GOLDEN / f"{name}.reset-and-steps.json").read_text())["config"]
        config = EnvConfig.from_paddockjs(doc)
        assert [d.id for d in config.drivers] == [d["id"] for d in doc["drivers"]]
        assert config.controlled_drivers == tuple(doc["controlledDrivers"])
        assert config.seed == 7 and config.track == "paddockjs:2601"      # trackSeed: PaddockJS's track
        assert config.rules.standing_start is False
    front_heavy = EnvConfig.from_paddockjs(
        json.loads((GOLDEN / "physical-driver-front-heavy.reset-and-steps.json").read_text())["config"])
    assert front_heavy.sensors.rays.layout == "driver-front-heavy"
    assert front_heavy.sensors.rays.channels == ("road_edge", "kerb", "illegal_surface", "car")
    batch = EnvConfig.from_paddockjs(json.loads((GOLDEN / "batch-training.reset-and-steps.json").read_text())["config"])
    assert batch.participant_interactions.default_profile == "batch-training"
    assert batch.frame_skip == 4 and batch.result.state_output == "none" and batch.observation.output == "vector"


def test_either_naming_gives_the_same_config_and_load_reads_a_file(tmp_path):
    camel = {"drivers": 3, "controlledDrivers": ["car-01"], "frameSkip": 2, "physicsMode": "arcade",
             "episode": {"maxSteps": 50, "endOnRaceFinish": False},
             "participantInteractions": {"drivers": {"car-02": {"profile": "phantom-race", "detectableByRays": False}}},
             "sensors": {"nearbyCars": {"maxCars": 3, "radiusMeters": 80}}}
    snake = {"drivers": 3, "controlled_drivers": ["car-01"], "frame_skip": 2, "physics_mode": "arcade",
             "episode": {"max_steps": 50, "end_on_race_finish": False},
             "participant_interactions": {"drivers": {"car-02": {"profile": "phantom-race", "detectable_by_rays": False}}},
             "sensors": {"nearby_cars": {"max_cars": 3, "radius_meters": 80}}}
    assert EnvConfig.from_paddockjs(camel) == EnvConfig.from_paddockjs(snake) == EnvConfig.from_dict(snake)
    path = tmp_path / "paddock.json"
    path.write_text(json.dumps(camel))
    assert EnvConfig.load(path) == EnvConfig.from_dict(snake)
    assert EnvConfig.load(str(path)).to_dict() == EnvConfig.from_dict(snake).to_dict()
    (tmp_path / "broken.json").write_text("{")
    with pytest.raises(ConfigError, match="is not JSON"):
        EnvConfig.load(tmp_path / "broken.json")
    with pytest.raises(ConfigError, match="cannot read"):
        EnvConfig.load(tmp_path / "absent.json")


def test_the_legacy_compact_ray_shape_normalises():
    rays = EnvConfig.from_paddockjs({"drivers": 2, "sensors": {"rays": {
        "anglesDegrees": [-30, 0, 30], "lengthMeters": 90, "detectTrack": True, "detectCars": False}}}).sensors.rays
    assert [(r.id, r.angle_degrees, r.length_meters) for r in rays.rays] == \
        [("ray-0", -30.0, 90.0), ("ray-1", 0.0, 90.0), ("ray-2", 30.0, 90.0)]
    assert rays.channels == ("road_edge",)
    # neither detect flag false: both legacy channels; both false: none
    both = EnvConfig.from_dict({"sensors": {"rays": {"detect_track": True, "detect_cars": True}}}).sensors.rays
    assert both.channels == ("road_edge", "car") and both.rays is None
    none = EnvConfig.from_dict({"sensors": {"rays": {"detect_track": False, "detect_cars": False}}}).sensors.rays
    assert none.channels == ()


def test_per_ray_entries_take_defaults_as_paddockjs_does():
    rays = EnvConfig.from_paddockjs({"drivers": 2, "sensors": {"rays": {
        "defaultLengthMeters": 200, "rays": [0, {"angleDegrees": 90, "lengthMeters": 80}, {"id": "f", "angleDegrees": 10}]},
    }}).sensors.rays
    assert [(r.id, r.angle_degrees, r.length_meters) for r in rays.rays] == \
        [("ray-0", 0.0, 200.0), ("ray-1", 90.0, 80.0), ("f", 10.0, 200.0)]
    assert rays.length_meters == 200.0
    # without defaultLengthMeters the rays' default is lengthMeters, then 120 m
    assert EnvConfig.from_dict({"sensors": {"rays": {"rays": [5]}}}).sensors.rays.rays[0].length_meters == 120.0
    # the guide's own example
    guide = EnvConfig.from_paddockjs({"drivers": 2, "physicsMode": "simulator",
                                      "observation": {"profile": "physical-driver"},
                                      "sensors": {"rays": {"layout": "driver-front-heavy",
                                                           "channels": ["roadEdge", "kerb", "illegalSurface", "car"],
                                                           "precision": "driver",
                                                           "rays": [{"id": "front", "angleDegrees": 0, "lengthMeters": 260},
                                                                    {"id": "right", "angleDegrees": 90, "lengthMeters": 80}]}}})
    assert [r.id for r in guide.sensors.rays.rays] == ["front", "right"]


def test_track_query_index_is_accepted():
    assert EnvConfig.from_paddockjs({"drivers": 2, "trackQueryIndex": False}).track_query_index is False
    assert EnvConfig.from_dict({}).track_query_index is True
    assert str(_err({"trackQueryIndex": "yes"})) == "track_query_index: got 'yes'; expected true or false"


def test_unknown_keys_are_refused_by_name():
    e = _err({"drivers": 2, "controlledDrivers": ["car-00"], "frameSkipp": 2})
    assert e.field == "frameSkipp"
    assert "unknown key" in str(e) and "known keys: drivers, controlled_drivers" in str(e)
    e = _err({"drivers": 2, "sensors": {"rays": {"anglez": [0]}}})
    assert e.field == "sensors.rays.anglez" and "known keys: enabled, layout" in str(e)


def test_keys_that_change_nothing_here_load_with_one_warning_each():
    doc = {"drivers": 2, "warmup": {"enabled": True, "steps": 30}, "externalRenderer": None,
           "replayGhosts": [{"id": "ghost", "frames": []}]}
    with pytest.warns(UserWarning) as caught:
        config = EnvConfig.from_paddockjs(doc)
    texts = [str(w.message) for w in caught]
    assert texts == ["replayGhosts: accepted and ignored (replay ghosts are drawn by PaddockJS's renderer and "
                     "never touch the race)",
                     "warmup: accepted and ignored (a JavaScript JIT warm-up run; numba kernels are compiled and "
                     "cached instead)",
                     "externalRenderer: accepted and ignored (a JavaScript frame callback; render worlds with "
                     "env.render)"]
    assert config.ignored_keys == ("external_renderer", "replay_ghosts", "warmup")
    assert config == EnvConfig.from_paddockjs({"drivers": 2})          # nothing else changed
    from paddock_ma.protocol.messages import Dispatcher
    d = Dispatcher(config)
    first = json.loads(d.handle_line(b'{"id": 1, "type": "getActionSpec"}'))
    assert first["ok"] and first["warnings"] == texts
    again = json.loads(d.handle_line(b'{"id": 2, "type": "getActionSpec"}'))
    assert "warnings" not in again
    # two sources of rays or of channels: PaddockJS picks one quietly, we name both
    assert "give layout or the legacy angles_degrees" in str(
        _err({"sensors": {"rays": {"layout": "default", "anglesDegrees": [0]}}}))
    assert "give rays or the legacy angles_degrees" in str(_err({"sensors": {"rays": {"rays": [0], "anglesDegrees": [0]}}}))
    assert "give channels or the legacy detect_cars" in str(
        _err({"sensors": {"rays": {"channels": ["car"], "detectCars": True}}}))
    assert str(_err({"sensors": {"rays": {"anglesDegrees": []}}})).startswith("sensors.rays.angles_degrees: got []")
    assert str(_err({"sensors": {"rays": {"detectTrack": 1}}})) == "sensors.rays.detect_track: got 1; expected true or false"
    both = EnvConfig.from_paddockjs({"trackSeed": 3, "track": "oval"})     # PaddockJS: the track, seed reported
    assert (both.track, both.track_seed) == ("oval", 3)
    assert str(_err({"trackSeed": "x"})).startswith("track_seed: got 'x'; expected a number")
    assert str(_err(["drivers", 2])).startswith("config: got ['drivers', 2] (a list)")
