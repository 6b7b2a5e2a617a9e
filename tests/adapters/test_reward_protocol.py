"""One reward protocol: a vectorised reward over the metric arrays gives the same numbers through
PaddockEnv, BatchEnv, PettingZoo and RLlib, from the config or given to the engine; a PaddockJS
context reward is PaddockEnv's and is rejected clearly elsewhere."""

import numpy as np
import pytest

from paddock_ma.adapters.pettingzoo_env import parallel_env
from paddock_ma.adapters.rllib_env import PaddockMultiAgentEnv
from paddock_ma.catalog import env_config
from paddock_ma.env.batch_env import BatchEnv
from paddock_ma.env.environment import PaddockEnv
from paddock_ma.env.episodes import M_LEGAL_PROGRESS, M_OFF_TRACK, M_PROGRESS
from paddock_ma.errors import ConfigError
from paddock_ma.env.rewards import EXAMPLE_REWARDS, VectorReward, progress_reward, resolve_reward

SENSES = {"rays": {"rays": [{"id": "c", "angle_degrees": 0.0, "length_meters": 80.0}]}, "nearby_cars": {"max_cars": 1}}
BASE = env_config("paddock/oval-batch-v0", drivers=2, controlled_drivers=["car-00", "car-01"], sensors=SENSES)
SEED = 13
ACTIONS = [(0.0, 0.8, 0.0), (0.3, 0.5, 0.1)]


def shaped(metrics):
    return 2.0 * metrics[..., M_LEGAL_PROGRESS] - metrics[..., M_OFF_TRACK] + 0.5 * metrics[..., M_PROGRESS]


REWARD = VectorReward(shaped)


def _paddock(config):
    env = PaddockEnv(config)
    env.reset(seed=SEED)
    out = []
    for _ in range(5):
        r = env.step({d: dict(zip(("steering", "throttle", "brake"), a)) for d, a in zip(env.controlled, ACTIONS)})
        out.append([r["reward"][d] for d in env.controlled])
    return np.array(out, np.float32)


def _batch(config, **kw):
    env = BatchEnv(config, 1, **kw)
    env.reset(seed=SEED)
    return np.array([env.step(np.array([ACTIONS], np.float32)).reward[0] for _ in range(5)], np.float32)


def _pettingzoo(config, **kw):
    env = parallel_env(config, **kw)
    env.reset(seed=SEED)
    out = []
    for _ in range(5):
        _, rew, *_ = env.step({f"car-0{k}@0": np.array(a, np.float32) for k, a in enumerate(ACTIONS)})
        out.append([rew["car-00@0"], rew["car-01@0"]])
    return np.array(out, np.float32)


def _rllib(config, **kw):
    env = PaddockMultiAgentEnv(dict({"config": config, "auto_reset": False}, **kw))
    env.reset(seed=SEED)
    out = []
    for _ in range(5):
        _, rew, *_ = env.step({f"w0/car-0{k}@0": np.array(a, np.float32) for k, a in enumerate(ACTIONS)})
        out.append([rew["w0/car-00@0"], rew["w0/car-01@0"]])
    return np.array(out, np.float32)


def test_a_configured_vectorised_reward_gives_the_same_numbers_through_every_api():
    config = BASE.merged({"reward": REWARD})
    runs = {"PaddockEnv": _paddock(config), "BatchEnv": _batch(config), "PettingZoo": _pettingzoo(config),
            "RLlib": _rllib(config), "BatchEnv reward_fn": _batch(BASE, reward_fn=shaped),
            "PettingZoo reward_fn": _pettingzoo(BASE, reward_fn=REWARD), "RLlib reward": _rllib(BASE, reward=shaped)}
    ref = runs["BatchEnv"]
    assert np.abs(ref).sum() > 1.0                                   # the cars move: not all zeros
    for name, values in runs.items():
        np.testing.assert_array_equal(values, ref, err_msg=name)
    # the dict-shaped wrapper: the same reward as a PaddockJS reward(context)
    np.testing.assert_allclose(_paddock(BASE.merged({"reward": REWARD.per_driver})), ref, rtol=1e-6)


def test_example_rewards_by_name_and_the_default():
    legal = _batch(BASE, reward_fn="legal_progress")
    np.testing.assert_array_equal(_pettingzoo(BASE), legal)          # the adapters' default
    np.testing.assert_array_equal(_rllib(BASE), legal)
    assert set(EXAMPLE_REWARDS) == {"legal_progress", "progress_crash"}
    assert resolve_reward("progress_crash").name == "progress_crash"
    with pytest.raises(ConfigError) as exc:
        resolve_reward("fastest")
    assert exc.value.field == "reward"


def test_a_context_reward_is_paddock_envs_and_rejected_clearly_elsewhere():
    config = BASE.merged({"reward": progress_reward()})
    assert np.isfinite(_paddock(config)).all()
    for build in (lambda: BatchEnv(config, 1), lambda: parallel_env(config),
                  lambda: PaddockMultiAgentEnv({"config": config})):
        with pytest.raises(ConfigError) as exc:
            build()
        assert exc.value.field == "reward" and "VectorReward" in exc.value.message
    with pytest.raises(ConfigError) as exc:            # given twice: which one would count?
        BatchEnv(BASE.merged({"reward": REWARD}), 1, reward_fn=shaped)
    assert exc.value.field == "reward_fn"


def test_a_reward_of_the_wrong_shape_is_an_error_naming_it():
    env = BatchEnv(BASE, 1, reward_fn=lambda m: m.sum())
    env.reset(seed=SEED)
    with pytest.raises(Exception) as exc:
        env.step(np.zeros((1, 2, 3), np.float32))
    assert "returned shape ()" in str(exc.value)
