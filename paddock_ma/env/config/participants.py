"""Config sections of who races and how: drivers (ratings, tyre, pit box and crew), the scenario
(participants, presets, placements, traffic) and participant interaction profiles.

``EnvConfig`` (``env.config.root``) holds them; ``env.config.base`` turns a dict into these sections.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Literal, Optional, Union

from ...sim.core.layout import COMPOUND_NAMES
from ...sim.core.params import RATING_NAMES, UNSUPPORTED_RATINGS
from .base import ConfigSection, require
from ...errors import ConfigError, suggest
from ...paddockjs.naming import wire_name
from ...value_rules import is_finite_number

PRESETS = ("cornering", "off-track-recovery", "overtaking-pack", "pit-entry")
# PaddockJS 2.0.0's participant interaction profiles (their flags: env.reset.interactions.PROFILE_FLAGS)
PROFILES = ("normal", "isolated-training", "batch-training", "phantom-race", "time-trial-overlay")
ProfileName = Literal["normal", "isolated-training", "batch-training", "phantom-race", "time-trial-overlay"]


@dataclass(frozen=True)
class PitCrewConfig(ConfigSection):
    """A team's pit crew (PaddockJS ``team.pitCrew``), each 0..1 with 0.5 neutral. With
    ``rules.modules.pit_stops.variability`` on (and not ``perfect``) they shape the service time:
    ``speed`` shifts it, ``consistency`` narrows its random jitter, ``reliability`` makes a slow-stop
    issue rarer and shorter (``sim.race.pit_service.service_seconds``)."""
    speed: float = 0.5
    consistency: float = 0.5
    reliability: float = 0.5


@dataclass(frozen=True)
class DriverConfig(ConfigSection):
    """One driver. ``ratings``: vehicle/driver ratings 0..100 (50 neutral; ``sim.core.params.RATING_NAMES``,
    the spec's camelCase names or their snake_case aliases). ``team``: the pit box (service area) index,
    else two cars a box in slot order. ``pit_crew``: the crew of this driver's box; team-mates (drivers
    sharing a box) share it, so give it once or give the same values."""
    id: str
    name: Optional[str] = None
    ratings: dict[str, float] = field(default_factory=dict)
    tire: Optional[Literal[COMPOUND_NAMES]] = None
    team: Optional[int] = None
    pit_crew: Optional[PitCrewConfig] = None
    # PaddockJS's display fields (timing tower, renderer, project links): kept and carried into the state;
    # they change nothing in the race, there or here
    code: Optional[str] = None
    icon: Optional[str] = None
    race_name: Optional[str] = None
    color: Optional[str] = None
    link: Optional[str] = None
    race_data: tuple[str, ...] = ()
    driver_number: Optional[int] = None
    timing_name: Optional[str] = None
    # PaddockJS's driver-object ``pace`` and ``racecraft`` multipliers (1 neutral): PaddockJS replaces them
    # by its entry's ratings when it builds the grid (an entry, or the neutral one), so they change
    # nothing there; kept for display. The ratings that shape the car are ``ratings`` or the driver's entry.
    pace: Optional[float] = None
    racecraft: Optional[float] = None

    def __post_init__(self):
        for key, value in self.ratings.items():
            path = f"drivers.{self.id}.ratings.{key}"
            if key in UNSUPPORTED_RATINGS:
                raise ConfigError(path, f"got {key!r}, a PaddockJS personality rating that paddock_ma's built-in "
                                  f"driver does not model; remove it (supported ratings: {', '.join(RATING_NAMES)})")
            require(key in RATING_NAMES, path, f"unknown rating {key!r}{suggest(key, RATING_NAMES)}; supported "
                     f"ratings: {', '.join(RATING_NAMES)}")
            require(0.0 <= value <= 100.0, path, f"got {value!r}; ratings are 0..100 with 50 neutral")
        if self.pit_crew is not None:
            for name in ("speed", "consistency", "reliability"):
                value = getattr(self.pit_crew, name)
                require(0.0 <= value <= 1.0, f"drivers.{self.id}.pit_crew.{name}",
                         f"got {value!r}; expected 0..1 (0.5 neutral)")


# PaddockJS's entry blueprints (``entries``): a driver's ratings and car, resolved onto the driver of the
# same id as PaddockJS's buildChampionshipDriverGrid resolves them. Ratings are 0..100 with 50 neutral.
ENTRY_DRIVER_RATINGS = ("pace", "racecraft", "aggression")
# PaddockJS personality ratings with no counterpart in paddock_ma's built-in driver (accepted, they
# change nothing here; said once in the warnings when an entry gives one other than neutral)
ENTRY_PERSONALITY_RATINGS = ("risk_tolerance", "patience", "consistency")
ENTRY_VEHICLE_RATINGS = ("power", "braking", "aero", "drag_efficiency", "mechanical_grip", "weight_control",
                         "tire_care")


def _check_ratings(section, path: str, names) -> None:
    for name in names:
        value = getattr(section, name)
        require(0.0 <= value <= 100.0, f"{path}.{name}", f"got {value!r}; ratings are 0..100 with 50 neutral")


@dataclass(frozen=True)
class EntryDriver(ConfigSection):
    """An entry's driver ratings (PaddockJS ``DriverData``), 0..100, 50 neutral. ``pace``, ``racecraft``
    and ``aggression`` shape the built-in driver (``sim.core.params``); ``risk_tolerance``, ``patience``
    and ``consistency`` have no counterpart in it (accepted; they change nothing here)."""
    pace: float = 50.0
    racecraft: float = 50.0
    aggression: float = 50.0
    risk_tolerance: float = 50.0
    patience: float = 50.0
    consistency: float = 50.0
    custom_fields: tuple[Any, ...] = ()

    def __post_init__(self):
        _check_ratings(self, "entries.driver", ENTRY_DRIVER_RATINGS + ENTRY_PERSONALITY_RATINGS)


@dataclass(frozen=True)
class EntryVehicle(ConfigSection):
    """An entry's car (PaddockJS ``VehicleData``): ratings 0..100, 50 neutral (``sim.core.params``)."""
    id: Optional[str] = None
    name: Optional[str] = None
    power: float = 50.0
    braking: float = 50.0
    aero: float = 50.0
    drag_efficiency: float = 50.0
    mechanical_grip: float = 50.0
    weight_control: float = 50.0
    tire_care: float = 50.0
    custom_fields: tuple[Any, ...] = ()

    def __post_init__(self):
        _check_ratings(self, "entries.vehicle", ENTRY_VEHICLE_RATINGS)


