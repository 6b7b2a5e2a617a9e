"""A world's state as PaddockJS 2.0.0's snapshot, key for key (``getState``, a result's ``state``).

``paddockjs_snapshot(batch, w, output)`` gives every key of PaddockJS's ``snapshotRace`` (``output``
"full") or ``snapshotRaceObservation`` ("minimal") with its nesting and JSON type, in PaddockJS's units
(positions, distances and the track in its sim units, 12 per metre; speeds in sim units per second
beside ``speed_kph``), then paddock_ma's own keys beside them (``OWN_KEYS``: tick, step, checksum, the
metre-unit car fields, ...). The values are our engine's where it has the quantity; the keys whose value
cannot mean what PaddockJS's does (penalties, safety car, gaps, the driver's personality, ``canAttack``) carry
PaddockJS's neutral value and are listed on docs/paddockjs-compatibility.md.
The golden snapshots recorded from PaddockJS (tests/fixtures/paddockjs-2.0.0/state-snapshots/) are
compared with these key for key by tests/protocol/test_state_shape.py.
"""

from __future__ import annotations

import math

from ...paddockjs.naming import wire_name
from ...sim.core import layout as L
from ...sim.sensing.vectors import body_slip_angle
from ..config.grid import resolved_grid
from ..reset.interactions import driver_profile
from .paddockjs_track_model import SIM_UNITS_PER_METER, WORLD, drs_zone_ids, track_model

U = SIM_UNITS_PER_METER
WHEEL_IDS = ("front-left", "front-right", "rear-left", "rear-right")
PIT_PHASE = {"entering": "entry", "queued": "queue", "servicing": "service", "exiting": "exit"}
SAFETY_CAR_LEAD_METERS = 55.0       # PaddockJS's safetyCarLeadDistance (660 sim units)
SAFETY_CAR_SPEED_KPH = 166.0        # PaddockJS's safetyCarSpeed (553.3 sim units/s)
# the car ratings, Python names (``EnvConfig.driver_ratings`` keys them by their wire names)
RATING_NAMES = ("power", "braking", "aero", "drag_efficiency", "mechanical_grip", "weight_control", "tire_care")
PIT_PLAN_AHEAD_METERS = 250.0       # PaddockJS plans a stop this far before the pit entry
TOP_SPEED_KPH = 330.0               # PaddockJS's VEHICLE_LIMITS.maxSpeed, km/h

# PaddockJS's rules that have no counterpart here (penalties, safety car, weather, ...): its
# defaults, reported as they are (penalties are not simulated; see the compatibility page)
_CONSEQUENCE = [{"type": "time", "seconds": 5}]
PADDOCKJS_ONLY_RULES = {
    "safety_car_speed": SAFETY_CAR_SPEED_KPH / 3.6 * U,
    "safety_car_lead_distance": SAFETY_CAR_LEAD_METERS * U, "safety_car_gap": 22.0 * U,
}
PADDOCKJS_ONLY_MODULES = {
    "penalties": {
        "enabled": False, "steward_strictness": 1,
        "track_limits": {"strictness": 0, "warnings_before_penalty": 3, "time_penalty_seconds": 5,
                         "relaxed_margin_meters": 3, "consequences": _CONSEQUENCE, "relaxed_margin": 3 * U},
        "collision": {"strictness": 0, "time_penalty_seconds": 5, "minimum_severity": 2, "relaxed_severity_margin": 6,
                      "minimum_impact_speed_kph": 20, "relaxed_impact_speed_kph": 20, "consequences": _CONSEQUENCE,
                      "minimum_impact_speed": 20 / 3.6 * U, "relaxed_impact_speed": 20 / 3.6 * U},
        "tire_requirement": {"strictness": 0, "time_penalty_seconds": 10,
                             "consequences": [{"type": "time", "seconds": 10}]},
        "pit_lane_speeding": {"strictness": 0, "speed_limit_kph": 80, "margin_kph": 0.5, "relaxed_margin_kph": 5,
                              "time_penalty_seconds": 5, "consequences": _CONSEQUENCE},
    },
    "weather": {"enabled": False}, "reliability": {"enabled": False}, "fuel_load": {"enabled": False},
}
PIT_VARIABILITY_DEFAULTS = {"speed_impact_seconds": 1.2, "consistency_jitter_seconds": 1.4}


