"""Per-driver episode state and neutral step metrics, as arrays over (world, controlled driver).

Metrics are facts, not rewards: they come from the step's event counters (``cars_i[..., I_CNT_*]``,
accumulated over the frame-skip ticks) and the car state after the step. ``METRIC_NAMES`` fixes the
column order of the ``metrics[W, K, M]`` float32 array; ``metrics_dict`` gives one driver's dict.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..sim import layout as L

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
M_PROGRESS, M_LEGAL_PROGRESS, M_KERB, M_OFF_TRACK, M_SEVERE_CUT, M_DESTROYED, M_UNDER_30, M_SPIN, \
    M_LAP_COMPLETED, M_LAP_TIME, M_CONTACTS = range(len(METRIC_NAMES))
BOOLEAN_METRICS = frozenset({"kerb", "off_track", "severe_cut", "destroyed", "under_30_kph",
                             "spin_or_backwards", "lap_completed"})


def compute_metrics(cars_f: np.ndarray, cars_i: np.ndarray, slots: np.ndarray, out: np.ndarray) -> np.ndarray:
    """Fill ``out[W, K, M]`` float32 for the controlled ``slots`` from the state after a step."""
    f = cars_f[:, slots]
    i = cars_i[:, slots]
    out[..., M_PROGRESS] = f[..., L.F_STEP_PROGRESS]
    out[..., M_LEGAL_PROGRESS] = f[..., L.F_STEP_LEGAL_PROGRESS]
    out[..., M_KERB] = i[..., L.I_CNT_KERB_TICKS] > 0
    out[..., M_OFF_TRACK] = i[..., L.I_CNT_OFFTRACK_TICKS] > 0
    out[..., M_SEVERE_CUT] = i[..., L.I_CNT_SEVERE_CUT_TICKS] > 0
    out[..., M_DESTROYED] = i[..., L.I_DESTROYED] != 0
    out[..., M_UNDER_30] = f[..., L.F_SPEED] < 30.0 * L.KPH
    out[..., M_SPIN] = (i[..., L.I_CNT_SPIN_TICKS] > 0) | (i[..., L.I_DESTROYED] != 0)
    lap = i[..., L.I_CNT_LAPS] > 0
    out[..., M_LAP_COMPLETED] = lap
    out[..., M_LAP_TIME] = np.where(lap, f[..., L.F_LAST_LAP_TIME], np.nan)
    out[..., M_CONTACTS] = i[..., L.I_CNT_CONTACTS]
    return out


def metrics_dict(row: np.ndarray) -> dict:
    """One driver's metrics (a row of M floats) as a dict with booleans, ints and None for NaN."""
    out = {}
    for name, value in zip(METRIC_NAMES, row.tolist()):
        if name in BOOLEAN_METRICS:
            out[name] = bool(value)
        elif name == "contact_count":
            out[name] = int(value)
        elif name == "lap_time_seconds":
            out[name] = None if value != value else float(value)
        else:
            out[name] = float(value)
    return out


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
        i = cars_i[:, slots]
        return cls(terminated=i[..., L.I_TERMINATED] != 0, truncated=i[..., L.I_TRUNCATED] != 0,
                   end_reason=i[..., L.I_END_REASON].copy(), episode_id=i[..., L.I_EPISODE_ID].copy(),
                   episode_step=i[..., L.I_EPISODE_STEP].copy(), life=i[..., L.I_LIFE].copy())

    @property
    def done(self) -> np.ndarray:
        return self.terminated | self.truncated


def episode_dict(ep: EpisodeArrays, w: int, k: int) -> dict:
    """``info.drivers[driver]`` of one driver: terminated, truncated, end reason, episode id and step."""
    return {"terminated": bool(ep.terminated[w, k]), "truncated": bool(ep.truncated[w, k]),
            "end_reason": L.END_REASON_NAMES[int(ep.end_reason[w, k])],
            "episode_id": int(ep.episode_id[w, k]), "episode_step": int(ep.episode_step[w, k])}
