"""Typed, frozen environment configuration (PaddockJS 2.0.1 options with Python names): the
``EnvConfig`` root, the race rules, episode and result sections, and merging.

Build one from a plain dict with ``EnvConfig.from_dict(d)``: every key is checked against the
dataclass fields, so a misspelt key is an error (with a close-match suggestion) instead of being
silently ignored; every value is checked against its type and allowed values. Errors are
``ConfigError`` naming the key path, the bad value and what is allowed. ``to_dict()`` round-trips.

The sections are split by concern: ``participants`` (drivers, scenario, interaction profiles),
``sensing`` (sensors, observation) and this module (rules, episode, result, the root); ``base`` holds
the dict <-> dataclass machinery. Every public config name is importable from here.
"""

from __future__ import annotations

import dataclasses
import json
import warnings
from dataclasses import dataclass, field
from typing import Any, Literal, Optional, Union

from ...sim.core.layout import COMPOUND_NAMES, KPH_PER_MPS, PHYSICS_SIMULATOR
from .base import ConfigSection, deep_merge, race_rule, require, section_names
from ...sim.track.paddockjs_generator.jsmath import normalize_seed
from ...sim.track.paddockjs_generator.options import TrackGenerationError, resolve_generation_options
from ...sim.sensing.march import RAY_CHANNELS
from .participants import (
    ENTRY_PERSONALITY_RATINGS, DriverConfig, EntryConfig, InteractionsConfig, ScenarioConfig, default_drivers,
)
from .sensing import LEGACY_RAY_KEYS, ObservationConfig, SensorsConfig
from ...errors import ConfigError, suggest
from ..seeding import check_seed
from ...value_rules import is_finite_number, is_integer
from ...paddockjs.naming import from_wire, wire_name

COMPOUNDS = COMPOUND_NAMES      # the tyre compounds, soft to hard, named where the sim codes them
# PaddockJS 2.0 environment options with no counterpart here (PaddockJS would use them; we refuse them
# by name rather than run something else). Snake_case: keys arrive through from_wire. None today.
UNSUPPORTED_PADDOCKJS_KEYS: dict[str, str] = {}
# PaddockJS 2.0 options that cannot change anything here: accepted, each with one warning (Python: a
# UserWarning; the worker: its next reply's ``warnings``), so a PaddockJS config loads unchanged.
IGNORED_PADDOCKJS_KEYS = {
    "replay_ghosts": "replay ghosts are drawn by PaddockJS's renderer and never touch the race",
    "warmup": "a JavaScript JIT warm-up run; numba kernels are compiled and cached instead",
    "external_renderer": "a JavaScript frame callback; render worlds with env.render",
}
# Values of known keys that PaddockJS reads and that change nothing here: said once, as the ignored
# keys are (their name in ``EnvConfig.ignored_keys``, the wire text, why).
IGNORED_PADDOCKJS_VALUES = {
    "entry_personality": ("entries[].driver.riskTolerance, patience, consistency",
                          "paddock_ma's built-in driver has no such traits"),
    "penalties": ("rules.ruleset grandPrix2025 / fia2025: the stewards' penalties",
                  "penalties (track limits, collisions, the tyre rule, pit-lane speeding) are not simulated here"),
}
_IGNORED_WIRE = {"replay_ghosts": "replayGhosts", "warmup": "warmup", "external_renderer": "externalRenderer"}
# PaddockJS's rulesets (rulesetPresets.js): the modules each one sets before the config's own
# ``rules.modules`` are merged over them; ``fia2025`` is its alias of ``grandPrix2025``. Penalties,
# which the Grand Prix preset switches on, are not simulated here (IGNORED_PADDOCKJS_VALUES).
GRAND_PRIX_2025_MODULES = {
    "pit_stops": {"enabled": True, "pit_lane_speed_limit_kph": 80.0},
    "tire_strategy": {"enabled": True, "mandatory_distinct_dry_compounds": 2},
}
RULESET_MODULES = {"paddock": {}, "custom": {}, "grandPrix2025": GRAND_PRIX_2025_MODULES,
                   "fia2025": GRAND_PRIX_2025_MODULES}
