"""PaddockJS's configs resolve to the same drivers here (issue 21, point 1: entries and demo blueprints).

``tests/fixtures/paddockjs-2.0.0/resolved-drivers.json`` holds, for each config of PaddockJS's environment
tests and of the golden runs, every car of PaddockJS's ``getState`` after ``reset`` as PaddockJS resolves
it (``tools/paddockjs/record_resolved_drivers.mjs``): timing code, number, team, the car's id and name,
its ratings and the setup PaddockJS derives from them. Each config loads here and its ``get_state``
cars carry the same values (matched by id: PaddockJS lists its cars in race order). The one config
refused is the no-pit ``trackGeneration`` profile (tracks without a pit lane, not built yet).
"""

import json
import warnings
from pathlib import Path

import pytest

from paddock_ma import PaddockEnv
from paddock_ma.env.config.grid import resolved_grid, unique_timing_code
from paddock_ma.env.config.root import EnvConfig
from paddock_ma.env.errors import ConfigError

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures/paddockjs-2.0.0"
RESOLVED = json.loads((FIXTURES / "resolved-drivers.json").read_text())["configs"]
TEST_CONFIGS = json.loads((FIXTURES / "environment-test-configs.json").read_text())
REFUSED = {"no-pit-training-profile"}      # trackGeneration's no-pit profile: pit-less tracks not built yet
SETUP = ("vehicleId", "vehicleName", "vehicleRatings", "powerUnitKn", "brakeSystemKn", "dragCoefficient",
         "downforceCoefficient", "tireGrip", "tireCare", "massKg", "pace", "racecraft")


def config_doc(name: str) -> dict:
    if name.startswith("golden:"):
        return json.loads((FIXTURES / f"{name[7:]}.reset-and-steps.json").read_text())["config"]
    return TEST_CONFIGS[name]


def load(name: str) -> EnvConfig:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return EnvConfig.from_paddockjs(config_doc(name))


@pytest.mark.parametrize("name", sorted(RESOLVED))
def test_grid_resolves_as_paddockjs(name):
    """Timing codes, numbers, teams and cars of every driver, as PaddockJS's grid gives them."""
    if name in REFUSED:
        with pytest.raises(ConfigError, match="track_generation"):
            load(name)
        return
    config = load(name)
    want = {car["id"]: car for car in RESOLVED[name]}     # the cars that race there (scenario participants)
    assert set(want) <= {d.id for d in config.drivers}
    for driver, row in zip(config.drivers, resolved_grid(config)):
        if driver.id not in want:
            continue
        car = want[driver.id]
        assert (row["code"], row["driver_number"], row["team"]) == (car["code"], car["driverNumber"], car["team"])
        assert (row["vehicle_id"], row["vehicle_name"]) == (car["setup"]["vehicleId"], car["setup"]["vehicleName"])


@pytest.mark.parametrize("name", ["reset-step-shapes", "scenario-placement-traffic", "batch-multi-car",
                                  "golden:default-profile"])
def test_state_carries_the_resolved_drivers(name):
    """getState's cars: display fields, team and setup (ratings and the car parameters PaddockJS derives
    from them, to 1e-9) as PaddockJS's."""
    env = PaddockEnv(load(name))
    env.reset()
    cars = {car["id"]: car for car in env.get_state("full")["snapshot"]["cars"]}
    env.close()
    for want in RESOLVED[name]:
        car = cars[want["id"]]
        for key in ("code", "icon", "name", "color", "team", "tire"):
            assert car[key if key != "driverNumber" else key] == want[key], (want["id"], key)
        assert (car["timing_code"], car["driver_number"], car["race_name"]) == (
            want["timingCode"], want["driverNumber"], want["raceName"])
        for key in SETUP:
            ours = car["setup"][{"vehicleId": "vehicle_id", "vehicleName": "vehicle_name",
                                 "vehicleRatings": "vehicle_ratings"}.get(key, _snake(key))]
            theirs = want["setup"][key]
            if key == "vehicleRatings":
                ours = {_camel(k): v for k, v in ours.items()}
            assert ours == pytest.approx(theirs, abs=1e-9) if isinstance(theirs, float) else ours == theirs, (
                want["id"], key, ours, theirs)


def test_an_entry_team_resolves_with_paddockjs_defaults():
    """An entry's team (no test config of PaddockJS's has one): PaddockJS's normalizeTeam defaults."""
    config = EnvConfig.from_paddockjs({
        "drivers": [{"id": "a", "name": "Ada Lovelace", "color": "#123456"}, {"id": "b", "name": "Bo"}],
        "controlledDrivers": ["a"],
        "entries": [{"driverId": "a", "team": {"name": "Red Rockets", "pitCrew": {"speed": 0.9}}},
                    {"driverId": "b", "timingName": "Bob", "team": {"id": "blue", "color": "#0000ff"}}]})
    a, b = resolved_grid(config)
    assert a["team"] == {"id": "redrockets", "name": "Red Rockets", "color": "#123456", "icon": "RE",
                         "pit_crew": {"speed": 0.9, "consistency": 0.5, "reliability": 0.5}}
    assert b["team"] == {"id": "blue", "name": "blue", "color": "#0000ff", "icon": "BL", "pit_crew": None}
    assert (a["code"], b["code"], a["driver_number"], b["driver_number"]) == ("ADA", "BOB", 1, 2)


def test_a_demo_driver_without_an_entry_gets_its_blueprint():
    config = EnvConfig.from_paddockjs({"drivers": [{"id": "noir", "name": "Neural Noir"}, {"id": "x", "name": "X"}],
                                         "controlledDrivers": ["x"]})
    assert config.driver_ratings("noir")["power"] == 64 and config.driver_ratings("x") == {}
    assert [r["driver_number"] for r in resolved_grid(config)] == [13, 2]


def test_timing_codes_are_unique_in_driver_order():
    used: set = set()
    assert [unique_timing_code(s, used) for s in ("A0", "A1", "A2", "Élan", "Elan", "", "Noir")] == [
        "AXX", "AXA", "AXB", "ELA", "LAN", "XXX", "NOI"]


def _snake(name: str) -> str:
    return "".join("_" + ch.lower() if ch.isupper() else ch for ch in name)


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(p[:1].upper() + p[1:] for p in rest)
