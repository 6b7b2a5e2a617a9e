"""Public state views of a world (``state_output`` "full" and "minimal").

``minimal_state`` and ``full_state`` are paddock_ma's own views in real units: "minimal" the lean
per-car summary a training loop, evaluation or preview frame needs; "full" adds every car's dynamics,
wheels, pit and timing state, the state checksum and the track summary.

``paddockjs_state`` (what ``PaddockEnv.get_state`` and the worker's ``getState`` return) is PaddockJS
2.0.0's snapshot key for key (``paddockjs_state.paddockjs_snapshot``: positions and the track in its sim
units) with the keys of our view of the same ``output`` beside it wherever PaddockJS has no key of that
name (``OWN_KEYS``).

Both carry PaddockJS 2.0.0's snapshot keys a PaddockJS trainer reads (its ``snapshotRace`` and
``snapshotRaceObservation``): ``race_control`` {mode, red_flag, pit_lane_open, finished}, ``rules`` (the
config's, PaddockJS's names), ``track`` (PaddockJS's width, kerb_width, gravel_width, runoff_width,
barrier_width, length and pit-lane distances in its sim units, 12 per metre, beside ``length_meters``),
``events`` (the environment adds the latest step's) and per car ``distance_meters``, ``speed_kph``,
``destroy_reason``, ``interaction`` (profile and its five flags) and ``position_source``.
"""

from __future__ import annotations

from ...sim.core import layout as L
from .paddockjs_state import car_interaction, paddockjs_snapshot
from .world_copy import summarize_track

SIM_UNITS_PER_METER = 12.0        # PaddockJS's world unit, in which its snapshot's track is given
BARRIER_WIDTH_METERS = 0.55       # PaddockJS's TRACK.barrierWidth (the barrier wall's thickness)


def _world(batch, w):
    st = batch.state
    mode = L.RACE_MODE_NAMES[int(st.world_i[w, L.WI_RACE_MODE])]
    red_flag = bool(st.world_i[w, L.WI_RED_FLAG])
    pit_lane_open = bool(st.world_i[w, L.WI_PIT_LANE_OPEN])
    finished = bool(st.world_i[w, L.WI_RACE_FINISHED])
    return {
        "time": float(st.world_f[w, L.WF_TIME]),
        "tick": int(st.world_i[w, L.WI_TICK]),
        "step": int(st.world_i[w, L.WI_ENV_STEP]),
        "race_mode": mode,
        "red_flag": red_flag,
        "pit_lane_open": pit_lane_open,
        "race_finished": finished,
        "physics_mode": batch.config.physics_mode,
        "total_laps": batch.config.total_laps,
        "race_control": {"mode": mode, "red_flag": red_flag, "pit_lane_open": pit_lane_open, "finished": finished},
        "rules": batch.config.rules.to_dict(),
        "track": _track(batch),
        "events": [],
    }


def _track(batch) -> dict:
    """The track summary: its name and length in metres, and PaddockJS's keys in its sim units."""
    tr, cfg = batch.track, batch.config
    u = SIM_UNITS_PER_METER
    out = {"name": cfg.track_name, "length_meters": float(tr.length),
           "pit_entry_meters": float(tr.pit_entry_s), "pit_exit_meters": float(tr.pit_exit_s),
           "length": float(tr.length) * u, "width": float(2 * tr.half_width) * u,
           "kerb_width": float(tr.kerb_edge - tr.half_width) * u,
           "gravel_width": float(tr.gravel_edge - tr.kerb_edge) * u,
           "runoff_width": float(tr.grass_edge - tr.gravel_edge) * u,
           "barrier_width": BARRIER_WIDTH_METERS * u,
           "pit_lane": {"entry": {"track_distance": float(tr.pit_entry_s) * u},
                        "exit": {"track_distance": float(tr.pit_exit_s) * u}}}
    if not summarize_track(tr).has_pit_lane:     # PaddockJS's ``pitLane`` is null
        out.update(pit_entry_meters=None, pit_exit_meters=None, pit_lane=None)
    return out


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
        "distance_meters": float(f[L.F_RACE_DISTANCE]),
        "destroy_reason": "barrier" if i[L.I_DESTROYED] else None,
        "interaction": car_interaction(batch, w, c),
        "position_source": "integrated-vehicle",
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
            "pit_stop": {"intent": int(i[L.I_PIT_INTENT]),
                         "status": L.PIT_STATUS_NAMES[int(i[L.I_PIT_STATUS])], "box": int(i[L.I_PIT_BOX]),
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
    snap = dict(_world(batch, w), cars=cars, checksum=f"{batch.state.checksum(w):016x}")
    return {"snapshot": snap}


def _beside(theirs: dict, ours: dict) -> dict:
    """``theirs`` with each key of ``ours`` it lacks added; dicts present in both are merged the same way
    (a copy where anything is added: ``theirs`` may hold shared parts, e.g. the track model)."""
    out = dict(theirs)
    for key, value in ours.items():
        if key not in out:
            out[key] = value
        elif isinstance(out[key], dict) and isinstance(value, dict):
            out[key] = _beside(out[key], value)
    return out


def paddockjs_state(batch, w: int, output: str) -> dict:
    """``{"snapshot": ...}``: PaddockJS's snapshot of world ``w`` (``output`` "full" or "minimal") with
    our view's keys beside it (see the module docstring)."""
    ours = (full_state if output == "full" else minimal_state)(batch, w)["snapshot"]
    if output != "full":
        del ours["rules"]           # PaddockJS's minimal snapshot has no rules
    theirs = paddockjs_snapshot(batch, w, output)
    cars = [_beside(t, o) for t, o in zip(theirs.pop("cars"), ours.pop("cars"))]
    snap = _beside(theirs, ours)
    snap["cars"] = cars
    return {"snapshot": snap}
