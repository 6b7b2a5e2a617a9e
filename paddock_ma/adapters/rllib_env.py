"""RLlib MultiAgentEnv over every world of one BatchEnv, with per-car lives.

``PaddockMultiAgentEnv(env_config)`` packs W worlds into one env so that one numba call steps them all
(RLlib's ``num_envs_per_env_runner`` would instead step W separate env objects one by one in Python).
Agent ids are ``w{world}/{driver}@{life}``; every id is declared in ``possible_agents`` up front (an
undeclared id crashes RLlib's action connector), and ``observation_spaces`` / ``action_spaces`` map
every id to its space. Life semantics are those of ``paddock_ma.adapters.lives``; for RLlib a newborn
life appears with an observation (and an info) only, since an agent whose first step carries a reward
or a done flag is never scheduled to act. ``__all__`` in terminateds/truncateds is True when every
world's episode is over (no car left alive, or ``max_world_steps`` reached), never derived from the
per-agent flags of the step.

``env_config`` keys (all optional): ``env_id`` (catalogue id, default ``paddock/oval-batch-v0``) or
``config`` (an EnvConfig or dict), ``overrides`` (config keys merged over it), ``num_worlds`` (1),
``max_lives`` (8), ``auto_reset`` (True), ``reset_placement`` ("random"), ``max_world_steps`` (None),
``seed`` (None: fresh entropy per reset unless the reset passes one; with a seed, reset n uses
``seed + n``), ``reward``: the one vectorised interface of ``paddock_ma.env.rewards``, a callable
``fn(metrics: float32[W, K, M]) -> float[W, K]``, a ``VectorReward`` or the name of an example reward
(``rewards.EXAMPLE_REWARDS``; default ``legal_progress`` unless the config has a reward; examples,
not canonical rewards); ``infos``: ``"summary"``
(default: an info is empty except ``{"newborn", "life"}`` on a life's first appearance and
``{"life_summary": {legal_progress_meters, steps, crashed, end_reason, retired}}`` on its last step, so
callbacks can compute per-life figures cheaply) or ``"full"`` (driver, life, world step, episode state
and the step's metrics, as the PettingZoo adapter; about 20 us more per agent step).
"""

from __future__ import annotations

import numpy as np
from gymnasium import spaces
from ray.rllib.env.multi_agent_env import MultiAgentEnv

from ..env.batch_env import BatchEnv
from ..env.errors import ConfigError
from ..env.rewards import resolve_reward
from .lives import Lives, check_options, info_for
from .pettingzoo_env import resolve_config

ENV_CONFIG_KEYS = ("env_id", "config", "overrides", "num_worlds", "max_lives", "auto_reset", "reset_placement",
                   "max_world_steps", "seed", "reward", "infos")
ENV_NAME = "paddock_ma"


