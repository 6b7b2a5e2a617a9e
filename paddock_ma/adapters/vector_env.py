"""A gymnasium ``VectorEnv`` in which every controlled car of W worlds is one sub-environment.

``CarVectorEnv(env_id_or_config, num_worlds)`` has ``num_envs = W x K`` (K controlled cars a world);
sub-environment ``i`` is car ``i % K`` of world ``i // K``. Observations are the cars' vectors,
float32[N, D]; actions float32[N, 3] ``[steering, throttle, brake]`` (out-of-range values are clamped
by the contract; non-finite ones are refused). One call of the batched engine steps every world.

A car's episode ends when it is destroyed, retires, or reaches the per-driver step cap. Its autoreset is
the contract's ``reset_drivers`` inside the running world: the other cars drive on. Two of gymnasium's
autoreset modes are supported (``metadata["autoreset_mode"]``):

* ``NEXT_STEP`` (the default; what RLlib and most gymnasium code expect): the step that ends an episode
  returns the final observation with the flags; on the next step the car's action is ignored, the car is
  placed anew after the world's step, and its observation is the new episode's first (reward 0, no flags).
* ``SAME_STEP``: the step that ends an episode returns the new episode's first observation;
  ``infos["final_obs"]`` (an object array, None elsewhere, mask ``infos["_final_obs"]``) holds the final one.

Rewards are the engine's (``paddock_ma.env.rewards``): ``reward`` is a vectorised callable
``fn(metrics float32[W, K, M]) -> float[W, K]`` or the name of an example reward (examples, not canonical
objectives); without one, the config's vectorised reward, else the ``legal_progress`` example.

Registered with gymnasium under the catalogue's ids (``gymnasium.make_vec("paddock/oval-batch-v0",
num_envs=N)``, N a multiple of K; ``import paddock_ma`` first, or use ``"paddock_ma:paddock/..."``).
"""

from __future__ import annotations

import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from ..catalog import resolve_config
from ..env.batch_env import BatchEnv
from ..env.episodes import M_LEGAL_PROGRESS
from ..errors import ConfigError
from ..value_rules import check_placement
from ..env.rewards import reward_or_default
from .spaces import final_obs_info, observation_space, vehicle_action_space
from .tally import EpisodeTally

AUTORESET_MODES = (AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP)
_MODE_NAMES = {"nextstep": AutoresetMode.NEXT_STEP, "samestep": AutoresetMode.SAME_STEP}


class CarVectorEnv(VectorEnv):
    """Every controlled car of W worlds as one sub-environment (see the module docstring)."""

    metadata = {"render_modes": ["rgb_array"], "autoreset_mode": AutoresetMode.NEXT_STEP}

    def __init__(self, config_or_env_id="paddock/oval-batch-v0", num_worlds: int = 1, *,
                 autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP, reset_placement: str = "random",
                 start_placement: str = "random", reward=None, render_mode: str | None = None,
                 parallel: bool = False, **overrides):
        mode = _MODE_NAMES.get(autoreset_mode.replace("_", "").lower(), autoreset_mode) \
            if isinstance(autoreset_mode, str) else autoreset_mode
        if mode not in AUTORESET_MODES:
            raise ConfigError("autoreset_mode", f"got {autoreset_mode!r}; supported: next_step, same_step")
        for name, value in (("reset_placement", reset_placement), ("start_placement", start_placement)):
            check_placement(value, name)
        if render_mode not in (None, "rgb_array"):
            raise ConfigError("render_mode", f"got {render_mode!r}; expected None or 'rgb_array'")
        config = resolve_config(config_or_env_id, overrides)
        reward = reward_or_default(reward, config.reward)
        # copy_obs=False: the engine's buffer is copied once, into the array this env returns
        self.engine = BatchEnv(config, num_worlds, auto_reset=mode == AutoresetMode.SAME_STEP,
                               reset_placement=reset_placement, parallel=parallel, reward_fn=reward, copy_obs=False)
        self.reset_placement, self.start_placement = reset_placement, start_placement
        self.metadata = dict(self.metadata, autoreset_mode=mode)
        self.render_mode = render_mode
        self.num_worlds = num_worlds
        self.cars_per_world = len(self.engine.controlled)
        self.num_envs = num_worlds * self.cars_per_world
        if len(set(self.engine.obs_sizes.tolist())) != 1:
            raise ConfigError("sensors_by_driver", "every controlled car's vector must have one length for a "
                              "vector env (per-driver sensor shapes differ here)")
        d = self.engine.obs_size
        self.single_observation_space = observation_space(d)
        self.single_action_space = vehicle_action_space()
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self._pending = np.zeros((num_worlds, self.cars_per_world), bool)   # NEXT_STEP: reset on the next step
        self.tally = EpisodeTally((num_worlds, self.cars_per_world), "episodes")

    # -- gymnasium API --------------------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict | None = None):
        """Rebuild every world (seeded) and place the cars (``start_placement``); -> (obs[N, D], infos)."""
        if options:
            raise ConfigError("options", f"got {sorted(options)}; this vector env takes no reset options")
        if seed is not None:
            self._np_random_seed = seed
            self.action_space.seed(seed)
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
        if self.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP:
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
        """Per-car facts of the episode each returned observation belongs to, as arrays over the
        sub-environments (gymnasium's vector info form): episode id, life, end reason code. ``latest``:
        the engine's BatchResult of the last call this step or reset made (gathered after it)."""
        return {"episode_id": latest.episode_id.reshape(-1), "life": latest.life.reshape(-1),
                "end_reason": latest.end_reason.reshape(-1)}


def make_car_vector_env(env_id: str, num_envs: int | None = None, num_worlds: int | None = None, **kwargs):
    """gymnasium's vector entry point: ``num_envs`` sub-environments (a multiple of the env's controlled
    cars per world) or ``num_worlds`` worlds. Other keywords go to ``CarVectorEnv``."""
    kwargs.pop("vectorization_mode", None)
    kwargs.pop("vector_kwargs", None)
    if num_worlds is None:
        from ..catalog import env_config
        k = len(env_config(env_id).controlled_drivers)
        n = k if num_envs is None else num_envs
        if n < k or n % k:
            raise ConfigError("num_envs", f"got {num_envs!r}; {env_id} has {k} controlled cars a world, so "
                              f"num_envs must be a multiple of {k}")
        num_worlds = n // k
    return CarVectorEnv(env_id, num_worlds, **kwargs)
