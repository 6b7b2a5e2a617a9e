"""The gymnasium spaces and info arrays every adapter shares (PettingZoo, RLlib, the vector envs).

* ``vehicle_action_space()``: ``Box([-1, 0, 0], [1, 1, 1], (3,), float32)`` (steering, throttle, brake;
  the bounds are the contract's, ``env.actions.ACTION_LOW`` / ``ACTION_HIGH``).
* ``observation_space(d)``: ``Box(-inf, inf, (d,), float32)`` (the vector mixes normalised ratios with
  unbounded physical quantities, so no finite bound is claimed).
* ``final_obs_info(last, mask)``: gymnasium's ``SAME_STEP`` autoreset info, an object array of the
  final observations where ``mask`` is set and None elsewhere.
"""

from __future__ import annotations

import numpy as np
from gymnasium import spaces

from ..env.actions import ACTION_HIGH, ACTION_LOW


def vehicle_action_space() -> spaces.Box:
    """One car's action space: [steering, throttle, brake] in the contract's bounds, float32[3]."""
    return spaces.Box(ACTION_LOW.astype(np.float32), ACTION_HIGH.astype(np.float32), (3,), np.float32)


def observation_space(size: int) -> spaces.Box:
    """One car's observation space: float32[size], unbounded."""
    return spaces.Box(-np.inf, np.inf, (int(size),), np.float32)


def final_obs_info(last: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """object[N]: ``last[i]`` (a copy of observation float32[D]) where ``mask[i]`` (bool[N]), None elsewhere;
    ``last`` is float32[N, D], the observations the sub-environments' episodes ended with."""
    final = np.empty(len(mask), object)
    for i in np.nonzero(mask)[0]:
        final[i] = last[i].copy()
    return final
