"""Per-driver episode state and neutral step metrics, as arrays over (world, controlled driver).

Metrics are facts, not rewards: they come from the step's event counters (``cars_i[..., I_CNT_*]``,
accumulated over the frame-skip ticks) and the car state after the step (``fully_outside_white_line``,
``destroyed``, ``under_30_kph``: PaddockJS reads every metric from the end-of-step state). ``METRIC_NAMES`` fixes the
column order of the ``metrics[W, K, M]`` float32 array; ``metrics_dict`` gives one driver's dict.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..sim.core import layout as L
from ..sim.core.jit import kernel

# The end reasons of an episode, as the contract reports them (the sim's codes and their names).
END_REASON_NAMES = L.END_REASON_NAMES
END_DESTROYED = L.END_DESTROYED

METRIC_NAMES = (       # PaddockJS 2.0.0's thirteen, in its order (wire names: paddockjs.naming)
    "progress_delta_meters",        # race distance gained this step (negative when going backwards)
    "legal_progress_delta_meters",  # race distance gained while every wheel was on a legal surface
    "off_track",                    # 1 if a wheel touched gravel, grass or barrier during the step
    "kerb",                         # 1 if a wheel touched a kerb during the step
    "fully_outside_white_line",     # 1 if every wheel's patch ends the step wholly past one white line
    "severe_cut",                   # 1 if all four wheels were beyond the kerb on one side
    "destroyed",                    # 1 once the car touched the barrier (until reset)
    "destroy_reason",               # DESTROY_REASON_NAMES code: 0 none, 1 barrier
    "under_30_kph",                 # 1 if the car ends the step below 30 km/h
    "spin_or_backwards",            # 1 for an instability label, a backwards heading error, or destruction
    "lap_completed",                # 1 if a lap was completed during the step
    "lap_time_seconds",             # the completed lap's time, NaN when no lap was completed
    "contact_count",                # car-car contact events involving the driver during the step
)
M_PROGRESS, M_LEGAL_PROGRESS, M_OFF_TRACK, M_KERB, M_FULLY_OUTSIDE, M_SEVERE_CUT, M_DESTROYED, M_DESTROY_REASON, \
    M_UNDER_30, M_SPIN, M_LAP_COMPLETED, M_LAP_TIME, M_CONTACTS = range(len(METRIC_NAMES))
# destroy_reason's codes (a car is destroyed by the barrier only; PaddockJS's "missing-car" cannot occur)
DESTROY_REASON_NAMES = (None, "barrier")
_KPH_30 = 30.0 * L.MPS_PER_KPH
# half the contact patch's length and width (m): how far a patch reaches across the track
_PATCH_HALF_LENGTH = 0.5 * L.PATCH_LENGTH
_PATCH_HALF_WIDTH = 0.5 * L.PATCH_WIDTH
# the white line of every shipped track (sim.track.build.HALF_WIDTH, PaddockJS's 15 m track)
DEFAULT_HALF_WIDTH = 7.5


@kernel
def compute_metrics(cars_f, cars_i, slots, out, half_width=DEFAULT_HALF_WIDTH):
    """Fill ``out[W, K, M]`` float32 for the controlled ``slots`` (int64[K]) from the state after a
    step (``cars_f`` [W, C, NF], ``cars_i`` [W, C, NI]); ``half_width``: the track's white line (m
    from the centreline)."""
    for w in range(out.shape[0]):
        for k in range(out.shape[1]):
            f = cars_f[w, slots[k]]
            i = cars_i[w, slots[k]]
            row = out[w, k]
            row[M_PROGRESS] = f[L.F_STEP_PROGRESS]
            row[M_LEGAL_PROGRESS] = f[L.F_STEP_LEGAL_PROGRESS]
            row[M_OFF_TRACK] = i[L.I_CNT_OFFTRACK_TICKS] > 0
            row[M_KERB] = i[L.I_CNT_KERB_TICKS] > 0
            row[M_FULLY_OUTSIDE] = _fully_outside(f, i[L.I_IN_PIT_LANE] != 0, half_width)
            row[M_SEVERE_CUT] = i[L.I_CNT_SEVERE_CUT_TICKS] > 0
            destroyed = i[L.I_DESTROYED] != 0
            row[M_DESTROYED] = destroyed
            row[M_DESTROY_REASON] = 1.0 if destroyed else 0.0
            row[M_UNDER_30] = f[L.F_SPEED] < _KPH_30
            row[M_SPIN] = i[L.I_CNT_SPIN_TICKS] > 0 or destroyed
            lap = i[L.I_CNT_LAPS] > 0
            row[M_LAP_COMPLETED] = lap
            # no time for a partial first lap (a car placed part-way round: sim.race.placement.place_car)
            row[M_LAP_TIME] = f[L.F_LAST_LAP_TIME] if lap and f[L.F_LAST_LAP_TIME] > 0.0 else np.nan
            row[M_CONTACTS] = i[L.I_CNT_CONTACTS]


@kernel(inline="always")
def _fully_outside(f, in_pit_lane, half_width):
    """Every wheel's contact patch lies wholly past the same white line (PaddockJS's
    ``fullyOutsideWhiteLine``: each patch's every point beyond the track edge, never in the pit lane),
    from the patch centres' signed offsets (m) and how far a patch reaches across the track at the
    car's heading error."""
    if in_pit_lane:
        return False
    he = f[L.F_HEADING_ERROR]
    reach = _PATCH_HALF_LENGTH * abs(math.sin(he)) + _PATCH_HALF_WIDTH * abs(math.cos(he))
    lo = min(f[L.F_WHEEL_OFFSET_FL], f[L.F_WHEEL_OFFSET_FR], f[L.F_WHEEL_OFFSET_RL], f[L.F_WHEEL_OFFSET_RR])
    hi = max(f[L.F_WHEEL_OFFSET_FL], f[L.F_WHEEL_OFFSET_FR], f[L.F_WHEEL_OFFSET_RL], f[L.F_WHEEL_OFFSET_RR])
    return lo - reach > half_width or hi + reach < -half_width


