"""The worker protocol's dispatcher, in process: PaddockJS 2.0's exchanges, wire names, batched form,
strictness, rejected requests, snapshots."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import numpy as np
import pytest

from paddock_ma.catalog import env_config
from paddock_ma.env.environment import PaddockEnv
from paddock_ma.env.episodes import DESTROY_REASON_NAMES
from paddock_ma.errors import ERROR_CODES
from paddock_ma.protocol.codec import Limits, unpack_f32
from paddock_ma.protocol.messages import Dispatcher
from paddock_ma.paddockjs.naming import EXCEPTIONS, camel_case, python_name, snake_case, wire_name
from paddock_ma.protocol.wire_names import config_from_wire

GOLDEN = json.loads((Path(__file__).parent.parent / "fixtures" / "paddockjs-2.0.0" /
                     "worker-protocol-exchanges.json").read_text())

# The golden exchanges' options as recorded, trackSeed 2601 included: PaddockJS's own track.
GOLDEN_CONFIG = GOLDEN["config"]


def send(d: Dispatcher, message) -> dict:
    return json.loads(d.handle_line(json.dumps(message).encode()))


def drive(d: Dispatcher, n_steps=3, env=None):
    drivers = send(d, {"id": 0, "type": "getActionSpec"})["result"]["controlledDrivers"]
    actions = {x: {"steering": 0.05, "throttle": 0.7, "brake": 0.0} for x in drivers}
    replies = []
    for i in range(n_steps):
        msg = {"id": i, "type": "step", "actions": actions}
        if env is not None:
            msg["env"] = env
        replies.append(d.handle_line(json.dumps(msg).encode()))
    return replies


@pytest.fixture(scope="module")
def golden_dispatcher():
    return Dispatcher(config_from_wire(GOLDEN_CONFIG))


def test_paddockjs_exchanges_give_the_same_ok_type_and_result_keys(golden_dispatcher):
    d = golden_dispatcher
    for exchange in GOLDEN["exchanges"]:
        request, expected = exchange["request"], exchange["reply"]
        if isinstance(request, dict) and request.get("type") == "hello":
            continue        # ours: PaddockJS 2.0.0 has no hello and refuses it as an unknown type
        reply = send(d, request)
        label = exchange["label"]
        assert reply["id"] == expected["id"], label
        assert reply["ok"] == expected["ok"], (label, reply)
        assert reply["type"] == expected["type"], label
        if not expected["ok"]:
            assert isinstance(reply["error"], str) and reply["error"], label
            assert reply["code"] in ERROR_CODES, label
            continue
        result, golden = reply["result"], expected["result"]
        if golden is None or not isinstance(golden, dict):
            assert result == golden, label
            continue
        assert list(result) == list(golden), label
        if "observation" in golden:      # the same drivers, each with the same parts (events, vector)
            assert list(result["observation"]) == list(golden["observation"]), label
            for driver, obs in golden["observation"].items():
                assert set(result["observation"][driver]) == set(obs), label
            assert list(result["info"]["drivers"]) == list(golden["info"]["drivers"]), label
            for driver, info in golden["info"]["drivers"].items():
                assert set(result["info"]["drivers"][driver]) == set(info), label
        if "snapshot" in golden:
            assert set(result) == {"snapshot"}, label


def test_the_guides_resetdrivers_and_getstate_messages_work_unchanged(golden_dispatcher):
    d = golden_dispatcher
    send(d, {"id": "r", "type": "reset", "options": {"seed": 3}})
    reply = send(d, {"id": "reset-agent-3", "type": "resetDrivers",
                     "placements": {"car-01": {"distanceMeters": 1200, "offsetMeters": 0, "speedKph": 80}},
                     "resultOptions": {"observationScope": "reset", "stateOutput": "none"}})
    assert reply["ok"] and reply["id"] == "reset-agent-3"
    assert list(reply["result"]["observation"]) == ["car-01"] and reply["result"]["state"] is None
    assert reply["result"]["info"]["drivers"]["car-01"]["episodeId"] == 1
    for message in ({"id": 1, "type": "getState", "stateOptions": {"output": "minimal"}},
                    {"id": 2, "type": "getState", "resultOptions": {"stateOutput": "minimal"}}):
        reply = send(d, message)
        assert reply["ok"] and set(reply["result"]) == {"snapshot"}
        assert reply["result"]["snapshot"]["cars"][1]["id"] == "car-01"
    assert send(d, {"id": 3, "type": "getState", "stateOptions": {"output": "none"}})["result"] is None


WIRE_DATA_KEYED = ("observation", "metrics", "reward", "drivers", "perDriver")     # maps keyed by driver ids
PYTHON_DATA_KEYED = ("observation", "metrics", "reward", "drivers", "per_driver")


def _all_keys(value, out: set, data_keyed=WIRE_DATA_KEYED, parent=None):
    """Every key of ``value`` (recursively), except the driver ids of the maps under ``data_keyed`` keys."""
    if isinstance(value, dict):
        skip = parent in data_keyed
        for key, item in value.items():
            if not skip:
                out.add(key)
            _all_keys(item, out, data_keyed, None if skip else key)
    elif isinstance(value, list):
        for item in value:
            _all_keys(item, out, data_keyed)


def test_every_reply_key_is_a_wire_name_of_the_table_and_no_python_name_leaks():
    configs = [
        {"drivers": 4, "controlledDrivers": ["car-00", "car-01"], "track": "oval", "rules": {"standingStart": False},
         "observation": {"output": "full", "includeSchema": True}, "result": {"stateOutput": "full"}},
        {"drivers": 3, "controlledDrivers": ["car-00"], "physicsMode": "simulator",
         "observation": {"profile": "physical-driver"}, "result": {"stateOutput": "minimal"}},
    ]
    keys = set()
    for cfg in configs:
        d = Dispatcher(config_from_wire(cfg), num_worlds=2, env_id="paddock/custom-v3")
        for message in ({"type": "hello"}, {"type": "getActionSpec"}, {"type": "getObservationSpec"},
                        {"type": "reset", "options": {"seed": 1}}, {"type": "reset", "envs": "all"},
                        {"type": "step", "envs": [1], "actions": [[[0.9, 1, 0]] * len(d.engine.controlled)]},
                        {"type": "resetDrivers", "placements": {"car-00": {"distanceMeters": 10}}},
                        {"type": "resetDrivers", "envs": [0, 1], "placements": [{"car-00": {}}, {}]},
                        {"type": "getObservation", "env": 1}, {"type": "getState"}, {"type": "snapshot"},
                        {"type": "step", "actions": {"car-00": {"steering": 0}}}, {"type": "nope"}):
            reply = send(d, message)
            if message["type"] == "getObservation":        # its result is the map of drivers
                reply["result"] = list(reply["result"].values())
            _all_keys(reply, keys)
        for _ in range(40):   # long enough for events (laps need more; collisions and pit events come from
            reply = send(d, {"type": "step", "actions": {k: {"steering": 1.0, "throttle": 1.0, "brake": 0}
                                                         for k in d.engine.controlled}})
            _all_keys(reply, keys)
    # every key is the wire spelling of a snake_case Python name: the rule's, or one of the exceptions
    assert [k for k in keys if wire_name(python_name(k)) != k] == []
    assert not [k for k in keys if "_" in k]


def test_every_python_result_key_is_snake_case_and_has_one_wire_name():
    env = PaddockEnv({"drivers": 3, "controlled_drivers": ["car-00"], "physics_mode": "simulator",
                      "observation": {"profile": "physical-driver", "output": "full"},
                      "result": {"state_output": "full"}})
    keys = set()
    for result in (env.reset(seed=2), env.step({"car-00": {"steering": 0.2, "throttle": 1, "brake": 0}}),
                   env.get_observation_spec(), env.get_action_spec()):
        _all_keys(result, keys, PYTHON_DATA_KEYED)
    assert [k for k in keys if python_name(wire_name(k)) != k] == []
    assert not [k for k in keys if k != k.lower()]
    assert {"lap_completed", "under_30_kph"} <= keys      # the exceptions are in use


def test_the_rule_and_its_exceptions_are_one_to_one():
    assert wire_name("lap_completed") == "completedLap" and wire_name("under_30_kph") == "under30kph"
    assert python_name("completedLap") == "lap_completed" and python_name("under30kph") == "under_30_kph"
    assert wire_name("yaw_rate_radians_per_second") == "yawRateRadiansPerSecond" == camel_case("yaw_rate_radians_per_second")
    assert python_name("lateralG") == "lateral_g" and wire_name("lateral_g") == "lateralG"
    # the exceptions are exactly the names the rule does not give, and no rule name collides with one
    assert all(camel_case(py) != wire and snake_case(wire) != py for py, wire in EXCEPTIONS.items())
    assert not set(EXCEPTIONS.values()) & {camel_case(py) for py in EXCEPTIONS}
    # data and non-camelCase strings are not renamed
    assert [python_name(s) for s in ("car-00", "pit_intent", "S", "f32")] == ["car-00", "pit_intent", "S", "f32"]


def test_ids_are_echoed_as_the_same_json_value_and_errors_carry_code_and_field():
    d = Dispatcher(env_config("paddock/gp-v0"))
    for mid in (7, -3, 2.5, "abc", None, "ü-id", True, False, [1, "a", None], {"k": {"n": 1}}, "x" * 300):
        reply = send(d, {"id": mid, "type": "getActionSpec"})
        assert reply["id"] == mid and type(reply["id"]) is type(mid)
    reply = send(d, {"id": 9, "type": "step", "actions": {}})       # the worker starts reset: a step is checked
    assert reply["code"] == "invalid_action" and reply["id"] == 9
    send(d, {"id": 1, "type": "reset"})
    reply = send(d, {"id": 10, "type": "step", "actions": {"car-00": {"steering": 0, "throttle": 1, "brake": 0,
                                                                      "pitIntent": 7}}})
    assert reply["code"] == "invalid_action" and reply["field"] == "actions.car-00.pitIntent"
    assert "pitIntent" in reply["error"] and "pit_intent" not in reply["error"]
    reply = send(d, {"id": 11, "type": "step", "actions": {}, "extra": 1})
    assert reply["code"] == "invalid_request" and reply["field"] == "extra"
    assert send(d, {"id": 12, "type": "warp"})["code"] == "unknown_type"
    assert send(d, {"id": 13, "type": "hello", "protocolVersion": "3.1"})["code"] == "version_mismatch"
    assert "3.1" in send(d, {"id": 13, "type": "hello", "protocolVersion": "3.1"})["error"]
    hello = send(d, {"id": 14, "type": "hello", "protocolVersion": "1.9"})["result"]
    assert hello["protocolVersion"] == "1.0" and hello["envId"] is None and hello["packageVersion"]


@pytest.mark.parametrize("line, code", [
    (b'{"id": 1, "type": "reset", "options": {"seed": NaN}}', "bad_json"),
    (b'{"id": 1, "type": "getState", "type": "reset"}', "bad_json"),
    (b'{"id": 1, "type": "step", "actions": {"car-00": {"steering": Infinity}}}', "bad_json"),
    (b'{"id": 1e999}', "bad_json"),
    (b'{"id": 123456789012345678901234567890}', "bad_json"),
    (b'{"id": "\\ud800", "type": "getState"}', "bad_json"),
    (b'{"id": 1, "type": "getState"} x', "bad_json"),
    (b'\xc3\x28', "bad_json"),
    (b'[' * 40 + b']' * 40, "bad_json"),
    (b'"just a string"', "invalid_request"),
    (b'{"id": 1, "type": "getState", "env": 5}', "invalid_request"),
])
def test_strict_json_rejections(line, code):
    d = Dispatcher(env_config("paddock/gp-v0"))
    d.handle_line(b'{"type": "reset"}')
    before = d.engine.checksums().copy()
    reply = json.loads(d.handle_line(line))
    assert reply["ok"] is False and reply["code"] == code, reply
    assert (d.engine.checksums() == before).all()


def test_an_overlong_line_is_refused_by_the_codec():
    d = Dispatcher(env_config("paddock/gp-v0"), limits=Limits(max_line_bytes=64))
    reply = json.loads(d.handle_line(b'{"id": 1, "type": "getState", "stateOptions": {"output": "minimal"}}'))
    assert reply["code"] == "line_too_long"


def _twins(env_id="paddock/oval-batch-v0", worlds=3, seed=None):
    """Two dispatchers of the same worlds; with ``seed``, both reset (every world) with it."""
    pair = [Dispatcher(env_config(env_id), num_worlds=worlds) for _ in range(2)]
    if seed is not None:
        for d in pair:
            d.handle_line(json.dumps({"type": "reset", "envs": "all", "options": {"seed": seed}}).encode())
    return pair


def test_rejected_requests_change_nothing_and_the_next_replies_equal_a_twins():
    d, twin = _twins()
    for x in (d, twin):
        x.handle_line(b'{"type": "reset", "envs": "all", "options": {"seed": 5}}')
        drive(x, 2)
    drivers = list(d.engine.controlled)
    good = {x: {"steering": 0.1, "throttle": 0.5, "brake": 0} for x in drivers}
    bad = [
        {"type": "step", "actions": dict(good, **{drivers[-1]: {"steering": 0.1, "throttle": 0.5}})},
        {"type": "step", "actions": dict(good, **{drivers[0]: {"steering": "left", "throttle": 1, "brake": 0}})},
        {"type": "step", "envs": [0, 1], "actions": [good, dict(good, ghost={"steering": 0, "throttle": 0,
                                                                          "brake": 0})]},
        {"type": "step", "envs": "all", "actions": [[[0, 1, 0]] * len(drivers)] * 2},
        {"type": "step", "envs": "all", "encoding": "f32-base64",
         "actions": {"f32": base64.b64encode(np.full((3, len(drivers), 3), np.nan, "<f4").tobytes()).decode(),
                     "shape": [3, len(drivers), 3]}},
        {"type": "resetDrivers", "placements": {drivers[0]: {"distanceMeters": 10}, "ghost": {}}},
        {"type": "resetDrivers", "placements": {drivers[0]: {"distanceMeters": "far"}}},
        {"type": "resetDrivers", "envs": [0, 2], "placements": [{drivers[0]: {}}, {drivers[1]: {"offsetMeters": 1e400}}]},
        {"type": "reset", "options": {"seed": -1}},
        {"type": "reset", "envs": "all", "options": {"frameSkip": 0}},
        {"type": "reset", "options": {"frameSkip": 2}},
        {"type": "restore", "snapshot": "bm90IGEgc25hcHNob3Q="},
        {"type": "getState", "stateOptions": {"output": "everything"}},
    ]
    for message in bad:
        before = d.engine.checksums().copy()
        reply = json.loads(d.handle_line(json.dumps(message).encode()))
        assert reply["ok"] is False, (message, reply)
        assert reply["code"] in ERROR_CODES
        assert (d.engine.checksums() == before).all(), message
    assert drive(d, 3) == drive(twin, 3)


def test_snapshot_restored_into_a_fresh_worker_continues_with_identical_replies():
    d, fresh = _twins()
    d.handle_line(b'{"type": "reset", "envs": "all", "options": {"seed": 9}}')
    drive(d, 4)
    snap = send(d, {"id": 1, "type": "snapshot"})["result"]["snapshot"]
    restored = send(fresh, {"id": 2, "type": "restore", "snapshot": snap})
    assert restored["ok"] and restored["result"]["steps"] == [4, 0, 0]
    assert drive(d, 5, env=1) == drive(fresh, 5, env=1)
    assert d.handle_line(b'{"type": "step", "envs": "all", "actions": [[[0, 1, 0], [0.2, 1, 0], [0, 0, 1], '
                         b'[0.1, 0.1, 0]], [[0, 1, 0], [0, 1, 0], [0, 1, 0], [0, 1, 0]], [[0, 0, 0], [0, 0, 0], '
                         b'[0, 0, 0], [0, 0, 0]]]}') == \
        fresh.handle_line(b'{"type": "step", "envs": "all", "actions": [[[0, 1, 0], [0.2, 1, 0], [0, 0, 1], '
                          b'[0.1, 0.1, 0]], [[0, 1, 0], [0, 1, 0], [0, 1, 0], [0, 1, 0]], [[0, 0, 0], [0, 0, 0], '
                          b'[0, 0, 0], [0, 0, 0]]]}')


def test_tampered_and_foreign_snapshots_are_rejected_and_change_nothing():
    d = Dispatcher(env_config("paddock/oval-batch-v0"), num_worlds=3)
    d.handle_line(b'{"type": "reset", "envs": "all"}')
    drive(d, 2)
    snap = send(d, {"type": "snapshot"})["result"]["snapshot"]
    doc = json.loads(base64.b64decode(snap))
    doc["arrays"]["cars_f"] = doc["arrays"]["cars_f"][:-8] + ("AAAAAAAA" if doc["arrays"]["cars_f"][-8:] != "AAAAAAAA"
                                                              else "AQAAAAAA")
    tampered = base64.b64encode(json.dumps(doc).encode()).decode()
    other = Dispatcher(env_config("paddock/gp-batch-v0"), num_worlds=3)
    other.handle_line(b'{"type": "reset", "envs": "all"}')
    foreign = send(other, {"type": "snapshot"})["result"]["snapshot"]
    before = d.engine.checksums().copy()
    for text in (tampered, foreign, snap[:100], 42):
        reply = send(d, {"id": 5, "type": "restore", "snapshot": text})
        assert reply["ok"] is False and reply["code"] == "snapshot_rejected", reply
        assert (d.engine.checksums() == before).all()
    smaller = Dispatcher(env_config("paddock/oval-batch-v0"), num_worlds=2)
    assert send(smaller, {"type": "restore", "snapshot": snap})["code"] == "snapshot_rejected"


def test_the_batched_step_gives_the_numbers_of_one_world_steps():
    batched, single = _twins(worlds=3, seed=21)
    drivers = list(batched.engine.controlled)
    rng = np.random.default_rng(0)
    for _ in range(4):
        acts = rng.uniform([-1, 0, 0], [1, 1, 0.2], (3, len(drivers), 3)).round(3)
        reply = send(batched, {"type": "step", "envs": [2, 0, 1], "actions": acts[[2, 0, 1]].tolist()})["result"]
        for i, w in enumerate([2, 0, 1]):
            one = send(single, {"type": "step", "env": w, "actions": {
                d: {"steering": a[0], "throttle": a[1], "brake": a[2]} for d, a in zip(drivers, acts[w].tolist())}})
            one = one["result"]
            assert reply["observation"]["vectors"][i] == [one["observation"][d]["vector"] for d in drivers]
            assert reply["episodeStep"][i] == [one["info"]["drivers"][d]["episodeStep"] for d in drivers]
            # a column holds numbers: destroyReason its code (DESTROY_REASON_NAMES), a missing lap time null
            metric_rows = [[DESTROY_REASON_NAMES.index(one["metrics"][d][n]) if n == "destroyReason"
                            else one["metrics"][d][n] for n in reply["metrics"]["names"]] for d in drivers]
            assert reply["metrics"]["values"][i] == [[float(v) if v is not None else None for v in row]
                                                     for row in metric_rows]
            assert reply["step"][i] == one["info"]["step"]
    assert (batched.engine.checksums() == single.engine.checksums()).all()


def test_a_batched_step_of_some_worlds_leaves_the_others_untouched():
    d = Dispatcher(env_config("paddock/oval-batch-v0"), num_worlds=3)
    d.handle_line(b'{"type": "reset", "envs": "all"}')
    before = d.engine.checksums().copy()
    k = len(d.engine.controlled)
    reply = send(d, {"type": "step", "envs": [1], "actions": [[[0.3, 1, 0]] * k]})
    assert reply["ok"] and reply["result"]["step"] == [1]
    after = d.engine.checksums()
    assert after[0] == before[0] and after[2] == before[2] and after[1] != before[1]


def test_resetting_one_world_with_a_seed_gives_that_world_of_a_full_reset():
    a, b = _twins(worlds=3)
    a.handle_line(b'{"type": "reset", "envs": "all", "options": {"seed": 1}}')
    drive(a, 3)
    a.handle_line(b'{"type": "reset", "env": 2, "options": {"seed": 77}}')
    b.handle_line(b'{"type": "reset", "envs": "all", "options": {"seed": 77}}')
    assert a.engine.checksums()[2] == b.engine.checksums()[2]
    assert a.engine.checksums()[0] != b.engine.checksums()[0]


def test_f32_encoding_carries_the_same_numbers():
    plain, packed = _twins(worlds=2)
    a = send(plain, {"type": "reset", "envs": "all"})["result"]
    b = send(packed, {"type": "reset", "envs": "all", "encoding": "f32-base64"})["result"]
    vectors = unpack_f32(b["observation"]["vectors"], "vectors")
    assert vectors.tolist() == a["observation"]["vectors"]
    k = len(plain.engine.controlled)
    acts = np.tile(np.array([0.1, 0.9, 0.0], "<f4"), (2, k, 1))
    a = send(plain, {"type": "step", "envs": "all", "actions": acts.tolist()})["result"]
    b = send(packed, {"type": "step", "envs": "all", "encoding": "f32-base64",
                      "actions": {"f32": base64.b64encode(acts.tobytes()).decode(), "shape": [2, k, 3]}})["result"]
    assert unpack_f32(b["observation"]["vectors"], "v").tolist() == a["observation"]["vectors"]
    values = unpack_f32(b["metrics"]["values"], "m")
    assert np.array_equal(values, np.array(a["metrics"]["values"], dtype=float).astype(np.float32), equal_nan=True)
    one = send(packed, {"type": "getObservation", "env": 1, "encoding": "f32-base64"})["result"]
    first = next(iter(one.values()))["vector"]
    assert unpack_f32(first, "v").tolist() == a["observation"]["vectors"][1][0][:len(unpack_f32(first, "v"))]


def test_a_reset_with_config_options_rebuilds_and_a_one_world_config_change_needs_the_batch_form():
    d = Dispatcher(env_config("paddock/oval-batch-v0"), num_worlds=2)
    reply = send(d, {"type": "reset", "options": {"frameSkip": 2}})
    assert reply["code"] == "invalid_request" and reply["field"] == "options"
    reply = send(d, {"type": "reset", "envs": "all", "options": {"frameSkip": 2, "seed": 4}})
    assert reply["ok"] and d.config.frame_skip == 2 and reply["result"]["seed"] == [4, 4]
    reply = send(d, {"type": "reset", "envs": "all", "options": {"frameSkp": 2}})
    assert reply["code"] == "invalid_config" and "did you mean 'frameSkip'" in reply["error"]
    assert "controlledDrivers" in reply["error"] and "controlled_drivers" not in reply["error"]


def test_requests_speak_wire_names_only_and_errors_name_wire_fields():
    d = Dispatcher(env_config("paddock/gp-v0"))
    spec = send(d, {"type": "getActionSpec"})["result"]
    assert list(spec["action"]["perDriver"]) == ["steering", "throttle", "brake", "pitIntent", "pitCompound"]
    send(d, {"type": "reset"})
    reply = send(d, {"type": "step", "actions": {"car-00": {"steering": 0, "throttle": 1, "brake": 0,
                                                            "pit_intent": 0}}})
    assert reply["code"] == "invalid_request" and "pitIntent" in reply["error"]
    reply = send(d, {"type": "step", "actions": {"car-00": {"steering": 0, "throttle": 1, "brake": 0, "gear": 2}}})
    assert reply["code"] == "invalid_action" and "pitIntent" in reply["error"] and "pit_intent" not in reply["error"]
    reply = send(d, {"type": "resetDrivers", "placements": {"car-00": {}},
                     "resultOptions": {"observationScope": "mine"}})
    assert reply["field"] == "resultOptions.observationScope"
    reply = send(d, {"type": "resetDrivers", "placements": {"car-00": {}}, "resultOptions": {"stateOutput": "all"}})
    assert reply["field"] == "resultOptions.stateOutput" and "(" not in reply["error"]
    reply = send(d, {"type": "getState", "resultOptions": {"stateOutput": "all"}})
    assert reply["field"] == "resultOptions.stateOutput"
    for version in ("1.0\n", "1.\u0663", "1", "1.0.0"):
        assert send(d, {"type": "hello", "protocolVersion": version})["code"] == "invalid_request"


def test_batched_number_actions_are_clamped_like_one_world_actions():
    a, b = _twins(worlds=2, seed=2)
    k = len(a.engine.controlled)
    huge = send(a, {"type": "step", "envs": "all", "actions": [[[1e39, 5.0, -3.0]] * k] * 2})
    clamped = send(b, {"type": "step", "envs": "all", "actions": [[[1.0, 1.0, 0.0]] * k] * 2})
    assert huge["ok"] and huge["result"] == clamped["result"]


def test_a_worker_steps_before_any_reset_as_after_a_reset_with_the_configs_seed():
    """PaddockJS's environment is created reset: its first step needs no reset message. Here the first
    request that needs the worlds resets them with the config's seed, so a step, getState or
    resetDrivers before any reset answers as after ``reset`` with that seed."""
    config = env_config("paddock/gp-v0")
    fresh, explicit = Dispatcher(config), Dispatcher(config)
    send(explicit, {"id": 1, "type": "reset"})
    act = {"car-00": {"steering": 0.02, "throttle": 0.8, "brake": 0.0}}
    for i in range(3):
        line = json.dumps({"id": i, "type": "step", "actions": act}).encode()
        assert fresh.handle_line(line) == explicit.handle_line(line)
    state_fresh = send(Dispatcher(config), {"id": 7, "type": "getState"})
    other = Dispatcher(config)
    send(other, {"id": 0, "type": "reset"})
    assert state_fresh == send(other, {"id": 7, "type": "getState"})
    assert state_fresh["ok"]
