"""A gymnasium ``VectorEnv`` in which every controlled car of W worlds is one sub-environment, in this process.

``CarVectorEnv(env_id_or_config, num_worlds)`` has ``num_envs = W x K`` (K controlled cars a world);
sub-environment ``i`` is car ``i % K`` of world ``i // K``. Observations are the cars' vectors,
float32[N, D]; actions float32[N, 3] ``[steering, throttle, brake]`` (out-of-range values are clamped
by the contract; non-finite ones are refused). One call of the batched engine (``engine``, a BatchEnv)
steps every world. The spaces, options, infos and autoreset modes are the ones it shares with the Ray
fleet's vector env (``vector_base``): ``same_step`` by default, ``next_step`` on request.

A car's episode ends when it is destroyed, retires, or reaches the per-driver step cap. Its autoreset is
the contract's ``reset_drivers`` inside the running world: the other cars drive on.

Rewards are the engine's (``paddock_ma.env.rewards``): ``reward`` is a vectorised callable
``fn(metrics float32[W, K, M]) -> float[W, K]`` or the name of an example reward (examples, not canonical
objectives); without one, the config's vectorised reward, else the ``legal_progress`` example.

``gymnasium.make_vec("paddock/oval-batch-v0", num_envs=N)`` (N a multiple of K; ``import paddock_ma``
first, or use ``"paddock_ma:paddock/..."``) makes one (``distributed.vector.make_vector_env``, which
makes the fleet's instead when given ``num_shards``).
"""

from __future__ import annotations

import numpy as np
from gymnasium.vector import AutoresetMode

from ..catalog import resolve_config
from ..env.batch_env import BatchEnv
from ..env.episodes import M_LEGAL_PROGRESS
from ..errors import ConfigError
from .spaces import final_obs_info
from .tally import EpisodeTally
from .vector_base import DEFAULT_AUTORESET_MODE, PaddockVectorEnv


class CarVectorEnv(PaddockVectorEnv):
    """Every controlled car of W worlds as one sub-environment (see the module docstring)."""

    metadata = {"render_modes": ["rgb_array"], "autoreset_mode": DEFAULT_AUTORESET_MODE}

    def __init__(self, config_or_env_id="paddock/oval-batch-v0", num_worlds: int = 1, *,
                 autoreset_mode: AutoresetMode | str = DEFAULT_AUTORESET_MODE, reset_placement: str = "random",
                 start_placement: str = "random", reward=None, render_mode: str | None = None,
                 parallel: bool = False, **overrides):
        if render_mode not in (None, "rgb_array"):
            raise ConfigError("render_mode", f"got {render_mode!r}; expected None or 'rgb_array'")
        config = resolve_config(config_or_env_id, overrides)
        reward = self.configure(config, num_worlds, autoreset_mode=autoreset_mode, reset_placement=reset_placement,
                                start_placement=start_placement, reward=reward)
        # copy_obs=False: the engine's buffer is copied once, into the array this env returns
        self.engine = BatchEnv(config, num_worlds, auto_reset=self.autoreset_mode == AutoresetMode.SAME_STEP,
                               reset_placement=reset_placement, parallel=parallel, reward_fn=reward, copy_obs=False)
        self.render_mode = render_mode
        self._pending = np.zeros((num_worlds, self.cars_per_world), bool)   # NEXT_STEP: reset on the next step
        self.tally = EpisodeTally((num_worlds, self.cars_per_world), "episodes")

    # -- gymnasium API --------------------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict | None = None):
        """Rebuild every world (seeded) and place the cars (``start_placement``); -> (obs[N, D], infos)."""
        seed = self.begin_reset(seed, options)
        result = self.engine.reset(seed)
        if self.start_placement != "scenario":
            result = self.engine.reset_drivers(np.ones_like(self._pending), self.start_placement)
        self._pending[:] = False
        self.tally.clear()
        return self._flat(result.obs).copy(), self._infos(result)

    def step(self, actions):
        """One step of every world: -> (obs[N, D], rewards[N], terminations[N], truncations[N], infos)."""
        acts = np.asarray(actions, np.float32).reshape(self.num_worlds, self.cars_per_world, 3)
        running = self.engine.running_mask()
        result = self.engine.step(acts)
        self.tally.add(running, result.metrics[..., M_LEGAL_PROGRESS])
        self.tally.close(result.done & running, result.end_reason)
        rewards = np.asarray(result.reward, np.float32).reshape(-1)
        terminated = result.terminated.reshape(-1).copy()
        truncated = result.truncated.reshape(-1).copy()
        obs = self._flat(result.obs).copy()
        latest = result.reset_result or result     # the BatchResult gathered after every reset of this step
        pending = self._pending
        if pending.any():      # NEXT_STEP: cars that ended last step start their next episode now
            latest = self.engine.reset_drivers(pending, self.reset_placement)
            flat = pending.reshape(-1)
            obs[flat] = self._flat(latest.obs)[flat]
            rewards[flat] = 0.0
            terminated[flat] = False
            truncated[flat] = False
        infos = self._infos(latest)
        if self.autoreset_mode == AutoresetMode.NEXT_STEP:
            self._pending = (result.terminated | result.truncated) & ~pending
        elif result.final_obs is not None and result.reset_mask.any():
            flat = result.reset_mask.reshape(-1)
            infos["final_obs"], infos["_final_obs"] = final_obs_info(self._flat(result.final_obs), flat), flat
        return obs, rewards, terminated, truncated, infos

    def episode_totals(self) -> dict:
        """Totals over every car episode that ended since this env was made: ``episodes_ended``,
        ``episodes_crashed`` (ended at the barrier), and the ``legal_meters`` (m of legal progress) and
        ``steps`` of those episodes (the figures of ``PaddockMultiAgentEnv.life_totals``, for rates per
        episode or per car-step of finished episodes)."""
        return dict(self.tally.totals)

    def render(self):
        """rgb_array of world 0, top-down (``env.views.render``)."""
        if self.render_mode != "rgb_array":
            return None
        from ..env.views.render import render_world
        return render_world(self.engine, 0)

    def close(self, **kwargs):
        if hasattr(self, "engine"):     # gymnasium closes in __del__, also after a failed __init__
            self.engine.close()

    # -- helpers ----------------------------------------------------------------------------------
    def _flat(self, arr: np.ndarray) -> np.ndarray:
        return arr.reshape((self.num_envs,) + arr.shape[2:])

    def _infos(self, latest) -> dict:
        """The infos of ``latest``, the engine's BatchResult of the last call this step or reset made
        (gathered after it)."""
        return self.episode_infos(latest.episode_id, latest.life, latest.end_reason)