def _copy(value):
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value


def paddockjs_rules(config) -> dict:
    """``rules`` of the snapshot: the config's rules in PaddockJS's names and nesting, PaddockJS's
    defaults for the modules paddock_ma does not simulate."""
    ours = config.rules.to_dict()
    modules = _copy(ours.pop("modules"))
    pit = modules["pit_stops"]
    pit.setdefault("double_stacking", False)
    pit["minimum_pit_lane_gap"] = pit["minimum_pit_lane_gap_meters"] * U
    pit["variability"] = {**PIT_VARIABILITY_DEFAULTS, **pit["variability"]}
    modules.update(_copy(PADDOCKJS_ONLY_MODULES))
    return {**PADDOCKJS_ONLY_RULES, **ours, "modules": modules}


def _pit_lane_status(batch, w) -> dict:
    enabled = bool(batch.state.rules[w, L.R_PIT_STOPS])
    open_ = enabled and bool(batch.state.world_i[w, L.WI_PIT_LANE_OPEN])
    reason = "open" if open_ else ("closed" if enabled else "unavailable")
    return {"enabled": enabled, "open": open_, "reason": reason, "color": "green" if open_ else "red",
            "light": "#22c55e" if open_ else "#ef4444"}


def _race_control(batch, w, full: bool) -> dict:
    st = batch.state
    finished = bool(st.world_i[w, L.WI_RACE_FINISHED])
    out = {"mode": L.RACE_MODE_NAMES[int(st.world_i[w, L.WI_RACE_MODE])], "red_flag": bool(st.world_i[w, L.WI_RED_FLAG]),
           "pit_lane_open": bool(st.world_i[w, L.WI_PIT_LANE_OPEN]), "pit_lane_status": _pit_lane_status(batch, w),
           "finished": finished}
    if full:
        time = float(st.world_f[w, L.WF_TIME])
        lights_out = float(st.world_f[w, L.WF_LIGHTS_OUT_AT])
        released = time >= lights_out
        count = int(st.rules[w, L.R_LIGHT_COUNT])
        interval = float(st.rules[w, L.R_LIGHT_INTERVAL])
        lit = count if released else min(count, int(time / interval) if interval > 0 else count)
        ranks = st.cars_i[w, :, L.I_RANK]
        winner = next((batch.driver_ids[c] for c in range(len(batch.driver_ids))
                       if finished and ranks[c] == 1), None)
        out.update({"finished_at": time if finished else None, "winner": winner, "classification": [],
                    "start": {"light_count": count, "lights_lit": lit, "lights_out_at": lights_out,
                              "released": released, "released_at": lights_out if released else None,
                              "visible": True}})
    return out


def _safety_car(batch, w) -> dict:
    tr = batch.track
    s = SAFETY_CAR_LEAD_METERS % tr.length
    i = min(int(s / tr.length * (len(tr.cs) - 1)), len(tr.cs) - 2)
    while i + 1 < len(tr.cs) - 1 and tr.cs[i + 1] <= s:
        i += 1
    x, y, h = float(tr.cx[i]) * U, float(tr.cy[i]) * U, float(tr.ch[i])
    return {"deployed": int(batch.state.world_i[w, L.WI_RACE_MODE]) == L.RACE_MODE_NAMES.index("safety-car"),
            "progress": s * U, "speed": SAFETY_CAR_SPEED_KPH / 3.6 * U, "previous_x": x, "previous_y": y,
            "previous_heading": h, "x": x, "y": y, "heading": h}


