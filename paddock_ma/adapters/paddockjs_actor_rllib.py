"""The RLlib multi-agent env of per-car lives with PaddockJS's actor input and actions.

``PaddockActorMultiAgentEnv`` is ``adapters.rllib_env.PaddockMultiAgentEnv`` (same env_config, lives,
seeds and bookkeeping) whose agents observe their vector plus PaddockJS's four history features
(``checkpoint.History``'s order and units; each life is a new agent id, so its history starts at zero)
and act with ``(steering, accel)`` before the actor's tanh, which the env applies (as
``paddockjs_actor.PaddockActorVectorEnv(squash=True)``): a PPO module whose actor path is three Linear+ReLU
layers and a linear pi head trains exactly the exported actor. ``register_actor_env()`` registers it.
"""

from __future__ import annotations

import numpy as np
from gymnasium import spaces

from .rllib_env import PaddockMultiAgentEnv
from ..paddockjs.checkpoint import (
    HISTORY_SIZE, NUM_OUTPUTS, OFFSET_CHANGE_SCALE, OFFSET_INDEX, SPEED_CHANGE_SCALE, SPEED_INDEX, SPEED_VECTOR_SCALE,
    controls_from_steering_accel,
)

ACTOR_ENV_NAME = "paddock_ma_paddockjs_actor"


class PaddockActorMultiAgentEnv(PaddockMultiAgentEnv):
    """See the module docstring."""

    def __init__(self, env_config: dict | None = None):
        super().__init__(env_config)
        self.observation_spaces = {a: spaces.Box(-np.inf, np.inf, (s.shape[0] + HISTORY_SIZE,), np.float32)
                                   for a, s in self.observation_spaces.items()}
        self.action_spaces = {a: spaces.Box(-np.inf, np.inf, (NUM_OUTPUTS,), np.float32) for a in self.possible_agents}
        self._history: dict[str, np.ndarray] = {}     # agent -> [prev steering, prev accel, prev km/h, prev m]

    def reset(self, *, seed=None, options=None):
        self._history = {}
        obs, infos = super().reset(seed=seed, options=options)
        return self._inputs(obs), infos

    def restore(self, doc: dict):
        self._history = {}
        return super().restore(doc)

    def step(self, action_dict):
        controls = {}
        for agent, action in action_dict.items():
            sa = np.tanh(np.asarray(action, np.float64).reshape(NUM_OUTPUTS))
            self._history.setdefault(agent, np.zeros(4))[:2] = sa
            controls[agent] = controls_from_steering_accel(sa[None])[0]
        obs, rewards, terms, truncs, infos = super().step(controls)
        inputs = self._inputs(obs)
        for agent in [a for a in terms if a != "__all__" and (terms[a] or truncs.get(a))]:
            self._history.pop(agent, None)          # a life's id never comes back
        return inputs, rewards, terms, truncs, infos

    def _inputs(self, obs: dict) -> dict:
        out = {}
        for agent, vector in obs.items():
            h = self._history.setdefault(agent, np.zeros(4))
            speed, offset = float(vector[SPEED_INDEX]) * SPEED_VECTOR_SCALE, float(vector[OFFSET_INDEX])
            feats = (h[0], h[1], (speed - h[2]) / SPEED_CHANGE_SCALE, (offset - h[3]) / OFFSET_CHANGE_SCALE)
            h[2], h[3] = speed, offset
            out[agent] = np.concatenate([vector, np.asarray(feats, np.float32)]).astype(np.float32)
        return out


def register_actor_env(name: str = ACTOR_ENV_NAME) -> str:
    """Register ``PaddockActorMultiAgentEnv`` with Tune under ``name``."""
    from ray.tune.registry import register_env
    register_env(name, PaddockActorMultiAgentEnv)
    return name
