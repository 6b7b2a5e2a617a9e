"""PaddockJS 2.0.0's golden reset-and-step runs through the worker protocol (issue 14, "Golden steps"): a
``reset`` and 30 ``step`` messages with the golden actions give replies whose result keys,
``info.drivers`` entries and metric names are PaddockJS's camelCase ones, field for field (values
differ: another track, another simulator). The snake_case twin is tests/env/test_golden_steps.py."""

import json

import pytest

from paddock_ma.protocol.messages import Dispatcher
from paddock_ma.protocol.wire_names import config_from_wire
from tests.helpers.golden import CONFIGS, check_result, golden



def send(d: Dispatcher, message) -> dict:
    reply = json.loads(d.handle_line(json.dumps(message).encode()))
    assert reply["ok"], reply
    assert reply["type"] == f"{message['type']}:result"
    return reply["result"]


@pytest.mark.parametrize("name", CONFIGS)
def test_golden_reset_and_steps_match_on_the_wire(name):
    doc = golden(name)
    d = Dispatcher(config_from_wire(doc["config"]))
    driver = doc["driver"]
    same = lambda key: key      # noqa: E731  (the wire spells the golden names as they are)
    check_result(send(d, {"id": 0, "type": "reset"}), doc["reset"], driver, name=same)
    results = [send(d, {"id": i, "type": "step", "actions": doc["actions"]}) for i in range(1, 31)]
    for record in doc["steps"]:
        result = results[record["step"] - 1]
        check_result(result, record, driver, name=same)
        for other in result["metrics"]:
            assert list(result["metrics"][other]) == list(record["driver"]["metrics"])
        assert result["info"]["step"] == record["info"]["step"]
        for key in ("terminated", "truncated", "done"):
            assert result[key] == record[key]