RulesetName = Literal["paddock", "custom", "grandPrix2025", "fia2025"]


# Config paths an override replaces whole instead of merging key by key, as PaddockJS's reset options
# do (``reset({scenario: {placements: {}}})`` clears the placements)
REPLACED_ON_MERGE = frozenset({"scenario.placements"})


def _camel_keys(value):
    if isinstance(value, dict):
        return {wire_name(k) if isinstance(k, str) else k: _camel_keys(v) for k, v in value.items()}
    return value


def track_generation_options(value) -> dict:
    """A config's ``track_generation``: PaddockJS's ``trackGeneration`` object with its keys in PaddockJS's
    spelling (snake_case ones are renamed), checked as PaddockJS checks it (a known profile, positive
    lengths, min <= max, ...). ConfigError names the option and PaddockJS's message."""
    if not isinstance(value, dict):
        raise ConfigError("track_generation", f"got {value!r}; expected an object such as "
                          "{'profile': 'training-short'} (PaddockJS's trackGeneration)")
    options = _camel_keys(value)
    try:
        resolve_generation_options(options)
    except TrackGenerationError as exc:
        raise ConfigError("track_generation", f"{exc} Profiles: race, training-short, training-medium, "
                          "training-technical") from None
    return options


def ignored_key_warnings(keys) -> list[str]:
    """The warning text of each ignored PaddockJS key or value in ``keys`` (names of
    ``EnvConfig.ignored_keys``), in table order."""
    out = [f"{_IGNORED_WIRE[k]}: accepted and ignored ({why})" for k, why in IGNORED_PADDOCKJS_KEYS.items() if k in keys]
    out += [f"{what}: accepted and ignored ({why})" for k, (what, why) in IGNORED_PADDOCKJS_VALUES.items() if k in keys]
    return out


@dataclass(frozen=True)
class PitVariabilityConfig(ConfigSection):
    enabled: bool = race_rule("pit_variability", kind=bool)
    perfect: bool = race_rule("pit_perfect", kind=bool)
    issue_chance: float = race_rule("pit_issue_chance")
    issue_max_delay_seconds: float = race_rule("pit_issue_max_delay")


@dataclass(frozen=True)
class PitStopsConfig(ConfigSection):
    enabled: bool = race_rule("pit_stops", kind=bool)
    pit_lane_speed_limit_kph: float = race_rule("pit_speed_limit", KPH_PER_MPS)
    default_stop_seconds: float = race_rule("pit_stop_seconds")
    max_concurrent_pit_lane_cars: int = race_rule("pit_max_concurrent", kind=int)
    minimum_pit_lane_gap_meters: float = race_rule("pit_min_gap")
    tire_pit_request_threshold_percent: float = race_rule("tire_request_pct")
    tire_pit_commit_threshold_percent: float = race_rule("tire_commit_pct")
    variability: PitVariabilityConfig = field(default_factory=PitVariabilityConfig)

    def __post_init__(self):
        require(self.pit_lane_speed_limit_kph > 0, "rules.modules.pit_stops.pit_lane_speed_limit_kph",
                 f"got {self.pit_lane_speed_limit_kph!r}; expected a speed > 0 km/h")
        require(self.default_stop_seconds > 0, "rules.modules.pit_stops.default_stop_seconds",
                 f"got {self.default_stop_seconds!r}; expected seconds > 0")


@dataclass(frozen=True)
class TireStrategyConfig(ConfigSection):
    """PaddockJS's tyre strategy module. ``compounds``: the compounds a pit stop may fit. ``enabled``
    and ``mandatory_distinct_dry_compounds`` are carried into the state's rules as PaddockJS's are; in
    PaddockJS only its tyre-rule penalty reads them, and penalties are not simulated here."""
    enabled: bool = False
    compounds: tuple[Literal[COMPOUND_NAMES], ...] = COMPOUNDS
    mandatory_distinct_dry_compounds: Optional[int] = None


