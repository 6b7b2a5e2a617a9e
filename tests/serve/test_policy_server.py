"""paddock-ma policy-server against a real server process: PaddockJS's Policy Runner contract, the
actions PaddockJS's own checkpoint controller takes, per-driver state, refusals naming the field, CORS."""

import json
from pathlib import Path

import numpy as np
import pytest

from paddock_ma.paddockjs.checkpoint import ActorPolicy, load_actor

from tests.helpers.raw_http import http

from .conftest import ACTOR

FIXTURES = Path(__file__).resolve().parents[1] / "paddockjs" / "fixtures"
STEPS = json.loads((FIXTURES / "checkpoint-steps.json").read_text())["steps"]
PADDOCKJS = json.loads((FIXTURES / "checkpoint-paddockjs-actions.json").read_text())["actions"]
DRIVERS = list(STEPS[0]["observations"])


def decide(url, observations, ids=DRIVERS):
    status, _, body = http("POST", f"{url}/policy/decide-batch", {
        "driverIds": ids, "observations": observations, "previousActions": {}, "metrics": {}, "events": [],
        "actionSpec": {}, "observationSpec": {}})
    assert status == 200, body
    return body


def test_reset_decide_and_reset_state_take_paddockjs_actions(policy_server):
    status, _, body = http("POST", f"{policy_server}/policy/reset",
                           {"driverIds": DRIVERS, "actionSpec": {}, "observationSpec": {}, "configuration": None})
    assert status == 200 and body["ok"] and body["session"]["controlledDrivers"] == DRIVERS
    session = body["session"]["id"]
    worst = 0.0
    for step, theirs in zip(STEPS, PADDOCKJS, strict=True):
        if step["reset"]:
            status, _, body = http("POST", f"{policy_server}/policy/reset-state", {"driverIds": step["reset"]})
            assert status == 200 and body["resetDrivers"] == step["reset"]
        body = decide(policy_server, step["observations"])
        assert body["ok"] and body["session"]["id"] == session and isinstance(body["meta"]["serverTsMs"], int)
        for d in DRIVERS:
            ours, ref = body["actions"][d], theirs[d]
            worst = max(worst, *(abs(ours[k] - ref[k]) for k in ("steering", "throttle", "brake")))
    assert worst < 1e-9


def test_reset_state_restarts_only_the_named_driver(policy_server):
    http("POST", f"{policy_server}/policy/reset", {"driverIds": DRIVERS})
    local = ActorPolicy(load_actor(ACTOR), 2)
    for t, step in enumerate(STEPS[:8]):
        if t == 4:
            http("POST", f"{policy_server}/policy/reset-state", {"driverIds": ["car-01"]})
            local.history.reset([1])
        obs = [step["observations"][d] for d in DRIVERS]
        expected = local.decide(np.array([o["vector"] for o in obs]),
                                np.array([o["object"]["self"]["speedKph"] for o in obs]),
                                np.array([o["object"]["self"]["trackOffsetMeters"] for o in obs]))
        got = decide(policy_server, step["observations"])["actions"]
        for k, d in enumerate(DRIVERS):
            assert [got[d]["steering"], got[d]["throttle"], got[d]["brake"]] == pytest.approx(expected[k], abs=1e-6)


def test_a_driver_without_an_observation_gets_zero_controls(policy_server):
    http("POST", f"{policy_server}/policy/reset", {"driverIds": DRIVERS})
    body = decide(policy_server, {"car-00": STEPS[0]["observations"]["car-00"]}, ids=DRIVERS)
    assert body["actions"]["car-01"] == {"steering": 0.0, "throttle": 0.0, "brake": 0.0}
    assert body["actions"]["car-00"] != body["actions"]["car-01"]


@pytest.mark.parametrize("body, raw, field", [
    ({"driverIds": "car-00"}, None, "driverIds"),
    ({"driverIds": ["car-00", 3]}, None, "driverIds[1]"),
    ({"driverIds": ["car-00"], "observations": []}, None, "observations"),
    ({"driverIds": ["car-00"], "observations": {"car-00": {"vector": "x"}}}, None, "observations.car-00.vector"),
    ({"driverIds": ["car-00"], "observations": {"car-00": {"vector": [1, None]}}}, None, "observations.car-00.vector"),
    ({"driverIds": ["car-00"], "observations": {"car-00": {"vector": [0.1], "object": {"self": {"speedKph": "fast"}}}}},
     None, "observations.car-00.object.self.speedKph"),
    (None, b"{not json", "body"),
    (None, b"[1, 2]", "body"),
])
def test_bad_bodies_get_a_4xx_naming_the_field_and_change_nothing(policy_server, body, raw, field):
    http("POST", f"{policy_server}/policy/reset", {"driverIds": DRIVERS})
    first = decide(policy_server, STEPS[0]["observations"])["actions"]
    status, _, err = http("POST", f"{policy_server}/policy/decide-batch", body, raw=raw)
    assert status == 400 and err["ok"] is False and err["field"] == field and field in err["error"]
    # the rejected request moved no history: the next decision is the one it would have been
    http("POST", f"{policy_server}/policy/reset", {"driverIds": DRIVERS})
    assert decide(policy_server, STEPS[0]["observations"])["actions"] == first


def test_cors_for_local_origins_only(policy_server):
    status, headers, _ = http("OPTIONS", f"{policy_server}/policy/decide-batch",
                              headers={"Origin": "http://127.0.0.1:5174", "Access-Control-Request-Method": "POST"})
    assert status == 204 and headers["Access-Control-Allow-Origin"] == "http://127.0.0.1:5174"
    status, headers, _ = http("POST", f"{policy_server}/policy/reset", {"driverIds": []},
                              headers={"Origin": "http://localhost:5173"})
    assert status == 200 and headers["Access-Control-Allow-Origin"] == "http://localhost:5173"
    status, headers, _ = http("POST", f"{policy_server}/policy/reset", {"driverIds": []},
                              headers={"Origin": "http://example.com"})
    assert "Access-Control-Allow-Origin" not in headers
