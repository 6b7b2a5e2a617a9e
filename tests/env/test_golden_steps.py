"""PaddockJS 2.0.0's golden reset-and-step runs against the Python API (issue 14, "Golden steps"): the
result keys, the ``info.drivers`` entries and the metric names match field for field, in snake_case
(the values differ: another track, another simulator). The worker protocol's camelCase twin is
tests/protocol/test_golden_wire.py."""

import pytest

from tests.helpers.golden import CONFIGS, check_result, golden
from paddock_ma.env.config.root import EnvConfig
from paddock_ma.env.environment import PaddockEnv
from paddock_ma.paddockjs.naming import python_name


@pytest.mark.parametrize("name", CONFIGS)
def test_golden_reset_and_steps_match_in_the_python_api(name):
    doc = golden(name)
    env = PaddockEnv(EnvConfig.from_paddockjs(doc["config"]))
    driver = doc["driver"]
    check_result(env.reset(), doc["reset"], driver)
    for other, record in doc.get("otherDriversAtReset", {}).items():
        assert set(env.get_observation()[other]) == {python_name(k) for k in record["observationKeys"]}
    actions = {d: {python_name(k): v for k, v in a.items()} for d, a in doc["actions"].items()}
    results = [env.step(actions) for _ in range(30)]
    for record in doc["steps"]:
        result = results[record["step"] - 1]
        check_result(result, record, driver)
        assert result["info"]["step"] == record["info"]["step"]
        assert result["info"]["drivers"][driver]["episode_step"] == record["driver"]["infoDriver"]["episodeStep"]
        for key in ("terminated", "truncated", "done"):
            assert result[key] == record[key]
