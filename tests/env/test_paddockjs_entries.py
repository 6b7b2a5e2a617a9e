"""PaddockJS 2.0 options that load with their meaning (issue 21, point 1): championship ``entries``
resolve to the drivers' ratings, the drivers' display fields are kept, ``rules.ruleset`` presets and
their alias, ``rules.modules.tireStrategy``, the ``barrier`` ray channel, and a PaddockJS track object
given inline (with ``trackSeed`` beside it, as PaddockJS's own tests give them)."""

import json
import warnings

import numpy as np
import pytest

from paddock_ma.env.config.root import EnvConfig
from paddock_ma.errors import ConfigError
from paddock_ma.env.reset.start import car_params
from paddock_ma.sim.core import layout as L
from paddock_ma.sim.core.params import car_params_from_ratings
from paddock_ma.sim.track.load import TrackFormatError, load_track, paddockjs_track_document

from tests.protocol.paddockjs_port.harness import CONFIGS

BUDGET_ENTRY = {"driverId": "budget", "driverNumber": 71, "timingName": "Budget",
                "driver": {"pace": 52, "racecraft": 74, "aggression": 38, "riskTolerance": 47, "patience": 81,
                           "consistency": 86, "customFields": []},
                "vehicle": {"id": "budget-bb01", "name": "BB-01 Ledger", "power": 48, "braking": 72, "aero": 55,
                            "dragEfficiency": 66, "mechanicalGrip": 63, "weightControl": 58, "tireCare": 82,
                            "customFields": []}}
BUDGET = {"id": "budget", "code": "BUD", "icon": "BB", "raceName": "BUDGET", "name": "Budget Buddy",
          "color": "#ff2d55", "tire": "M", "pace": 0.98, "racecraft": 0.78,
          "link": "/project_details/project-budget-buddy.html", "raceData": ["AI finance coach", "Python + LLM"]}


