"""BatchResult: the arrays one batched reset, step or reset_drivers of a ``BatchEnv`` returns.

Shapes (W worlds, K controlled drivers, D observation size, M = len(``episodes.METRIC_NAMES``)): ``obs``
float32[W, K, D]; ``reward`` float32[W, K] or None; ``terminated``, ``truncated`` bool[W, K]; ``end_reason``,
``episode_id``, ``episode_step``, ``life`` int32[W, K]; ``metrics`` float32[W, K, M]; ``reset_mask`` bool[W, K]
(cars auto-reset after this step, whose ``obs`` is already the new life's and whose last observation is in
``final_obs``); ``world_step`` int64[W]; ``reset_result``: the auto-reset cars' ``reset_drivers`` result (the
new episodes' ids, lives and steps), or None.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class BatchResult:
    """Arrays of one batched reset or step (see the module docstring for shapes)."""
    obs: np.ndarray
    reward: np.ndarray | None
    terminated: np.ndarray
    truncated: np.ndarray
    end_reason: np.ndarray
    episode_id: np.ndarray
    episode_step: np.ndarray
    life: np.ndarray
    metrics: np.ndarray
    reset_mask: np.ndarray
    final_obs: np.ndarray | None
    world_step: np.ndarray
    reset_result: "BatchResult | None" = None

    @property
    def done(self) -> np.ndarray:
        return self.terminated | self.truncated
