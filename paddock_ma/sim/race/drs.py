"""DRS: PaddockJS 2.0.0's latch (``timing/drsTiming.js``) and the race order it runs in, per world and tick.

A car whose progress crosses the start of one of the track's DRS zones (``TrackArrays.drs_start``,
``drs_end``) latches that zone (I_DRS_ZONE: 1 + its index, 0 none) and counts a passage of it
(I_DRS_PASSAGE_k, F_DRS_TIME_k: PaddockJS's ``drsDetection``). The zone is enabled (I_DRS_ENABLED) when the car's DRS reference crossed
the same start on the same passage at most ``R_DRS_DETECTION`` s (PaddockJS's ``drsDetectionSeconds``,
1 s) earlier. The reference (``getDrsReferenceCar``) is the car nearest ahead by lap progress, less
than half a lap ahead, among the classified cars that have not finished and are not in an active pit
stop (a destroyed car may be one, as in PaddockJS). DRS is open (I_DRS_ACTIVE, PaddockJS's
``drsActive`` and ``drsEligible``) while the car is enabled and inside its latched zone; leaving the
zone clears the latch. Finished, destroyed, retired, unclassified cars and cars in an active pit stop
have no DRS; a red flag closes every car's.

Progress here is PaddockJS's (``F_PJS_PROGRESS``: the lap distance of the centreline sample nearest the
car, written by ``vehicle.wheels``; ``F_PJS_PREV_PROGRESS`` its value at the tick's start), and the cars
latch in PaddockJS's race order (``F_PJS_RACE_DISTANCE`` descending, slot order on ties), which
decides what a car sees of a reference that crosses the same start in the same tick.
The vehicle models read I_DRS_ACTIVE on the next tick (drag x 0.42 and power x 1.08 with +6 % drive in
arcade, drag x 0.46 and power x 1.07 in simulator mode), the built-in driver aims 22 km/h faster.

Cost: a loop over the cars per tick; the reference search (over the cars) and the ordering run only
for a car that crosses a zone start in that tick.
"""

import numpy as np

from ..core.jit import kernel
from ..core.layout import (
    F_DRS_TIME_0, F_PJS_PREV_PROGRESS, F_PJS_PROGRESS, F_PJS_RACE_DISTANCE, FLAG_CLASSIFIED, I_ACTIVE,
    I_DESTROYED, I_DRS_ACTIVE, I_DRS_ENABLED, I_DRS_PASSAGE_0, I_DRS_ZONE, I_FINISHED, I_RETIRED,
    MAX_DRS_ZONES, MODE_RED_FLAG, R_DRS_DETECTION, WF_TIME, WI_RACE_MODE,
)
from .pit_service import pit_route_active

CROSS_TOLERANCE = 0.001 / 12.0   # m: PaddockJS's 0.001 sim units beyond the distance travelled
DETECTION_TOLERANCE = 1e-6       # s, PaddockJS's tolerance on drsDetectionSeconds

__all__ = ["update_drs_world", "clear_drs", "MAX_DRS_ZONES"]


@kernel(inline="always")
def wrap_lap(value, length):
    """PaddockJS's ``wrapDistance``: ((value % L) + L) % L with JavaScript's remainder (m)."""
    return np.fmod(np.fmod(value, length) + length, length)


@kernel(inline="always")
def crosses(previous, current, target, length):
    """PaddockJS's ``crossesDistance``: progress moving forward (less than half a lap) from ``previous``
    to ``current`` (m) passed lap distance ``target``."""
    travelled = wrap_lap(current - previous, length)
    if travelled <= 0.0 or travelled > length / 2.0:
        return False
    offset = wrap_lap(target - previous, length)
    return offset > 0.0 and offset <= travelled + CROSS_TOLERANCE


@kernel(inline="always")
def in_zone(progress, start, end, length):
    """PaddockJS's ``isProgressInZone``: lap distance ``progress`` inside the zone [start, end] (m)."""
    if end - start >= length:
        return True
    p = wrap_lap(progress, length)
    s = wrap_lap(start, length)
    e = wrap_lap(end, length)
    if e >= s:
        return p >= s and p <= e
    return p >= s or p <= e


@kernel(inline="always")
def clear_drs(cars_i, w, c):
    """No DRS for car ``c``: no latched zone, not enabled, closed (its passages are kept)."""
    cars_i[w, c, I_DRS_ZONE] = 0
    cars_i[w, c, I_DRS_ENABLED] = 0
    cars_i[w, c, I_DRS_ACTIVE] = 0


@kernel(inline="always")
def _in_race(cars_i, car_flags, w, c):
    """A car the latch runs for: classified, neither destroyed, retired nor finished, not in a pit stop."""
    return ((car_flags[w, c] & FLAG_CLASSIFIED) != 0 and cars_i[w, c, I_DESTROYED] == 0
            and cars_i[w, c, I_RETIRED] == 0 and cars_i[w, c, I_FINISHED] == 0
            and not pit_route_active(cars_i, w, c))


