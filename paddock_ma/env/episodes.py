"""Per-driver episode state and neutral step metrics, as arrays over (world, controlled driver).

Metrics are facts, not rewards: they come from the step's event counters (``cars_i[..., I_CNT_*]``,
accumulated over the frame-skip ticks) and the car state after the step. ``METRIC_NAMES`` fixes the
column order of the ``metrics[W, K, M]`` float32 array; ``metrics_dict`` gives one driver's dict.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..sim import layout as L
from ..sim.jit import kernel

# The end reasons of an episode, as the contract reports them (the sim's codes and their names).
END_REASON_NAMES = L.END_REASON_NAMES
END_DESTROYED = L.END_DESTROYED

METRIC_NAMES = (
    "progress_delta_meters",        # race distance gained this step (negative when going backwards)
    "legal_progress_delta_meters",  # race distance gained while every wheel was on a legal surface
    "kerb",                         # 1 if a wheel touched a kerb during the step
    "off_track",                    # 1 if a wheel touched gravel, grass or barrier during the step
    "severe_cut",                   # 1 if all four wheels were beyond the kerb on one side
    "destroyed",                    # 1 once the car touched the barrier (until reset)
    "under_30_kph",                 # 1 if the car ends the step below 30 km/h
    "spin_or_backwards",            # 1 for an instability label, a backwards heading error, or destruction
    "lap_completed",                # 1 if a lap was completed during the step
    "lap_time_seconds",             # the completed lap's time, NaN when no lap was completed
    "contact_count",                # car-car contact events involving the driver during the step
)
# (``metrics_dicts`` relies on this order: the floats, the booleans, the lap time, the contact count)
M_PROGRESS, M_LEGAL_PROGRESS, M_KERB, M_OFF_TRACK, M_SEVERE_CUT, M_DESTROYED, M_UNDER_30, M_SPIN, \
    M_LAP_COMPLETED, M_LAP_TIME, M_CONTACTS = range(len(METRIC_NAMES))
_KPH_30 = 30.0 * L.MPS_PER_KPH


@kernel
def compute_metrics(cars_f, cars_i, slots, out):
    """Fill ``out[W, K, M]`` float32 for the controlled ``slots`` (int64[K]) from the state after a
    step (``cars_f`` [W, C, NF], ``cars_i`` [W, C, NI])."""
    for w in range(out.shape[0]):
        for k in range(out.shape[1]):
            f = cars_f[w, slots[k]]
            i = cars_i[w, slots[k]]
            row = out[w, k]
            row[M_PROGRESS] = f[L.F_STEP_PROGRESS]
            row[M_LEGAL_PROGRESS] = f[L.F_STEP_LEGAL_PROGRESS]
            row[M_KERB] = i[L.I_CNT_KERB_TICKS] > 0
            row[M_OFF_TRACK] = i[L.I_CNT_OFFTRACK_TICKS] > 0
            row[M_SEVERE_CUT] = i[L.I_CNT_SEVERE_CUT_TICKS] > 0
            row[M_DESTROYED] = i[L.I_DESTROYED] != 0
            row[M_UNDER_30] = f[L.F_SPEED] < _KPH_30
            row[M_SPIN] = i[L.I_CNT_SPIN_TICKS] > 0 or i[L.I_DESTROYED] != 0
            lap = i[L.I_CNT_LAPS] > 0
            row[M_LAP_COMPLETED] = lap
            # no time for a partial first lap (a car placed part-way round: rules.place_car)
            row[M_LAP_TIME] = f[L.F_LAST_LAP_TIME] if lap and f[L.F_LAST_LAP_TIME] > 0.0 else np.nan
            row[M_CONTACTS] = i[L.I_CNT_CONTACTS]


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
    """``metrics_dict`` of every row of float32[K, M]: each kind of column converted in one call (the
    column order is two floats, the seven booleans, the lap time, the contact count)."""
    floats = rows[:, :M_KERB].tolist()
    flags = (rows[:, M_KERB:M_LAP_TIME] != 0).tolist()
    lap_times = [None if v != v else v for v in rows[:, M_LAP_TIME].tolist()]
    contacts = rows[:, M_CONTACTS].astype(np.int64).tolist()
    # a dict display is the fastest way to build many dicts with the same keys (METRIC_NAMES, in
    # order: tests/env/test_paddock_env.py checks the keys)
    return [{"progress_delta_meters": f[0], "legal_progress_delta_meters": f[1], "kerb": b[0], "off_track": b[1],
             "severe_cut": b[2], "destroyed": b[3], "under_30_kph": b[4], "spin_or_backwards": b[5],
             "lap_completed": b[6], "lap_time_seconds": t, "contact_count": c}
            for f, b, t, c in zip(floats, flags, lap_times, contacts)]


def metrics_row(metrics: dict) -> np.ndarray:
    """float32[M] of a ``metrics_dict`` (its inverse: booleans 0/1, a None lap time NaN)."""
    return np.array([np.nan if metrics[name] is None else float(metrics[name]) for name in METRIC_NAMES], np.float32)


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
    """``info.drivers[driver]`` of every controlled driver from its rows of ``cars_i`` (int32[K, NI])."""
    names = L.END_REASON_NAMES
    return [{"terminated": t, "truncated": u, "end_reason": names[r], "episode_id": e, "episode_step": n}
            for t, u, r, e, n in zip((rows[:, L.I_TERMINATED] != 0).tolist(), (rows[:, L.I_TRUNCATED] != 0).tolist(),
                                     rows[:, L.I_END_REASON].tolist(), rows[:, L.I_EPISODE_ID].tolist(),
                                     rows[:, L.I_EPISODE_STEP].tolist())]


def episode_dict(ep: EpisodeArrays, w: int, k: int) -> dict:
    """``info.drivers[driver]`` of one driver: terminated, truncated, end reason, episode id and step."""
    return {"terminated": bool(ep.terminated[w, k]), "truncated": bool(ep.truncated[w, k]),
            "end_reason": L.END_REASON_NAMES[int(ep.end_reason[w, k])],
            "episode_id": int(ep.episode_id[w, k]), "episode_step": int(ep.episode_step[w, k])}
