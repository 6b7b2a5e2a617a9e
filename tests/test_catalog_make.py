"""``paddock_ma.make``'s engine options: each one is used or refused by name, never dropped."""

import numpy as np
import pytest

import paddock_ma
from paddock_ma.env.errors import PaddockError

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
    assert parallel.batch.step_kernel is not serial.batch.step_kernel and parallel.batch.step_kernel.__name__ \
        .endswith("parallel")
