"""What a restored state may hold: each field of the state and parameter arrays against its range.

A snapshot's checksums say its bytes are the ones written; they say nothing about whether those bytes
are a state the kernels can run (a forged document recomputes them). ``check_state`` reads every field
by its name in ``layout`` (``I_*``, ``WI_*``, ``R_*``): codes must be codes (``*_NAMES``), indices must
index (centreline segments, car slots), flags 0 or 1, counts >= 0 (a pit box too: the kernels clamp
it to the track's boxes), floats finite. Fields a
table below does not name get the defaults of their array: finite floats, any integer.
"""

from __future__ import annotations

import numpy as np

from . import layout as L

INT32_MAX = 2**31 - 1


def _code(names) -> tuple:
    return (0, len(names) - 1)


FLAG = (0, 1)
COUNT = (0, INT32_MAX)
# cars_i: field -> (low, high) inclusive, or the name of a bound that depends on the track / shape
CAR_INT_RANGES = {
    L.I_ACTIVE: FLAG, L.I_DESTROYED: FLAG, L.I_FINISHED: FLAG, L.I_MANUAL: FLAG, L.I_LAP: COUNT,
    L.I_COMPLETED_LAPS: COUNT, L.I_SECTOR: (0, 2), L.I_SURFACE: (0, L.N_SURFACES - 1),
    **{f: (0, L.N_SURFACES - 1) for f in L.WHEEL_SURFACE_FIELDS},
    L.I_ON_TRACK: FLAG, L.I_IN_PIT_LANE: FLAG, L.I_PIT_INTENT: (0, 2), L.I_PIT_STATUS: _code(L.PIT_STATUS_NAMES),
    L.I_PIT_TARGET: _code(L.COMPOUND_NAMES), L.I_COMPOUND: _code(L.COMPOUND_NAMES), L.I_PIT_BOX: COUNT,
    L.I_PIT_STOPS: COUNT, L.I_SEG_HINT: "centreline segments", L.I_RANK: "car slots + 1", L.I_GRID_LOCKED: FLAG,
    L.I_INSTABILITY: _code(L.INSTABILITY_NAMES), L.I_RETIRED: FLAG, L.I_AI_REJOIN: COUNT, L.I_EPISODE_ID: COUNT,
    L.I_EPISODE_STEP: COUNT, L.I_LIFE: COUNT, L.I_TERMINATED: FLAG, L.I_TRUNCATED: FLAG,
    L.I_END_REASON: _code(L.END_REASON_NAMES), L.I_USED_COMPOUNDS: (0, 2 ** len(L.COMPOUND_NAMES) - 1),
    **{f: COUNT for f in range(L.FIRST_COUNTER, L.I_CNT_DESTROYED + 1)},
    L.I_LAST_CONTACT_WITH: "car slots or -1", L.I_TRACTION_LIMITED: FLAG,
    L.I_DRS_ZONE: "DRS zones + 1", L.I_DRS_ENABLED: FLAG, L.I_DRS_ACTIVE: FLAG,
    **{L.I_DRS_PASSAGE_0 + k: COUNT for k in range(L.MAX_DRS_ZONES)},
    L.I_PIT_ROUTE: _code(L.ROUTE_NAMES), L.I_PIT_ROUTE_CURSOR: COUNT,
}
WORLD_INT_RANGES = {L.WI_TICK: (0, 2**63 - 1), L.WI_RNG_COUNTER: (0, 2**63 - 1),
                    L.WI_RACE_MODE: _code(L.RACE_MODE_NAMES), L.WI_RED_FLAG: FLAG, L.WI_PIT_LANE_OPEN: FLAG,
                    L.WI_RACE_FINISHED: FLAG, L.WI_ENV_STEP: (0, 2**63 - 1)}
RULE_RANGES = {L.R_PHYSICS_MODE: (L.PHYSICS_ARCADE, L.PHYSICS_SIMULATOR), L.R_TOTAL_LAPS: (1, INT32_MAX),
               L.R_STANDING_START: FLAG, L.R_TIRE_DEGRADATION: FLAG, L.R_PIT_STOPS: FLAG, L.R_PIT_VARIABILITY: FLAG,
               L.R_PIT_PERFECT: FLAG, L.R_STALLED_DNF: FLAG, L.R_DRS_DETECTION: (0.0, float("inf"))}
FLAG_BITS = sum(v for k, v in vars(L).items() if k.startswith("FLAG_") and isinstance(v, int))


def field_names(prefix: str) -> dict:
    """``{index: name}`` of the ``layout`` constants starting with ``prefix`` (``I_``, ``WI_``, ``R_`` ...)."""
    names = {}
    for k, v in vars(L).items():
        if k.startswith(prefix) and isinstance(v, int) and not isinstance(v, bool):
            names.setdefault(v, k)
    return names


def field_bounds(spec, track, num_cars: int) -> tuple:
    """``(low, high)`` inclusive of a range table entry, resolving the track- or shape-dependent ones."""
    if not isinstance(spec, str):
        return spec
    return {"centreline segments": (0, track.cx.shape[0] - 2),      # segment i joins points i and i + 1
            "car slots + 1": (0, num_cars),
            "car slots or -1": (-1, num_cars - 1),
            "DRS zones + 1": (0, track.drs_start.shape[0])}[spec]


def _first_bad(values: np.ndarray, lo, hi):
    """Index (tuple) of the first value outside [lo, hi], or None."""
    bad = (values < lo) | (values > hi)
    if not bad.any():
        return None
    return tuple(int(i) for i in np.argwhere(bad)[0])


def check_state(arrays: dict, track) -> str | None:
    """The first field of ``arrays`` (``WorldState.arrays()``'s names and shapes) out of its range, as
    ``"arrays.cars_i[w, c, I_SEG_HINT]: got 1000000; expected 0..311 (centreline segments)"``; None when
    every field is in range."""
    num_cars = arrays["cars_i"].shape[1]
    for name in ("cars_f", "world_f", "car_params", "rules"):
        a = arrays[name]
        finite = np.isfinite(a)
        if not finite.all():
            idx = tuple(int(i) for i in np.argwhere(~finite)[0])
            prefix = {"cars_f": "F_", "world_f": "WF_", "car_params": "P_", "rules": "R_"}[name]
            field = field_names(prefix).get(idx[-1], str(idx[-1]))
            return f"arrays.{name}[{', '.join(map(str, idx[:-1]))}, {field}]: got {a[idx].item()!r}; expected a finite number"
    for name, table, prefix in (("cars_i", CAR_INT_RANGES, "I_"), ("world_i", WORLD_INT_RANGES, "WI_"),
                                ("rules", RULE_RANGES, "R_")):
        a = arrays[name]
        names = field_names(prefix)
        for field, spec in table.items():
            lo, hi = field_bounds(spec, track, num_cars)
            at = _first_bad(a[..., field], lo, hi)
            if at is not None:
                why = f" ({spec})" if isinstance(spec, str) else ""
                return (f"arrays.{name}[{', '.join(map(str, at))}, {names[field]}]: got {a[at + (field,)].item()!r}; "
                        f"expected {lo}..{hi}{why}")
    flags = arrays["car_flags"]
    at = _first_bad(flags & ~FLAG_BITS, 0, 0)
    if at is not None:
        return f"arrays.car_flags[{', '.join(map(str, at))}]: got {flags[at].item()!r}; expected a mask of the FLAG_* bits ({FLAG_BITS})"
    return None