@dataclass(frozen=True)
class EntryTeam(ConfigSection):
    """An entry's team (PaddockJS ``entry.team``): display fields, resolved as PaddockJS's grid does
    (``config.grid``: a missing id, name, colour or icon gets PaddockJS's default) and carried into the
    state's ``team``. Its ``pit_crew`` is the crew of the driver's pit box (as ``DriverConfig.pit_crew``)."""
    id: Optional[str] = None
    name: Optional[str] = None
    color: Optional[str] = None
    icon: Optional[str] = None
    pit_crew: Optional[PitCrewConfig] = None


@dataclass(frozen=True)
class EntryConfig(ConfigSection):
    """One PaddockJS championship entry: the driver it belongs to (``driver_id``), its number and timing
    name (display), its team, its driver ratings and its car. An entry naming no driver of the config
    changes nothing (PaddockJS's blueprint lists hold more entries than a race has drivers). A driver
    with a demo id (``budget``, ``noir``, ...) gets PaddockJS's demo blueprint under its entry
    (``config.grid.resolved_entry``)."""
    driver_id: str
    driver_number: Optional[int] = None
    timing_name: Optional[str] = None
    team: Optional[EntryTeam] = None
    driver: EntryDriver = field(default_factory=EntryDriver)
    vehicle: EntryVehicle = field(default_factory=EntryVehicle)

    def ratings(self) -> dict[str, float]:
        """The ratings this entry gives its driver, in ``sim.core.params`` names (camelCase)."""
        out = {wire_name(n): getattr(self.driver, n) for n in ENTRY_DRIVER_RATINGS}
        out.update({wire_name(n): getattr(self.vehicle, n) for n in ENTRY_VEHICLE_RATINGS})
        return out


def default_drivers(count: int) -> tuple[DriverConfig, ...]:
    """``count`` neutral drivers with ids ``car-00``, ``car-01``, ..."""
    return tuple(DriverConfig(id=f"car-{i:02d}", name=f"Car {i:02d}") for i in range(count))


# Placement ranges. PaddockJS 2.0.0 (environment/scenarios.js, vehicle/vehicleState.js) checks only that
# a placement's numbers are finite, then clamps the distance to >= 0 and the speed to 0..330 km/h (its top
# speed) and wraps the heading into [-pi, pi); the offset is unbounded. Here a speed or heading error
# outside these ranges is an error naming it instead of a silent clamp; |offset| is at most 100 m (the
# barrier's inner face is at 41 m on the default cross-section: a car placed beyond it is destroyed at
# once, as in PaddockJS) and |distance| at most 1,000 km, so every placed car has finite coordinates;
# a negative distance is placed at 0 as PaddockJS does.
PLACEMENT_MAX_DISTANCE_M = 1.0e6
PLACEMENT_MAX_OFFSET_M = 100.0
PLACEMENT_MAX_SPEED_KPH = 330.0
PLACEMENT_MAX_HEADING_ERROR_RAD = math.pi


