"""Public state views of a world (``state_output`` "full" and "minimal"), in real units.

"minimal" is the lean per-car summary a training loop or evaluation needs; "full" adds every car's
dynamics, wheels, pit and timing state, race control, the state checksum and the track summary. The
track geometry itself is not repeated per step (it is static: ``get_state`` callers read it once
through the environment's track).
"""

from __future__ import annotations

from ...sim.core import layout as L


def _world(batch, w):
    st = batch.state
    return {
        "time": float(st.world_f[w, L.WF_TIME]),
        "tick": int(st.world_i[w, L.WI_TICK]),
        "step": int(st.world_i[w, L.WI_ENV_STEP]),
        "race_mode": L.RACE_MODE_NAMES[int(st.world_i[w, L.WI_RACE_MODE])],
        "red_flag": bool(st.world_i[w, L.WI_RED_FLAG]),
        "pit_lane_open": bool(st.world_i[w, L.WI_PIT_LANE_OPEN]),
        "race_finished": bool(st.world_i[w, L.WI_RACE_FINISHED]),
    }


def _car_minimal(batch, w, c):
    st = batch.state
    f, i = st.cars_f[w, c], st.cars_i[w, c]
    return {
        "id": batch.driver_ids[c],
        "x": float(f[L.F_X]), "y": float(f[L.F_Y]), "heading": float(f[L.F_HEADING]),
        "speed_kph": float(f[L.F_SPEED] * 3.6),
        "race_distance_meters": float(f[L.F_RACE_DISTANCE]), "lap": int(i[L.I_LAP]),
        "completed_laps": int(i[L.I_COMPLETED_LAPS]), "rank": int(i[L.I_RANK]) or None,
        "surface": L.SURFACE_NAMES[int(i[L.I_SURFACE])], "on_track": bool(i[L.I_ON_TRACK]),
        "destroyed": bool(i[L.I_DESTROYED]), "finished": bool(i[L.I_FINISHED]),
        "contacts_this_step": int(i[L.I_CNT_CONTACTS]),
    }


def minimal_state(batch, w: int) -> dict:
    """``{"snapshot": {world fields, "cars": [lean car dicts]}}`` of world ``w``."""
    cars = [_car_minimal(batch, w, c) for c in range(len(batch.driver_ids))]
    return {"snapshot": dict(_world(batch, w), cars=cars)}


def full_state(batch, w: int) -> dict:
    """``{"snapshot": {...}}`` with every car's full public state and the world's checksum."""
    st = batch.state
    simulator = st.rules[w, L.R_PHYSICS_MODE] == L.PHYSICS_SIMULATOR
    cars = []
    for c in range(len(batch.driver_ids)):
        f, i = st.cars_f[w, c], st.cars_i[w, c]
        car = _car_minimal(batch, w, c)
        car.update({
            "previous_x": float(f[L.F_PREV_X]), "previous_y": float(f[L.F_PREV_Y]),
            "velocity_x": float(f[L.F_VX]) if simulator else None,
            "velocity_y": float(f[L.F_VY]) if simulator else None,
            "yaw_rate": float(f[L.F_YAW_RATE]), "steering_angle": float(f[L.F_STEER_ANGLE]),
            "throttle": float(f[L.F_APPLIED_THROTTLE]), "brake": float(f[L.F_APPLIED_BRAKE]),
            "lateral_acceleration": float(f[L.F_LAT_ACC]), "progress_meters": float(f[L.F_PROGRESS]),
            "signed_offset_meters": float(f[L.F_OFFSET]), "tire_energy": float(f[L.F_TIRE_ENERGY]),
            "tire": L.COMPOUND_NAMES[int(i[L.I_COMPOUND])],
            "used_tire_compounds": [n for k, n in enumerate(L.COMPOUND_NAMES) if i[L.I_USED_COMPOUNDS] & (1 << k)],
            "in_pit_lane": bool(i[L.I_IN_PIT_LANE]), "pit_intent": int(i[L.I_PIT_INTENT]),
            "pit_stop": {"status": L.PIT_STATUS_NAMES[int(i[L.I_PIT_STATUS])], "box": int(i[L.I_PIT_BOX]),
                         "target_tire": L.COMPOUND_NAMES[int(i[L.I_PIT_TARGET])],
                         "service_remaining_seconds": float(f[L.F_PIT_SERVICE_LEFT]),
                         "stops_completed": int(i[L.I_PIT_STOPS])},
            "last_lap_time": float(f[L.F_LAST_LAP_TIME]) or None,
            "best_lap_time": float(f[L.F_BEST_LAP_TIME]) or None,
            "wheels": [{"id": n, "surface": L.SURFACE_NAMES[int(i[L.I_WHEEL_SURFACE_FL + k])],
                        "signed_offset_meters": float(f[L.F_WHEEL_OFFSET_FL + k])}
                       for k, n in enumerate(("front-left", "front-right", "rear-left", "rear-right"))],
            "instability": L.INSTABILITY_NAMES[int(i[L.I_INSTABILITY])],
            "retired": bool(i[L.I_RETIRED]), "grid_locked": bool(i[L.I_GRID_LOCKED]),
            "interaction_flags": int(st.car_flags[w, c]),
        })
        cars.append(car)
    snap = dict(_world(batch, w), cars=cars, checksum=f"{batch.state.checksum(w):016x}",
                track={"name": batch.config.track, "length_meters": float(batch.track.length),
                       "pit_entry_meters": float(batch.track.pit_entry_s),
                       "pit_exit_meters": float(batch.track.pit_exit_s)})
    return {"snapshot": snap}
