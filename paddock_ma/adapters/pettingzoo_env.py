"""PettingZoo ParallelEnv over one paddock_ma world, with per-car lives.

``parallel_env(config_or_env_id, **options)`` builds a ``PaddockParallelEnv``. Agents are the lives of
the controlled drivers, ``"{driver}@{life}"`` (see ``paddock_ma.adapters.lives``):

* ``auto_reset=False`` (default): one life per car, ``possible_agents`` = ``[d@0 ...]``; a car whose
  episode ends leaves ``agents`` and stays terminal; the world episode ends (``agents`` empty) when no
  car is left or at ``max_world_steps`` (every live agent truncated then).
* ``auto_reset=True``: ``max_lives`` lives per car are declared up front. A car whose life ends is reset
  at once (``reset_placement``: grid, random, random-moving or scenario) and its next id appears in the
  observations returned by the same ``step`` call, with reward 0.0, terminated/truncated False and an info marked
  ``newborn`` (PettingZoo's ``parallel_api_test`` requires all five dicts to cover every live agent;
  the RLlib adapter sends a newborn's observation only). A car that used all its lives retires.

Spaces are built once per env instance and agent. Observation: ``Box(-inf, inf, (D_driver,), float32)``
(the vector mixes normalised ratios with unbounded physical quantities, so no finite bound is claimed).
Action: ``Box([-1, 0, 0], [1, 1, 1], float32)`` (steering, throttle, brake), or with ``pit_actions=True``
``Dict(vehicle=Box, pit_intent=Discrete(3), pit_compound=Discrete(len(compounds)))``.

Rewards: the one vectorised interface (``paddock_ma.env.rewards``): ``reward_fn`` is a callable
``fn(metrics float32[W, K, M]) -> [W, K]``, a ``VectorReward`` or an example reward's name, or the
config's ``reward`` (a VectorReward) is used. The default, ``legal_progress`` (metres of legal
progress this step), is an example for getting started, not a canonical reward.

Options that are not adapter options are config overrides (deep-merged into the catalogue config or
the given config), e.g. ``parallel_env("paddock/oval-batch-v0", episode={"max_steps": 200})``.
"""

from __future__ import annotations

import numpy as np
from gymnasium import spaces
from pettingzoo import ParallelEnv

from ..catalog import resolve_config
from ..env.batch_env import BatchEnv
from ..env.config.root import EnvConfig
from ..errors import INVALID_ACTION, NOT_RESET, ConfigError, PaddockError
from ..env.rewards import reward_or_default
from ..value_rules import integer_problem
from .lives import Lives, check_options, info_for
from .spaces import observation_space, vehicle_action_space

ADAPTER_OPTIONS = ("max_lives", "auto_reset", "reset_placement", "max_world_steps", "reward_fn", "pit_actions",
                   "render_mode", "render_rays", "render_size")


def parallel_env(config_or_env_id="paddock/oval-batch-v0", **options) -> "PaddockParallelEnv":
    """A PaddockParallelEnv; adapter options (``ADAPTER_OPTIONS``) plus config overrides."""
    adapter = {k: options.pop(k) for k in ADAPTER_OPTIONS if k in options}
    return PaddockParallelEnv(resolve_config(config_or_env_id, options), **adapter)