def check_placement_values(path: str, distance=None, offset=0.0, speed_kph=None, heading_error=0.0,
                           distance_is_delta=False) -> None:
    """Raise ConfigError naming the field, the value and its range for a placement number out of range."""
    def check(name, value, lo, hi, unit):
        if value is None:
            return
        require(is_finite_number(value) and lo <= value <= hi, f"{path}.{name}",
                f"got {value!r}; expected a number in [{lo:g}, {hi:g}] {unit}")
    if distance_is_delta:
        check("delta_distance_meters", distance, -PLACEMENT_MAX_DISTANCE_M, PLACEMENT_MAX_DISTANCE_M, "m")
    else:
        check("distance_meters", distance, -PLACEMENT_MAX_DISTANCE_M, PLACEMENT_MAX_DISTANCE_M,
              "m (a negative distance places the car at 0)")
    check("offset_meters", offset, -PLACEMENT_MAX_OFFSET_M, PLACEMENT_MAX_OFFSET_M,
          "m (the barrier's inner face is 41 m from the centreline; beyond it a car is destroyed)")
    check("speed_kph", speed_kph, 0.0, PLACEMENT_MAX_SPEED_KPH, "km/h (PaddockJS's top speed is 330 km/h)")
    check("heading_error_radians", heading_error, -PLACEMENT_MAX_HEADING_ERROR_RAD, PLACEMENT_MAX_HEADING_ERROR_RAD,
          "rad")


@dataclass(frozen=True)
class Placement(ConfigSection):
    """Where a car starts: absolute race distance (m, |d| <= 1e6, negative = 0), lateral offset (m, + right,
    |offset| <= 100),
    speed (km/h, 0..330; None: keep the car's), heading error (rad, -pi..pi)."""
    distance_meters: float
    offset_meters: float = 0.0
    speed_kph: Optional[float] = None
    heading_error_radians: float = 0.0

    @classmethod
    def _prepare(cls, data: dict, path: str) -> dict:
        if not set(data) <= {"distance_meters", "offset_meters", "speed_kph", "heading_error_radians"}:
            return data                      # from_dict names the unknown key
        if "distance_meters" not in data:
            raise ConfigError(f"{path}.distance_meters" if path else "distance_meters",
                              "is required: the race distance (m) to place the car at")
        check_placement_values(path or "placement", data.get("distance_meters"), data.get("offset_meters", 0.0),
                               data.get("speed_kph"), data.get("heading_error_radians", 0.0))
        return data

    def __post_init__(self):
        check_placement_values("placement", self.distance_meters, self.offset_meters, self.speed_kph,
                               self.heading_error_radians)


@dataclass(frozen=True)
class TrafficEntry(ConfigSection):
    driver_id: str
    relative_to: str
    delta_distance_meters: float
    offset_meters: float = 0.0
    speed_kph: Optional[float] = None
    heading_error_radians: float = 0.0

    @classmethod
    def _prepare(cls, data: dict, path: str) -> dict:
        if "delta_distance_meters" not in data:
            return data                      # from_dict names what is missing or unknown
        check_placement_values(path or "traffic", data.get("delta_distance_meters"), data.get("offset_meters", 0.0),
                               data.get("speed_kph"), data.get("heading_error_radians", 0.0), distance_is_delta=True)
        return data

    def __post_init__(self):
        check_placement_values("traffic", self.delta_distance_meters, self.offset_meters, self.speed_kph,
                               self.heading_error_radians, distance_is_delta=True)


@dataclass(frozen=True)
class ScenarioConfig(ConfigSection):
    participants: Union[Literal["all", "controlled-only"], tuple[str, ...]] = "all"
    non_controlled: Literal["ai"] = "ai"
    preset: Optional[Literal["cornering", "off-track-recovery", "overtaking-pack", "pit-entry"]] = None
    placements: dict[str, Placement] = field(default_factory=dict)
    traffic: tuple[TrafficEntry, ...] = ()


@dataclass(frozen=True)
class InteractionOverride(ConfigSection):
    """One driver's interaction: a ``profile`` (None: the default profile) and any of its five flags
    overridden (None: the profile's). Each flag belongs to this car and is what others meet: whether
    it collides, whether other cars' rays or radar see it, whether it holds pit service capacity and
    whether it takes part in race order and classification."""
    profile: Optional[ProfileName] = None
    collidable: Optional[bool] = None
    detectable_by_rays: Optional[bool] = None
    detectable_as_nearby: Optional[bool] = None
    blocks_pit_lane: Optional[bool] = None
    affects_race_order: Optional[bool] = None


@dataclass(frozen=True)
class InteractionsConfig(ConfigSection):
    default_profile: ProfileName = "normal"
    drivers: dict[str, InteractionOverride] = field(default_factory=dict)
