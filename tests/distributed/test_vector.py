"""FleetVectorEnv: the cluster twin of CarVectorEnv (same_step), numbers equal, a killed shard invisible."""

import os
import signal

import gymnasium
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

import paddock_ma
from paddock_ma.errors import ConfigError

from paddock_ma.adapters.vector_env import CarVectorEnv
from paddock_ma.distributed.vector import FleetVectorEnv, make_vector_env

from .conftest import ENV_ID, OVERRIDES

pytestmark = pytest.mark.ray


def _actions(rng, n):
    a = rng.uniform(0, 1, (n, 3)).astype(np.float32)
    a[:, 0] = 2 * a[:, 0] - 1
    a[:, 2] *= 0.2
    return a


def test_gymnasium_make_vec_gives_the_fleet_with_num_shards_and_its_options_are_the_local_ones():
    """One factory, registered for every catalogued id: ``num_shards`` picks the fleet (built without Ray:
    its shards start at reset); both share spaces, shape and the default autoreset mode, and refuse the
    same bad options; the fleet refuses next_step, which its shards cannot run."""
    k = len(paddock_ma.catalog.env_config(ENV_ID).controlled_drivers)
    fleet = gymnasium.make_vec(ENV_ID, num_envs=4 * k, num_shards=2, **OVERRIDES)
    local = gymnasium.make_vec(ENV_ID, num_envs=4 * k, **OVERRIDES)
    assert isinstance(fleet, FleetVectorEnv) and isinstance(local, CarVectorEnv) and fleet.fleet is None
    assert (fleet.num_shards, fleet.worlds_per_shard, fleet.num_worlds, fleet.num_envs) == (2, 2, 4, 4 * k)
    assert fleet.observation_space == local.observation_space and fleet.action_space == local.action_space
    assert fleet.metadata["autoreset_mode"] == local.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
    assert paddock_ma.make_vec is make_vector_env
    with pytest.raises(ConfigError, match="autoreset_mode: got 'next_step'; supported: same_step"):
        make_vector_env(ENV_ID, num_worlds=2, num_shards=2, autoreset_mode="next_step")
    for env_cls, args in ((FleetVectorEnv, (ENV_ID, 1, 1)), (CarVectorEnv, (ENV_ID, 1))):
        with pytest.raises(ConfigError, match="start_placement"):
            env_cls(*args, start_placement="anywhere")
        with pytest.raises(ConfigError, match="options"):
            env_cls(*args).reset(options={"x": 1})
    with pytest.raises(ConfigError, match="multiple of num_shards"):
        make_vector_env(ENV_ID, num_worlds=3, num_shards=2)
    with pytest.raises(ConfigError, match="multiple of"):
        gymnasium.make_vec(ENV_ID, num_envs=k + 1, num_shards=1)
    local.close()


@pytest.mark.chaos
def test_fleet_vector_env_gives_the_in_process_numbers_and_survives_a_kill(ray_local):
    local = make_vector_env(ENV_ID, num_worlds=4, **OVERRIDES)
    fleet = make_vector_env(ENV_ID, num_worlds=4, num_shards=2,
                            fleet_options={"snapshot_every": 4, "deadline_s": 60.0}, **OVERRIDES)
    assert isinstance(local, CarVectorEnv) and isinstance(fleet, FleetVectorEnv)
    assert fleet.num_envs == local.num_envs == 4 * 8
    try:
        o1, i1 = local.reset(seed=13)
        o2, i2 = fleet.reset(seed=13)
        assert np.array_equal(o1, o2) and fleet.observation_space == local.observation_space
        for key in ("episode_id", "life", "end_reason"):
            assert np.array_equal(i1[key], i2[key]), key
        rng = np.random.default_rng(0)
        ended = 0
        for t in range(1, 31):
            if t in (9, 17):
                os.kill(fleet.fleet.shard_pids()[t % 2], signal.SIGKILL)
            a = _actions(rng, local.num_envs)
            r1, r2 = local.step(a), fleet.step(a)
            for x, y, name in zip(r1[:4], r2[:4], ("obs", "reward", "terminated", "truncated")):
                assert np.array_equal(x, y), (t, name)
            for key in ("episode_id", "life", "end_reason", "_final_obs"):
                assert np.array_equal(r1[4].get(key), r2[4].get(key)), (t, key)
            if "_final_obs" in r1[4]:
                for i in np.nonzero(r1[4]["_final_obs"])[0]:
                    assert np.array_equal(r1[4]["final_obs"][i], r2[4]["final_obs"][i])
            ended += int(r1[3].sum() + r1[2].sum())
        assert ended > 0, "no car ended: autoreset was not exercised"
        assert len(fleet.fleet.failures) == 2
    finally:
        local.close()
        fleet.close()
