"""progress_reward (demo): its formula, and the same value from compact (vector + minimal) output."""

from __future__ import annotations

import pytest

from paddock_ma.env.environment import PaddockEnv
from paddock_ma.env.rewards import DEFAULT_WEIGHTS, progress_reward

# Off-track-recovery on the oval: the car starts in the gravel and is steered back, so a run crosses
# both the off-track branch (-2 per step) and the on-track speed branch. Two drivers so the reward
# callback has to pick the right car out of the snapshot.
BASE = {"track": "oval", "drivers": 3, "controlled_drivers": ["car-00", "car-01"], "seed": 9,
        "rules": {"standing_start": False}, "scenario": {"preset": "off-track-recovery"},
        "episode": {"max_steps": 400}}


def _actions(i):
    """A fixed open-loop schedule: steer left back toward the track, then straighten and brake a bit."""
    steer = -0.6 if i < 60 else (0.25 if i < 100 else 0.0)
    return {"car-00": {"steering": steer, "throttle": 0.6, "brake": 0.1 if i % 7 == 0 else 0.0},
            "car-01": {"steering": 0.05, "throttle": 0.8, "brake": 0.0}}


def _run(**overrides):
    cfg = dict(BASE, reward=progress_reward(), **overrides)
    env = PaddockEnv(cfg)
    env.reset(seed=9)
    out = []
    for i in range(160):
        r = env.step(_actions(i))
        out.append((r["reward"], r["metrics"]))
    return out


def test_default_weights():
    assert DEFAULT_WEIGHTS == {"progress": 1.0, "speed": 0.01, "off_track": -2.0, "collision": -10.0,
                               "steering": -0.03, "brake": -0.02}
    assert progress_reward({"speed": 0.5}).weights["speed"] == 0.5
    with pytest.raises(ValueError, match="unknown weight"):
        progress_reward({"sped": 1.0})


def test_compact_output_gives_the_same_reward_as_full_output():
    full = _run(observation={"output": "full"}, result={"state_output": "full"})
    compact = _run(observation={"output": "vector", "include_schema": False}, result={"state_output": "minimal"})
    assert [r for r, _ in full] == [r for r, _ in compact]  # exact equality, every step, both drivers
    values = [r["car-00"] for r, _ in full] + [r["car-01"] for r, _ in full]
    # Both branches were exercised: off-track steps (-2 plus action costs) and on-track steps (car-01
    # at ~100+ km/h earns over 1.0 from speed alone: 0.01 per km/h).
    assert min(values) < -1.99 and max(values) > 1.0
    assert any(-1.0 < v < 1.0 for v in values[:160])  # car-00 back on the legal surface


def test_compact_output_without_state_keeps_the_speed_term():
    """Issue 14, defect 2: with vector output and ``state_output: "none"`` (the catalogue's batch envs)
    the reward still reads speed and legality, so it equals the full-output reward step for step."""
    full = _run(observation={"output": "full"}, result={"state_output": "full"})
    compact = _run(observation={"output": "vector", "include_schema": False}, result={"state_output": "none"})
    assert [r for r, _ in full] == [r for r, _ in compact]
    assert max(r["car-01"] for r, _ in compact) > 1.0      # the speed term is there (~100 km/h * 0.01)


def test_value_matches_the_formula():
    env = PaddockEnv(dict(BASE, reward=progress_reward()))
    env.reset(seed=9)
    action = {"car-00": {"steering": -0.5, "throttle": 0.6, "brake": 0.2},
              "car-01": {"steering": 0.1, "throttle": 0.8, "brake": 0.0}}
    r = env.step(action)
    for d in ("car-00", "car-01"):
        me = r["observation"][d]["object"]["self"]
        m = r["metrics"][d]
        a = action[d]
        expected = (m["legal_progress_delta_meters"] + (0.01 * me["speed_kph"] if me["on_track"] else -2.0)
                    - 10.0 * m["contact_count"] - 0.03 * abs(a["steering"]) - 0.02 * abs(a["brake"]))
        assert r["reward"][d] == pytest.approx(expected, rel=1e-12, abs=1e-12)
    # car-00 starts in the gravel (off-track preset): the off-track branch, no progress credit.
    assert r["reward"]["car-00"] == pytest.approx(-2.0 - 0.03 * 0.5 - 0.02 * 0.2, abs=1e-9)


def test_snapshot_and_metrics_fallbacks():
    reward = progress_reward()
    snapshot = {"snapshot": {"cars": [{"id": "x", "speed_kph": 50.0, "on_track": False},
                                      {"id": "a", "speed_kph": 100.0, "on_track": True}]}}
    ctx = {"driver_id": "a", "observation": {"vector": [0.0]}, "state": snapshot,
           "metrics": {"legal_progress_delta_meters": 2.0, "contact_count": 1, "off_track": False},
           "action": {"steering": 1.0, "throttle": 1.0, "brake": 0.0}}
    assert reward(ctx) == pytest.approx(2.0 + 1.0 - 10.0 - 0.03)
    # Neither object nor snapshot: legality from the off_track metric, speed unknown (0).
    ctx = {"driver_id": "a", "observation": {"vector": [0.0]}, "state": None,
           "metrics": {"legal_progress_delta_meters": 0.0, "contact_count": 0, "off_track": True}, "action": None}
    assert reward(ctx) == -2.0