@kernel(inline="always")
def _reference(cars_f, cars_i, car_flags, w, c, n_cars, length):
    """PaddockJS's ``getDrsReferenceCar``: the car nearest ahead of ``c`` by lap progress (less than half
    a lap), classified, not finished and not in an active pit stop; the first slot of equals; -1 none."""
    p = cars_f[w, c, F_PJS_PROGRESS]
    best = -1
    best_d = 0.0
    for o in range(n_cars):
        if (o == c or cars_i[w, o, I_ACTIVE] == 0 or (car_flags[w, o] & FLAG_CLASSIFIED) == 0
                or cars_i[w, o, I_FINISHED] != 0 or pit_route_active(cars_i, w, o)):
            continue
        d = wrap_lap(cars_f[w, o, F_PJS_PROGRESS] - p, length)
        if d <= 0.0 or d > length / 2.0:
            continue
        if best < 0 or d < best_d:
            best = o
            best_d = d
    return best


@kernel(inline="always")
def _ahead_in_order(cars_f, a, b, w):
    """True when car ``a`` comes before car ``b`` in PaddockJS's race order of running cars."""
    da = cars_f[w, a, F_PJS_RACE_DISTANCE]
    db = cars_f[w, b, F_PJS_RACE_DISTANCE]
    if da != db:
        return da > db
    return a < b


@kernel(inline="always")
def _latch(cars_f, cars_i, car_flags, rules, w, c, k, n_cars, length, now):
    """Car ``c`` crossed the start of zone ``k`` at ``now`` (s): latch it, count the passage, and enable
    it when the reference car crossed the same start on the same passage within the detection time."""
    cars_i[w, c, I_DRS_ZONE] = k + 1
    passage = cars_i[w, c, I_DRS_PASSAGE_0 + k] + 1
    cars_i[w, c, I_DRS_PASSAGE_0 + k] = passage
    cars_f[w, c, F_DRS_TIME_0 + k] = now
    ref = _reference(cars_f, cars_i, car_flags, w, c, n_cars, length)
    enabled = 0
    if ref >= 0 and cars_i[w, ref, I_DRS_PASSAGE_0 + k] == passage:
        t_ref = cars_f[w, ref, F_DRS_TIME_0 + k]
        if now >= t_ref and now - t_ref <= rules[w, R_DRS_DETECTION] + DETECTION_TOLERANCE:
            enabled = 1
    cars_i[w, c, I_DRS_ENABLED] = enabled


@kernel(inline="always")
def update_drs_world(drs_start, drs_end, length, cars_f, cars_i, car_flags, world_f, world_i, rules, w, n_cars,
                     crossed, order):
    """PaddockJS's DRS latch for every car of world ``w`` after its tick (module
    docstring). drs_start, drs_end: the track's zones (float64[Z], m); length: lap (m). Scratch:
    crossed int8[C] (the zone whose start each car crossed, -1 none), order int64[C] (the crossing
    cars in race order). Reads F_PJS_PROGRESS, F_PJS_PREV_PROGRESS and F_PJS_RACE_DISTANCE (which
    ``vehicle.wheels`` advances); writes the DRS fields."""
    n_zones = drs_start.shape[0]
    if n_zones == 0:
        return
    red = world_i[w, WI_RACE_MODE] == MODE_RED_FLAG
    n_crossed = 0
    for c in range(n_cars):
        crossed[c] = -1
        if cars_i[w, c, I_ACTIVE] == 0:
            continue
        if red or not _in_race(cars_i, car_flags, w, c):
            clear_drs(cars_i, w, c)
            continue
        p = cars_f[w, c, F_PJS_PROGRESS]
        z = cars_i[w, c, I_DRS_ZONE] - 1
        if z >= 0 and not in_zone(p, drs_start[z], drs_end[z], length):
            cars_i[w, c, I_DRS_ZONE] = 0
            cars_i[w, c, I_DRS_ENABLED] = 0
            z = -1
        prev = cars_f[w, c, F_PJS_PREV_PROGRESS]
        if z < 0 and prev >= 0.0:          # < 0: placed and not yet classified (no progress to cross from)
            for k in range(n_zones):
                if crosses(prev, p, drs_start[k], length):
                    crossed[c] = k
                    j = n_crossed
                    while j > 0 and _ahead_in_order(cars_f, c, order[j - 1], w):
                        order[j] = order[j - 1]
                        j -= 1
                    order[j] = c
                    n_crossed += 1
                    break
    now = world_f[w, WF_TIME]
    for j in range(n_crossed):
        c = order[j]
        _latch(cars_f, cars_i, car_flags, rules, w, c, crossed[c], n_cars, length, now)
    for c in range(n_cars):
        if cars_i[w, c, I_ACTIVE] == 0 or red or not _in_race(cars_i, car_flags, w, c):
            continue
        z = cars_i[w, c, I_DRS_ZONE] - 1
        open_ = (z >= 0 and cars_i[w, c, I_DRS_ENABLED] != 0
                 and in_zone(cars_f[w, c, F_PJS_PROGRESS], drs_start[z], drs_end[z], length))
        cars_i[w, c, I_DRS_ACTIVE] = 1 if open_ else 0