@kernel
def running_slots(cars_i, slots, out):
    """out bool[W, K] = the episode of controlled slot slots[k] (int64[K]) in world w runs (neither
    terminated nor truncated)."""
    for w in range(out.shape[0]):
        for k in range(out.shape[1]):
            i = cars_i[w, slots[k]]
            out[w, k] = i[L.I_TERMINATED] == 0 and i[L.I_TRUNCATED] == 0


def metrics_dict(row: np.ndarray) -> dict:
    """One driver's metrics (a row of M floats) as a dict with booleans, ints and None for NaN."""
    return metrics_dicts(np.asarray(row)[None])[0]


def metrics_dicts(rows: np.ndarray) -> list:
    """``metrics_dict`` of every row of float32[K, M]: each kind of column converted in one call (two
    floats, five booleans, the destroy reason, four booleans, the lap time, the contact count)."""
    floats = rows[:, :M_OFF_TRACK].tolist()
    flags = (rows[:, M_OFF_TRACK:M_DESTROY_REASON] != 0).tolist()
    reasons = [DESTROY_REASON_NAMES[int(v)] for v in rows[:, M_DESTROY_REASON].tolist()]
    later = (rows[:, M_UNDER_30:M_LAP_TIME] != 0).tolist()
    lap_times = [None if v != v else v for v in rows[:, M_LAP_TIME].tolist()]
    contacts = rows[:, M_CONTACTS].astype(np.int64).tolist()
    # a dict display is the fastest way to build many dicts with the same keys (METRIC_NAMES, in
    # order: tests/env/test_paddock_env.py checks the keys)
    return [{"progress_delta_meters": f[0], "legal_progress_delta_meters": f[1], "off_track": b[0], "kerb": b[1],
             "fully_outside_white_line": b[2], "severe_cut": b[3], "destroyed": b[4], "destroy_reason": r,
             "under_30_kph": a[0], "spin_or_backwards": a[1], "lap_completed": a[2], "lap_time_seconds": t,
             "contact_count": c}
            for f, b, r, a, t, c in zip(floats, flags, reasons, later, lap_times, contacts)]


