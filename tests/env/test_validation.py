"""One integer rule and one seed rule, the same in every layer: an int or numpy integer, never a bool;
a seed in [0, 2**63)."""

import numpy as np
import pytest

from paddock_ma.env.batch_env import BatchEnv
from paddock_ma.env.config.root import EnvConfig
from paddock_ma.env.errors import ConfigError
from paddock_ma.env.seeding import SEED_LIMIT, check_seed
from paddock_ma.env.validation import check_integer, integer_problem, is_integer


def test_an_integer_is_an_int_or_a_numpy_integer_never_a_bool():
    assert all(is_integer(v) for v in (0, -3, 2**70, np.int64(5), np.uint8(1), np.int32(-1)))
    assert not any(is_integer(v) for v in (True, False, np.bool_(True), 1.0, np.float32(2), "1", None, [1]))


def test_the_checker_names_the_field_the_value_and_the_bounds():
    assert check_integer(np.int64(4), "n", low=1) == 4 and type(check_integer(np.int64(4), "n")) is int
    with pytest.raises(ConfigError) as err:
        check_integer(True, "num_worlds", low=1)
    assert err.value.field == "num_worlds" and str(err.value) == "num_worlds: got True; expected an integer >= 1"
    assert integer_problem(3, 0, 3) == "got 3; expected an integer in [0, 3)"
    assert integer_problem(2**63, 0, SEED_LIMIT) == f"got {2**63}; expected an integer in [0, 2**63)"
    assert integer_problem("x") == "got 'x'; expected an integer" and integer_problem(7, high=5).endswith("below 5")

    class ShardLikeError(RuntimeError):
        pass

    with pytest.raises(ShardLikeError, match="^seq: got -1; expected an integer >= 0$"):
        check_integer(-1, "seq", low=0, error=ShardLikeError)


@pytest.mark.parametrize("seed", [-1, 2**63, True, 1.0, "3"])
def test_one_seed_rule_in_the_config_the_engine_and_the_adapters(seed):
    from paddock_ma.adapters.rllib_env import episode_seed

    with pytest.raises(ConfigError, match="seed: got"):
        check_seed(seed)
    with pytest.raises(ConfigError, match="^seed: got"):
        EnvConfig.from_dict({"seed": seed})
    with pytest.raises(ConfigError, match="^seed: got"):
        BatchEnv(None, 1).reset(seed=seed)
    with pytest.raises(ConfigError, match="^env_config.seed: got"):
        episode_seed(seed, (0, 0, 0), 0, "env_config.seed")


def test_the_largest_seed_and_numpy_seeds_are_taken():
    assert check_seed(2**63 - 1) == 2**63 - 1 and check_seed(np.uint64(5)) == 5
    assert EnvConfig.from_dict({"seed": np.int64(3)}).seed == 3
