"""Typed, frozen environment configuration (PaddockJS 2.0.1 options with Python names).

Build one from a plain dict with ``EnvConfig.from_dict(d)``: every key is checked against the
dataclass fields, so a misspelt key is an error (with a close-match suggestion) instead of being
silently ignored; every value is checked against its type and allowed values. Errors are
``ConfigError`` naming the key path, the bad value and what is allowed. ``to_dict()`` round-trips.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import types
import typing
import warnings
from dataclasses import dataclass, field
from typing import Any, Literal, Optional, Union

from ..sim.layout import KPH_PER_MPS, PHYSICS_SIMULATOR
from ..sim.params import RATING_NAMES, UNSUPPORTED_RATINGS
from ..sim.race import RULE_DEFAULTS
from .errors import ConfigError, suggest

COMPOUNDS = ("S", "M", "H")


def _rule(name: str, scale: float = 1.0, kind=float):
    """The default of rule ``name``, defined once in ``sim.race.RULE_DEFAULTS`` (SI units), in the
    config's units (``scale``) and type (``kind``)."""
    return kind(RULE_DEFAULTS[name][1] * scale)
PRESETS = ("cornering", "off-track-recovery", "overtaking-pack", "pit-entry")
PROFILES = ("normal", "batch-training", "phantom-race")
RAY_CHANNELS = ("road_edge", "kerb", "illegal_surface", "car")


# ---------------------------------------------------------------------------------------------
# Generic dict -> dataclass conversion
# ---------------------------------------------------------------------------------------------
def _fail(path: str, value: Any, allowed: str):
    raise ConfigError(path, f"got {value!r}; {allowed}")