@dataclass(frozen=True)
class SwitchConfig(ConfigSection):
    enabled: bool = True


@dataclass(frozen=True)
class StalledDnfConfig(ConfigSection):
    enabled: bool = race_rule("stalled_dnf", kind=bool)
    seconds: float = race_rule("stall_seconds")


@dataclass(frozen=True)
class ModulesConfig(ConfigSection):
    pit_stops: PitStopsConfig = field(default_factory=PitStopsConfig)
    tire_strategy: TireStrategyConfig = field(default_factory=TireStrategyConfig)
    tire_degradation: SwitchConfig = field(
        default_factory=lambda: SwitchConfig(enabled=race_rule("tire_degradation", kind=bool)))
    stalled_dnf: StalledDnfConfig = field(default_factory=StalledDnfConfig)


@dataclass(frozen=True)
class RulesConfig(ConfigSection):
    """Race rules. ``ruleset`` names PaddockJS's preset (``paddock``, the default; ``custom``;
    ``grandPrix2025`` and its alias ``fia2025``): the modules it sets are merged under the config's own
    ``modules`` (``RULESET_MODULES``)."""
    ruleset: RulesetName = "paddock"
    standing_start: bool = race_rule("standing_start", kind=bool)
    collision_restitution: float = race_rule("restitution")
    start_light_count: int = race_rule("light_count", kind=int)
    start_light_interval: float = race_rule("light_interval")
    start_lights_out_hold: float = race_rule("lights_out_hold")
    # PaddockJS's drsDetectionSeconds: DRS opens for a car that crosses a zone's start within this of
    # the car ahead of it (sim.race.drs)
    drs_detection_seconds: float = race_rule("drs_detection")
    modules: ModulesConfig = field(default_factory=ModulesConfig)

    def __post_init__(self):
        require(is_finite_number(self.drs_detection_seconds) and self.drs_detection_seconds >= 0,
                "rules.drs_detection_seconds", f"got {self.drs_detection_seconds!r}; expected a finite number >= 0")

    @classmethod
    def _prepare(cls, data: dict, path: str) -> dict:
        preset = RULESET_MODULES.get(data.get("ruleset"))
        if preset:
            modules = data.get("modules")
            if modules is None or isinstance(modules, dict):     # anything else: from_dict names it
                data = dict(data, modules=deep_merge(preset, modules or {}))
        return data


@dataclass(frozen=True)
class EpisodeConfig(ConfigSection):
    max_steps: int = 10000
    end_on_race_finish: bool = True

    def __post_init__(self):
        require(self.max_steps >= 1, "episode.max_steps", f"got {self.max_steps!r}; expected >= 1")


@dataclass(frozen=True)
class ResultConfig(ConfigSection):
    state_output: Literal["full", "minimal", "none"] = "full"
    reset_drivers_observation_scope: Literal["all", "reset"] = "all"


