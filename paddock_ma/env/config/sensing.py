"""Config sections of what a controlled driver senses: rays, nearby-car radar and the observation
(profile, output, schema, lookahead distances with PaddockJS's fallback for an invalid value).

``EnvConfig`` (``env.config.root``) holds them; ``env.config.base`` turns a dict into these sections.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any, Literal, Optional

from .base import ConfigSection, require
from ...errors import ConfigError
from ...value_rules import is_finite_number
from ...sim.sensing.march import RAY_CHANNELS       # the channel names, defined with their bits
DEFAULT_RAY_LENGTH_METERS = 120.0
# PaddockJS's legacy compact ray shape (anglesDegrees, detectTrack, detectCars) and the per-ray
# layout's default length: accepted by RaysConfig and rewritten into rays and channels (_legacy_rays)
LEGACY_RAY_KEYS = ("angles_degrees", "detect_track", "detect_cars", "default_length_meters")


@dataclass(frozen=True)
class RaySpec(ConfigSection):
    id: str
    angle_degrees: float
    length_meters: float

    def __post_init__(self):
        require(0 < self.length_meters <= 500, f"sensors.rays.rays.{self.id}.length_meters",
                 f"got {self.length_meters!r}; expected 0 < length <= 500 m")


# Ray channels PaddockJS 2.0.0 accepts and drops: its rays never report the barrier (its spec's channels,
# rays and schema leave it out), so a config listing it senses what it would without it.
SENSELESS_RAY_CHANNELS = ("barrier",)


@dataclass(frozen=True)
class RaysConfig(ConfigSection):
    enabled: bool = True
    # PaddockJS's presets (env.observations.RAY_LAYOUTS); "default" is an alias of "compact"
    layout: Literal["compact", "default", "driver-front-heavy", "lidar-lite"] = "compact"
    # None = every profile's default: road_edge + car (PaddockJS 2.0.0)
    channels: Optional[tuple[Literal[RAY_CHANNELS], ...]] = None
    precision: Literal["driver", "debug"] = "driver"
    length_meters: float = 120.0
    rays: Optional[tuple[RaySpec, ...]] = None

    @classmethod
    def _prepare(cls, data: dict, path: str) -> dict:
        data = _legacy_rays(data, path)
        channels = data.get("channels")
        if isinstance(channels, (list, tuple)) and any(c in SENSELESS_RAY_CHANNELS for c in channels):
            data = dict(data, channels=[c for c in channels if c not in SENSELESS_RAY_CHANNELS])
        return data

    def __post_init__(self):
        require(self.channels is None or len(set(self.channels)) == len(self.channels), "sensors.rays.channels",
                 f"got {list(self.channels or ())!r}; list each channel once")
        require(0 < self.length_meters <= 500, "sensors.rays.length_meters",
                 f"got {self.length_meters!r}; expected 0 < length <= 500 m")


def _legacy_rays(data: dict, path: str) -> dict:
    """``sensors.rays`` with PaddockJS's other shapes rewritten into ours, as its guide has the
    environment normalise them:

    * ``angles_degrees`` (the legacy compact shape): one ray per angle, ids ``ray-<i>``;
    * ``detect_track`` / ``detect_cars`` (legacy): the channels ``road_edge`` and ``car`` unless
      false (with neither given, the profile's default channels stay);
    * ``rays`` entries given as a bare angle, or without an ``id`` or ``length_meters``: id
      ``ray-<i>``, length ``default_length_meters``, else ``length_meters``, else 120 m;
    * ``default_length_meters``: that default (and the layout's length when ``length_meters`` is absent).

    Where PaddockJS quietly lets one source win (``rays`` over ``layout`` over ``angles_degrees``,
    ``channels`` over the detect flags), giving two of them here is an error naming both."""
    if not any(key in data for key in LEGACY_RAY_KEYS) and not isinstance(data.get("rays"), (list, tuple)):
        return data
    out = {key: value for key, value in data.items() if key not in LEGACY_RAY_KEYS}
    where = f"{path}." if path else ""
    default = data.get("default_length_meters", data.get("length_meters", DEFAULT_RAY_LENGTH_METERS))
    if "default_length_meters" in data:
        if not is_finite_number(default) or default <= 0:
            raise ConfigError(f"{where}default_length_meters", f"got {default!r}; expected a length > 0 m")
        out.setdefault("length_meters", default)
    angles = data.get("angles_degrees")
    rays = data.get("rays")
    if angles is not None:
        for other in ("rays", "layout"):
            if other in data:
                raise ConfigError(f"{where}angles_degrees", f"give {other} or the legacy angles_degrees, not both "
                                  f"(PaddockJS would use {other} and ignore angles_degrees)")
        if not isinstance(angles, (list, tuple)) or not angles or not all(is_finite_number(a) for a in angles):
            raise ConfigError(f"{where}angles_degrees", f"got {angles!r}; expected a non-empty list of angles "
                              "in degrees (0 ahead, + right)")
        rays = list(angles)
    if isinstance(rays, (list, tuple)):
        out["rays"] = [_one_ray(ray, i, default) for i, ray in enumerate(rays)]
    flags = [key for key in ("detect_track", "detect_cars") if key in data]
    if flags:
        if "channels" in data:
            raise ConfigError(f"{where}{flags[0]}", f"give channels or the legacy {' and '.join(flags)}, not both "
                              "(PaddockJS would use channels)")
        for key in flags:
            if not isinstance(data[key], bool):
                raise ConfigError(f"{where}{key}", f"got {data[key]!r}; expected true or false")
        out["channels"] = [channel for channel, key in (("road_edge", "detect_track"), ("car", "detect_cars"))
                           if data.get(key, True)]
    return out


def _one_ray(ray, i: int, default_length):
    """A ``rays`` entry as a full RaySpec dict: a bare angle, or a dict missing its id or length."""
    if is_finite_number(ray):
        return {"id": f"ray-{i}", "angle_degrees": ray, "length_meters": default_length}
    if isinstance(ray, dict):
        return {"id": f"ray-{i}", "length_meters": default_length} | ray
    return ray       # RaySpec's own check words the error


@dataclass(frozen=True)
class NearbyCarsConfig(ConfigSection):
    enabled: bool = True
    max_cars: int = 6
    radius_meters: float = 150.0

    def __post_init__(self):
        require(0 <= self.max_cars <= 32, "sensors.nearby_cars.max_cars",
                 f"got {self.max_cars!r}; expected 0..32")
        require(self.radius_meters > 0, "sensors.nearby_cars.radius_meters",
                 f"got {self.radius_meters!r}; expected > 0 m")


@dataclass(frozen=True)
class SensorsConfig(ConfigSection):
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
        if all(is_finite_number(d) and 0.0 < d <= MAX_LOOKAHEAD_METERS for d in value):
            return tuple(float(d) for d in value)
    warnings.warn(f"observation.lookahead_meters: got {value!r}, not a list of distances in (0, "
                  f"{MAX_LOOKAHEAD_METERS:g}] m; using the defaults {list(DEFAULT_LOOKAHEAD_METERS)} (PaddockJS's "
                  "fallback for an invalid value)", UserWarning, stacklevel=2)
    return DEFAULT_LOOKAHEAD_METERS


@dataclass(frozen=True)
class ObservationConfig(ConfigSection):
    """``lookahead_meters``: track sample distances ahead (m); None = the profile's default (the four
    DEFAULT_LOOKAHEAD_METERS, none under physical-driver); an invalid value is replaced by the
    defaults with a warning (``_lookahead``), so the stored value is always None or a valid tuple."""
    profile: Literal["default", "physical-driver"] = "default"
    output: Literal["full", "vector", "object"] = "full"
    include_schema: bool = True
    lookahead_meters: Any = None
    # PaddockJS's vectorType: "array" (a JS array) or "float32" (a Float32Array). Vectors are float32 numpy
    # arrays here either way, and JSON lists on the wire (docs/paddockjs-compatibility.md)
    vector_type: Literal["array", "float32"] = "array"

    def __post_init__(self):
        object.__setattr__(self, "lookahead_meters", _lookahead(self.lookahead_meters, self.profile))
