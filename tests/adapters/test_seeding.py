"""The env's seed, and nothing else, drives the random re-placements of new lives (fixed actions, so the
seeding is isolated from any action generator)."""

import numpy as np
import pytest

from paddock_ma.adapters.pettingzoo_env import parallel_env
from paddock_ma.adapters.rllib_env import PaddockMultiAgentEnv

SENSES = {"rays": {"rays": [{"id": "c", "angle_degrees": 0.0, "length_meters": 80.0}]}, "nearby_cars": {"max_cars": 1}}
OVERRIDES = {"drivers": 2, "controlled_drivers": ["car-00", "car-01"], "sensors": SENSES,
             "episode": {"max_steps": 3}}
ACTION = np.array([0.0, 0.5, 0.0], np.float32)


def _pettingzoo_newborns(seed):
    env = parallel_env("paddock/oval-batch-v0", auto_reset=True, reset_placement="random", max_lives=3,
                       **OVERRIDES)
    obs, _ = env.reset(seed=seed)
    for _ in range(3):
        obs, _, _, _, infos = env.step({a: ACTION for a in env.agents})
    born = sorted(a for a, i in infos.items() if i.get("newborn"))
    assert born == ["car-00@1", "car-01@1"]
    return np.stack([obs[a] for a in born])


def _rllib_newborns(seed):
    # car-01 is aimed at the barrier and crashes while car-00 drives on (RLlib ends the env episode
    # instead of starting new lives when every live agent ends in the same step)
    crash = {"car-01": {"distance_meters": 100.0, "offset_meters": 6.0, "speed_kph": 200.0,
                        "heading_error_radians": 1.2}}
    overrides = dict(OVERRIDES, episode={"max_steps": 500}, scenario={"placements": crash})
    env = PaddockMultiAgentEnv({"env_id": "paddock/oval-batch-v0", "overrides": overrides, "num_worlds": 2,
                                "reset_placement": "random", "max_lives": 3})
    env.reset(seed=seed)
    for _ in range(200):
        obs, _, _, _, infos = env.step({a: ACTION for a in env.agents})
        born = sorted(a for a, i in infos.items() if i.get("newborn"))
        if born:
            break
    assert born == ["w0/car-01@1", "w1/car-01@1"]
    return np.stack([obs[a] for a in born])


def test_pettingzoo_seed_drives_the_replacements():
    a, b, c = _pettingzoo_newborns(1), _pettingzoo_newborns(1), _pettingzoo_newborns(2)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


def test_rllib_seed_drives_the_replacements():
    a, b, c = _rllib_newborns(1), _rllib_newborns(1), _rllib_newborns(2)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


# -- RLlib: one seed, distinct streams per env runner and per env ------------------------------------

class SeedLogEnv(PaddockMultiAgentEnv):
    """Logs the seed its worlds were reset with, per reset."""

    def reset(self, *, seed=None, options=None):
        out = super().reset(seed=seed, options=options)
        self.seeds = getattr(self, "seeds", []) + [self.engine.seed]
        return out


RLLIB_SEEDED = {"env_id": "paddock/oval-batch-v0", "overrides": dict(OVERRIDES, drivers=2), "num_worlds": 1,
                "seed": 7, "max_world_steps": 2}


def _envs_of_context(worker_index, n_envs=2, resets=3):
    from ray.rllib.env.env_context import EnvContext
    ctx = EnvContext(dict(RLLIB_SEEDED), worker_index=worker_index)
    envs = [PaddockMultiAgentEnv(ctx) for _ in range(n_envs)]
    return [[(env.reset(), env.engine.seed)[1] for _ in range(resets)] for env in envs]


def test_every_env_of_every_runner_draws_its_own_seeds_from_the_one_seed():
    seeds = {w: _envs_of_context(w) for w in (0, 1, 2)}
    flat = [s for w in seeds.values() for env in w for s in env]
    assert len(set(flat)) == len(flat) == 18                  # no two episodes of any env share a seed
    assert seeds[0][0][0] == 7                                # env (0, 0, 0)'s first episode: the seed itself
    assert seeds == {w: _envs_of_context(w) for w in (0, 1, 2)}     # reproducible
    other = PaddockMultiAgentEnv(dict(RLLIB_SEEDED, seed=8))
    assert [(other.reset(), other.engine.seed)[1] for _ in range(3)][1:] != seeds[0][0][1:]
    # a seed passed to reset re-seeds the stream; later resets continue from it
    env = PaddockMultiAgentEnv(dict(RLLIB_SEEDED))
    env.reset(seed=123)
    assert env.engine.seed == 123
    env.reset()
    again = PaddockMultiAgentEnv(dict(RLLIB_SEEDED, seed=123))
    again.reset()
    again.reset()
    assert env.engine.seed == again.engine.seed != 123


@pytest.mark.parametrize("rllib_seed", [None, 0])
def test_rllib_env_runners_reset_distinct_worlds(rllib_seed):
    """Two env runners (worker_index 1 and 2) of two envs each, sampling through RLlib: every env's
    episodes have their own seeds, and a rebuilt runner repeats them. With RLlib's own seed set, RLlib
    passes runner seed + env index to the first reset (runner 1's env 1 and runner 2's env 0 both get 2):
    the env's key still tells them apart."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.env.multi_agent_env_runner import MultiAgentEnvRunner
    from ray.tune.registry import register_env

    register_env("paddock_ma_seedlog", SeedLogEnv)
    config = (PPOConfig().environment("paddock_ma_seedlog", env_config=RLLIB_SEEDED)
              .env_runners(num_env_runners=2, num_envs_per_env_runner=2)
              .multi_agent(policies={"shared"}, policy_mapping_fn=lambda aid, *a, **k: "shared")
              .debugging(seed=rllib_seed))

    def run(worker_index):
        runner = MultiAgentEnvRunner(config=config, worker_index=worker_index)
        try:
            runner.sample(num_timesteps=12, random_actions=True)
            return [env.unwrapped.seeds for env in runner.env.envs]
        finally:
            runner.stop()

    seeds = {w: run(w) for w in (1, 2)}
    episodes = [s for w in seeds.values() for env in w for s in env]
    assert all(len(env) >= 4 for w in seeds.values() for env in w)    # 2-step episodes: several resets each
    assert len(set(episodes)) == len(episodes)
    assert run(1) == seeds[1]
