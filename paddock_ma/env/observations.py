"""Observation schemas: one table per driver's senses drives the vector layout, the object view and the spec.

The vector itself is filled by ``paddock_ma.sim.observe.fill_vectors`` in the block order documented
there; ``vector_schema`` names every entry in that same order (``{name, unit, scale}``), and
``object_view`` builds the real-unit object of one driver from the same arrays. Schema names follow
PaddockJS's dotted camelCase names (``self.speedKph``, ``rays[3].track.distanceRatio``) because they
are data shared with clients in other languages.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..sim import layout as L
from ..sim.observe import BOUNDARY_SCALE, RADAR_VELOCITY_SCALE
from .config import EnvConfig, RaysConfig, SensorsConfig

OBSERVATION_SPEC_VERSION = 2
DEFAULT_LOOKAHEAD = (20.0, 50.0, 100.0, 150.0)
DEFAULT_RAY_ANGLES = (-135.0, -60.0, -20.0, 0.0, 20.0, 60.0, 135.0, 180.0)
# A fan dense ahead and sparse behind, for policies that drive by their rays.
FRONT_HEAVY_RAY_ANGLES = (-135.0, -90.0, -60.0, -35.0, -20.0, -10.0, 0.0, 10.0, 20.0, 35.0, 60.0, 90.0,
                          135.0, 180.0)
CHANNEL_BITS = {"road_edge": 1, "kerb": 2, "illegal_surface": 4, "car": 8}
CHANNEL_ORDER = ("road_edge", "kerb", "illegal_surface", "car")
WHEEL_NAMES = ("frontLeft", "frontRight", "rearLeft", "rearRight")


@dataclass(frozen=True)
class DriverSenses:
    """Resolved senses of one controlled driver (what its vector contains)."""
    physical: bool
    lookahead: tuple
    ray_ids: tuple
    ray_angles_deg: tuple
    ray_lengths: tuple
    channels: tuple
    precision: str
    radar_k: int
    radar_radius: float
    rich_radar: bool

    @property
    def channel_mask(self) -> int:
        return sum(CHANNEL_BITS[c] for c in self.channels)


def resolve_senses(config: EnvConfig, driver_id: str) -> DriverSenses:
    """The senses of ``driver_id``: its ``sensors_by_driver`` entry or the global sensors, plus profile."""
    sensors: SensorsConfig = config.sensors_by_driver.get(driver_id, config.sensors)
    physical = config.observation.profile == "physical-driver"
    look = config.observation.lookahead_meters
    if look is None:
        lookahead = () if physical else DEFAULT_LOOKAHEAD
    elif len(look) == 0 or any(not (0.0 < d <= 2000.0) for d in look):
        lookahead = DEFAULT_LOOKAHEAD  # PaddockJS: an invalid list falls back to the default samples
    else:
        lookahead = tuple(float(d) for d in look)
    rays: RaysConfig = sensors.rays
    if not rays.enabled:
        ids, angles, lengths, channels = (), (), (), ()
    else:
        if rays.rays:
            ids = tuple(r.id for r in rays.rays)
            angles = tuple(r.angle_degrees for r in rays.rays)
            lengths = tuple(r.length_meters for r in rays.rays)
        else:
            angles = FRONT_HEAVY_RAY_ANGLES if rays.layout == "driver-front-heavy" else DEFAULT_RAY_ANGLES
            ids = tuple(f"ray-{i}" for i in range(len(angles)))
            lengths = (rays.length_meters,) * len(angles)
        channels = rays.channels
        if physical and channels == RaysConfig().channels:
            channels = CHANNEL_ORDER  # the physical-driver profile's surface-aware rays
        channels = tuple(c for c in CHANNEL_ORDER if c in channels)
    near = sensors.nearby_cars
    return DriverSenses(physical=physical, lookahead=lookahead, ray_ids=ids, ray_angles_deg=angles,
                        ray_lengths=lengths, channels=channels, precision=rays.precision,
                        radar_k=near.max_cars if near.enabled else 0, radar_radius=near.radius_meters,
                        rich_radar=physical)


def vector_schema(s: DriverSenses) -> list[dict]:
    """``[{name, unit, scale}]`` for every vector entry, in the order ``fill_vectors`` writes them."""
    e = []

    def add(name, unit, scale):
        e.append({"name": name, "unit": unit, "scale": scale})

    add("self.speedKph", "kph", "/400")
    add("self.speedMetersPerSecond", "m/s", "/120")
    add("self.steeringAngleRadians", "rad", "/pi")
    add("self.throttle", "normalized", "1")
    add("self.brake", "normalized", "1")
    add("self.lapProgressRatio", "ratio", "clamp 0..1")
    add("self.trackOffsetMeters", "m", "fixed:meters")
    add("self.trackHeadingErrorRadians", "rad", "/pi")
    add("self.onTrack", "boolean", "1")
    add("self.inPitLane", "boolean", "1")
    add("self.tireEnergy", "percent", "/100")
    add("self.pitIntent", "0:none|1:if-free|2:committed", "/2")
    add("self.pitStopActive", "boolean", "1")
    add("race.positionNormalized", "ratio", "(rank-1)/(N-1)")
    add("race.raceModeGreen", "boolean", "1")
    add("race.raceModeSafetyCar", "boolean", "1")
    add("race.redFlag", "boolean", "1")
    add("race.pitLaneOpen", "boolean", "1")
    add("track.curvature", "1/m", "fixed:1/m")
    if s.physical:
        add("self.yawRateRadiansPerSecond", "rad/s", "/pi")
        add("self.leftBoundaryMeters", "m", f"/{BOUNDARY_SCALE:g}")
        add("self.rightBoundaryMeters", "m", f"/{BOUNDARY_SCALE:g}")
        for wheel in WHEEL_NAMES:
            add(f"self.contactPatches.{wheel}.surfaceCode", "code", f"/{L.N_SURFACES - 1}")
            add(f"self.contactPatches.{wheel}.signedOffsetMeters", "m", "fixed:meters")
            add(f"self.contactPatches.{wheel}.crossTrackErrorMeters", "m", "fixed:meters")
    for i, _ in enumerate(s.lookahead):
        add(f"track.lookahead[{i}].curvature", "1/m", "fixed:1/m")
        add(f"track.lookahead[{i}].headingDeltaRadians", "rad", "/pi")
    for i, _ in enumerate(s.ray_ids):
        if "road_edge" in s.channels:
            add(f"rays[{i}].track.distanceRatio", "ratio", "distance/length")
            add(f"rays[{i}].track.hit", "boolean", "1")
            add(f"rays[{i}].track.kindExit", "boolean", "1")
            add(f"rays[{i}].track.kindEntry", "boolean", "1")
        if "kerb" in s.channels:
            add(f"rays[{i}].kerb.distanceRatio", "ratio", "distance/length")
            add(f"rays[{i}].kerb.hit", "boolean", "1")
        if "illegal_surface" in s.channels:
            add(f"rays[{i}].illegalSurface.distanceRatio", "ratio", "distance/length")
            add(f"rays[{i}].illegalSurface.hit", "boolean", "1")
        if "car" in s.channels:
            add(f"rays[{i}].car.distanceRatio", "ratio", "distance/length")
            add(f"rays[{i}].car.hit", "boolean", "1")
            add(f"rays[{i}].car.relativeSpeedKph", "kph", "/200")
    for i in range(s.radar_k):
        add(f"nearbyCars[{i}].present", "boolean", "1")
        add(f"nearbyCars[{i}].relativeForwardRatio", "ratio", "forward/radius clamp -1..1")
        add(f"nearbyCars[{i}].relativeRightRatio", "ratio", "right/radius clamp -1..1")
        add(f"nearbyCars[{i}].relativeDistanceRatio", "ratio", "distance/radius, empty 1")
        add(f"nearbyCars[{i}].relativeSpeedKph", "kph", "/200")
        add(f"nearbyCars[{i}].relativeHeadingRadians", "rad", "/pi")
        add(f"nearbyCars[{i}].ahead", "boolean", "1")
        add(f"nearbyCars[{i}].sameLap", "boolean", "1")
        if s.rich_radar:
            add(f"nearbyCars[{i}].relativeVelocityForwardMetersPerSecond", "m/s", f"/{RADAR_VELOCITY_SCALE:g}")
            add(f"nearbyCars[{i}].relativeVelocityRightMetersPerSecond", "m/s", f"/{RADAR_VELOCITY_SCALE:g}")
            add(f"nearbyCars[{i}].closingSpeedMetersPerSecond", "m/s", f"/{RADAR_VELOCITY_SCALE:g}")
    return e


def observation_spec(config: EnvConfig, senses: dict) -> dict:
    """The observation spec (version 2): the global schema plus ``per_driver`` schemas when they differ."""
    first = senses[config.controlled_drivers[0]]
    schema = vector_schema(first)
    spec = {
        "version": OBSERVATION_SPEC_VERSION,
        "controlled_drivers": list(config.controlled_drivers),
        "profile": config.observation.profile,
        "output": config.observation.output,
        "vector": {"size": len(schema), "dtype": "float32", "schema": schema},
        "object": _object_spec(first),
        "per_driver": {},
    }
    for driver, s in senses.items():
        if s != first:
            sch = vector_schema(s)
            spec["per_driver"][driver] = {"vector": {"size": len(sch), "dtype": "float32", "schema": sch},
                                          "object": _object_spec(s)}
    return spec


def _object_spec(s: DriverSenses) -> dict:
    return {
        "rays": {"enabled": bool(s.ray_ids), "channels": list(s.channels), "precision": s.precision,
                 "rays": [{"id": i, "angle_degrees": a, "length_meters": n}
                          for i, a, n in zip(s.ray_ids, s.ray_angles_deg, s.ray_lengths)],
                 "no_hit_value": "length_meters"},
        "nearby_cars": {"enabled": s.radar_k > 0, "max_cars": s.radar_k, "radius_meters": s.radar_radius,
                        "rich": s.rich_radar},
        "track": {"lookahead_meters": list(s.lookahead)},
        "physical_driver": s.physical,
    }


def decode_vector(vector: np.ndarray, schema: list[dict]) -> dict:
    """``{name: value}`` of a vector by its schema names (for tests and debugging)."""
    return {entry["name"]: float(vector[i]) for i, entry in enumerate(schema)}


def angle_deg(rad: float) -> float:
    return math.degrees(rad)
