"""FleetVectorEnv: a gymnasium ``VectorEnv`` over a ShardFleet, one sub-environment per controlled car; and
``make_vector_env``, the one factory of the car vector envs (gymnasium's entry point for the catalogue's ids).

The cluster twin of ``paddock_ma.adapters.vector_env.CarVectorEnv``: both are ``adapters.vector_base``'s
``PaddockVectorEnv`` (the same spaces, options, sub-environment order: sub-environment ``i`` is car
``i % K`` of global world ``i // K``, reward names, info keys and default autoreset mode), so a trainer
moves from one process to a Ray cluster by one argument: ``num_shards`` (``gymnasium.make_vec(env_id,
num_envs=N, num_shards=S)``). Worlds are seeded from their global index, so with the same seed a
FleetVectorEnv of S shards x W worlds gives the numbers of a CarVectorEnv of S x W worlds.

Shapes: observations float32[N, D] (N = S x W x K), actions float32[N, 3] (steering [-1, 1], throttle
[0, 1], brake [0, 1]), rewards float32[N] (from the step's reward-neutral metrics), terminations and
truncations bool[N]. Autoreset is ``same_step`` only (the shards reset a car inside its running world in
the step that ends its episode; the default of both vector envs): the returned observation of such a car
is its new episode's first, ``infos["final_obs"]`` (object array, mask ``infos["_final_obs"]``) holds the
last one. ``infos`` also has ``episode_id``, ``life`` and ``end_reason`` int32[N] of the episode each
returned observation belongs to.

``step_async`` hands each shard its slice of the actions; ``step_wait`` collects the shards as they answer
(no shard waits for another) and recovers failed ones (``ShardFleet``): a step never comes back twice
or short. Ray must be initialised (``ray.init(address=...)``) before ``reset``.
"""

from __future__ import annotations

import numpy as np
from gymnasium.vector import AutoresetMode

from ..adapters.spaces import final_obs_info
from ..adapters.vector_base import DEFAULT_AUTORESET_MODE, PaddockVectorEnv
from ..catalog import resolve_config, resolve_config_dict
from ..env.config.root import EnvConfig
from ..env.rewards import engine_reward
from ..env.seeding import fresh_seed
from ..errors import ConfigError
from ..value_rules import check_integer
from .fleet import ShardFleet