class PaddockMultiAgentEnv(MultiAgentEnv):
    """W packed worlds of per-car lives as one RLlib MultiAgentEnv (module docstring)."""

    def __init__(self, env_config: dict | None = None):
        super().__init__()
        cfg = dict(env_config or {})
        unknown = [k for k in cfg if k not in ENV_CONFIG_KEYS]
        if unknown:
            raise ConfigError(f"env_config.{unknown[0]}", f"unknown key; known keys: {', '.join(ENV_CONFIG_KEYS)}")
        source = cfg.get("config") if cfg.get("config") is not None else cfg.get("env_id", "paddock/oval-batch-v0")
        config = resolve_config(source, dict(cfg.get("overrides") or {}))
        reward = cfg.get("reward", "legal_progress" if config.reward is None else None)
        check_options(cfg.get("max_lives", 8), cfg.get("reset_placement", "random"), cfg.get("max_world_steps"))
        self.batch = BatchEnv(config, int(cfg.get("num_worlds", 1)), reward_fn=resolve_reward(reward, "env_config.reward"),
                              reset_placement=cfg.get("reset_placement", "random"))
        self.lives = Lives(self.batch, "w{w}/{driver}@{life}", max_lives=cfg.get("max_lives", 8),
                           auto_reset=cfg.get("auto_reset", True),
                           reset_placement=cfg.get("reset_placement", "random"),
                           max_world_steps=cfg.get("max_world_steps"))
        if cfg.get("infos", "summary") not in ("summary", "full"):
            raise ConfigError("env_config.infos", f"got {cfg.get('infos')!r}; expected 'summary' or 'full'")
        self._full_infos = cfg.get("infos", "summary") == "full"
        self._seed = cfg.get("seed")
        self._resets = 0
        self.possible_agents = list(self.lives.possible_agents)
        self.agents = []
        low, high = np.array([-1, 0, 0], np.float32), np.array([1, 1, 1], np.float32)
        # One space object per agent id (like the PettingZoo adapter), built once per env instance.
        self.observation_spaces = {a: spaces.Box(-np.inf, np.inf, (self.lives.obs_sizes[k],), np.float32)
                                   for a, (_, k, _) in self.lives.index.items()}
        self.action_spaces = {a: spaces.Box(low, high, dtype=np.float32) for a in self.possible_agents}
        self.num_worlds = self.batch.num_worlds

    # -- API --------------------------------------------------------------------------------------
    def reset(self, *, seed=None, options=None):
        if seed is None and self._seed is not None:
            seed = int(self._seed) + self._resets
        self._resets += 1
        result = self.lives.reset(seed)
        self.agents = list(self.lives.agents)
        sizes = self.lives.obs_sizes
        obs, infos = {}, {}
        for agent in self.agents:
            w, k, _ = self.lives.index[agent]
            obs[agent] = result.obs[w, k, :sizes[k]]
            info = info_for(self.lives, result, w, k, full=self._full_infos)
            info.pop("metrics", None)
            infos[agent] = info
        return obs, infos

    def step(self, action_dict):
        lives = self.lives
        acts, _, _ = lives.actions_to_arrays(action_dict)
        record = lives.step(acts)
        result, reborn, newborn = record.result, record.reborn, record.newborn
        reward = result.reward
        sizes = lives.obs_sizes
        obs, rewards, terms, truncs, infos = {}, {}, {}, {}, {}
        stepped = record.ended | (lives.alive & ~newborn)
        w_idx, k_idx = np.nonzero(stepped)
        rew_list = reward[w_idx, k_idx].tolist()
        for w, k, r in zip(w_idx.tolist(), k_idx.tolist(), rew_list):
            agent = record.ended_ids.get((w, k)) or lives.agent_of(w, k)
            obs[agent] = record.final_obs[w, k, :sizes[k]]
            rewards[agent] = r
            terms[agent] = bool(record.terminated[w, k])
            truncs[agent] = bool(record.truncated[w, k])
            infos[agent] = info_for(lives, result, w, k, record=record, full=self._full_infos)
        # RLlib 2.60 declares a multi-agent episode terminated as soon as every agent it has seen is done,
        # before it looks at new ids in the same step: when every live agent ends in one step, newborn
        # lives would be dropped. End the env episode there instead (RLlib then resets the env).
        forced = reborn is not None and not (lives.alive & ~newborn).any()
        if forced:
            lives.end_episode()
        elif reborn is not None:
            for w, k in zip(*(a.tolist() for a in np.nonzero(newborn))):
                agent = lives.agent_of(w, k)
                obs[agent] = result.obs[w, k, :sizes[k]]
                infos[agent] = info_for(lives, reborn, w, k, record=record, newborn=True, full=self._full_infos)
        over = lives.all_over
        capped = lives.max_world_steps is not None and bool((lives.world_steps >= lives.max_world_steps).any())
        any_term = bool(record.terminated.any())
        truncated_end = capped or (forced and not any_term)
        terms["__all__"] = over and not truncated_end
        truncs["__all__"] = over and truncated_end
        self.agents = list(lives.agents)
        return obs, rewards, terms, truncs, infos

    def life_totals(self) -> dict:
        """Totals over every life that ended in this env so far: ``lives_ended``, ``lives_crashed``
        (ended at the barrier), ``legal_meters`` and ``steps`` summed over those lives. A trainer
        reads them from its env runners (``examples/rllib_ppo.py``) for exact per-life rates."""
        return dict(self.lives.life_totals)

    def render(self):
        from ..env.render import render_world
        return render_world(self.batch, 0)

    def checksums(self) -> np.ndarray:
        return self.batch.checksums()


def register(name: str = ENV_NAME) -> str:
    """Register the env with Tune under ``name`` (``config.environment(name, env_config={...})``)."""
    from ray.tune.registry import register_env
    register_env(name, lambda cfg: PaddockMultiAgentEnv(dict(cfg)))
    return name
