"""PaddockJS's camelCase wire names <-> the Python API's snake_case names: one table, both ways.

``PYTHON_TO_WIRE`` lists every key the worker protocol sends or reads (reply fields, observation
objects, specs, state, events, metrics, episode records, request fields and config keys); most are the
mechanical camelCase of the Python name, a few are PaddockJS's own spelling (``completedLap``,
``under30kph``). ``to_wire`` renames the keys of a Python result and makes its values JSON-safe
(numpy arrays to lists, non-finite floats to ``null``); ``from_wire`` renames a request's keys back.
Keys that are data, not names (driver ids under ``observation``, ``metrics``, ``reward``,
``info.drivers``, ``per_driver``, ``actions``, ``placements``, ``sensors_by_driver``,
``participant_interactions.drivers``), are left as they are.
"""

from __future__ import annotations

import math

import numpy as np

from .codec import PackedF32

PYTHON_TO_WIRE = {
    "action": "action",
    "action_errors": "actionErrors",
    "action_policy": "actionPolicy",
    "actions": "actions",
    "ahead": "ahead",
    "angle_degrees": "angleDegrees",
    "applied_controls": "appliedControls",
    "at": "at",
    "best_lap_time": "bestLapTime",
    "box": "box",
    "brake": "brake",
    "car": "car",
    "cars": "cars",
    "channels": "channels",
    "checksum": "checksum",
    "closing_speed_meters_per_second": "closingSpeedMetersPerSecond",
    "code": "code",
    "collision_restitution": "collisionRestitution",
    "completed_laps": "completedLaps",
    "compounds": "compounds",
    "contact_count": "contactCount",
    "contact_patches": "contactPatches",
    "contacts_this_step": "contactsThisStep",
    "contract_version": "contractVersion",
    "controlled_drivers": "controlledDrivers",
    "count": "count",
    "cross_track_error_meters": "crossTrackErrorMeters",
    "curvature": "curvature",
    "default_profile": "defaultProfile",
    "default_stop_seconds": "defaultStopSeconds",
    "delta_distance_meters": "deltaDistanceMeters",
    "description": "description",
    "destroyed": "destroyed",
    "detectable_as_nearby": "detectableAsNearby",
    "detectable_by_rays": "detectableByRays",
    "distance_meters": "distanceMeters",
    "done": "done",
    "driver_id": "driverId",
    "driver_ids": "driverIds",
    "drivers": "drivers",
    "dtype": "dtype",
    "elapsed_seconds": "elapsedSeconds",
    "enabled": "enabled",
    "encoding": "encoding",
    "encodings": "encodings",
    "end_on_race_finish": "endOnRaceFinish",
    "end_reason": "endReason",
    "env_id": "envId",
    "env_version": "envVersion",
    "environment_version": "environmentVersion",
    "envs": "envs",
    "episode": "episode",
    "episode_id": "episodeId",
    "episode_step": "episodeStep",
    "events": "events",
    "f32": "f32",
    "field": "field",
    "finish_time_seconds": "finishTimeSeconds",
    "finished": "finished",
    "frame_skip": "frameSkip",
    "front_left": "frontLeft",
    "front_right": "frontRight",
    "grid_locked": "gridLocked",
    "heading": "heading",
    "heading_delta_radians": "headingDeltaRadians",
    "heading_error_radians": "headingErrorRadians",
    "heading_radians": "headingRadians",
    "hit": "hit",
    "id": "id",
    "illegal_surface": "illegalSurface",
    "in_pit_lane": "inPitLane",
    "include_schema": "includeSchema",
    "info": "info",
    "instability": "instability",
    "interaction_flags": "interactionFlags",
    "issue_chance": "issueChance",
    "issue_max_delay_seconds": "issueMaxDelaySeconds",
    "kerb": "kerb",
    "kind": "kind",
    "lap": "lap",
    "lap_completed": "completedLap",
    "lap_progress_meters": "lapProgressMeters",
    "lap_time_seconds": "lapTimeSeconds",
    "last_lap_time": "lastLapTime",
    "lateral_acceleration": "lateralAcceleration",
    "layout": "layout",
    "left_boundary_meters": "leftBoundaryMeters",
    "legal_progress_delta_meters": "legalProgressDeltaMeters",
    "length_meters": "lengthMeters",
    "life": "life",
    "limits": "limits",
    "lookahead": "lookahead",
    "lookahead_meters": "lookaheadMeters",
    "max": "max",
    "max_cars": "maxCars",
    "max_concurrent_pit_lane_cars": "maxConcurrentPitLaneCars",
    "max_depth": "maxDepth",
    "max_drivers": "maxDrivers",
    "max_id_chars": "maxIdChars",
    "max_key_chars": "maxKeyChars",
    "max_line_bytes": "maxLineBytes",
    "max_steps": "maxSteps",
    "max_string_chars": "maxStringChars",
    "message": "message",
    "message_types": "messageTypes",
    "metrics": "metrics",
    "min": "min",
    "minimum_pit_lane_gap_meters": "minimumPitLaneGapMeters",
    "modules": "modules",
    "name": "name",
    "names": "names",
    "nearby_cars": "nearbyCars",
    "no_hit_value": "noHitValue",
    "non_controlled": "nonControlled",
    "object": "object",
    "objects": "objects",
    "observation": "observation",
    "observation_scope": "observationScope",
    "off_track": "offTrack",
    "offset_meters": "offsetMeters",
    "on_track": "onTrack",
    "optional": "optional",
    "options": "options",
    "other_driver_id": "otherDriverId",
    "output": "output",
    "package": "package",
    "package_version": "packageVersion",
    "participant_interactions": "participantInteractions",
    "participants": "participants",
    "per_driver": "perDriver",
    "perfect": "perfect",
    "physical_driver": "physicalDriver",
    "physics_mode": "physicsMode",
    "pit_compound": "pitCompound",
    "pit_entry_meters": "pitEntryMeters",
    "pit_exit_meters": "pitExitMeters",
    "pit_intent": "pitIntent",
    "pit_lane_open": "pitLaneOpen",
    "pit_lane_speed_limit_kph": "pitLaneSpeedLimitKph",
    "pit_stop": "pitStop",
    "pit_stop_service_remaining_seconds": "pitStopServiceRemainingSeconds",
    "pit_stop_status": "pitStopStatus",
    "pit_stops": "pitStops",
    "pit_stops_completed": "pitStopsCompleted",
    "pit_target_compound": "pitTargetCompound",
    "placements": "placements",
    "position": "position",
    "position_normalized": "positionNormalized",
    "precision": "precision",
    "preset": "preset",
    "previous_x": "previousX",
    "previous_y": "previousY",
    "primary_driver_id": "primaryDriverId",
    "profile": "profile",
    "progress_delta_meters": "progressDeltaMeters",
    "progress_meters": "progressMeters",
    "protocol": "protocol",
    "protocol_version": "protocolVersion",
    "race": "race",
    "race_distance_meters": "raceDistanceMeters",
    "race_finished": "raceFinished",
    "race_mode": "raceMode",
    "radius_meters": "radiusMeters",
    "rank": "rank",
    "ratings": "ratings",
    "rays": "rays",
    "rear_left": "rearLeft",
    "rear_right": "rearRight",
    "red_flag": "redFlag",
    "relative_distance_meters": "relativeDistanceMeters",
    "relative_forward_meters": "relativeForwardMeters",
    "relative_heading_radians": "relativeHeadingRadians",
    "relative_right_meters": "relativeRightMeters",
    "relative_speed_kph": "relativeSpeedKph",
    "relative_to": "relativeTo",
    "relative_velocity_forward_meters_per_second": "relativeVelocityForwardMetersPerSecond",
    "relative_velocity_right_meters_per_second": "relativeVelocityRightMetersPerSecond",
    "required": "required",
    "reset_drivers_observation_scope": "resetDriversObservationScope",
    "reset_mask": "resetMask",
    "result": "result",
    "result_options": "resultOptions",
    "results": "results",
    "retired": "retired",
    "reward": "reward",
    "rich": "rich",
    "right_boundary_meters": "rightBoundaryMeters",
    "rules": "rules",
    "same_lap": "sameLap",
    "scale": "scale",
    "scenario": "scenario",
    "schema": "schema",
    "seconds": "seconds",
    "seed": "seed",
    "self": "self",
    "sensors": "sensors",
    "sensors_by_driver": "sensorsByDriver",
    "service_remaining_seconds": "serviceRemainingSeconds",
    "severe_cut": "severeCut",
    "shape": "shape",
    "signed_offset_meters": "signedOffsetMeters",
    "size": "size",
    "snapshot": "snapshot",
    "speed_kph": "speedKph",
    "speed_meters_per_second": "speedMetersPerSecond",
    "spin_or_backwards": "spinOrBackwards",
    "stalled_dnf": "stalledDnf",
    "standing_start": "standingStart",
    "start_distance_meters": "startDistanceMeters",
    "start_light_count": "startLightCount",
    "start_light_interval": "startLightInterval",
    "start_lights_out_hold": "startLightsOutHold",
    "state": "state",
    "state_options": "stateOptions",
    "state_output": "stateOutput",
    "status": "status",
    "steering": "steering",
    "steering_angle": "steeringAngle",
    "steering_angle_radians": "steeringAngleRadians",
    "step": "step",
    "steps": "steps",
    "stops_completed": "stopsCompleted",
    "surface": "surface",
    "surface_code": "surfaceCode",
    "target_tire": "targetTire",
    "team": "team",
    "terminated": "terminated",
    "throttle": "throttle",
    "tick": "tick",
    "time": "time",
    "tire": "tire",
    "tire_degradation": "tireDegradation",
    "tire_energy": "tireEnergy",
    "tire_pit_commit_threshold_percent": "tirePitCommitThresholdPercent",
    "tire_pit_request_threshold_percent": "tirePitRequestThresholdPercent",
    "tire_strategy": "tireStrategy",
    "total_cars": "totalCars",
    "total_laps": "totalLaps",
    "track": "track",
    "track_heading_error_radians": "trackHeadingErrorRadians",
    "track_offset_meters": "trackOffsetMeters",
    "traffic": "traffic",
    "truncated": "truncated",
    "type": "type",
    "under_30_kph": "under30kph",
    "unit": "unit",
    "used_tire_compounds": "usedTireCompounds",
    "values": "values",
    "variability": "variability",
    "vector": "vector",
    "vectors": "vectors",
    "velocity_x": "velocityX",
    "velocity_y": "velocityY",
    "version": "version",
    "wheels": "wheels",
    "width_meters": "widthMeters",
    "world_step": "worldStep",
    "worlds": "worlds",
    "x": "x",
    "y": "y",
    "yaw_rate": "yawRate",
    "yaw_rate_radians_per_second": "yawRateRadiansPerSecond",
}
WIRE_TO_PYTHON = {wire: py for py, wire in PYTHON_TO_WIRE.items()}
assert len(WIRE_TO_PYTHON) == len(PYTHON_TO_WIRE), "two Python names share a wire name"

