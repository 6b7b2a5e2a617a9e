"""Observation schemas: one table per driver's senses drives the vector layout, the object view and the spec.

The vector itself is filled by ``paddock_ma.sim.sensing.vectors.fill_vectors`` in the block order documented
there; ``vector_schema`` names every entry in that same order (``{name, unit, scale}``), and
``object_view`` builds the real-unit object of one driver from the same arrays. Schema names follow
PaddockJS's dotted camelCase names (``self.speedKph``, ``rays[3].track.distanceRatio``) because they
are data shared with clients in other languages.
"""

from __future__ import annotations

from dataclasses import dataclass


from ..sim.core import layout as L
from ..sim.sensing.vectors import (
    BASE_FIELDS, LOOK_FIELDS, N_PATCHES, PATCH_FIELDS, PHYSICAL_FIELDS, RADAR_FIELDS, RADAR_PHYSICAL_FIELDS,
    RAY_VECTOR_GROUPS, SURFACE_CODE, SURFACE_LEGAL, reported_offset,
    time_to_contact,
)
from ..sim.sensing.sensors import (
    DEFAULT_ANGLES_DEG, FRONT_HEAVY_ANGLES_DEG, FRONT_HEAVY_LENGTHS, LIDAR_LITE_ANGLES_DEG,
    LIDAR_LITE_LENGTHS,
)
from .config.root import DEFAULT_LOOKAHEAD_METERS, EnvConfig, RaysConfig, SensorsConfig
from ..sim.sensing.march import CHANNEL_BITS, RAY_CHANNELS

OBSERVATION_SPEC_VERSION = 2                       # PaddockJS 2.0.0's spec versions
PHYSICAL_OBSERVATION_SPEC_VERSION = 4
DEFAULT_LOOKAHEAD = DEFAULT_LOOKAHEAD_METERS
DEFAULT_CHANNELS = ("road_edge", "car")            # every profile's channels when none are given
# PaddockJS's ray layout presets: name -> (angles in degrees, lengths in m or None = the configured
# length_meters); "default" is an alias of "compact"
RAY_LAYOUTS = {
    "compact": (DEFAULT_ANGLES_DEG, None),
    "default": (DEFAULT_ANGLES_DEG, None),
    "driver-front-heavy": (FRONT_HEAVY_ANGLES_DEG, FRONT_HEAVY_LENGTHS),
    "lidar-lite": (LIDAR_LITE_ANGLES_DEG, LIDAR_LITE_LENGTHS),
}
CHANNEL_ORDER = RAY_CHANNELS                      # road_edge, kerb, illegal_surface, car (as PaddockJS lists them)
WHEEL_NAMES = ("front_left", "front_right", "rear_left", "rear_right")          # object keys (Python names)


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
    lookahead = (() if physical else DEFAULT_LOOKAHEAD) if look is None else look
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
    return ids, angles, lengths, tuple(c for c in CHANNEL_ORDER if c in channels)


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


def object_view(env, w: int, k: int) -> dict:
    """The real-unit observation object of controlled driver ``k`` in world ``w`` of a BatchEnv.

    Built from the same arrays as the vector (state, sensor outputs), so decoding the vector by schema
    names gives the same values scaled.
    """
    slot = int(env.slots[k])
    s: DriverSenses = env.senses[env.controlled[k]]
    return {"profile": env.config.observation.profile, "self": _self_object(env, w, k, slot, s),
            "track_relation": _track_relation(env, w, slot), "contact_patches": _contact_patches(env, w, slot),
            "race": _race_object(env, w, slot), "track": _track_object(env, w, slot, s),
            "rays": _ray_objects(env, w, slot, s), "nearby_cars": _nearby_objects(env, w, slot, s)}


# PaddockJS's pit-stop phase of each of our pit statuses (None: not in a stop)
PIT_PHASE = {"entering": "entry", "queued": "queue", "servicing": "service", "exiting": "exit"}


def _track_relation(env, w: int, slot: int) -> dict:
    """``track_relation`` (PaddockJS's boundary senses, every profile): the reported offset (the
    contact-patch edge farthest from the centreline, m, + right), the heading error, the legal width and
    the distances to the left and right white lines."""
    st = env.state
    f, i = st.cars_f[w, slot], st.cars_i[w, slot]
    offset = float(reported_offset(st.cars_f, st.cars_i, w, slot))
    half = float(env.track.half_width)
    return {"lateral_offset_meters": offset, "heading_error_radians": float(f[L.F_HEADING_ERROR]),
            "legal_width_meters": 2 * half, "left_boundary_meters": half + offset,
            "right_boundary_meters": half - offset, "on_legal_surface": bool(i[L.I_ON_TRACK]),
            "surface": L.SURFACE_NAMES[int(i[L.I_SURFACE])]}