@dataclass(frozen=True)
class EnvConfig(ConfigSection):
    """The whole environment configuration. ``drivers`` may be given as a count in ``from_dict``."""
    drivers: tuple[DriverConfig, ...] = field(default_factory=lambda: default_drivers(20))
    controlled_drivers: tuple[str, ...] = ("car-00",)
    seed: Optional[int] = None
    # a shipped track's name, a track file's path, "paddockjs:<seed>", or a PaddockJS track object
    # (its TRACK or a createProceduralTrack definition, sim units: sim.track.load.paddockjs_track_document)
    track: Union[str, dict[str, Any]] = "grand-prix"
    # PaddockJS's trackSeed when a track is given too: PaddockJS races on the track and reports the
    # seed as info.trackSeed; so does paddock_ma. (trackSeed alone names the track: track "paddockjs:<seed>")
    track_seed: Optional[int] = None
    # PaddockJS's trackGeneration (a profile such as "training-short" and overrides, PaddockJS's
    # camelCase keys, metres): shapes the "paddockjs:<seed>" track as PaddockJS's generator does (its
    # training profiles have no pit lane); a named track or track object is raced as it is (PaddockJS too)
    track_generation: Optional[dict[str, Any]] = None
    total_laps: int = race_rule("total_laps", kind=int)
    frame_skip: int = 1
    physics_mode: Literal["arcade", "simulator"] = ("simulator" if race_rule("physics_mode") == PHYSICS_SIMULATOR
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
    # PaddockJS's championship entries: each gives its driver's ratings and car (EntryConfig)
    entries: tuple[EntryConfig, ...] = ()
    # PaddockJS's switch between its indexed and legacy track queries; paddock_ma's track queries are
    # always indexed and give the same answers either way, so it is accepted and changes nothing
    track_query_index: bool = True
    reward: Optional[Any] = field(default=None, compare=False)
    # the PaddockJS keys of IGNORED_PADDOCKJS_KEYS the config gave (they change nothing)
    ignored_keys: tuple[str, ...] = field(default=(), compare=False)

    @classmethod
    def from_dict(cls, data: dict | None = None, _path: str = ""):
        if data is not None and not isinstance(data, dict):
            raise ConfigError("config", f"got {data!r} (a {type(data).__name__}); expected an object (a dict) "
                              "of config keys, e.g. {'drivers': 2}")
        data = dict(data or {})
        for key, why in UNSUPPORTED_PADDOCKJS_KEYS.items():
            if key in data:
                raise ConfigError(key, f"a PaddockJS 2.0 option paddock_ma does not have ({why}); remove it")
        if data.get("seed") is not None:
            data["seed"] = check_seed(data["seed"])
        ignored = tuple(k for k in IGNORED_PADDOCKJS_KEYS if k in data)
        for key in ignored:
            data.pop(key)
        if ignored:
            data["ignored_keys"] = tuple(sorted(set(ignored) | set(data.get("ignored_keys", ()))))
            for text in ignored_key_warnings(ignored):
                warnings.warn(text, UserWarning, stacklevel=3)
        if data.get("track_generation") is not None:
            data["track_generation"] = track_generation_options(data["track_generation"])
            if data.get("track_seed") is None and data.get("track") is None:
                raise ConfigError("track_generation", "shapes the track PaddockJS generates for trackSeed, and "
                                  "no track_seed (trackSeed) is given: PaddockJS would draw a random seed, "
                                  "paddock_ma races on a named track; give track_seed (e.g. 4101) with it")
        if data.get("track_seed") is not None:
            seed = data.pop("track_seed")
            require(is_finite_number(seed),
                     "track_seed", f"got {seed!r}; expected a number (PaddockJS's trackSeed: its generator's "
                     "track for that seed)")
            if "track" in data:       # PaddockJS races on the track and reports the seed
                data["track_seed"] = normalize_seed(seed)
            else:
                data["track"] = f"paddockjs:{normalize_seed(seed)}"
        notes = set()
        entries = data.get("entries")
        if isinstance(entries, (list, tuple)) and any(
                isinstance(e, dict) and isinstance(e.get("driver"), dict)
                and any(e["driver"].get(k, 50) != 50 for k in ENTRY_PERSONALITY_RATINGS) for e in entries):
            notes.add("entry_personality")
        rules = data.get("rules")
        if isinstance(rules, dict) and rules.get("ruleset") in ("grandPrix2025", "fia2025"):
            notes.add("penalties")
        if notes:
            fresh = notes - set(data.get("ignored_keys", ()))
            data["ignored_keys"] = tuple(sorted(notes | set(data.get("ignored_keys", ()))))
            for text in ignored_key_warnings(fresh):
                warnings.warn(text, UserWarning, stacklevel=3)
        drivers = data.get("drivers")
        if is_integer(drivers):
            require(1 <= drivers <= 64, "drivers", f"got {drivers!r}; expected 1..64 drivers")
            data["drivers"] = default_drivers(drivers)
        if "reward" in data and data["reward"] is not None and not callable(data["reward"]):
            raise ConfigError("reward", f"got {data['reward']!r}; expected a callable reward(context) or None")
        return super().from_dict(data, _path)

    def __post_init__(self):
        ids = [d.id for d in self.drivers]
        require(len(ids) >= 1, "drivers", "expected at least one driver")
        require(len(ids) <= 64, "drivers", f"got {len(ids)} drivers; at most 64 per world")
        dupes = sorted({i for i in ids if ids.count(i) > 1})
        require(not dupes, "drivers", f"duplicate driver ids {dupes!r}; ids must be unique")
        require(len(self.controlled_drivers) >= 1, "controlled_drivers",
                 "expected at least one controlled driver id")
        for i, cid in enumerate(self.controlled_drivers):
            require(cid in ids, f"controlled_drivers[{i}]",
                     f"got {cid!r}, which is not a driver id{suggest(cid, ids)}; drivers: {', '.join(ids)}")
        require(len(set(self.controlled_drivers)) == len(self.controlled_drivers), "controlled_drivers",
                 "list each controlled driver once")
        require(self.frame_skip >= 1, "frame_skip", f"got {self.frame_skip!r}; expected an integer >= 1")
        require(1 <= self.total_laps <= 1000, "total_laps", f"got {self.total_laps!r}; expected 1..1000")
        participants = self.scenario.participants
        if isinstance(participants, tuple):
            for i, pid in enumerate(participants):
                require(pid in ids, f"scenario.participants[{i}]",
                         f"got {pid!r}, which is not a driver id{suggest(pid, ids)}")
            for cid in self.controlled_drivers:
                require(cid in participants, "scenario.participants",
                         f"must include every controlled driver; {cid!r} is missing")
        active = set(self.participant_ids())
        for key in self.scenario.placements:
            require(key in active, f"scenario.placements.{key}",
                     f"{key!r} is not a participating driver{suggest(key, sorted(active))}")
        for i, entry in enumerate(self.scenario.traffic):
            for name in ("driver_id", "relative_to"):
                value = getattr(entry, name)
                require(value in active, f"scenario.traffic[{i}].{name}",
                         f"{value!r} is not a participating driver{suggest(value, sorted(active))}")
        for key in self.sensors_by_driver:
            require(key in self.controlled_drivers, f"sensors_by_driver.{key}",
                     f"{key!r} is not a controlled driver{suggest(key, self.controlled_drivers)}")
        for key in self.participant_interactions.drivers:
            require(key in ids, f"participant_interactions.drivers.{key}",
                     f"{key!r} is not a driver id{suggest(key, ids)}")
        entry_ids = [e.driver_id for e in self.entries]
        dupes = sorted({i for i in entry_ids if entry_ids.count(i) > 1})
        require(not dupes, "entries", f"duplicate entry driver ids {dupes!r}; one entry per driver")
        numbers = [e.driver_number for e in self.entries if e.driver_number is not None]
        dupes = sorted({n for n in numbers if numbers.count(n) > 1})
        require(not dupes, "entries", f"duplicate driver numbers {dupes!r}; each entry needs its own")
        for d in self.drivers:
            if d.ratings and d.id in entry_ids:
                raise ConfigError(f"drivers.{d.id}.ratings", "the driver has an entry too; give its ratings in "
                                  "one place (the entry's driver and vehicle, or the driver's ratings)")
        compounds = self.rules.modules.tire_strategy.compounds
        require(len(compounds) >= 1, "rules.modules.tire_strategy.compounds", "expected at least one compound")
        for d in self.drivers:
            if d.tire is not None:
                require(d.tire in compounds, f"drivers.{d.id}.tire",
                         f"got {d.tire!r}; expected one of the rules' compounds {list(compounds)!r}")

    @classmethod
    def from_paddockjs(cls, doc: dict) -> "EnvConfig":
        """A config from a PaddockJS-shaped options object: camelCase keys (snake_case ones are read too)
        renamed by PaddockJS's naming rule (``paddockjs.naming.from_wire`` over ``CONFIG_NAMES``), then
        ``from_dict``'s checks. The
        legacy ray shape (``anglesDegrees``, ``detectTrack``, ``detectCars``) is normalised as the guide
        says, ``trackSeed`` names PaddockJS's generated track (``paddockjs:<seed>``), ``trackQueryIndex``
        is accepted; an unknown key is
        a ConfigError naming it and the known keys (PaddockJS ignores it)."""
        if not isinstance(doc, dict):
            raise ConfigError("config", f"got {doc!r} (a {type(doc).__name__}); expected an object of "
                              "PaddockJS environment options")
        return cls.from_dict(from_wire(doc, names=CONFIG_NAMES))

    @classmethod
    def load(cls, path) -> "EnvConfig":
        """``from_paddockjs`` of the JSON object in the file at ``path`` (either naming)."""
        try:
            with open(path, encoding="utf-8") as handle:
                doc = json.load(handle)
        except OSError as exc:
            raise ConfigError("config", f"cannot read {str(path)!r}: {exc.strerror or exc}") from None
        except ValueError as exc:
            raise ConfigError("config", f"{str(path)!r} is not JSON: {exc}") from None
        return cls.from_paddockjs(doc)

    def merged(self, overrides: dict | None = None) -> "EnvConfig":
        """A new config: ``overrides`` (config keys; a nested dict is merged key by key, anything else,
        and the dict at a ``REPLACED_ON_MERGE`` path, replaces) over this one, validated as ``from_dict`` validates. ``reward`` is not data: it is
        carried over unless ``overrides`` gives one (a callable, or None to drop it). The one way to
        derive a config from another (the catalogue, the adapters, ``PaddockEnv.reset(options=...)``
        and the evaluation cases use it)."""
        if overrides is not None and not isinstance(overrides, dict):
            raise ConfigError("options", f"expected an object of config keys, got {type(overrides).__name__}")
        data = dict(overrides or {})
        reward = data.pop("reward", self.reward)
        if reward is not None and not callable(reward):
            raise ConfigError("reward", f"got {reward!r}; expected a callable reward(context) or None")
        config = EnvConfig.from_dict(deep_merge(self.to_dict(), data, REPLACED_ON_MERGE)) if data else self
        return config if config.reward is reward else dataclasses.replace(config, reward=reward)

    @property
    def track_name(self) -> str:
        """The track's name: ``track`` itself, or a track object's ``name`` (else "paddockjs-track")."""
        track = self.track
        if isinstance(track, dict):
            name = track.get("name")
            return name if isinstance(name, str) and name else "paddockjs-track"
        return track

    def driver_ratings(self, driver_id: str) -> dict[str, float]:
        """The ratings that shape ``driver_id``'s car and built-in driver: its entry's (its demo blueprint
        under the config's entry, as PaddockJS resolves its grid: ``config.grid``), else the driver's own
        ``ratings``."""
        from .grid import resolved_entry

        own = next(d for d in self.drivers if d.id == driver_id)
        entry = resolved_entry(self, driver_id) if not own.ratings else None
        return entry.ratings() if entry is not None else own.ratings

    def participant_ids(self) -> tuple[str, ...]:
        """Driver ids that race, in driver order (scenario.participants resolved)."""
        p = self.scenario.participants
        if p == "all":
            return tuple(d.id for d in self.drivers)
        if p == "controlled-only":
            return tuple(d.id for d in self.drivers if d.id in self.controlled_drivers)
        return tuple(d.id for d in self.drivers if d.id in p)


# Every name a config document may use, in Python spelling: the fields of every section, the legacy ray
# keys, the refused and the ignored PaddockJS options, ``track_seed``, and the ray channels (values
# that are names).
# ``from_wire`` renames a key only to one of these, so an unknown key is reported as it was written.
CONFIG_NAMES = frozenset(section_names(EnvConfig) | set(LEGACY_RAY_KEYS) | set(UNSUPPORTED_PADDOCKJS_KEYS)
                         | set(IGNORED_PADDOCKJS_KEYS) | {"track_seed"} | set(RAY_CHANNELS))