def metrics_row(metrics: dict) -> np.ndarray:
    """float32[M] of a ``metrics_dict`` (its inverse: booleans 0/1, a None lap time NaN, the destroy
    reason's code)."""
    values = dict(metrics, destroy_reason=DESTROY_REASON_NAMES.index(metrics["destroy_reason"]))
    return np.array([np.nan if values[name] is None else float(values[name]) for name in METRIC_NAMES], np.float32)


@dataclass
class EpisodeArrays:
    """Per-driver episode state of W worlds x K controlled drivers (views gathered after a step)."""
    terminated: np.ndarray   # bool[W, K]
    truncated: np.ndarray    # bool[W, K]
    end_reason: np.ndarray   # int32[W, K], layout.END_* codes
    episode_id: np.ndarray   # int32[W, K]
    episode_step: np.ndarray # int32[W, K]
    life: np.ndarray         # int32[W, K]

    @classmethod
    def gather(cls, cars_i: np.ndarray, slots: np.ndarray) -> "EpisodeArrays":
        w, k = cars_i.shape[0], slots.shape[0]
        out = cls(np.empty((w, k), bool), np.empty((w, k), bool), *(np.empty((w, k), np.int32) for _ in range(4)))
        _gather_episodes(cars_i, slots, out.terminated, out.truncated, out.end_reason, out.episode_id,
                         out.episode_step, out.life)
        return out

    @property
    def done(self) -> np.ndarray:
        return self.terminated | self.truncated


@kernel
def _gather_episodes(cars_i, slots, terminated, truncated, end_reason, episode_id, episode_step, life):
    """Copy the episode fields of the controlled slots (int64[K]) out of ``cars_i`` [W, C, NI] into
    the [W, K] arrays of ``EpisodeArrays``."""
    for w in range(terminated.shape[0]):
        for k in range(terminated.shape[1]):
            i = cars_i[w, slots[k]]
            terminated[w, k] = i[L.I_TERMINATED] != 0
            truncated[w, k] = i[L.I_TRUNCATED] != 0
            end_reason[w, k] = i[L.I_END_REASON]
            episode_id[w, k] = i[L.I_EPISODE_ID]
            episode_step[w, k] = i[L.I_EPISODE_STEP]
            life[w, k] = i[L.I_LIFE]


def episode_dicts(rows: np.ndarray) -> list:
    """``info.drivers[driver]`` of every controlled driver from its rows of ``cars_i`` (int32[K, NI]), its
    keys in PaddockJS's order."""
    names = L.END_REASON_NAMES
    return [{"terminated": t, "truncated": u, "end_reason": names[r], "episode_step": n, "episode_id": e}
            for t, u, r, e, n in zip((rows[:, L.I_TERMINATED] != 0).tolist(), (rows[:, L.I_TRUNCATED] != 0).tolist(),
                                     rows[:, L.I_END_REASON].tolist(), rows[:, L.I_EPISODE_ID].tolist(),
                                     rows[:, L.I_EPISODE_STEP].tolist())]


def episode_dict(ep: EpisodeArrays, w: int, k: int) -> dict:
    """``info.drivers[driver]`` of one driver: terminated, truncated, end reason, episode id and step."""
    return {"terminated": bool(ep.terminated[w, k]), "truncated": bool(ep.truncated[w, k]),
            "end_reason": L.END_REASON_NAMES[int(ep.end_reason[w, k])],
            "episode_step": int(ep.episode_step[w, k]), "episode_id": int(ep.episode_id[w, k])}