class FleetVectorEnv(PaddockVectorEnv):
    """Every controlled car of ``num_shards x worlds_per_shard`` worlds on a Ray cluster (see above).

    config_or_env_id: a catalogue id or an EnvConfig dict; overrides: config keys merged over it.
    reward: an example reward name (``env.rewards.EXAMPLE_REWARDS``) or ``fn(metrics[W, K, M]) -> [W, K]``.
    fleet_options: keywords for ShardFleet (``deadline_s``, ``snapshot_every``, ``max_consecutive_failures``).
    """

    AUTORESET_MODES = (AutoresetMode.SAME_STEP,)
    metadata = {"render_modes": [], "autoreset_mode": DEFAULT_AUTORESET_MODE}

    def __init__(self, config_or_env_id="paddock/oval-batch-v0", num_shards: int = 1, worlds_per_shard: int = 1, *,
                 autoreset_mode: AutoresetMode | str = DEFAULT_AUTORESET_MODE, reset_placement: str = "random",
                 start_placement: str = "random", reward=None, fleet_options: dict | None = None, **overrides):
        num_shards = check_integer(num_shards, "num_shards", low=1)
        worlds_per_shard = check_integer(worlds_per_shard, "worlds_per_shard", low=1)
        self.config = resolve_config_dict(config_or_env_id, overrides)      # the dict the shards are sent
        config = EnvConfig.from_dict(self.config)
        reward = self.configure(config, num_shards * worlds_per_shard,
                                autoreset_mode=autoreset_mode, reset_placement=reset_placement,
                                start_placement=start_placement, reward=reward)
        self.reward_fn = engine_reward(config.reward, reward, "reward")    # computed here from the shards' metrics
        self.num_shards, self.worlds_per_shard = num_shards, worlds_per_shard
        self.fleet_options = dict(fleet_options or {})
        self.fleet: ShardFleet | None = None
        self._actions = None
        self._seq = 0

    # -- gymnasium API ------------------------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict | None = None):
        """Start (or restart) the fleet with every world seeded from ``seed``; -> (obs[N, D], infos)."""
        seed = self.begin_reset(seed, options)
        if seed is None:
            seed = fresh_seed()            # the shards need the seed: drawn here, not in each of them
        if self.fleet is not None:
            self.fleet.shutdown()
        k = self.cars_per_world
        self._actions = np.zeros((self.num_shards, self.worlds_per_shard, k, 3), np.float32)
        actions = self._actions
        self.fleet = ShardFleet(self.config, self.num_shards, self.worlds_per_shard, seed,
                                policy=lambda obs, *, worlds, seq, seed: actions[int(worlds[0]) // obs.shape[0]],
                                shard_options={"reset_placement": self.reset_placement,
                                               "start_placement": self.start_placement},
                                **self.fleet_options)
        for _ in self.fleet.run(0):
            pass
        self._seq = 0
        obs = np.concatenate([sh.obs for sh in self.fleet.shards]).astype(np.float32, copy=False)
        heads = [sh.head for sh in self.fleet.shards]
        infos = self.episode_infos(np.concatenate([h["episode_id"] for h in heads]),
                                   np.concatenate([h["life"] for h in heads]), np.zeros(self.num_envs, np.int32))
        return obs.reshape(self.num_envs, -1).copy(), infos

    def step_async(self, actions) -> None:
        """Hand each shard its slice of ``actions`` (float32[N, 3]); ``step_wait`` collects the results."""
        if self.fleet is None:
            raise RuntimeError("step_async: call reset() first")
        acts = np.asarray(actions, np.float32)
        if acts.shape != (self.num_envs, 3):
            raise ValueError(f"actions: shape {acts.shape}, expected ({self.num_envs}, 3) "
                             "(one [steering, throttle, brake] per car)")
        self._actions[...] = acts.reshape(self._actions.shape)

    def step_wait(self):
        """-> (obs[N, D], rewards[N], terminations[N], truncations[N], infos) of the step ``step_async`` began."""
        self._seq += 1
        got = {}
        for st in self.fleet.run(self._seq, snapshot_at_end=False):
            got[st.shard] = st.arrays
        parts = [got[i] for i in range(self.num_shards)]
        cat = lambda key: np.concatenate([p[key] for p in parts])   # noqa: E731  [S*W, K, ...]
        n = self.num_envs
        metrics = cat("metrics")
        rewards = np.asarray(self.reward_fn(metrics), np.float32).reshape(n)
        terminated, truncated = cat("terminated").reshape(n), cat("truncated").reshape(n)
        done = terminated | truncated
        # the episode each returned observation belongs to: an ended car's is its new one (same_step)
        infos = self.episode_infos(cat("episode_id").reshape(n) + done, cat("life").reshape(n) + done,
                                   np.where(done, 0, cat("end_reason").reshape(n)))
        if done.any():
            last = np.concatenate([p["final_obs"] if p["final_obs"] is not None else p["obs"] for p in parts])
            infos["final_obs"], infos["_final_obs"] = final_obs_info(last.reshape(n, -1), done), done
        obs = cat("obs").reshape(n, -1).astype(np.float32, copy=True)
        return obs, rewards, terminated.copy(), truncated.copy(), infos

    def step(self, actions):
        self.step_async(actions)
        return self.step_wait()

    def close(self, **kwargs):
        if getattr(self, "fleet", None) is not None:
            self.fleet.shutdown()
            self.fleet = None


def make_vector_env(env_id, num_envs: int | None = None, *, num_worlds: int | None = None,
                    num_shards: int | None = None, **kwargs) -> PaddockVectorEnv:
    """The car vector env of ``env_id`` (a catalogue id, or a config dict): a ``CarVectorEnv`` in this
    process, or with ``num_shards`` a FleetVectorEnv of that many Ray shards holding the worlds between
    them, with the same spaces, options and default autoreset mode (``adapters.vector_base``): the one
    argument that moves a trainer from one process to the cluster.

    ``num_envs`` sub-environments (a multiple of the env's K controlled cars a world; default K) or
    ``num_worlds`` worlds (which wins: gymnasium always passes a ``num_envs``); with ``num_shards``, the
    worlds must be a multiple of it. Other keywords go to the vector env (``autoreset_mode``, placements,
    ``reward``, config overrides; in process ``parallel``, ``render_mode``; the fleet's ``fleet_options``).
    Registered with gymnasium for every catalogued id: ``gymnasium.make_vec("paddock/oval-batch-v0",
    num_envs=64)``, ``gymnasium.make_vec(..., num_envs=512, num_shards=8)``.
    """
    kwargs.pop("vectorization_mode", None)
    kwargs.pop("vector_kwargs", None)
    if num_worlds is None:
        k = len(resolve_config(env_id).controlled_drivers)       # the catalogue's (or the dict's) K
        n = k if num_envs is None else num_envs
        if not isinstance(n, int) or n < k or n % k:
            raise ConfigError("num_envs", f"got {num_envs!r}; {env_id} has {k} controlled cars a world, so "
                              f"num_envs must be a multiple of {k}")
        num_worlds = n // k
    if num_shards is None:
        from ..adapters.vector_env import CarVectorEnv
        return CarVectorEnv(env_id, num_worlds, **kwargs)
    num_shards = check_integer(num_shards, "num_shards", low=1)
    if num_worlds % num_shards:
        raise ConfigError("num_worlds", f"got {num_worlds}; it must be a multiple of num_shards ({num_shards})")
    return FleetVectorEnv(env_id, num_shards, num_worlds // num_shards, **kwargs)
