"""The user's reward of the three oval training examples, and the figures they report.

``rllib_ppo.py`` (RLlib, packed multi-agent), ``rllib_vector_ppo.py`` (RLlib, vector env) and
``ppo_vector.py`` (plain torch, vector env) import it from here, so the three optimise one objective on
one env and report the same figures. The reward is written by the user from the env's neutral metrics:
an example objective, not the project's canonical one.

The figures come from the envs' running totals over every car life (episode) that ended: lives, crashed
lives, their metres of legal progress and their steps (``PaddockMultiAgentEnv.life_totals()``,
``CarVectorEnv.episode_totals()``); ``life_rates`` turns two readings into one iteration's figures.
"""

from __future__ import annotations

import numpy as np

from paddock_ma.env.episodes import M_DESTROYED, M_LEGAL_PROGRESS, M_OFF_TRACK

ENV_ID = "paddock/oval-batch-v0"   # 8 batch-training cars per world (no car-car contact)
CRASH_PENALTY = 200.0              # once, on the step a car hits the barrier (PaddockJS guide's example)
OFF_TRACK_PENALTY = 0.05           # per step with a wheel off the legal surface
LIFE_STEPS = 400                   # episode.max_steps of one car's life (a per-driver truncation)


def user_reward(metrics: np.ndarray, crash_penalty: float = CRASH_PENALTY) -> np.ndarray:
    """float32[W, K] of metrics float32[W, K, M]: metres of legal progress minus the crash and
    off-track penalties."""
    return (metrics[..., M_LEGAL_PROGRESS] - crash_penalty * metrics[..., M_DESTROYED]
            - OFF_TRACK_PENALTY * metrics[..., M_OFF_TRACK]).astype(np.float32)


def totals(reading: dict) -> dict:
    """A ``life_totals()`` or ``episode_totals()`` reading in one form: lives, crashed, meters, steps."""
    if "lives_ended" in reading:
        return {"lives": reading["lives_ended"], "crashed": reading["lives_crashed"],
                "meters": reading["legal_meters"], "steps": reading["steps"]}
    return {"lives": reading["episodes_ended"], "crashed": reading["episodes_crashed"],
            "meters": reading["legal_meters"], "steps": reading["steps"]}


def sum_totals(readings) -> dict:
    """The sum of several readings (one per env), in ``totals`` form."""
    out = {"lives": 0, "crashed": 0, "meters": 0.0, "steps": 0}
    for reading in readings:
        for key, value in totals(reading).items():
            out[key] += value
    return out


def life_rates(now: dict, before: dict) -> dict:
    """One iteration's figures from two ``sum_totals`` readings, over the lives that ended in it:
    ``lives_finished``, ``life_legal_progress_m`` (mean legal progress of a life), ``legal_m_per_car_step``,
    ``life_crash_rate`` (share of lives that ended at the barrier), ``crashes_per_km`` (per km of legal
    progress), and the sums behind them (``lives_crashed``, ``life_meters``, ``life_steps``). A reading
    below the one before (an env runner restarted) counts from zero."""
    d = {k: now[k] - before[k] for k in now}
    if any(v < 0 for v in d.values()):
        d = dict(now)
    n, nan = d["lives"], float("nan")
    return {"lives_finished": n,
            "life_legal_progress_m": round(d["meters"] / n, 2) if n else nan,
            "legal_m_per_car_step": round(d["meters"] / d["steps"], 4) if d["steps"] else nan,
            "life_crash_rate": round(d["crashed"] / n, 4) if n else nan,
            "crashes_per_km": round(d["crashed"] / (d["meters"] / 1000.0), 4) if d["meters"] > 0 else nan,
            "lives_crashed": d["crashed"], "life_meters": round(d["meters"], 1), "life_steps": d["steps"]}