# Python keys whose dict value is keyed by data (driver ids): in replies, and in requests (where
# "observation" is the config's observation section, not a map of drivers).
REPLY_DATA_KEYED = frozenset({"observation", "metrics", "reward", "drivers", "per_driver"})
REQUEST_DATA_KEYED = frozenset({"actions", "placements", "sensors_by_driver", "drivers"})
# Config values that are names with a wire spelling (ray channels).
_VALUE_NAMES = {"roadEdge": "road_edge", "illegalSurface": "illegal_surface"}


def wire_name(name: str) -> str:
    """The wire spelling of a Python key (the table's, else its mechanical camelCase)."""
    found = PYTHON_TO_WIRE.get(name)
    if found is not None:
        return found
    head, *rest = name.split("_")
    return head + "".join(p[:1].upper() + p[1:] for p in rest)


def python_name(name: str) -> str:
    """The Python spelling of a wire key (the table's; a key it does not know is kept as sent, so
    the config's own check names it)."""
    return WIRE_TO_PYTHON.get(name, name)


def to_wire(value, parent: str | None = None):
    """``value`` with wire key names and JSON-safe values (see the module docstring)."""
    kind = type(value)
    if kind is dict:
        if parent in REPLY_DATA_KEYED:
            return {key: to_wire(item) for key, item in value.items()}
        return {wire_name(key): to_wire(item, key) for key, item in value.items()}
    if kind is list or kind is tuple:
        return [to_wire(item) for item in value]
    if kind is float:
        return value if math.isfinite(value) else None
    if kind is bool or kind is int or kind is str or value is None:
        return value
    if isinstance(value, np.ndarray):
        return array_to_wire(value)
    if isinstance(value, PackedF32):      # written by codec.encode
        return value
    if isinstance(value, np.generic):
        return to_wire(value.item())
    raise TypeError(f"{kind.__name__} has no JSON form")


