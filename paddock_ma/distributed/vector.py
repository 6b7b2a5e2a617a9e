"""FleetVectorEnv: a gymnasium ``VectorEnv`` over a ShardFleet, one sub-environment per controlled car.

The cluster twin of ``paddock_ma.adapters.vector_env.CarVectorEnv``: the same spaces, sub-environment order
(sub-environment ``i`` is car ``i % K`` of global world ``i // K``), reward names and info keys, so a
trainer moves from one process to a Ray cluster by changing the class (or ``make_vector_env``'s
``num_shards``). Worlds are seeded from their global index, so with the same seed a FleetVectorEnv of
S shards x W worlds gives the numbers of a CarVectorEnv of S x W worlds in ``same_step`` mode.

Shapes: observations float32[N, D] (N = S x W x K), actions float32[N, 3] (steering [-1, 1], throttle
[0, 1], brake [0, 1]), rewards float32[N] (from the step's reward-neutral metrics), terminations and
truncations bool[N]. Autoreset is ``same_step`` only (the shards reset a car inside its running world in
the step that ends its episode): the returned observation of such a car is its new episode's first,
``infos["final_obs"]`` (object array, mask ``infos["_final_obs"]``) holds the last one. ``infos`` also has
``episode_id``, ``life`` and ``end_reason`` int32[N] of the episode each returned observation belongs to.

``step_async`` hands each shard its slice of the actions; ``step_wait`` collects the shards as they answer
(no shard waits for another) and recovers failed ones (``ShardFleet``): a step never comes back twice
or short. Ray must be initialised (``ray.init(address=...)``) before ``reset``.
"""

from __future__ import annotations

import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from ..adapters.spaces import final_obs_info, observation_space, vehicle_action_space
from ..catalog import resolve_config_dict
from ..env.config.root import EnvConfig
from ..errors import ConfigError
from ..env.rewards import DEFAULT_REWARD, resolve_reward
from ..env.seeding import check_seed, fresh_seed
from ..value_rules import check_integer, check_placement
from .fleet import ShardFleet


class FleetVectorEnv(VectorEnv):
    """Every controlled car of ``num_shards x worlds_per_shard`` worlds on a Ray cluster (see above).

    config_or_env_id: a catalogue id or an EnvConfig dict; overrides: config keys merged over it.
    reward: an example reward name (``env.rewards.EXAMPLE_REWARDS``) or ``fn(metrics[W, K, M]) -> [W, K]``.
    fleet_options: keywords for ShardFleet (``deadline_s``, ``snapshot_every``, ``max_consecutive_failures``).
    """

    metadata = {"render_modes": [], "autoreset_mode": AutoresetMode.SAME_STEP}

    def __init__(self, config_or_env_id="paddock/oval-batch-v0", num_shards: int = 1, worlds_per_shard: int = 1, *,
                 reset_placement: str = "random", start_placement: str = "random", reward=DEFAULT_REWARD,
                 fleet_options: dict | None = None, **overrides):
        for name, value in (("reset_placement", reset_placement), ("start_placement", start_placement)):
            check_placement(value, name)
        num_shards = check_integer(num_shards, "num_shards", low=1)
        worlds_per_shard = check_integer(worlds_per_shard, "worlds_per_shard", low=1)
        self.config = resolve_config_dict(config_or_env_id, overrides)
        spec = EnvConfig.from_dict(self.config)
        self.reward_fn = resolve_reward(reward)
        self.num_shards, self.worlds_per_shard = num_shards, worlds_per_shard
        self.cars_per_world = len(spec.controlled_drivers)
        self.num_worlds = num_shards * worlds_per_shard
        self.num_envs = self.num_worlds * self.cars_per_world
        self.reset_placement, self.start_placement = reset_placement, start_placement
        self.fleet_options = dict(fleet_options or {})
        self._obs_size = None
        self.fleet: ShardFleet | None = None
        self._actions = None
        self._seq = 0
        self.single_action_space = vehicle_action_space()
        self.action_space = batch_space(self.single_action_space, self.num_envs)

    def _set_observation_space(self, d: int) -> None:
        if self._obs_size != d:
            self._obs_size = d
            self.single_observation_space = observation_space(d)
            self.observation_space = batch_space(self.single_observation_space, self.num_envs)

    # -- gymnasium API ------------------------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict | None = None):
        """Start (or restart) the fleet with every world seeded from ``seed``; -> (obs[N, D], infos)."""
        if options:
            raise ConfigError("options", f"got {sorted(options)}; this vector env takes no reset options")
        if seed is None:
            seed = fresh_seed()
        else:
            seed = check_seed(seed)
            self.action_space.seed(seed)
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
        self._set_observation_space(obs.shape[-1])
        heads = [sh.head for sh in self.fleet.shards]
        infos = {key: np.concatenate([h[key] for h in heads]).reshape(self.num_envs).astype(np.int32)
                 for key in ("episode_id", "life")}
        infos["end_reason"] = np.zeros(self.num_envs, np.int32)
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
        infos = {"episode_id": (cat("episode_id").reshape(n) + done).astype(np.int32),
                 "life": (cat("life").reshape(n) + done).astype(np.int32),
                 "end_reason": np.where(done, 0, cat("end_reason").reshape(n)).astype(np.int32)}
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


def make_vector_env(env_id: str, num_worlds: int, *, num_shards: int | None = None, **kwargs):
    """``CarVectorEnv`` in this process (``num_shards`` None) or a FleetVectorEnv of ``num_shards`` shards
    holding ``num_worlds`` worlds between them (``num_worlds`` a multiple of ``num_shards``): the one argument
    that moves a trainer from one process to the cluster. In-process, ``autoreset_mode`` is ``same_step``
    (the fleet's) unless given."""
    if num_shards is None:
        from ..adapters.vector_env import CarVectorEnv
        kwargs.setdefault("autoreset_mode", "same_step")
        return CarVectorEnv(env_id, num_worlds, **kwargs)
    if num_worlds % num_shards:
        raise ConfigError("num_worlds", f"got {num_worlds}; it must be a multiple of num_shards ({num_shards})")
    return FleetVectorEnv(env_id, num_shards, num_worlds // num_shards, **kwargs)