def _contact_patches(env, w: int, slot: int) -> list:
    """``contact_patches`` (every profile): the four tyres' contact patches, PaddockJS's order and keys;
    ``signed_offset_meters`` is the patch edge farthest from the centreline, as the vector's."""
    f, i = env.state.cars_f[w, slot], env.state.cars_i[w, slot]
    out = []
    for n, name in enumerate(WHEEL_NAMES):
        surface = int(i[L.I_WHEEL_SURFACE_FL + n])
        edge = float(f[L.F_WHEEL_EDGE_FL + n])
        name_ = L.SURFACE_NAMES[surface]
        out.append({"id": name.replace("_", "-"), "present": True, "signed_offset_meters": edge,
                    "cross_track_error_meters": abs(edge), "surface": name_, "surface_code": SURFACE_CODE[surface],
                    "on_legal_surface": bool(SURFACE_LEGAL[surface]), "in_pit_lane": name_.startswith("pit-")})
    return out


def _self_object(env, w: int, k: int, slot: int, s: DriverSenses) -> dict:
    """``self`` of the object: the car's own state in real units (PaddockJS's body senses and pit
    fields, with paddock_ma's extras: velocity, tyre, instability)."""
    st = env.state
    f = st.cars_f[w, slot]
    i = st.cars_i[w, slot]
    simulator = st.rules[w, L.R_PHYSICS_MODE] == L.PHYSICS_SIMULATOR
    status = int(i[L.I_PIT_STATUS])
    usage = float(f[L.F_GRIP_USAGE])
    offset = float(reported_offset(st.cars_f, st.cars_i, w, slot))
    surface_name = L.SURFACE_NAMES[int(i[L.I_SURFACE])]
    in_pit = bool(i[L.I_IN_PIT_LANE])
    self_obj = {
        "id": env.controlled[k],
        "speed_kph": float(f[L.F_SPEED] * 3.6),
        "speed_meters_per_second": float(f[L.F_SPEED]),
        "velocity_x": float(f[L.F_VX]) if simulator else None,
        "velocity_y": float(f[L.F_VY]) if simulator else None,
        "heading_radians": float(f[L.F_HEADING]),
        "steering_angle_radians": float(f[L.F_STEER_ANGLE]),
        "yaw_rate_radians_per_second": float(f[L.F_YAW_RATE]),
        "throttle": float(f[L.F_APPLIED_THROTTLE]),
        "brake": float(f[L.F_APPLIED_BRAKE]),
        "applied_controls": {"steering": float(f[L.F_APPLIED_STEER]),
                             "steering_radians": float(f[L.F_APPLIED_STEER] * L.MAX_STEER_ANGLE),
                             "throttle": float(f[L.F_APPLIED_THROTTLE]), "brake": float(f[L.F_APPLIED_BRAKE])},
        "lateral_g": float(f[L.F_LAT_ACC] / L.GRAVITY),
        "longitudinal_g": float(f[L.F_LONG_ACC] / L.GRAVITY),
        "grip_usage": usage,
        "slip_angle_radians": float(f[L.F_SLIP_FRONT]),      # the vector's: PaddockJS's telemetry slip
        "traction_limited": bool(i[L.I_TRACTION_LIMITED]),
        "lap": int(i[L.I_LAP]),
        "completed_laps": int(i[L.I_COMPLETED_LAPS]),
        "lap_progress_meters": float(f[L.F_PROGRESS]),
        "race_distance_meters": float(f[L.F_RACE_DISTANCE]),
        # PaddockJS's measure: the contact-patch edge farthest from the centreline (sim.sensing.vectors)
        "track_offset_meters": offset,
        "track_heading_error_radians": float(f[L.F_HEADING_ERROR]),
        "on_track": bool(i[L.I_ON_TRACK]),
        "surface": L.SURFACE_NAMES[int(i[L.I_SURFACE])],
        "in_pit_lane": bool(i[L.I_IN_PIT_LANE]),
        # the part of the pit lane the car is on (its surface there), None off it
        "pit_lane_part": surface_name if in_pit else None,
        "pit_box_id": int(i[L.I_PIT_BOX]) if surface_name == "pit-box" else None,
        "tire_energy": float(f[L.F_TIRE_ENERGY]),
        "tire": L.COMPOUND_NAMES[int(i[L.I_COMPOUND])],
        "pit_intent": int(i[L.I_PIT_INTENT]),
        "pit_target_compound": L.COMPOUND_NAMES[int(i[L.I_PIT_TARGET])],
        "pit_stop_status": L.PIT_STATUS_NAMES[status],
        "pit_stop_phase": PIT_PHASE.get(L.PIT_STATUS_NAMES[status]),
        "pit_stop_service_remaining_seconds": float(f[L.F_PIT_SERVICE_LEFT]),
        "pit_stop_penalty_service_remaining_seconds": 0.0,     # penalties are not simulated
        "pit_stops_completed": int(i[L.I_PIT_STOPS]),
        "destroyed": bool(i[L.I_DESTROYED]),
        "destroy_reason": "barrier" if i[L.I_DESTROYED] else None,
        "instability": L.INSTABILITY_NAMES[int(i[L.I_INSTABILITY])],
        "stability_state": "destroyed" if i[L.I_DESTROYED] else (L.INSTABILITY_NAMES[int(i[L.I_INSTABILITY])] or "stable"),
    }
    return self_obj


