"""Observation schemas: one table per driver's senses drives the vector layout, the object view and the spec.

The vector itself is filled by ``paddock_ma.sim.sensing.vectors.fill_vectors`` in the block order documented
there; ``vector_schema`` names every entry in that same order (``{name, unit, scale}``), and
``views.observation_object.object_view`` builds the real-unit object of one driver from the same arrays.
Schema names follow PaddockJS's dotted camelCase names (``self.speedKph``, ``rays[3].track.distanceRatio``) because they
are data shared with clients in other languages.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..sim.sensing.march import CHANNEL_BITS, RAY_CHANNELS
from ..sim.sensing.sensors import (
    DEFAULT_ANGLES_DEG, FRONT_HEAVY_ANGLES_DEG, FRONT_HEAVY_LENGTHS, LIDAR_LITE_ANGLES_DEG,
    LIDAR_LITE_LENGTHS,
)
from ..sim.sensing.vectors import (
    BASE_FIELDS, LOOK_FIELDS, N_PATCHES, PATCH_FIELDS, PHYSICAL_FIELDS, RADAR_FIELDS, RADAR_PHYSICAL_FIELDS,
    RAY_VECTOR_GROUPS,
)
from .config.root import EnvConfig
from .config.sensing import DEFAULT_LOOKAHEAD_METERS, RaysConfig, SensorsConfig

OBSERVATION_SPEC_VERSION = 2                       # PaddockJS 2.0.0's spec versions
PHYSICAL_OBSERVATION_SPEC_VERSION = 4
DEFAULT_CHANNELS = ("road_edge", "car")            # every profile's channels when none are given
# PaddockJS's ray layout presets: name -> (angles in degrees, lengths in m or None = the configured
# length_meters); "default" is an alias of "compact"
RAY_LAYOUTS = {
    "compact": (DEFAULT_ANGLES_DEG, None),
    "default": (DEFAULT_ANGLES_DEG, None),
    "driver-front-heavy": (FRONT_HEAVY_ANGLES_DEG, FRONT_HEAVY_LENGTHS),
    "lidar-lite": (LIDAR_LITE_ANGLES_DEG, LIDAR_LITE_LENGTHS),
}
WHEEL_NAMES = ("front_left", "front_right", "rear_left", "rear_right")          # object keys (Python names)
# the names of the block every vector starts with, whatever the profile: entry i of a vector is named here
BASE_FIELD_NAMES = tuple(name for name, _, _ in BASE_FIELDS)


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

    @property
    def channel_mask(self) -> int:
        return sum(CHANNEL_BITS[c] for c in self.channels)


def resolve_senses(config: EnvConfig, driver_id: str | None) -> DriverSenses:
    """The senses of ``driver_id``: its ``sensors_by_driver`` entry or the global sensors (also for
    ``None``), plus profile."""
    sensors: SensorsConfig = config.sensors_by_driver.get(driver_id, config.sensors)
    physical = config.observation.profile == "physical-driver"
    look = config.observation.lookahead_meters       # None or valid (config._lookahead's fallback)
    lookahead = (() if physical else DEFAULT_LOOKAHEAD_METERS) if look is None else look
    rays: RaysConfig = sensors.rays
    if not rays.enabled:
        ids, angles, lengths, channels = (), (), (), ()
    else:
        ids, angles, lengths, channels = ray_layout(rays)
    near = sensors.nearby_cars
    return DriverSenses(physical=physical, lookahead=lookahead, ray_ids=ids, ray_angles_deg=angles,
                        ray_lengths=lengths, channels=channels, precision=rays.precision,
                        radar_k=near.max_cars if near.enabled else 0, radar_radius=near.radius_meters)


def ray_layout(rays: RaysConfig) -> tuple:
    """(ids, angles in degrees, lengths in m, channels in PaddockJS's order) of a rays config, whether
    or not it is enabled."""
    if rays.rays:
        ids = tuple(r.id for r in rays.rays)
        angles = tuple(r.angle_degrees for r in rays.rays)
        lengths = tuple(r.length_meters for r in rays.rays)
    else:
        angles, preset_lengths = RAY_LAYOUTS[rays.layout]
        ids = tuple(f"ray-{i}" for i in range(len(angles)))
        lengths = preset_lengths or (rays.length_meters,) * len(angles)
    channels = DEFAULT_CHANNELS if rays.channels is None else rays.channels
    return ids, angles, lengths, tuple(c for c in RAY_CHANNELS if c in channels)   # PaddockJS's order


def vector_schema(s: DriverSenses) -> list[dict]:
    """``[{name, unit?, scale}]`` for every vector entry (PaddockJS's schema entries: no unit key where it
    has none), generated from ``sim.sensing.vectors``' table in the order ``fill_vectors`` writes them."""
    e = []

    def add(fields, prefix=""):
        e.extend({"name": prefix + name, **({"unit": unit} if unit else {}), "scale": scale}
                 for name, unit, scale in fields)

    add(BASE_FIELDS)
    if s.physical:
        add(PHYSICAL_FIELDS)
        for p in range(N_PATCHES):
            add(PATCH_FIELDS, f"contactPatches[{p}].")
    for i, _ in enumerate(s.lookahead):
        add(LOOK_FIELDS, f"track.lookahead[{i}].")
    for i, _ in enumerate(s.ray_ids):
        for _, group, physical_only, fields in RAY_VECTOR_GROUPS:
            if s.physical or not physical_only:
                add(fields, f"rays[{i}].{group}.")
    for i in range(s.radar_k):
        add(RADAR_FIELDS, f"nearbyCars[{i}].")
        if s.physical:
            add(RADAR_PHYSICAL_FIELDS, f"nearbyCars[{i}].")
    return e


def vector_sizes(config: EnvConfig) -> dict:
    """``{driver: D}``: the length of each controlled driver's observation vector (of its ``vector_schema``),
    known from the config alone (what ``BatchEnv.obs_sizes`` will be)."""
    return {d: len(vector_schema(resolve_senses(config, d))) for d in config.controlled_drivers}


def spec_version(config: EnvConfig) -> int:
    """The observation spec's version: 4 for the physical-driver profile, else 2 (as PaddockJS 2.0.0)."""
    return PHYSICAL_OBSERVATION_SPEC_VERSION if config.observation.profile == "physical-driver" \
        else OBSERVATION_SPEC_VERSION


def observation_spec(config: EnvConfig, senses: dict) -> dict:
    """The observation spec: PaddockJS's keys (version, controlled drivers, object, ``vector.schema``)
    plus ours (profile, output, vector size and dtype, ``per_driver`` schemas where a driver's own
    sensors differ from the global ones)."""
    first = resolve_senses(config, None)  # the global sensors (no sensors_by_driver entry)
    schema = vector_schema(first)
    spec = {
        "version": spec_version(config),
        "controlled_drivers": list(config.controlled_drivers),
        "profile": config.observation.profile,
        "output": config.observation.output,
        "vector": {"size": len(schema), "dtype": "float32", "schema": schema},
        "object": _object_spec(config, config.sensors, first),
        "per_driver": {},
    }
    for driver, s in senses.items():
        if s != first:
            sch = vector_schema(s)
            spec["per_driver"][driver] = {"vector": {"size": len(sch), "dtype": "float32", "schema": sch},
                                          "object": _object_spec(config, config.sensors_by_driver.get(driver,
                                                                                                    config.sensors), s)}
    return spec


# The observation object's fields as PaddockJS 2.0.0's spec lists them ({name, unit}; names are
# PaddockJS's, as in the vector schema). paddock_ma's object carries a few more (velocity, tyre,
# instability, ...); these are the ones PaddockJS's has.
OBJECT_SELF_FIELDS = (
    ("id", "id"), ("speedKph", "kph"), ("speedMetersPerSecond", "m/s"), ("headingRadians", "rad"),
    ("yawRateRadiansPerSecond", "rad/s"), ("steeringAngleRadians", "rad"), ("throttle", "normalized"),
    ("brake", "normalized"), ("lateralG", "g"), ("longitudinalG", "g"), ("gripUsage", "ratio"),
    ("slipAngleRadians", "rad"), ("tractionLimited", "boolean"), ("stabilityState", "label"), ("lap", "count"),
    ("completedLaps", "count"), ("lapProgressMeters", "m"), ("trackOffsetMeters", "m"),
    ("trackHeadingErrorRadians", "rad"), ("onTrack", "boolean"), ("surface", "label"), ("inPitLane", "boolean"),
    ("pitLanePart", "nullable:label"), ("pitBoxId", "nullable:id"), ("tireEnergy", "nullable:number"),
    ("pitIntent", "0:none|1:if-free|2:committed"), ("pitTargetCompound", "nullable:compound"),
    ("pitStopStatus", "nullable:label"), ("pitStopPhase", "nullable:label"),
    ("pitStopServiceRemainingSeconds", "nullable:seconds"), ("pitStopPenaltyServiceRemainingSeconds", "nullable:seconds"),
    ("pitStopsCompleted", "count"),
)
OBJECT_TRACK_RELATION_FIELDS = (
    ("lateralOffsetMeters", "m"), ("headingErrorRadians", "rad"), ("legalWidthMeters", "m"),
    ("leftBoundaryMeters", "m"), ("rightBoundaryMeters", "m"), ("onLegalSurface", "boolean"), ("surface", "label"),
)
OBJECT_PATCH_FIELDS = (
    ("present", "boolean"), ("signedOffsetMeters", "m"), ("crossTrackErrorMeters", "m"), ("surface", "label"),
    ("surfaceCode", "number"), ("onLegalSurface", "boolean"), ("inPitLane", "boolean"),
)
OBJECT_RACE_FIELDS = (("position", "rank"), ("totalCars", "count"), ("raceMode", "label"), ("pitLaneOpen", "boolean"),
                      ("redFlag", "boolean"), ("totalLaps", "count"))


def _fields(pairs) -> list:
    return [{"name": name, "unit": unit} for name, unit in pairs]


def _object_spec(config: EnvConfig, sensors: SensorsConfig, s: DriverSenses) -> dict:
    """The spec's ``object`` section in PaddockJS 2.0.0's shape (its specs.js): the object's fields by
    group, the ray layout (whether enabled or not: ids, angles, lengths, the longest as ``length_meters``,
    channels, precision) with each channel's fields, the radar and the lookahead distances."""
    rays = sensors.rays
    ids, angles, lengths, channels = ray_layout(rays)
    longest = max(lengths) if lengths else rays.length_meters

    def distance():
        return {"unit": "m", "no_hit_value": longest}
    edge = {"distance_meters": distance(), "hit": {"unit": "boolean"}, "kind": {"values": ["exit", "entry", None]}}
    surface = {"distance_meters": distance(), "hit": {"unit": "boolean"},
               "surface": {"values": ["kerb", "grass", "gravel", None]}}
    near = sensors.nearby_cars
    return {
        "profile": config.observation.profile,
        "self": _fields(OBJECT_SELF_FIELDS),
        "track_relation": _fields(OBJECT_TRACK_RELATION_FIELDS),
        "contact_patches": {"ids": [n.replace("_", "-") for n in WHEEL_NAMES], "fields": _fields(OBJECT_PATCH_FIELDS)},
        "race": _fields(OBJECT_RACE_FIELDS),
        "rays": {"enabled": rays.enabled, "angles_degrees": list(angles), "length_meters": longest,
                 "default_length_meters": rays.length_meters,
                 "rays": [{"id": i, "angle_degrees": a, "length_meters": n} for i, a, n in zip(ids, angles, lengths)],
                 "channels": list(channels), "precision": rays.precision,
                 "track": dict(edge), "road_edge": dict(edge), "kerb": dict(surface), "illegal_surface": dict(surface),
                 "car": {"distance_meters": distance(), "hit": {"unit": "boolean"}, "driver_id": {"nullable": True},
                         "target_id": {"nullable": True}, "target_type": {"values": ["car", "replayGhost", None]},
                         "relative_speed_kph": {"unit": "kph"}}},
        "nearby_cars": {"enabled": near.enabled, "max_cars": near.max_cars, "radius_meters": near.radius_meters},
        "track": {"length_meters": {"unit": "m"}, "width_meters": {"unit": "m"}, "curvature": {"unit": "1/sim-unit"},
                  "lookahead_meters": list(s.lookahead),
                  "lookahead": {"distance_meters": {"unit": "m"}, "curvature": {"unit": "1/sim-unit"},
                                "heading_delta_radians": {"unit": "rad"}}},
        "events": {"type": "array"},
    }
