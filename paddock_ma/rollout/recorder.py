"""RolloutRecorder: neutral transition rows from environment results (no trainer, no reward of its own).

A transition is ``{observation, action, reward, next_observation, terminated, truncated, info}``:
``observation`` comes from the result before the step, everything else from the result after it.
``reward`` is the environment's reward map, or None when the environment has no reward callback (the
recorder never invents one). Every row is deep-copied when it is recorded (numpy arrays included), so
later mutation of the environment's buffers or of the caller's action/observation dicts does not
rewrite stored rows.
"""

from __future__ import annotations

import copy

from ..env.json_safe import json_safe

TRANSITION_KEYS = ("observation", "action", "reward", "next_observation", "terminated", "truncated", "info")


class RolloutRecorder:
    """Collects deep-copied transitions; ``transitions`` is the list of rows, ``to_json()`` a JSON form."""

    def __init__(self):
        self.transitions: list[dict] = []

    def record_step(self, prev_result: dict, action, next_result: dict) -> dict:
        """Store and return the transition from ``prev_result`` through ``action`` to ``next_result``."""
        if not isinstance(prev_result, dict) or not isinstance(next_result, dict):
            raise TypeError("record_step(prev_result, action, next_result): the results must be step-result dicts")
        row = {
            "observation": prev_result.get("observation"),
            "action": action,
            "reward": next_result.get("reward"),
            "next_observation": next_result.get("observation"),
            "terminated": bool(next_result.get("terminated", False)),
            "truncated": bool(next_result.get("truncated", False)),
            "info": next_result.get("info"),
        }
        row = copy.deepcopy(row)  # copies nested dicts, lists and numpy arrays (ndarray.__deepcopy__)
        self.transitions.append(row)
        return row

    def clear(self) -> None:
        self.transitions = []

    def __len__(self) -> int:
        return len(self.transitions)

    def to_json(self) -> dict:
        """``{"transitions": [...]}`` with only JSON types (lists, numbers, None for NaN/inf)."""
        return {"transitions": [json_safe(t) for t in self.transitions]}


__all__ = ["RolloutRecorder", "TRANSITION_KEYS"]