def array_to_wire(array: np.ndarray) -> list:
    """A numpy array as nested lists; non-finite floats become ``None``."""
    if array.dtype.kind == "f" and not np.isfinite(array).all():
        out = array.astype(object)
        out[~np.isfinite(array)] = None
        return out.tolist()
    return array.tolist()


def from_wire(value, parent: str | None = None, strict: bool = False):
    """A request's JSON value with Python key names (data keys and unknown names kept as sent).

    strict: a key spelt the Python way where the wire spelling differs (``pit_intent`` for ``pitIntent``)
    is refused; config files may use either spelling, messages use the wire's.
    """
    kind = type(value)
    if kind is dict:
        if parent in REQUEST_DATA_KEYED:
            return {key: from_wire(item, None, strict) for key, item in value.items()}
        out = {}
        for key, item in value.items():
            if strict and key not in WIRE_TO_PYTHON and PYTHON_TO_WIRE.get(key, key) != key:
                from ..env.errors import INVALID_REQUEST, PaddockError
                raise PaddockError(INVALID_REQUEST, f"{key}: a Python name; the wire spells it "
                                   f"{PYTHON_TO_WIRE[key]}", key)
            name = python_name(key)
            out[name] = from_wire(item, name, strict)
        return out
    if kind is list:
        if parent == "channels":
            return [_VALUE_NAMES.get(item, item) if type(item) is str else item for item in value]
        return [from_wire(item, None, strict) for item in value]
    return value


def from_request(value, parent: str | None = None):
    """``from_wire`` of a protocol message's field: strict (a request speaks wire names only)."""
    return from_wire(value, parent, strict=True)


def wire_field(field: str | None) -> str | None:
    """A dotted Python field path (``actions.car-00.pit_intent``) in wire names (``...pitIntent``)."""
    if field is None:
        return None
    return ".".join(wire_name(part) if part in PYTHON_TO_WIRE else part for part in field.split("."))


def config_from_wire(doc: dict):
    """An ``EnvConfig`` from a config object in Python names (snake_case) or PaddockJS's (camelCase)."""
    from ..env.config import EnvConfig

    return EnvConfig.from_dict(from_wire(doc))
