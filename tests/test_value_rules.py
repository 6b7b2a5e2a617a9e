"""The value rules of one place (``paddock_ma.value_rules``), the same in every layer: an integer is an int
or numpy integer, never a bool; a finite number, seconds, a choice, a placement policy; a seed in [0, 2**63)."""

import numpy as np
import pytest

from paddock_ma.env.batch_env import BatchEnv
from paddock_ma.env.config.root import EnvConfig
from paddock_ma.errors import ConfigError
from paddock_ma.env.seeding import SEED_LIMIT, check_seed
from paddock_ma.value_rules import check_integer, integer_problem, is_integer


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


def test_a_finite_number_rule_with_bounds_names_the_field_and_the_value():
    from paddock_ma.value_rules import check_number, number_problem

    assert check_number(np.float32(2.5), "x", low=0) == 2.5 and type(check_number(3, "x")) is float
    assert number_problem(float("nan")) == "got nan; expected a finite number"
    assert number_problem(True, 0, 1) == "got True; expected a finite number in [0, 1]"
    assert number_problem(1.5, high=1.0) == "got 1.5; expected a finite number <= 1.0"
    with pytest.raises(ConfigError, match=r"^length_meters: got inf; expected a finite number >= 0$"):
        check_number(float("inf"), "length_meters", low=0)


def test_seconds_are_positive_and_finite_unless_no_limit_is_allowed():
    from paddock_ma.value_rules import check_seconds, seconds_problem

    assert check_seconds(0.5, "t") == 0.5 and check_seconds(float("inf"), "t", allow_inf=True) == float("inf")
    for bad in (0, -1.0, float("nan"), True, "1"):
        assert seconds_problem(bad).startswith(f"got {bad!r}; expected a finite number of seconds > 0")
    assert seconds_problem(float("inf")) is not None
    assert seconds_problem(float("inf"), allow_inf=True) is None and seconds_problem(-float("inf"), True)


def test_a_choice_is_matched_by_type_and_value_and_the_closest_is_suggested():
    from paddock_ma.value_rules import PLACEMENT_POLICIES, check_choice, check_placement, choice_problem

    assert check_placement("random-moving", "reset_placement") == "random-moving"
    assert check_placement(None, "start_placement", none_ok=True) is None
    assert choice_problem(True, (0, 1)) == "got True; expected one of 0, 1"          # a bool is not 1
    assert choice_problem(None, PLACEMENT_POLICIES) is not None
    with pytest.raises(ConfigError) as err:
        check_placement("randm", "reset_placement")
    assert err.value.field == "reset_placement" and str(err.value) == (
        "reset_placement: got 'randm'; expected one of 'grid', 'random', 'random-moving', 'scenario' "
        "(did you mean 'random'?)")
    with pytest.raises(KeyError, match="mode: got 'x'; expected one of 'a' or None"):
        check_choice("x", "mode", ("a",), none_ok=True, error=KeyError)


def test_every_front_end_takes_the_placement_rule_of_one_place():
    from paddock_ma.adapters.lives import check_options
    from paddock_ma.adapters.vector_env import CarVectorEnv

    expected = "reset_placement: got 'teleport'; expected one of 'grid', 'random', 'random-moving', 'scenario'"
    for make in (lambda: BatchEnv(None, 1, reset_placement="teleport"),
                 lambda: check_options(1, "teleport", None),
                 lambda: CarVectorEnv(reset_placement="teleport")):
        with pytest.raises(ConfigError) as err:
            make()
        assert str(err.value) == expected
