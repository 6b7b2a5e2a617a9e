"""Events of a step: per-car events from the step's counters, race-control events from flag changes.

``world_events(batch, w, before)`` gives world ``w``'s events after the engine's latest call as
``(events, {driver: its events})``; each event is a dict with ``type``, ``at`` (seconds), ``driver_ids``
and its own fields. ``race_flags`` are the facts compared before and after a step.
"""

from __future__ import annotations

import numpy as np

from ..sim import layout as L

# the per-step counters of ``cars_i`` from which per-car events are emitted
EVENT_COUNTERS = np.array([L.I_CNT_CONTACTS, L.I_CNT_DESTROYED, L.I_CNT_LAPS, L.I_CNT_PIT_ENTRY,
                           L.I_CNT_PIT_STOP_DONE, L.I_CNT_PIT_EXIT])


def race_flags(batch, w: int) -> dict:
    """Race-control facts of world ``w`` compared before and after a step to emit transition events."""
    st = batch.state
    return {"mode": int(st.world_i[w, L.WI_RACE_MODE]), "race_finished": int(st.world_i[w, L.WI_RACE_FINISHED]),
            "finished": st.cars_i[w, :, L.I_FINISHED].copy()}


def world_events(batch, w: int = 0, before: dict | None = None) -> tuple[list, dict]:
    """Events of the latest step: (global list, {driver: list}).

    Per-car events come from the step's event counters (collision, destroyed, lap-completed, pit
    events); race-control transitions (start-lights-out, car-finish, race-finish) from comparing the
    race flags before and after the step (``before``, None at reset). ``at`` is the step's end time.
    """
    st = batch.state
    ci = st.cars_i[w]
    t = float(st.world_f[w, L.WF_TIME])
    ids = batch.driver_ids
    events, per = [], {}

    def emit(event, drivers):
        event["at"] = t
        event["driver_ids"] = list(drivers)
        events.append(event)
        for d in drivers:
            per.setdefault(d, []).append(event)

    for c in np.nonzero((ci[:, EVENT_COUNTERS] > 0).any(axis=1))[0].tolist():
        d = ids[c]
        row = ci[c]
        if row[L.I_CNT_CONTACTS] > 0:
            other = int(row[L.I_LAST_CONTACT_WITH])
            other_id = ids[other] if other >= 0 else None
            # one event per contact pair, counted for both drivers: emitted from the lower slot, or from
            # this one when the other car's latest contact in the step was with a third car
            if other_id is None or c < other or ci[other, L.I_LAST_CONTACT_WITH] != c:
                emit({"type": "collision", "primary_driver_id": d, "other_driver_id": other_id,
                      "count": int(row[L.I_CNT_CONTACTS])}, [d] + ([other_id] if other_id else []))
        if row[L.I_CNT_DESTROYED] > 0:
            emit({"type": "destroyed"}, [d])
        if row[L.I_CNT_LAPS] > 0:
            emit({"type": "lap-completed", "lap_time_seconds": float(st.cars_f[w, c, L.F_LAST_LAP_TIME]),
                  "completed_laps": int(row[L.I_COMPLETED_LAPS])}, [d])
        for counter, name in ((L.I_CNT_PIT_ENTRY, "pit-entry"), (L.I_CNT_PIT_STOP_DONE, "pit-stop-complete"),
                              (L.I_CNT_PIT_EXIT, "pit-exit")):
            if row[counter] > 0:
                emit({"type": name}, [d])
    if before is not None:
        after = race_flags(batch, w)
        if before["mode"] == L.MODE_PRE_START and after["mode"] != L.MODE_PRE_START:
            emit({"type": "start-lights-out"}, [])
        for c in np.nonzero((after["finished"] != 0) & (before["finished"] == 0))[0]:
            emit({"type": "car-finish", "finish_time_seconds": float(st.cars_f[w, c, L.F_FINISH_TIME]),
                  "rank": int(ci[c, L.I_RANK])}, [ids[c]])
        if after["race_finished"] and not before["race_finished"]:
            emit({"type": "race-finish"}, [])
    return events, per
