"""``paddock_ma.make``'s engine options: each one is used or refused by name, never dropped. The
catalogue's descriptions say what the seed does where it does (almost) nothing."""

import numpy as np
import pytest

import paddock_ma
from paddock_ma.errors import PaddockError

SMALL = {"drivers": 2, "controlled_drivers": ["car-00"],
         "sensors": {"rays": {"rays": [{"id": "c", "angle_degrees": 0.0, "length_meters": 80.0}]},
                     "nearby_cars": {"max_cars": 1}}}


@pytest.mark.parametrize("option, value", [("auto_reset", True), ("reset_placement", "random")])
def test_auto_reset_options_without_num_worlds_are_refused_by_name(option, value):
    with pytest.raises(PaddockError) as exc:
        paddock_ma.make("paddock/oval-batch-v0", **{option: value}, **SMALL)
    assert exc.value.code == "invalid_config" and exc.value.field == option
    assert "num_worlds" in exc.value.message
    batch = paddock_ma.make("paddock/oval-batch-v0", num_worlds=1, **{option: value}, **SMALL)
    assert getattr(batch, option) == value


def test_reward_fn_and_parallel_reach_the_one_world_engine():
    env = paddock_ma.make("paddock/oval-batch-v0", reward_fn=lambda m: np.full(m.shape[:2], 3.5), **SMALL)
    env.reset(seed=1)
    result = env.step({"car-00": {"steering": 0.0, "throttle": 1.0, "brake": 0.0}})
    assert result["reward"] == {"car-00": 3.5}
    serial = paddock_ma.make("paddock/oval-batch-v0", **SMALL)
    parallel = paddock_ma.make("paddock/oval-batch-v0", parallel=True, **SMALL)
    assert parallel.engine.step_kernel is not serial.engine.step_kernel and parallel.engine.step_kernel.__name__ \
        .endswith("parallel")


@pytest.mark.parametrize("env_id", ["paddock/gp-v0", "paddock/technical-race-v0"])
def test_grid_envs_say_the_seed_changes_nothing_and_it_does_not(env_id):
    """Fixed grid, fixed cars, deterministic built-in drivers: two seeds give the same worlds for the same
    actions (technical-race-v0 until a pit stop, beyond these 300 steps), as the descriptions say."""
    description = {e["id"]: e["description"] for e in paddock_ma.list_envs()}[env_id]
    assert "seed" in description and "same race" in description
    runs = []
    for seed in (1, 2):
        batch = paddock_ma.make(env_id, num_worlds=1)
        batch.reset(seed=seed)
        acts = np.tile(np.array([0.0, 0.6, 0.0], np.float32), (1, len(batch.controlled), 1))
        # the cars and the observations (the world's checksum covers its seed and RNG key, which differ)
        runs.append([(batch.step(acts).obs, batch.state.cars_f.copy(), batch.state.cars_i.copy())
                     for _ in range(300)])
    for a, b in zip(*runs):
        for x, y in zip(a, b):
            np.testing.assert_array_equal(x, y)
    assert not np.array_equal(runs[0][0][1], runs[0][-1][1])     # the cars moved