def car_interaction(batch, w: int, c: int) -> dict:
    """Car ``c`` of world ``w``'s interaction profile and what it means (collides, seen by rays and
    radar, blocks the pit lane, counts in the race order), as the state snapshot reports it."""
    flags = int(batch.state.car_flags[w, c])
    return {"profile": driver_profile(batch.config, batch.driver_ids[c]),
            "collidable": bool(flags & L.FLAG_COLLIDES), "detectable_by_rays": bool(flags & L.FLAG_RAY_VISIBLE),
            "detectable_as_nearby": bool(flags & L.FLAG_RADAR_VISIBLE),
            "blocks_pit_lane": bool(flags & L.FLAG_PIT_OCCUPIES), "affects_race_order": bool(flags & L.FLAG_CLASSIFIED)}


def _wheels(f, i) -> list:
    """PaddockJS's wheel states; the wheel's position from the body pose (PaddockJS's wheel layout)."""
    c, s = math.cos(f[L.F_HEADING]), math.sin(f[L.F_HEADING])
    out = []
    for k, name in enumerate(WHEEL_IDS):
        along = L.WHEELBASE / 2 if k < 2 else -L.WHEELBASE / 2
        side = -L.CAR_WIDTH / 2 if k % 2 == 0 else L.CAR_WIDTH / 2
        surface = L.SURFACE_NAMES[int(i[L.I_WHEEL_SURFACE_FL + k])]
        offset = float(f[L.F_WHEEL_OFFSET_FL + k])
        out.append({"id": name, "x": (f[L.F_X] + c * along - s * side) * U, "y": (f[L.F_Y] + s * along + c * side) * U,
                    "signed_offset": offset * U, "cross_track_error": abs(offset) * U, "surface": surface,
                    "on_track": surface in ("track", "kerb"), "in_pit_lane": surface.startswith("pit-"),
                    "fully_outside_white_line": False, "signed_offset_meters": offset})
    return out


def _lap_telemetry(batch, w, f, i) -> dict:
    completed = int(i[L.I_COMPLETED_LAPS])
    last = float(f[L.F_LAST_LAP_TIME]) or None
    best = float(f[L.F_BEST_LAP_TIME]) or None
    time = float(batch.state.world_f[w, L.WF_TIME])
    lap_start, sector_start = float(f[L.F_LAP_START_TIME]), float(f[L.F_SECTOR_START_TIME])
    current_lap_time = time - lap_start if lap_start >= 0 else None
    sector = int(i[L.I_SECTOR])
    sectors = [float(f[L.F_SECTOR1_TIME + k]) or None for k in range(3)]
    live = [None, None, None]
    live[min(sector, 2)] = time - sector_start if sector_start >= 0 else None
    progress = [0.0, 0.0, 0.0]
    return {"current_lap": int(i[L.I_LAP]), "current_sector": min(sector, 2) + 1, "current_lap_time": current_lap_time,
            "current_sector_elapsed": live[min(sector, 2)], "current_sector_progress": 0.0,
            "current_sectors": [None, None, None], "sector_progress": progress, "live_sectors": live,
            "last_sectors": sectors, "best_sectors": [None, None, None], "last_lap_time": last, "best_lap_time": best,
            "sector_performance": {"current": [None, None, None], "last": [None, None, None],
                                   "best": [None, None, None]},
            "completed_laps": completed}


