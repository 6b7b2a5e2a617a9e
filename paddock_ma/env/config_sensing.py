"""Config sections of what a controlled driver senses: rays, nearby-car radar and the observation
(profile, output, schema, lookahead distances with PaddockJS's fallback for an invalid value).

Re-exported by ``env.config``; see ``config_base`` for how a dict becomes these sections.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any, Literal, Optional

from .config_base import _Config, _require

RAY_CHANNELS = ("road_edge", "kerb", "illegal_surface", "car")


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