def _race_object(env, w: int, slot: int) -> dict:
    """``race``: position among every car in the race (PaddockJS's totalCars), mode, flags, laps."""
    st = env.state
    i = st.cars_i[w, slot]
    total = int((st.cars_i[w, :, L.I_ACTIVE] != 0).sum())
    rank = int(i[L.I_RANK])
    return {"position": rank or None, "total_cars": total,
            "position_normalized": min(max((rank - 1) / (total - 1), 0.0), 1.0) if total > 1 and rank > 0 else 0.0,
            "race_mode": L.RACE_MODE_NAMES[int(st.world_i[w, L.WI_RACE_MODE])],
            "red_flag": bool(st.world_i[w, L.WI_RED_FLAG]),
            "pit_lane_open": bool(st.world_i[w, L.WI_PIT_LANE_OPEN]) and bool(st.rules[w, L.R_PIT_STOPS] > 0.5),
            "total_laps": int(st.rules[w, L.R_TOTAL_LAPS])}


def _track_object(env, w: int, slot: int, s: DriverSenses) -> dict:
    """``track``: length, width, curvature at the car (signed 1/m) and the lookahead samples."""
    f = env.state.cars_f[w, slot]
    return {"length_meters": float(env.track.length), "width_meters": float(2 * env.track.half_width),
             "curvature": float(f[L.F_CURVATURE]),
             "lookahead": [{"distance_meters": d, "curvature": float(env.sensors.look[w, slot, q, 0]),
                            "heading_delta_radians": float(env.sensors.look[w, slot, q, 1])}
                           for q, d in enumerate(s.lookahead)]}


def _ray_objects(env, w: int, slot: int, s: DriverSenses) -> list:
    """``rays``: per ray its id, angle, length and each requested channel's hit (m, real units)."""
    rays = []
    for r, (rid, ang, length) in enumerate(zip(s.ray_ids, s.ray_angles_deg, s.ray_lengths)):
        ray = {"id": rid, "angle_degrees": ang, "length_meters": length}
        dist, hit = env.sensors.ray_dist[w, slot, r], env.sensors.ray_hit[w, slot, r]
        if "road_edge" in s.channels:
            kind = int(env.sensors.ray_kind[w, slot, r])
            ray["track"] = {"hit": bool(hit[0]), "distance_meters": float(dist[0]),
                            "kind": (None, "exit", "entry")[kind]}
        if "kerb" in s.channels:
            ray["kerb"] = {"hit": bool(hit[1]), "distance_meters": float(dist[1])}
        if "illegal_surface" in s.channels:
            ray["illegal_surface"] = {"hit": bool(hit[2]), "distance_meters": float(dist[2])}
        if "car" in s.channels:
            other = int(env.sensors.ray_car[w, slot, r])
            ray["car"] = {"hit": bool(hit[3]), "distance_meters": float(dist[3]),
                          "driver_id": env.driver_ids[other] if other >= 0 else None,
                          "relative_speed_kph": float(env.sensors.ray_rel_speed[w, slot, r] * 3.6)}
        rays.append(ray)
    return rays


def _nearby_objects(env, w: int, slot: int, s: DriverSenses) -> list:
    """``nearby_cars``: the radar's occupied slots, nearest first (physical-driver adds behind, closing
    rate, time to contact and overlaps)."""
    nearby = []
    for n in range(s.radar_k):
        other = int(env.sensors.radar_slot[w, slot, n])
        if other < 0:
            continue
        fld = env.sensors.radar[w, slot, n]
        car = {"id": env.driver_ids[other], "relative_forward_meters": float(fld[0]),
               "relative_right_meters": float(fld[1]), "relative_distance_meters": float(fld[2]),
               "relative_speed_kph": float(fld[3] * 3.6), "relative_heading_radians": float(fld[4]),
               "ahead": bool(fld[5]), "same_lap": bool(fld[6])}
        if s.physical:
            ttc = float(time_to_contact(float(fld[2]), float(fld[9])))
            overlap = abs(fld[0]) <= L.CAR_LENGTH and abs(fld[1]) <= L.CAR_WIDTH
            car.update({"behind": not bool(fld[5]), "closing_rate_meters_per_second": float(fld[9]),
                        "time_to_contact_seconds": ttc if ttc >= 0.0 else None,
                        "left_overlap": bool(overlap and fld[1] < 0), "right_overlap": bool(overlap and fld[1] > 0)})
        nearby.append(car)
    return nearby