def _convert(value: Any, hint: Any, path: str) -> Any:
    """``value`` converted to ``hint`` (a type annotation), or ConfigError at ``path``."""
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if hint is Any:
        return value
    if origin in (Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        options = [a for a in args if a is not type(None)]
        # a list or an object goes to the option of its own shape, whose error has the inner path
        shaped = [a for a in options if _shape_of(a) is not None and isinstance(value, _shape_of(a))]
        if len(options) == 1 or len(shaped) == 1:
            return _convert(value, (shaped or options)[0], path)
        expected = []
        for option in options:
            try:
                return _convert(value, option, path)
            except ConfigError as exc:
                text = exc.message.split(": ", 1)[-1]
                expected.append(text.split("; ", 1)[-1] if text.startswith("got ") else text)
        # "got X; expected A or B": the value once, each alternative once
        alternatives = [e if i == 0 else e.removeprefix("expected ") for i, e in enumerate(dict.fromkeys(expected))]
        raise ConfigError(path, f"got {value!r}; " + " or ".join(alternatives))
    if origin is Literal:
        if value in args and type(value) is type(args[args.index(value)]):
            return value
        _fail(path, value, f"expected one of {', '.join(repr(a) for a in args)}{suggest(value, args)}")
    if hint is bool:
        if isinstance(value, bool):
            return value
        _fail(path, value, "expected true or false")
    if hint is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        _fail(path, value, "expected an integer")
    if hint is float:
        if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
            return float(value)
        _fail(path, value, "expected a finite number")
    if hint is str:
        if isinstance(value, str) and value:
            return value
        _fail(path, value, "expected a non-empty string")
    if origin is tuple:
        if not isinstance(value, (list, tuple)):
            _fail(path, value, "expected a list")
        item = args[0]
        return tuple(_convert(v, item, f"{path}[{i}]") for i, v in enumerate(value))
    if origin is dict:
        if not isinstance(value, dict):
            _fail(path, value, "expected an object mapping names to values")
        key_hint, item = args
        return {_convert(k, key_hint, path): _convert(v, item, f"{path}.{k}") for k, v in value.items()}
    if dataclasses.is_dataclass(hint):
        if isinstance(value, hint):
            return value
        if not isinstance(value, dict):
            _fail(path, value, "expected an object")
        return _from_dict(hint, value, path)
    raise TypeError(f"config type {hint!r} at {path} is not supported")  # a bug in this module


def _shape_of(hint):
    """The container type a value must have for ``hint`` (list/tuple for tuples, dict for dicts and
    config objects), or None for a scalar hint."""
    origin = typing.get_origin(hint)
    if origin is tuple:
        return (list, tuple)
    if origin is dict or dataclasses.is_dataclass(hint):
        return dict
    return None


@functools.lru_cache(maxsize=None)
def _fields_of(cls) -> tuple[dict, list]:
    """(type hints, init field names) of a config dataclass; resolving the hints is slow (string
    annotations are evaluated), and placements are parsed per reset_drivers call."""
    return typing.get_type_hints(cls), [f.name for f in dataclasses.fields(cls) if f.init]


def _from_dict(cls, data: dict, path: str):
    hints, names = _fields_of(cls)
    kwargs = {}
    for key, value in data.items():
        key_path = f"{path}.{key}" if path else str(key)
        if key not in names:
            raise ConfigError(key_path, f"unknown key{suggest(key, names)}; known keys: {', '.join(names)}")
        kwargs[key] = _convert(value, hints[key], key_path)
    try:
        return cls(**kwargs)
    except TypeError as exc:  # a required field is missing
        missing = [f.name for f in dataclasses.fields(cls)
                   if f.name not in kwargs and f.default is dataclasses.MISSING
                   and f.default_factory is dataclasses.MISSING]
        if not missing:
            raise  # not a missing field: a bug, not a config error
        where = f"{path}.{missing[0]}" if path else missing[0]
        raise ConfigError(where or cls.__name__, f"is required ({exc})") from None


def _to_dict(obj):
    if dataclasses.is_dataclass(obj):
        return {f.name: _to_dict(getattr(obj, f.name)) for f in dataclasses.fields(obj)
                if f.name != "reward"}
    if isinstance(obj, tuple):
        return [_to_dict(v) for v in obj]
    if isinstance(obj, dict):
        return {k: _to_dict(v) for k, v in obj.items()}
    return obj


def deep_merge(base: dict, extra: dict) -> dict:
    """``extra`` over ``base``: a dict value is merged key by key into the dict it meets, anything else
    replaces (lists included). Neither argument is modified."""
    out = dict(base)
    for key, value in extra.items():
        out[key] = deep_merge(out[key], value) if isinstance(value, dict) and isinstance(out.get(key), dict) else value
    return out


class _Config:
    """Mixin: ``from_dict`` / ``to_dict`` / ``replace`` for the frozen config dataclasses."""

    @classmethod
    def from_dict(cls, data: dict | None = None, _path: str = ""):
        if data is None:
            data = {}
        if not isinstance(data, dict):
            raise ConfigError(_path or cls.__name__, f"expected an object, got {type(data).__name__}")
        return _from_dict(cls, data, _path)

    def to_dict(self) -> dict:
        return _to_dict(self)

    def replace(self, **changes):
        return dataclasses.replace(self, **changes)


def _require(cond: bool, path: str, message: str):
    if not cond:
        raise ConfigError(path, message)


# ---------------------------------------------------------------------------------------------
# Sections
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class PitCrewConfig(_Config):
    """A team's pit crew (PaddockJS ``team.pitCrew``), each 0..1 with 0.5 neutral. With
    ``rules.modules.pit_stops.variability`` on (and not ``perfect``) they shape the service time:
    ``speed`` shifts it, ``consistency`` narrows its random jitter, ``reliability`` makes a slow-stop
    issue rarer and shorter (``sim.pit.service_seconds``)."""
    speed: float = 0.5
    consistency: float = 0.5
    reliability: float = 0.5


@dataclass(frozen=True)
class DriverConfig(_Config):
    """One driver. ``ratings``: vehicle/driver ratings 0..100 (50 neutral; ``sim.params.RATING_NAMES``,
    the spec's camelCase names or their snake_case aliases). ``team``: the pit box (service area) index,
    else two cars a box in slot order. ``pit_crew``: the crew of this driver's box; team-mates (drivers
    sharing a box) share it, so give it once or give the same values."""
    id: str
    name: Optional[str] = None
    ratings: dict[str, float] = field(default_factory=dict)
    tire: Optional[Literal["S", "M", "H"]] = None
    team: Optional[int] = None
    pit_crew: Optional[PitCrewConfig] = None

    def __post_init__(self):
        for key, value in self.ratings.items():
            path = f"drivers.{self.id}.ratings.{key}"
            if key in UNSUPPORTED_RATINGS:
                raise ConfigError(path, f"got {key!r}, a PaddockJS personality rating that paddock_ma's built-in "
                                  f"driver does not model; remove it (supported ratings: {', '.join(RATING_NAMES)})")
            _require(key in RATING_NAMES, path, f"unknown rating {key!r}{suggest(key, RATING_NAMES)}; supported "
                     f"ratings: {', '.join(RATING_NAMES)}")
            _require(0.0 <= value <= 100.0, path, f"got {value!r}; ratings are 0..100 with 50 neutral")
        if self.pit_crew is not None:
            for name in ("speed", "consistency", "reliability"):
                value = getattr(self.pit_crew, name)
                _require(0.0 <= value <= 1.0, f"drivers.{self.id}.pit_crew.{name}",
                         f"got {value!r}; expected 0..1 (0.5 neutral)")


@dataclass(frozen=True)
class PitVariabilityConfig(_Config):
    enabled: bool = _rule("pit_variability", kind=bool)
    perfect: bool = _rule("pit_perfect", kind=bool)
    issue_chance: float = _rule("pit_issue_chance")
    issue_max_delay_seconds: float = _rule("pit_issue_max_delay")


@dataclass(frozen=True)
class PitStopsConfig(_Config):
    enabled: bool = _rule("pit_stops", kind=bool)
    pit_lane_speed_limit_kph: float = _rule("pit_speed_limit", KPH_PER_MPS)
    default_stop_seconds: float = _rule("pit_stop_seconds")
    max_concurrent_pit_lane_cars: int = _rule("pit_max_concurrent", kind=int)
    minimum_pit_lane_gap_meters: float = _rule("pit_min_gap")
    tire_pit_request_threshold_percent: float = _rule("tire_request_pct")
    tire_pit_commit_threshold_percent: float = _rule("tire_commit_pct")
    variability: PitVariabilityConfig = field(default_factory=PitVariabilityConfig)

    def __post_init__(self):
        _require(self.pit_lane_speed_limit_kph > 0, "rules.modules.pit_stops.pit_lane_speed_limit_kph",
                 f"got {self.pit_lane_speed_limit_kph!r}; expected a speed > 0 km/h")
        _require(self.default_stop_seconds > 0, "rules.modules.pit_stops.default_stop_seconds",
                 f"got {self.default_stop_seconds!r}; expected seconds > 0")


@dataclass(frozen=True)
class TireStrategyConfig(_Config):
    compounds: tuple[Literal["S", "M", "H"], ...] = COMPOUNDS


@dataclass(frozen=True)
class SwitchConfig(_Config):
    enabled: bool = True


@dataclass(frozen=True)
class StalledDnfConfig(_Config):
    enabled: bool = _rule("stalled_dnf", kind=bool)
    seconds: float = _rule("stall_seconds")


@dataclass(frozen=True)
class ModulesConfig(_Config):
    pit_stops: PitStopsConfig = field(default_factory=PitStopsConfig)
    tire_strategy: TireStrategyConfig = field(default_factory=TireStrategyConfig)
    tire_degradation: SwitchConfig = field(
        default_factory=lambda: SwitchConfig(enabled=_rule("tire_degradation", kind=bool)))
    stalled_dnf: StalledDnfConfig = field(default_factory=StalledDnfConfig)


@dataclass(frozen=True)
class RulesConfig(_Config):
    standing_start: bool = _rule("standing_start", kind=bool)
    collision_restitution: float = _rule("restitution")
    start_light_count: int = _rule("light_count", kind=int)
    start_light_interval: float = _rule("light_interval")
    start_lights_out_hold: float = _rule("lights_out_hold")
    modules: ModulesConfig = field(default_factory=ModulesConfig)


@dataclass(frozen=True)
class RaySpec(_Config):
    id: str
    angle_degrees: float
    length_meters: float

    def __post_init__(self):
        _require(0 < self.length_meters <= 500, f"sensors.rays.rays.{self.id}.length_meters",
                 f"got {self.length_meters!r}; expected 0 < length <= 500 m")


@dataclass(frozen=True)
class RaysConfig(_Config):
    enabled: bool = True
    layout: Literal["default", "driver-front-heavy"] = "default"
    # None = the profile's default: road_edge + car, or all four with the physical-driver profile
    channels: Optional[tuple[Literal["road_edge", "kerb", "illegal_surface", "car"], ...]] = None
    precision: Literal["driver", "debug"] = "driver"
    length_meters: float = 120.0
    rays: Optional[tuple[RaySpec, ...]] = None

    def __post_init__(self):
        _require(self.channels is None or len(set(self.channels)) == len(self.channels), "sensors.rays.channels",
                 f"got {list(self.channels or ())!r}; list each channel once")
        _require(0 < self.length_meters <= 500, "sensors.rays.length_meters",
                 f"got {self.length_meters!r}; expected 0 < length <= 500 m")


@dataclass(frozen=True)
class NearbyCarsConfig(_Config):
    enabled: bool = True
    max_cars: int = 6
    radius_meters: float = 150.0

    def __post_init__(self):
        _require(0 <= self.max_cars <= 32, "sensors.nearby_cars.max_cars",
                 f"got {self.max_cars!r}; expected 0..32")
        _require(self.radius_meters > 0, "sensors.nearby_cars.radius_meters",
                 f"got {self.radius_meters!r}; expected > 0 m")


@dataclass(frozen=True)
class SensorsConfig(_Config):
    rays: RaysConfig = field(default_factory=RaysConfig)
    nearby_cars: NearbyCarsConfig = field(default_factory=NearbyCarsConfig)


DEFAULT_LOOKAHEAD_METERS = (20.0, 50.0, 100.0, 150.0)
MAX_LOOKAHEAD_METERS = 2000.0


def _lookahead(value, profile: str):
    """``observation.lookahead_meters`` as stored: None (not given: the profile's default, resolved by
    ``observations.resolve_senses``) or a tuple of distances (m). The PaddockJS guide: an invalid value
    falls back to the four defaults, so fixed observation schemas stay usable; it is not an error.
    Invalid: not a list, or an entry that is not a number in (0, MAX_LOOKAHEAD_METERS] m, or an empty
    list outside physical-driver (there, empty means no samples, as PaddockJS 2.0.0 has it)."""
    if value is None:
        return None
    if isinstance(value, (list, tuple)):
        if not value:
            return () if profile == "physical-driver" else DEFAULT_LOOKAHEAD_METERS
        if all(isinstance(d, (int, float)) and not isinstance(d, bool) and 0.0 < d <= MAX_LOOKAHEAD_METERS
               for d in value):
            return tuple(float(d) for d in value)
    warnings.warn(f"observation.lookahead_meters: got {value!r}, not a list of distances in (0, "
                  f"{MAX_LOOKAHEAD_METERS:g}] m; using the defaults {list(DEFAULT_LOOKAHEAD_METERS)} (PaddockJS's "
                  "fallback for an invalid value)", UserWarning, stacklevel=2)
    return DEFAULT_LOOKAHEAD_METERS


@dataclass(frozen=True)
class ObservationConfig(_Config):
    """``lookahead_meters``: track sample distances ahead (m); None = the profile's default (the four
    DEFAULT_LOOKAHEAD_METERS, none under physical-driver); an invalid value is replaced by the
    defaults with a warning (``_lookahead``), so the stored value is always None or a valid tuple."""
    profile: Literal["default", "physical-driver"] = "default"
    output: Literal["full", "vector", "object"] = "full"
    include_schema: bool = True
    lookahead_meters: Any = None

    def __post_init__(self):
        object.__setattr__(self, "lookahead_meters", _lookahead(self.lookahead_meters, self.profile))


@dataclass(frozen=True)
class EpisodeConfig(_Config):
    max_steps: int = 10000
    end_on_race_finish: bool = True

    def __post_init__(self):
        _require(self.max_steps >= 1, "episode.max_steps", f"got {self.max_steps!r}; expected >= 1")


@dataclass(frozen=True)
class ResultConfig(_Config):
    state_output: Literal["full", "minimal", "none"] = "full"
    reset_drivers_observation_scope: Literal["all", "reset"] = "all"


@dataclass(frozen=True)
class Placement(_Config):
    """Where a car starts: absolute race distance (m), lateral offset (m, + right), speed, heading error."""
    distance_meters: float
    offset_meters: float = 0.0
    speed_kph: Optional[float] = None
    heading_error_radians: float = 0.0


@dataclass(frozen=True)
class TrafficEntry(_Config):
    driver_id: str
    relative_to: str
    delta_distance_meters: float
    offset_meters: float = 0.0
    speed_kph: Optional[float] = None
    heading_error_radians: float = 0.0


@dataclass(frozen=True)
class ScenarioConfig(_Config):
    participants: Union[Literal["all", "controlled-only"], tuple[str, ...]] = "all"
    non_controlled: Literal["ai"] = "ai"
    preset: Optional[Literal["cornering", "off-track-recovery", "overtaking-pack", "pit-entry"]] = None
    placements: dict[str, Placement] = field(default_factory=dict)
    traffic: tuple[TrafficEntry, ...] = ()


@dataclass(frozen=True)
class InteractionOverride(_Config):
    profile: Optional[Literal["normal", "batch-training", "phantom-race"]] = None
    detectable_by_rays: Optional[bool] = None
    detectable_as_nearby: Optional[bool] = None


@dataclass(frozen=True)
class InteractionsConfig(_Config):
    default_profile: Literal["normal", "batch-training", "phantom-race"] = "normal"
    drivers: dict[str, InteractionOverride] = field(default_factory=dict)


def default_drivers(count: int) -> tuple[DriverConfig, ...]:
    """``count`` neutral drivers with ids ``car-00``, ``car-01``, ..."""
    return tuple(DriverConfig(id=f"car-{i:02d}", name=f"Car {i:02d}") for i in range(count))


@dataclass(frozen=True)
class EnvConfig(_Config):
    """The whole environment configuration. ``drivers`` may be given as a count in ``from_dict``."""
    drivers: tuple[DriverConfig, ...] = field(default_factory=lambda: default_drivers(20))
    controlled_drivers: tuple[str, ...] = ("car-00",)
    seed: Optional[int] = None
    track: str = "grand-prix"
    total_laps: int = _rule("total_laps", kind=int)
    frame_skip: int = 1
    physics_mode: Literal["arcade", "simulator"] = ("simulator" if _rule("physics_mode") == PHYSICS_SIMULATOR
                                                    else "arcade")
    action_policy: Literal["strict", "report"] = "strict"
    rules: RulesConfig = field(default_factory=RulesConfig)
    scenario: ScenarioConfig = field(default_factory=ScenarioConfig)
    sensors: SensorsConfig = field(default_factory=SensorsConfig)
    sensors_by_driver: dict[str, SensorsConfig] = field(default_factory=dict)
    observation: ObservationConfig = field(default_factory=ObservationConfig)
    episode: EpisodeConfig = field(default_factory=EpisodeConfig)
    result: ResultConfig = field(default_factory=ResultConfig)
    participant_interactions: InteractionsConfig = field(default_factory=InteractionsConfig)
    reward: Optional[Any] = field(default=None, compare=False)

    @classmethod
    def from_dict(cls, data: dict | None = None, _path: str = ""):
        if data is not None and not isinstance(data, dict):
            raise ConfigError("config", f"got {data!r} (a {type(data).__name__}); expected an object (a dict) "
                              "of config keys, e.g. {'drivers': 2}")
        data = dict(data or {})
        drivers = data.get("drivers")
        if isinstance(drivers, int) and not isinstance(drivers, bool):
            _require(1 <= drivers <= 64, "drivers", f"got {drivers!r}; expected 1..64 drivers")
            data["drivers"] = default_drivers(drivers)
        if "reward" in data and data["reward"] is not None and not callable(data["reward"]):
            raise ConfigError("reward", f"got {data['reward']!r}; expected a callable reward(context) or None")
        return super().from_dict(data, _path)

    def __post_init__(self):
        ids = [d.id for d in self.drivers]
        _require(len(ids) >= 1, "drivers", "expected at least one driver")
        _require(len(ids) <= 64, "drivers", f"got {len(ids)} drivers; at most 64 per world")
        dupes = sorted({i for i in ids if ids.count(i) > 1})
        _require(not dupes, "drivers", f"duplicate driver ids {dupes!r}; ids must be unique")
        _require(len(self.controlled_drivers) >= 1, "controlled_drivers",
                 "expected at least one controlled driver id")
        for i, cid in enumerate(self.controlled_drivers):
            _require(cid in ids, f"controlled_drivers[{i}]",
                     f"got {cid!r}, which is not a driver id{suggest(cid, ids)}; drivers: {', '.join(ids)}")
        _require(len(set(self.controlled_drivers)) == len(self.controlled_drivers), "controlled_drivers",
                 "list each controlled driver once")
        _require(self.frame_skip >= 1, "frame_skip", f"got {self.frame_skip!r}; expected an integer >= 1")
        _require(1 <= self.total_laps <= 1000, "total_laps", f"got {self.total_laps!r}; expected 1..1000")
        participants = self.scenario.participants
        if isinstance(participants, tuple):
            for i, pid in enumerate(participants):
                _require(pid in ids, f"scenario.participants[{i}]",
                         f"got {pid!r}, which is not a driver id{suggest(pid, ids)}")
            for cid in self.controlled_drivers:
                _require(cid in participants, "scenario.participants",
                         f"must include every controlled driver; {cid!r} is missing")
        active = set(self.participant_ids())
        for key in self.scenario.placements:
            _require(key in active, f"scenario.placements.{key}",
                     f"{key!r} is not a participating driver{suggest(key, sorted(active))}")
        for i, entry in enumerate(self.scenario.traffic):
            for name in ("driver_id", "relative_to"):
                value = getattr(entry, name)
                _require(value in active, f"scenario.traffic[{i}].{name}",
                         f"{value!r} is not a participating driver{suggest(value, sorted(active))}")
        for key in self.sensors_by_driver:
            _require(key in self.controlled_drivers, f"sensors_by_driver.{key}",
                     f"{key!r} is not a controlled driver{suggest(key, self.controlled_drivers)}")
        for key in self.participant_interactions.drivers:
            _require(key in ids, f"participant_interactions.drivers.{key}",
                     f"{key!r} is not a driver id{suggest(key, ids)}")
        compounds = self.rules.modules.tire_strategy.compounds
        _require(len(compounds) >= 1, "rules.modules.tire_strategy.compounds", "expected at least one compound")
        for d in self.drivers:
            if d.tire is not None:
                _require(d.tire in compounds, f"drivers.{d.id}.tire",
                         f"got {d.tire!r}; expected one of the rules' compounds {list(compounds)!r}")

    def merged(self, overrides: dict | None = None) -> "EnvConfig":
        """A new config: ``overrides`` (config keys; a nested dict is merged key by key, anything else
        replaces) over this one, validated as ``from_dict`` validates. ``reward`` is not data: it is
        carried over unless ``overrides`` gives one (a callable, or None to drop it). The one way to
        derive a config from another (the catalogue, the adapters, ``PaddockEnv.reset(options=...)``
        and the evaluation cases use it)."""
        if overrides is not None and not isinstance(overrides, dict):
            raise ConfigError("options", f"expected an object of config keys, got {type(overrides).__name__}")
        data = dict(overrides or {})
        reward = data.pop("reward", self.reward)
        if reward is not None and not callable(reward):
            raise ConfigError("reward", f"got {reward!r}; expected a callable reward(context) or None")
        config = EnvConfig.from_dict(deep_merge(self.to_dict(), data)) if data else self
        return config if config.reward is reward else dataclasses.replace(config, reward=reward)

    def participant_ids(self) -> tuple[str, ...]:
        """Driver ids that race, in driver order (scenario.participants resolved)."""
        p = self.scenario.participants
        if p == "all":
            return tuple(d.id for d in self.drivers)
        if p == "controlled-only":
            return tuple(d.id for d in self.drivers if d.id in self.controlled_drivers)
        return tuple(d.id for d in self.drivers if d.id in p)
