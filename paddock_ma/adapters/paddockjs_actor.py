"""A vector env whose observations and actions are exactly those of a ``paddockjs-distilled-actor-v1`` actor.

``PaddockActorVectorEnv(CarVectorEnv(...))`` returns float32[N, obsDim] inputs (each car's vector, then
the four history features of ``checkpoint.History``, fitted to ``obsDim``) and takes float[N, 2]
``(steering, accel)`` actions, mapped to ``[steering, throttle, brake]`` as PaddockJS maps them. A
policy trained on it is the network PaddockJS's Policy Runner runs, on the input it builds there.

History restarts (zeros) with each car's new episode: under next-step autoreset on the step after the
one that ended it (whose observation is the new episode's first), under same-step autoreset on the
ending step itself.
"""

from __future__ import annotations

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorWrapper
from gymnasium.vector.utils import batch_space

from ..paddockjs.checkpoint import HISTORY_SIZE, NUM_OUTPUTS, History, actor_input, controls_from_steering_accel, \
    vector_speed_offset


class PaddockActorVectorEnv(VectorWrapper):
    """See the module docstring. ``obs_dim``: the actor's input width (default: vector size + 4).

    ``squash=True``: actions are the actor's last layer before its tanh (unbounded; a trainer's Gaussian
    samples around it) and the env applies the tanh, so a trainer whose deterministic action is its
    network's raw output (RLlib's) trains exactly PaddockJS's actor."""

    def __init__(self, env, obs_dim: int | None = None, squash: bool = False):
        super().__init__(env)
        d = env.single_observation_space.shape[0]
        self.obs_dim = int(obs_dim or d + HISTORY_SIZE)
        self.single_observation_space = spaces.Box(-np.inf, np.inf, (self.obs_dim,), np.float32)
        self.squash = squash
        bound = np.inf if squash else 1.0
        self.single_action_space = spaces.Box(-bound, bound, (NUM_OUTPUTS,), np.float32)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self.history = History(self.num_envs)
        self._speed = np.zeros(self.num_envs)
        self._offset = np.zeros(self.num_envs)
        self._ended = np.zeros(self.num_envs, bool)
        self._next_step = env.metadata.get("autoreset_mode", AutoresetMode.NEXT_STEP) == AutoresetMode.NEXT_STEP

    def _inputs(self, vectors: np.ndarray) -> np.ndarray:
        self._speed, self._offset = vector_speed_offset(vectors)
        return actor_input(vectors, self.history.features(self._speed, self._offset), self.obs_dim)

    def reset(self, *, seed=None, options=None):
        obs, infos = self.env.reset(seed=seed, options=options)
        self.history.reset()
        self._ended[:] = False
        return self._inputs(obs), infos

    def step(self, actions):
        sa = np.asarray(actions, np.float64).reshape(self.num_envs, NUM_OUTPUTS)
        sa = np.tanh(sa) if self.squash else np.clip(sa, -1.0, 1.0)
        self.history.advance(sa, self._speed, self._offset)
        obs, rewards, terminated, truncated, infos = self.env.step(controls_from_steering_accel(sa))
        ended = terminated | truncated
        self.history.reset(self._ended if self._next_step else ended)
        self._ended = ended
        return self._inputs(obs), rewards, terminated, truncated, infos
