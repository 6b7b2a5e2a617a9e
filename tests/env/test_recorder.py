"""RolloutRecorder: transition shape, deep copies at record time, JSON-safe export."""

from __future__ import annotations

import json

import numpy as np

from paddock_ma.env.environment import PaddockEnv
from paddock_ma.env.json_safe import json_safe
from paddock_ma.rollout.recorder import TRANSITION_KEYS, RolloutRecorder
from paddock_ma.env.rewards import progress_reward

CONFIG = {"track": "oval", "drivers": 3, "controlled_drivers": ["car-00"], "seed": 5,
          "rules": {"standing_start": False}, "episode": {"max_steps": 3}}


def test_transition_shape_and_reward_is_not_invented():
    env = PaddockEnv(CONFIG)
    rec = RolloutRecorder()
    prev = env.reset(seed=5)
    action = {"car-00": {"steering": 0.1, "throttle": 1.0, "brake": 0.0}}
    nxt = env.step(action)
    row = rec.record_step(prev, action, nxt)
    assert tuple(row) == TRANSITION_KEYS and rec.transitions == [row] and len(rec) == 1
    assert row["reward"] is None  # no reward callback: the recorder does not make one up
    assert row["info"]["step"] == 1 and row["terminated"] is False and row["truncated"] is False
    np.testing.assert_array_equal(row["observation"]["car-00"]["vector"], prev["observation"]["car-00"]["vector"])
    np.testing.assert_array_equal(row["next_observation"]["car-00"]["vector"], nxt["observation"]["car-00"]["vector"])
    prev, nxt = nxt, env.step(action)
    prev, nxt = nxt, env.step(action)
    row = rec.record_step(prev, action, nxt)
    assert row["truncated"] is True and row["info"]["end_reason"] == "max-steps"  # max_steps 3
    rec.clear()
    assert rec.transitions == [] and rec.to_json() == {"transitions": []}


def test_rewards_are_copied_from_the_next_result():
    env = PaddockEnv(dict(CONFIG, reward=progress_reward()))
    rec = RolloutRecorder()
    prev = env.reset(seed=5)
    nxt = env.step({"car-00": {"steering": 0.0, "throttle": 1.0, "brake": 0.0}})
    row = rec.record_step(prev, {"car-00": {"steering": 0.0, "throttle": 1.0, "brake": 0.0}}, nxt)
    assert row["reward"] == nxt["reward"] and isinstance(row["reward"]["car-00"], float)
    nxt["reward"]["car-00"] = 1e9
    assert row["reward"]["car-00"] != 1e9


def test_rows_are_immune_to_later_mutation():
    env = PaddockEnv(CONFIG)
    rec = RolloutRecorder()
    prev = env.reset(seed=5)
    action = {"car-00": {"steering": 0.0, "throttle": 1.0, "brake": 0.0}}
    nxt = env.step(action)
    rec.record_step(prev, action, nxt)
    stored_obs = rec.transitions[0]["observation"]["car-00"]["vector"].copy()
    stored_next = rec.transitions[0]["next_observation"]["car-00"]["vector"].copy()
    speed = rec.transitions[0]["next_observation"]["car-00"]["object"]["self"]["speed_kph"]
    # The caller mutates everything it handed over, in place ...
    action["car-00"]["throttle"] = 0.0
    prev["observation"]["car-00"]["vector"][:] = 123.0
    nxt["observation"]["car-00"]["vector"][:] = -7.0
    nxt["observation"]["car-00"]["object"]["self"]["speed_kph"] = -1.0
    nxt["info"]["drivers"]["car-00"]["episode_step"] = 999
    # ... and the environment moves on, rewriting its own buffers.
    for _ in range(2):
        env.step({"car-00": {"steering": 0.0, "throttle": 1.0, "brake": 0.0}})
    row = rec.transitions[0]
    assert row["action"]["car-00"]["throttle"] == 1.0
    np.testing.assert_array_equal(row["observation"]["car-00"]["vector"], stored_obs)
    np.testing.assert_array_equal(row["next_observation"]["car-00"]["vector"], stored_next)
    assert row["next_observation"]["car-00"]["object"]["self"]["speed_kph"] == speed
    assert row["info"]["drivers"]["car-00"]["episode_step"] == 1
    assert not np.shares_memory(row["observation"]["car-00"]["vector"], prev["observation"]["car-00"]["vector"])


def test_to_json_is_strict_json():
    env = PaddockEnv(dict(CONFIG, result={"state_output": "full"}))
    rec = RolloutRecorder()
    prev = env.reset(seed=5)
    action = {"car-00": {"steering": 0.0, "throttle": 1.0, "brake": 0.0}}
    nxt = env.step(action)
    rec.record_step(prev, action, nxt)
    doc = rec.to_json()
    text = json.dumps(doc, allow_nan=False)  # raises on NaN/inf or a numpy type
    back = json.loads(text)
    row = back["transitions"][0]
    assert isinstance(row["observation"]["car-00"]["vector"], list)
    assert len(row["observation"]["car-00"]["vector"]) == len(prev["observation"]["car-00"]["vector"])
    assert row["observation"]["car-00"]["vector"] == prev["observation"]["car-00"]["vector"].tolist()


def test_json_safe_replaces_non_finite_numbers():
    doc = json_safe({"a": np.array([1.0, np.nan, np.inf], np.float32), "b": (np.int64(3), np.bool_(True)),
                     "c": float("-inf"), 4: None})
    assert doc == {"a": [1.0, None, None], "b": [3, True], "c": None, "4": None}
    assert type(doc["b"][0]) is int and type(doc["b"][1]) is bool
