"""What PaddockJS's timing tower and telemetry panel read of a snapshot's cars, for one world.

PaddockJS's renderer (``src/app/readouts/timingTowerRenderer.js``, ``telemetryRenderer.js``) draws a
snapshot's ``cars`` in their order (ranked cars first, by rank: ``snapshotRace``'s ``carsForSnapshot``)
with, per car, its position ``rank``, ``lap``, gap (``leaderGapSeconds`` / ``intervalAheadSeconds`` and
their ``...Laps``), ``tire``, race status (``status``, ``dnf``, ``wavedFlag``, ...), and for the selected
car ``speedKph``, ``throttle``, ``brake`` (0..1), ``tireEnergy`` (percent), ``gripUsage``, ``lateralG``,
``slipAngleRadians``, ``stabilityState``, ``surface`` and ``lapTelemetry`` (sector, lap times in s).
A field it lacks shows as ``NaN%`` or ``null`` there; so ``rank`` here is the position the tower shows
(``shown_ranks``: non-classified cars after the classified ones, by race distance) and
``classified_rank`` the race's own. ``timing_fields(batch, w)`` gives those fields
(snake_case; the wire spelling is their camelCase) for every car of world ``w`` in slot order, and
``race_order(cars)`` the order PaddockJS lists them in.

Gaps are PaddockJS's fallback estimate (``gapEstimation.js``: the distance to the car ahead over the
mean of both speeds, at least 1) and whole laps behind; PaddockJS refines them with timing-line
crossings, which are not recorded here.
"""

from __future__ import annotations

import math

from ...sim.core import layout as L
from ...sim.sensing.vectors import body_slip_angle


def _status(i) -> str:
    return "destroyed" if i[L.I_DESTROYED] else "waved-flag" if i[L.I_FINISHED] else "racing"


def _lap_telemetry(f, i, now: float) -> dict:
    start = float(f[L.F_LAP_START_TIME])
    sectors = [float(f[L.F_SECTOR1_TIME + s]) or None for s in range(3)]
    return {"current_sector": int(i[L.I_SECTOR]) + 1, "completed_laps": int(i[L.I_COMPLETED_LAPS]),
            "current_lap_time": None if start == L.NO_CLOCK else now - start,
            "last_lap_time": float(f[L.F_LAST_LAP_TIME]) or None, "best_lap_time": float(f[L.F_BEST_LAP_TIME]) or None,
            "last_sectors": sectors}


def timing_fields(batch, w: int) -> list:
    """Per car of world ``w`` (slot order) the fields of the module docstring, in real units."""
    st = batch.state
    now = float(st.world_f[w, L.WF_TIME])
    length = float(batch.track.length)
    cars_f, cars_i = st.cars_f[w], st.cars_i[w]
    ranks = shown_ranks(cars_f, cars_i, len(batch.driver_ids))
    out = []
    for c in range(len(batch.driver_ids)):
        f, i = cars_f[c], cars_i[c]
        destroyed, rank = bool(i[L.I_DESTROYED]), int(i[L.I_RANK]) or None
        shown = ranks[c]
        instability = L.INSTABILITY_NAMES[int(i[L.I_INSTABILITY])]
        out.append({
            "throttle": float(f[L.F_APPLIED_THROTTLE]), "brake": float(f[L.F_APPLIED_BRAKE]),
            "tire": L.COMPOUND_NAMES[int(i[L.I_COMPOUND])], "tire_energy": float(f[L.F_TIRE_ENERGY]),
            "grip_usage": float(f[L.F_GRIP_USAGE]), "lateral_g": float(f[L.F_LAT_ACC] / L.GRAVITY),
            "longitudinal_g": float(f[L.F_LONG_ACC] / L.GRAVITY),
            "slip_angle_radians": float(body_slip_angle(f[L.F_VX], f[L.F_VY], f[L.F_HEADING])),
            "stability_state": "destroyed" if destroyed else (instability or "stable"),
            "status": _status(i), "race_status": _status(i), "waved_flag": bool(i[L.I_FINISHED]),
            "dnf": destroyed or bool(i[L.I_RETIRED]), "out_of_race": destroyed or bool(i[L.I_RETIRED]),
            "rank": shown, "classified_rank": rank, "finish_rank": None, "penalty_seconds": 0,
            "drs_active": bool(i[L.I_DRS_ACTIVE]), "drs_eligible": bool(i[L.I_DRS_ACTIVE]),
            "lap_telemetry": _lap_telemetry(f, i, now),
        })
    _gaps(cars_f, ranks, length, out)
    return out


def shown_ranks(cars_f, cars_i, n: int) -> list:
    """The position the tower shows for each car slot: a classified car's rank; after them the other
    active cars by race distance (a non-classified car, e.g. PaddockJS's training profile, which
    PaddockJS's own snapshot gives a null rank, so that its tower reads "null"); None for empty slots.
    ``classified_rank`` keeps the race's own answer."""
    out = [int(cars_i[c, L.I_RANK]) or None for c in range(n)]
    classified = sum(r is not None for r in out)
    others = sorted((c for c in range(n) if out[c] is None and cars_i[c, L.I_ACTIVE]),
                    key=lambda c: (bool(cars_i[c, L.I_DESTROYED]), -float(cars_f[c, L.F_RACE_DISTANCE]), c))
    for place, c in enumerate(others):
        out[c] = classified + place + 1
    return out


def _gaps(cars_f, ranks: list, length: float, out: list) -> None:
    """``leader_gap_*`` and ``interval_ahead_*`` / ``gap_ahead_*`` of each ranked car (seconds and whole
    laps behind, PaddockJS's estimate); None for the leader's and unranked cars' seconds."""
    ranked = sorted((r, c) for c, r in enumerate(ranks) if r is not None)
    leader = ranked[0][1] if ranked else None
    ahead = None
    for _, c in ranked:
        row = out[c]
        for key, other in (("leader_gap", leader), ("interval_ahead", ahead)):
            if other is None or other == c:
                row[f"{key}_seconds"], row[f"{key}_laps"] = None, 0
                continue
            gap = float(cars_f[other, L.F_RACE_DISTANCE] - cars_f[c, L.F_RACE_DISTANCE])
            speed = max(0.5 * float(cars_f[other, L.F_SPEED] + cars_f[c, L.F_SPEED]), 1.0)
            row[f"{key}_seconds"] = max(0.0, gap / speed)
            row[f"{key}_laps"] = max(0, math.floor((gap + 1e-6) / length)) if length > 0 else 0
        row["gap_ahead_seconds"], row["gap_ahead_laps"] = row["interval_ahead_seconds"], row["interval_ahead_laps"]
        ahead = c
    for c in range(len(out)):
        if ranks[c] is None:
            out[c].update({"leader_gap_seconds": None, "leader_gap_laps": 0, "interval_ahead_seconds": None,
                           "interval_ahead_laps": 0, "gap_ahead_seconds": None, "gap_ahead_laps": 0})


def race_order(cars: list) -> list:
    """``cars`` (snapshot car dicts with ``rank``) in PaddockJS's order: ranked by rank, then the rest
    in their given (slot) order."""
    ranked = sorted((car for car in cars if car.get("rank")), key=lambda car: car["rank"])
    return ranked + [car for car in cars if not car.get("rank")]
