"""The observation object of one controlled driver: what it senses, in real units, read from a running world.

``object_view(engine, w, k)`` builds PaddockJS 2.0.0's observation object of controlled driver ``k`` in
world ``w`` of a ``BatchEnv`` (or of a ``views.world_copy.WorldCopy``): ``self``, ``track_relation``,
``contact_patches``, ``race``, ``track`` (with its lookahead samples), ``rays`` and ``nearby_cars``, from the
same arrays as the observation vector (the world's state and the sensor outputs), so decoding the vector by
its schema's names (``env.observations.vector_schema``) gives the same values scaled. The object's spec is
``env.observations.observation_spec``'s.
"""

from __future__ import annotations

from ...sim.core import layout as L
from ...sim.sensing.vectors import SURFACE_CODE, reported_offset, time_to_contact
from ...sim.vehicle.surface_table import SURFACE_LEGAL
from ..observations import WHEEL_NAMES, DriverSenses
from .paddockjs_state import PIT_PHASE


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
