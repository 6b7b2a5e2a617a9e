"""What the adapters count of the car episodes they run: each running episode's legal progress and
steps, and totals over every episode that ended (exact per-episode rates for a trainer, whatever way it
averages infos). ``Lives`` (a car's lives) and ``CarVectorEnv`` (a car's sub-environment episodes) keep
one each.
"""

from __future__ import annotations

import numpy as np

from ..env.episodes import END_DESTROYED


class EpisodeTally:
    """Running figures of the episodes of ``shape`` = (W, K) cars and totals of the ended ones.

    ``meters`` float64[W, K]: legal progress (m) of each running episode; ``steps`` int64[W, K]: its steps;
    ``totals``: ``<noun>_ended``, ``<noun>_crashed`` (ended at the barrier), ``legal_meters`` (m) and
    ``steps`` of the ended episodes, ``noun`` naming them for the caller (``lives``, ``episodes``).
    """

    def __init__(self, shape: tuple, noun: str):
        self.meters = np.zeros(shape, np.float64)
        self.steps = np.zeros(shape, np.int64)
        self._ended_key, self._crashed_key = f"{noun}_ended", f"{noun}_crashed"
        self.totals = {self._ended_key: 0, self._crashed_key: 0, "legal_meters": 0.0, "steps": 0}

    def add(self, running: np.ndarray, legal_progress: np.ndarray) -> None:
        """One step of the ``running`` (bool[W, K]) cars, which made ``legal_progress`` (m, [W, K])."""
        self.meters += np.where(running, legal_progress, 0.0)
        self.steps += running

    def close(self, ended: np.ndarray, end_reason: np.ndarray) -> None:
        """The episodes of ``ended`` (bool[W, K]) are over: add them to the totals (``end_reason`` int[W, K],
        the engine's codes) and start their figures from zero."""
        if ended.any():
            t = self.totals
            t[self._ended_key] += int(ended.sum())
            t[self._crashed_key] += int((ended & (end_reason == END_DESTROYED)).sum())
            t["legal_meters"] += float(self.meters[ended].sum())
            t["steps"] += int(self.steps[ended].sum())
        self.meters[ended] = 0.0
        self.steps[ended] = 0

    def clear(self) -> None:
        """Every running episode starts again from zero (the totals stay)."""
        self.meters[:] = 0.0
        self.steps[:] = 0
