"""The env's seed, and nothing else, drives the random re-placements of new lives (fixed actions, so the
seeding is isolated from any action generator)."""

import numpy as np

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
