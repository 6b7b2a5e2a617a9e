"""What every gymnasium ``VectorEnv`` of paddock_ma cars shares: the in-process one (``vector_env.CarVectorEnv``)
and the Ray fleet's (``distributed.vector.FleetVectorEnv``), so a trainer moves between them by one argument
(``gymnasium.make_vec(env_id, num_envs=N, num_shards=S)``, ``distributed.vector.make_vector_env``).

Every controlled car of W worlds is one sub-environment: ``num_envs = N = W x K`` (K controlled cars a
world), sub-environment ``i`` is car ``i % K`` of world ``i // K``. Spaces: observations float32[N, D]
(every car's vector must have the one length D, ``spaces.observation_space``), actions float32[N, 3]
``[steering, throttle, brake]`` (``spaces.vehicle_action_space``). Infos: ``episode_id``, ``life`` and
``end_reason`` int32[N] of the episode each returned observation belongs to (``episode_infos``).

Autoreset (``metadata["autoreset_mode"]``): ``same_step`` by default, for both. The fleet's shards reset a
car inside its running world in the step that ends its episode, so the fleet can do nothing else; the
in-process env does the same unless asked for gymnasium's ``next_step`` (``autoreset_mode="next_step"``,
what RLlib's ``SingleAgentEnvRunner`` and gymnasium's usual loop assume), which it alone supports:

* ``SAME_STEP``: the step that ends an episode returns the new episode's first observation;
  ``infos["final_obs"]`` (an object array, None elsewhere, mask ``infos["_final_obs"]``) holds the final one.
* ``NEXT_STEP``: the step that ends an episode returns the final observation with the flags; on the next
  step the car's action is ignored, the car is placed anew after the world's step, and its observation is
  the new episode's first (reward 0, no flags).

Options both take: ``reset_placement`` (where a car's next episode starts) and ``start_placement`` (where
every car is placed after ``reset``), each ``grid``, ``random``, ``random-moving`` or ``scenario``;
``reward``, a vectorised ``fn(metrics float32[W, K, M]) -> [W, K]`` or an example reward's name (without
one, the config's vectorised reward, else ``legal_progress``: ``env.rewards.reward_or_default``). ``reset``
takes a seed (``env.seeding.check_seed``) and no options.
"""

from __future__ import annotations

import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from ..env.config.root import EnvConfig
from ..env.observations import vector_sizes
from ..env.rewards import reward_or_default
from ..env.seeding import check_seed
from ..errors import ConfigError
from ..value_rules import check_integer, check_placement
from .spaces import observation_space, vehicle_action_space

DEFAULT_AUTORESET_MODE = AutoresetMode.SAME_STEP
AUTORESET_NAMES = {AutoresetMode.NEXT_STEP: "next_step", AutoresetMode.SAME_STEP: "same_step"}
_MODE_NAMES = {name.replace("_", ""): mode for mode, name in AUTORESET_NAMES.items()}     # "nextstep": NEXT_STEP


def autoreset_mode_of(value, supported: tuple) -> AutoresetMode:
    """The ``AutoresetMode`` ``value`` names (the enum, or ``"next_step"``/``"same_step"`` in any case, with
    or without the underscore) if it is one of ``supported``; else ConfigError naming those."""
    mode = _MODE_NAMES.get(value.replace("_", "").lower(), value) if isinstance(value, str) else value
    if mode not in supported:
        names = ", ".join(AUTORESET_NAMES[m] for m in supported)
        raise ConfigError("autoreset_mode", f"got {value!r}; supported: {names}")
    return mode


class PaddockVectorEnv(VectorEnv):
    """The shared part of the car vector envs (see the module docstring); a subclass calls ``configure``
    in its ``__init__`` and names the autoreset modes it supports in ``AUTORESET_MODES``."""

    AUTORESET_MODES = (AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP)
    metadata = {"render_modes": [], "autoreset_mode": DEFAULT_AUTORESET_MODE}

    def configure(self, config: EnvConfig, num_worlds: int, *, autoreset_mode, reset_placement: str,
                  start_placement: str, reward):
        """Check the shared options and set the shape, spaces and metadata of ``num_worlds`` worlds of
        ``config``; -> the reward the env computes (``reward`` or the config's or the default)."""
        mode = autoreset_mode_of(autoreset_mode, self.AUTORESET_MODES)
        for name, value in (("reset_placement", reset_placement), ("start_placement", start_placement)):
            check_placement(value, name)
        self.num_worlds = check_integer(num_worlds, "num_worlds", low=1)
        sizes = set(vector_sizes(config).values())
        if len(sizes) != 1:
            raise ConfigError("sensors_by_driver", "every controlled car's vector must have one length for a "
                              "vector env (per-driver sensor shapes differ here)")
        self.metadata = dict(self.metadata, autoreset_mode=mode)
        self.reset_placement, self.start_placement = reset_placement, start_placement
        self.cars_per_world = len(config.controlled_drivers)
        self.num_envs = self.num_worlds * self.cars_per_world
        self.single_observation_space = observation_space(sizes.pop())
        self.single_action_space = vehicle_action_space()
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        return reward_or_default(reward, config.reward)

    @property
    def autoreset_mode(self) -> AutoresetMode:
        return self.metadata["autoreset_mode"]

    def begin_reset(self, seed, options) -> int | None:
        """A reset's common start: no options; ``seed`` (None, or a seed: ``check_seed``) seeds the
        action space's sampler; -> the checked seed."""
        if options:
            raise ConfigError("options", f"got {sorted(options)}; this vector env takes no reset options")
        if seed is not None:
            seed = check_seed(seed)
            self._np_random_seed = seed
            self.action_space.seed(seed)
        return seed

    def episode_infos(self, episode_id, life, end_reason) -> dict:
        """gymnasium's vector infos of the episode each returned observation belongs to, int32[N] each (the
        arguments: the engine's [W, K] arrays, or anything of N values)."""
        n = self.num_envs
        return {"episode_id": np.asarray(episode_id).reshape(n).astype(np.int32, copy=False),
                "life": np.asarray(life).reshape(n).astype(np.int32, copy=False),
                "end_reason": np.asarray(end_reason).reshape(n).astype(np.int32, copy=False)}