class PaddockParallelEnv(ParallelEnv):
    """One paddock_ma world as a PettingZoo ParallelEnv whose agents are car lives (module docstring)."""

    metadata = {"name": "paddock_ma_v0", "render_modes": ["rgb_array"], "is_parallelizable": True}

    def __init__(self, config: EnvConfig, *, max_lives: int = 8, auto_reset: bool = False,
                 reset_placement: str = "grid", max_world_steps: int | None = None, reward_fn=None,
                 pit_actions: bool = False, render_mode: str | None = None, render_rays: bool = False,
                 render_size: int = 640):
        if render_mode not in (None, "rgb_array"):
            raise ConfigError("render_mode", f"got {render_mode!r}; expected None or 'rgb_array'")
        reward_fn = reward_or_default(reward_fn, config.reward)
        check_options(max_lives, reset_placement, max_world_steps)
        self.engine = BatchEnv(config, 1, reward_fn=reward_fn, reset_placement=reset_placement)
        if pit_actions and not self.engine.pit_stops_enabled:
            raise ConfigError("pit_actions", "pit actions need rules.modules.pit_stops.enabled = true "
                              "and a track with a pit lane")
        self.lives = Lives(self.engine, "{driver}@{life}", max_lives=max_lives, auto_reset=auto_reset,
                           reset_placement=reset_placement, max_world_steps=max_world_steps)
        self.pit_actions = bool(pit_actions)
        self.render_mode = render_mode
        self.render_rays = render_rays
        self.render_size = render_size
        self.possible_agents = list(self.lives.possible_agents)
        self.agents = []
        self._obs_spaces = {}
        self._act_spaces = {}
        n_compounds = len(self.engine.compounds)
        for agent, (_, k, _) in self.lives.index.items():
            self._obs_spaces[agent] = observation_space(self.lives.obs_sizes[k])
            vehicle = vehicle_action_space()
            if self.pit_actions:
                self._act_spaces[agent] = spaces.Dict({"vehicle": vehicle, "pit_intent": spaces.Discrete(3),
                                                       "pit_compound": spaces.Discrete(n_compounds)})
            else:
                self._act_spaces[agent] = vehicle

    # -- spaces -----------------------------------------------------------------------------------
    def observation_space(self, agent):
        return self._obs_spaces[agent]

    def action_space(self, agent):
        return self._act_spaces[agent]

    @property
    def config(self) -> EnvConfig:
        return self.engine.config

    # -- API --------------------------------------------------------------------------------------
    def reset(self, seed=None, options=None):
        return self._start(self.lives.reset(seed))

    def _start(self, result):
        """(observations, infos) of the live agents from ``result`` (a reset's, or the restored worlds')."""
        self.agents = list(self.lives.agents)
        obs, infos = {}, {}
        for agent in self.agents:
            _, k, _ = self.lives.index[agent]
            obs[agent] = result.obs[0, k, :self.lives.obs_sizes[k]]
            infos[agent] = info_for(self.lives, result, 0, k)
            infos[agent].pop("metrics", None)
        return obs, infos

    def snapshot(self) -> dict:
        """A JSON-safe document of the world and the lives bookkeeping (live agents, life counters, world
        step); ``restore`` brings both back bit-exactly. Before the first reset: PaddockError(not_reset)."""
        return self.lives.snapshot()

    def restore(self, doc: dict):
        """Restore ``snapshot()``'s document (into this env or a fresh one of the same options) and return
        the live agents' ``(observations, infos)`` as ``reset`` does; the next ``step`` continues exactly as
        the snapshotted env did. A document that does not fit raises PaddockError(snapshot_rejected)."""
        self.lives.restore(doc)
        return self._start(self.engine.current_result())

    def _split(self, agent, value):
        if not isinstance(value, dict) or set(value) != {"vehicle", "pit_intent", "pit_compound"}:
            raise PaddockError(INVALID_ACTION, f"actions.{agent}: got {value!r}; expected a dict with vehicle, "
                               "pit_intent and pit_compound (pit_actions=True)", f"actions.{agent}")
        intent, compound = value["pit_intent"], value["pit_compound"]
        for name, v, n in (("pit_intent", intent, 3), ("pit_compound", compound, len(self.engine.compounds))):
            problem = integer_problem(v, 0, n)
            if problem is not None:
                raise PaddockError(INVALID_ACTION, f"actions.{agent}.{name}: {problem} (0..{n - 1})",
                                   f"actions.{agent}.{name}")
        return value["vehicle"], int(intent), int(compound)

    def step(self, actions):
        lives = self.lives
        acts, intents, compounds = lives.actions_to_arrays(actions, self._split if self.pit_actions else None)
        record = lives.step(acts, intents, compounds)
        result, reborn = record.result, record.reborn
        obs, rewards, terms, truncs, infos = {}, {}, {}, {}, {}
        sizes = lives.obs_sizes
        for (w, k), agent in record.ended_ids.items():
            obs[agent] = record.final_obs[0, k, :sizes[k]]
            info = info_for(lives, result, 0, k, record=record)
            rewards[agent] = float(result.reward[0, k])
            terms[agent] = bool(record.terminated[0, k])
            truncs[agent] = bool(record.truncated[0, k])
            infos[agent] = info
        for agent in lives.agents:
            if agent in obs:
                continue
            _, k, _ = lives.index[agent]
            if record.newborn[0, k]:
                obs[agent] = result.obs[0, k, :sizes[k]]
                rewards[agent], terms[agent], truncs[agent] = 0.0, False, False
                infos[agent] = info_for(lives, reborn, 0, k, record=record, newborn=True)
                continue
            obs[agent] = result.obs[0, k, :sizes[k]]
            info = info_for(lives, result, 0, k, record=record)
            rewards[agent] = float(result.reward[0, k])
            terms[agent] = False
            truncs[agent] = False
            infos[agent] = info
        self.agents = list(lives.agents)
        return obs, rewards, terms, truncs, infos

    def state(self) -> np.ndarray:
        """uint64[1]: the world's state checksum (a cheap global state fingerprint)."""
        return self.engine.checksums()

    def render(self):
        if self.render_mode is None:
            import warnings
            warnings.warn("render() called without render_mode='rgb_array'")
            return None
        from ..env.views.render import render_world
        if self.engine.state is None:
            raise PaddockError(NOT_RESET, "render() before reset()")
        return render_world(self.engine, 0, size=self.render_size, rays=self.render_rays)

    def close(self):
        pass