def _pit_stop(batch, w, c, f, i, full: bool):
    """PaddockJS's ``pitStop`` (None unless pit stops are on); box ids name our service boxes as
    PaddockJS names its service areas and garage boxes (``team-<n>-service``, ``team-<n>-box-<k>``)."""
    if not batch.state.rules[w, L.R_PIT_STOPS]:
        return None
    status = L.PIT_STATUS_NAMES[int(i[L.I_PIT_STATUS])]
    out = {"status": status, "intent": int(i[L.I_PIT_INTENT]), "phase": PIT_PHASE.get(status),
           "target_tire": L.COMPOUND_NAMES[int(i[L.I_PIT_TARGET])],
           "service_remaining_seconds": float(f[L.F_PIT_SERVICE_LEFT]), "penalty_service_remaining_seconds": 0.0,
           "stops_completed": int(i[L.I_PIT_STOPS]), "box": int(i[L.I_PIT_BOX])}
    if full:
        tr = batch.track
        box = int(i[L.I_PIT_BOX])
        garage = box * 2 + sum(1 for k in range(c) if int(batch.state.cars_i[w, k, L.I_PIT_BOX]) == box) % 2
        laps = int(f[L.F_RACE_DISTANCE] // tr.length) if f[L.F_RACE_DISTANCE] > 0 else 0
        entry = (laps * float(tr.length) + float(tr.pit_entry_s)) * U
        out.update({"box_index": box, "box_id": f"team-{box + 1}-service", "garage_box_index": garage,
                    "garage_box_id": f"team-{box + 1}-box-{garage % 2 + 1}", "team_id": f"team-{box + 1}",
                    "team_color": _display(batch, w, c)["color"], "queueing_for_service": status == "queued",
                    "planned_race_distance": entry - PIT_PLAN_AHEAD_METERS * U, "entry_race_distance": entry,
                    "penalty_service_total_seconds": 0.0, "serving_penalty_ids": [], "service_profile": None})
    return out


_GRIDS: dict = {}           # id(config) -> (config, resolved grid): the last few configs


def _grid(config) -> tuple:
    hit = _GRIDS.get(id(config))
    if hit is None or hit[0] is not config:
        if len(_GRIDS) >= 16:
            del _GRIDS[next(iter(_GRIDS))]
        hit = _GRIDS[id(config)] = (config, resolved_grid(config))
    return hit[1]


def _display(batch, w, c) -> dict:
    """The driver's display fields as PaddockJS's grid resolves them (``config.grid``)."""
    cfg = batch.config
    d = cfg.drivers[c]
    row = _grid(cfg)[c]
    code = row["code"]
    return {"code": code, "timing_code": code, "driver_number": row["driver_number"],
            "icon": d.icon or str(row["driver_number"]).rjust(2, "0"),
            "race_name": code, "name": d.name or d.id, "color": d.color or "#e10600", "team": row["team"],
            "tire": L.COMPOUND_NAMES[int(batch.state.cars_i[w, c, L.I_COMPOUND])]}


def _setup(batch, w, c) -> dict:
    p = batch.state.car_params[w, c]
    ratings = batch.config.driver_ratings(batch.driver_ids[c])
    row = _grid(batch.config)[c]
    return {"vehicle_id": row["vehicle_id"], "vehicle_name": row["vehicle_name"],
            "vehicle_ratings": {n: float(ratings.get(wire_name(n), 50)) for n in RATING_NAMES},
            "max_speed_kph": TOP_SPEED_KPH, "power_unit_kn": float(p[L.P_POWER]) / 1000,
            "brake_system_kn": float(p[L.P_BRAKE]) / 1000, "drag_coefficient": float(p[L.P_DRAG_CD]),
            "downforce_coefficient": float(p[L.P_DOWNFORCE_CL]), "tire_grip": float(p[L.P_TIRE_GRIP]),
            "tire_care": float(p[L.P_TIRE_CARE]), "mass_kg": float(p[L.P_MASS]), "pace": float(p[L.P_PACE]),
            "racecraft": float(p[L.P_RACECRAFT])}


def _body(batch, w, c, f, i) -> dict:
    """The pose, controls and dynamics keys both snapshots share."""
    simulator = batch.state.rules[w, L.R_PHYSICS_MODE] == L.PHYSICS_SIMULATOR
    usage = float(f[L.F_GRIP_USAGE])
    destroyed = bool(i[L.I_DESTROYED])
    instability = L.INSTABILITY_NAMES[int(i[L.I_INSTABILITY])]
    return {
        "previous_x": float(f[L.F_PREV_X]) * U, "previous_y": float(f[L.F_PREV_Y]) * U,
        "x": float(f[L.F_X]) * U, "y": float(f[L.F_Y]) * U,
        "previous_heading": float(f[L.F_PREV_HEADING]), "heading": float(f[L.F_HEADING]),
        "steering_angle": float(f[L.F_STEER_ANGLE]), "yaw_rate": float(f[L.F_YAW_RATE]),
        "speed": float(f[L.F_SPEED]) * U, "speed_kph": float(f[L.F_SPEED] * 3.6),
        "throttle": float(f[L.F_APPLIED_THROTTLE]), "brake": float(f[L.F_APPLIED_BRAKE]),
        "applied_controls": {"steering": float(f[L.F_APPLIED_STEER]),
                             "steering_radians": float(f[L.F_APPLIED_STEER] * L.MAX_STEER_ANGLE),
                             "throttle": float(f[L.F_APPLIED_THROTTLE]), "brake": float(f[L.F_APPLIED_BRAKE])},
        "lateral_g": float(f[L.F_LAT_ACC] / L.GRAVITY), "longitudinal_g": float(f[L.F_LONG_ACC] / L.GRAVITY),
        "grip_usage": usage,
        "slip_angle_radians": float(body_slip_angle(f[L.F_VX], f[L.F_VY], f[L.F_HEADING])) if simulator else 0.0,
        "traction_limited": usage >= 1.0,
        "stability_state": "destroyed" if destroyed else (instability or "stable"),
    }


def _ending(i) -> dict:
    destroyed = bool(i[L.I_DESTROYED])
    out = bool(i[L.I_RETIRED]) or destroyed
    reason = "barrier" if destroyed else None
    return {"destroyed": destroyed, "destroy_reason": reason, "destroyed_at": None, "dnf": out,
            "dnf_reason": reason if destroyed else ("stalled-off-track" if out else None), "dnf_at": None,
            "dnf_order": None, "out_of_race": out}


def _track_state(f, i) -> dict:
    surface = L.SURFACE_NAMES[int(i[L.I_SURFACE])]
    in_pit = bool(i[L.I_IN_PIT_LANE])
    offset = float(f[L.F_OFFSET])
    return {"distance": float(f[L.F_PROGRESS]) * U, "signed_offset": offset * U, "cross_track_error": abs(offset) * U,
            "surface": surface, "in_pit_lane": in_pit, "pit_lane_part": surface if in_pit else None,
            "pit_box_id": f"team-{int(i[L.I_PIT_BOX]) + 1}-service" if surface == "pit-box" else None,
            "curvature": float(f[L.F_CURVATURE]) / U}


def _car(batch, w, c, full: bool) -> dict:
    st = batch.state
    f, i = st.cars_f[w, c], st.cars_i[w, c]
    rank = int(i[L.I_RANK]) or None      # None: a car outside the race order (PaddockJS's null)
    track_state = _track_state(f, i)
    race_distance = float(f[L.F_RACE_DISTANCE])
    pit_stop = _pit_stop(batch, w, c, f, i, full)
    position = {"signed_offset": track_state["signed_offset"], "cross_track_error": track_state["cross_track_error"],
                "surface": track_state["surface"]}
    pit = {"in_pit_lane": track_state["in_pit_lane"], "pit_lane_part": track_state["pit_lane_part"],
           "pit_box_id": track_state["pit_box_id"]}
    progress = {"progress": float(f[L.F_PROGRESS]) * U, "race_distance": race_distance * U}
    if not full:
        car = {"id": batch.driver_ids[c], "rank": rank, **_body(batch, w, c, f, i), **_ending(i), **progress,
               "lap": int(i[L.I_LAP]), "lap_telemetry": _lap_telemetry(batch, w, f, i), **position,
               "track_state": track_state, "wheels": _wheels(f, i), **pit, "tire_energy": float(f[L.F_TIRE_ENERGY]),
               "pit_intent": int(i[L.I_PIT_INTENT]), "pit_stop": pit_stop, "interaction": car_interaction(batch, w, c)}
        return car
    finished = bool(i[L.I_FINISHED])
    ending = _ending(i)
    status = "destroyed" if ending["destroyed"] else ("waved-flag" if finished else "racing")
    finish_time = float(f[L.F_FINISH_TIME]) if finished else None
    steer = float(f[L.F_STEER_ANGLE])
    p = st.car_params[w, c]
    aggression = float(p[L.P_AGGRESSION])
    ratings = batch.config.driver_ratings(batch.driver_ids[c])
    return {
        "id": batch.driver_ids[c], **_display(batch, w, c),
        "personality": {"base_aggression": aggression, "risk_tolerance": float(ratings.get("riskTolerance", 50)) / 100,
                        "patience": float(ratings.get("patience", 50)) / 100},
        "aggression": aggression, "aggression_percent": int(round(aggression * 100)),
        "setup": _setup(batch, w, c), "interaction": car_interaction(batch, w, c),
        "rank": rank, "classified_rank": rank, "finish_rank": rank if finished else None,
        "status": status, "race_status": status, "waved_flag": finished, "finished": finished, **ending,
        "finish_time": finish_time, "penalty_seconds": 0, "adjusted_finish_time": finish_time,
        **_body(batch, w, c, f, i),
        # the radius of the path the steering asks for (bicycle model), None going straight
        "turn_radius": L.WHEELBASE / abs(math.tan(steer)) * U if abs(steer) > 1e-9 else None,
        "lateral_acceleration": float(f[L.F_LAT_ACC]) * U, "longitudinal_acceleration": float(f[L.F_LONG_ACC]) * U,
        **progress, "distance_meters": race_distance, "lap": int(i[L.I_LAP]),
        "lap_telemetry": _lap_telemetry(batch, w, f, i),
        "gap_ahead": None, "gap_ahead_meters": None, "gap_ahead_seconds": None, "interval_ahead_seconds": None,
        "leader_gap_seconds": 0 if rank is not None else None, "gap_ahead_laps": 0, "interval_ahead_laps": 0, "leader_gap_laps": 0,
        **_drs(batch, i), "can_attack": True,
        **position, "wheels": _wheels(f, i), **pit,
        "pit_lane_cross_track_error": None, "contact_cooldown": float(f[L.F_CONTACT_COOLDOWN]),
        "tire_energy": float(f[L.F_TIRE_ENERGY]),
        "used_tire_compounds": [n for k, n in enumerate(L.COMPOUND_NAMES) if i[L.I_USED_COMPOUNDS] & (1 << k)],
        "pit_intent": int(i[L.I_PIT_INTENT]), "pit_stop": pit_stop, "position_source": "integrated-vehicle",
    }


def _drs(batch, i) -> dict:
    """A car's DRS as PaddockJS reports it (``sim.race.drs``): eligible and active alike (PaddockJS sets
    both), the latched zone's id and whether it opened."""
    zone = int(i[L.I_DRS_ZONE])
    active = bool(i[L.I_DRS_ACTIVE])
    return {"drs_eligible": active, "drs_active": active,
            "drs_zone_id": drs_zone_ids(batch)[zone - 1] if zone > 0 else None,
            "drs_zone_enabled": bool(i[L.I_DRS_ENABLED])}


def paddockjs_snapshot(batch, w: int, output: str) -> dict:
    """PaddockJS's snapshot keys of world ``w`` (``output``: "full" or "minimal"), snake_case."""
    full = output == "full"
    st = batch.state
    snap = {"time": float(st.world_f[w, L.WF_TIME]), "world": dict(WORLD), "physics_mode": batch.config.physics_mode,
            "track": track_model(batch), "total_laps": batch.config.total_laps,
            "race_control": _race_control(batch, w, full), "pit_lane_status": _pit_lane_status(batch, w),
            "safety_car": _safety_car(batch, w)}
    if full:
        snap["rules"] = paddockjs_rules(batch.config)
    snap["events"] = []
    if full:
        snap["penalties"] = []
    snap["cars"] = [_car(batch, w, c, full) for c in range(len(batch.driver_ids))]
    snap["replay_ghosts"] = []
    return snap