def _load(doc) -> tuple[EnvConfig, list[str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        config = EnvConfig.from_paddockjs(doc)
    return config, [str(w.message) for w in caught]


def test_every_recorded_paddockjs_test_config_loads():
    refused = {}
    for name, doc in CONFIGS.items():
        try:
            _load(doc)
        except ConfigError as exc:
            refused[name] = exc.field
    assert refused == {}          # the no-pit training profile (trackGeneration) included


def test_an_entry_gives_its_driver_ratings_and_car():
    # "rookie" is neither in an entry nor one of PaddockJS's demo drivers (whose ids get their blueprint)
    config, texts = _load({"drivers": [BUDGET, {"id": "rookie", "name": "Rookie"}], "controlledDrivers": ["budget"],
                           "entries": [BUDGET_ENTRY]})
    expected = {"pace": 52, "racecraft": 74, "aggression": 38, "power": 48, "braking": 72, "aero": 55,
                "dragEfficiency": 66, "mechanicalGrip": 63, "weightControl": 58, "tireCare": 82}
    assert config.driver_ratings("budget") == expected
    assert config.driver_ratings("rookie") == {}                  # no entry: the neutral car
    params = car_params(config, load_track("oval"), ["budget", "rookie"])
    np.testing.assert_array_equal(params[0], car_params_from_ratings(expected))
    assert params[0, L.P_POWER] == 43000.0 + (48 - 50) / 50 * 3200.0    # PaddockJS's VehicleData rule
    np.testing.assert_array_equal(params[1], car_params_from_ratings({}))
    # riskTolerance, patience, consistency have no counterpart here: said once
    assert texts == ["entries[].driver.riskTolerance, patience, consistency: accepted and ignored "
                     "(paddock_ma's built-in driver has no such traits)"]
    # the display fields are kept
    budget = config.drivers[0]
    assert (budget.code, budget.race_name, budget.color, budget.race_data, budget.pace) == (
        "BUD", "BUDGET", "#ff2d55", ("AI finance coach", "Python + LLM"), 0.98)
    assert EnvConfig.from_dict(config.to_dict()) == config


def test_entries_are_checked():
    base = {"drivers": [BUDGET], "controlledDrivers": ["budget"]}
    e = pytest.raises(ConfigError, EnvConfig.from_paddockjs, {**base, "entries": [BUDGET_ENTRY, BUDGET_ENTRY]}).value
    assert e.field == "entries" and "duplicate entry driver ids ['budget']" in e.message
    bad = json.loads(json.dumps(BUDGET_ENTRY))
    bad["vehicle"]["power"] = 120
    e = pytest.raises(ConfigError, EnvConfig.from_paddockjs, {**base, "entries": [bad]}).value
    assert e.field == "entries.vehicle.power" and "ratings are 0..100" in e.message
    both = {**base, "drivers": [{**BUDGET, "ratings": {"pace": 60}}], "entries": [BUDGET_ENTRY]}
    e = pytest.raises(ConfigError, EnvConfig.from_paddockjs, both).value
    assert e.field == "drivers.budget.ratings" and "one place" in e.message
    e = pytest.raises(ConfigError, EnvConfig.from_paddockjs, {**base, "entries": [{"driverId": "budget", "cars": 1}]}).value
    assert e.field == "entries[0].cars"                           # an unknown key stays an error


def test_rulesets_set_their_modules_under_the_configs_own():
    config, texts = _load({"drivers": 2, "rules": {"ruleset": "fia2025"}})
    modules = config.rules.modules
    assert modules.pit_stops.enabled and modules.pit_stops.pit_lane_speed_limit_kph == 80.0
    assert modules.tire_strategy.enabled and modules.tire_strategy.mandatory_distinct_dry_compounds == 2
    assert texts == ["rules.ruleset grandPrix2025 / fia2025: the stewards' penalties: accepted and ignored (penalties "
                     "(track limits, collisions, the tyre rule, pit-lane speeding) are not simulated here)"]
    same, _ = _load({"drivers": 2, "rules": {"ruleset": "grandPrix2025"}})
    assert same.rules.modules == modules
    own, _ = _load({"drivers": 2, "rules": {"ruleset": "fia2025", "modules": {"pitStops": {"enabled": False}}}})
    assert own.rules.modules.pit_stops.enabled is False and own.rules.modules.tire_strategy.enabled
    plain, texts = _load({"drivers": 2, "rules": {"ruleset": "paddock", "modules": {"tireStrategy": {"enabled": True}}}})
    assert not plain.rules.modules.pit_stops.enabled and plain.rules.modules.tire_strategy.enabled and texts == []
    e = pytest.raises(ConfigError, EnvConfig.from_paddockjs, {"drivers": 2, "rules": {"ruleset": "fia2024"}}).value
    assert e.field == "rules.ruleset" and "'fia2025'" in e.message


def test_the_barrier_ray_channel_is_accepted_and_senses_nothing():
    config, _ = _load({"drivers": 2, "sensors": {"rays": {"channels": ["roadEdge", "barrier", "car"]}}})
    assert config.sensors.rays.channels == ("road_edge", "car")


def test_a_paddockjs_track_object_loads_inline_with_its_seed_reported():
    doc = CONFIGS["gym-style-step"]
    config, _ = _load(doc)
    assert config.track == doc["track"] and config.track_name == "Apex Harbor GP" and config.track_seed == 2026
    track = paddockjs_track_document(doc["track"])
    assert track is paddockjs_track_document(json.loads(json.dumps(doc["track"])))     # cached by content
    assert 2 * track.half_width == pytest.approx(15.0)
    e = pytest.raises(TrackFormatError, paddockjs_track_document, {**doc["track"], "widht": 1}).value
    assert e.field == "widht" and "unknown field of a PaddockJS track object" in str(e)


def test_reset_options_replace_the_placements_and_merge_the_rest():
    """PaddockJS's reset options merge group by group, except ``scenario.placements``, which an override
    replaces whole (``{}`` clears them)."""
    config = EnvConfig.from_paddockjs({"drivers": 2, "scenario": {"placements": {"car-00": {"distanceMeters": 1200}}},
                                       "rules": {"modules": {"tireDegradation": {"enabled": False}}}})
    cleared = config.merged({"scenario": {"placements": {}}, "rules": {"modules": {"pit_stops": {"enabled": True}}}})
    assert cleared.scenario.placements == {}
    assert cleared.rules.modules.pit_stops.enabled and not cleared.rules.modules.tire_degradation.enabled
    moved = config.merged({"scenario": {"placements": {"car-01": {"distance_meters": 50}}}})
    assert set(moved.scenario.placements) == {"car-01"}
