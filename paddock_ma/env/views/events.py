"""Events of a step: per-car events from the step's counters, race-control events from flag changes.

``world_events(batch, w, before)`` gives world ``w``'s events after the engine's latest call as
``(events, {driver: its events})``; each event is a dict with ``type``, ``at`` (seconds), ``driver_ids``
and its own fields. ``race_flags`` are the facts compared before and after a step.
"""

from __future__ import annotations

import numpy as np

from ...sim.core import layout as L

# the per-step counters of ``cars_i`` from which per-car events are emitted
EVENT_COUNTERS = np.array([L.I_CNT_CONTACTS, L.I_CNT_DESTROYED, L.I_CNT_LAPS, L.I_CNT_PIT_ENTRY,
                           L.I_CNT_PIT_STOP_DONE, L.I_CNT_PIT_EXIT])


def contact_partners(row: np.ndarray) -> list[int]:
    """Slots of the cars car ``row`` (its cars_i row) had a contact event with in the latest step."""
    bits = (int(row[L.I_CONTACT_SLOTS_LO]) & 0xFFFFFFFF) | ((int(row[L.I_CONTACT_SLOTS_HI]) & 0xFFFFFFFF) << 32)
    return [j for j in range(64) if bits >> j & 1]


def pair_contacts(ci: np.ndarray, a: int, b: int) -> int:
    """Contact events between slots ``a`` and ``b`` (who touched each other) in the latest step.

    The step keeps per car its total (I_CNT_CONTACTS, n) and its partners (p of them); each partner
    has at least one event, so the pair has at most n - p + 1 from either side. The smaller bound is
    exact whenever one of the two cars touched only the other (n - p + 1 = n) or touched each
    partner once (= 1), which is always the case when a step is at most 1 s long (a car counts
    contacts at most once per second, ``collisions.COOLDOWN``)."""
    bounds = []
    for c in (a, b):
        n = int(ci[c, L.I_CNT_CONTACTS])
        bounds.append(n - len(contact_partners(ci[c])) + 1)
    return max(1, min(bounds))


def race_flags(batch, worlds) -> dict:
    """Race-control facts compared before and after a step to emit transition events: ``mode`` (the
    race mode), ``race_finished`` (0/1) and ``finished`` (0/1 per car slot). ``worlds``: one world index
    (then ints and int32[C]) or a list of them (then int64[n], int64[n] and int32[n, C]; ``world_flags``
    picks one world's out of them)."""
    st = batch.state
    one = isinstance(worlds, (int, np.integer))
    rows = int(worlds) if one else np.asarray(worlds, np.int64)
    mode, race_finished = st.world_i[rows, L.WI_RACE_MODE], st.world_i[rows, L.WI_RACE_FINISHED]
    return {"mode": int(mode) if one else mode.copy(),
            "race_finished": int(race_finished) if one else race_finished.copy(),
            "finished": st.cars_i[rows, :, L.I_FINISHED].copy()}


def world_flags(flags: dict, i: int) -> dict:
    """World ``i``'s race flags (as ``race_flags(batch, w)`` gives them) out of ``race_flags(batch, worlds)``."""
    return {"mode": int(flags["mode"][i]), "race_finished": int(flags["race_finished"][i]),
            "finished": flags["finished"][i]}


def race_flags_changed(before: dict, after: dict) -> np.ndarray:
    """bool[n]: the worlds whose race flags differ between two ``race_flags(batch, worlds)`` of the same worlds."""
    return ((before["mode"] != after["mode"]) | (before["race_finished"] != after["race_finished"])
            | (before["finished"] != after["finished"]).any(axis=1))


def worlds_with_events(batch, worlds) -> np.ndarray:
    """bool[n]: which worlds of ``worlds`` (a list of indices) had a per-car event (a counter of
    ``EVENT_COUNTERS`` moved) in the engine's latest call."""
    rows = np.asarray(worlds, np.int64)
    return (batch.state.cars_i[rows][:, :, EVENT_COUNTERS] > 0).any(axis=(1, 2))


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
            # one event per contact pair, emitted from the pair's lower slot, listed for both drivers
            for other in contact_partners(row):
                if other > c:
                    emit({"type": "collision", "primary_driver_id": d, "other_driver_id": ids[other],
                          "count": pair_contacts(ci, c, other)}, [d, ids[other]])
        if row[L.I_CNT_DESTROYED] > 0:
            emit({"type": "destroyed"}, [d])
        if row[L.I_CNT_LAPS] > 0:
            lap_time = float(st.cars_f[w, c, L.F_LAST_LAP_TIME])
            # None for a partial first lap (the car was placed part-way round it)
            emit({"type": "lap-completed", "lap_time_seconds": lap_time if lap_time > 0.0 else None,
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
