"""DriverControllerLoop: batching order, action repeat, previous actions, partial reset merge, errors."""

from __future__ import annotations

import math

import numpy as np
import pytest

from paddock_ma.rollout.controller import DriverControllerLoop
from paddock_ma.env.environment import PaddockEnv
from paddock_ma.errors import PaddockError

# Oval, 4 cars, rolling start (cars move from step one); the controlled list is deliberately not in
# driver order so "stable order" means the environment's controlled order, not a sort.
CONFIG = {"track": "oval", "drivers": 4, "controlled_drivers": ["car-02", "car-00"], "seed": 3,
          "total_laps": 3, "rules": {"standing_start": False}, "episode": {"max_steps": 200},
          "result": {"state_output": "minimal"}}


def make_env(**overrides):
    cfg = dict(CONFIG)
    cfg.update(overrides)
    return PaddockEnv(cfg)


class Recording:
    """A controller that drives straight at half throttle and records every context it sees."""

    def __init__(self, throttle=0.5):
        self.throttle = throttle
        self.calls = []

    def init(self, ctx):
        self.calls.append(("init", ctx.observation_spec["controlled_drivers"], ctx.action_spec["version"]))

    def reset(self, ctx):
        self.calls.append(("reset", list(ctx.controlled_drivers)))

    def decide_batch(self, ctx):
        self.calls.append(("decide", list(ctx.controlled_drivers),
                           [o["driver_id"] for o in ctx.ordered_observations],
                           [o for o in ctx.ordered_observations]))
        return {d: {"steering": 0.0, "throttle": self.throttle, "brake": 0.0} for d in ctx.controlled_drivers}

    def on_step(self, ctx):
        self.calls.append(("on_step", ctx.actions, ctx.previous_actions, ctx.metrics, ctx.result["info"]["step"]))

    def of(self, kind):
        return [c for c in self.calls if c[0] == kind]


def test_decide_batch_sees_every_driver_in_stable_order():
    env = make_env()
    ctrl = Recording()
    loop = DriverControllerLoop(env, ctrl)
    loop.reset(seed=3)
    for _ in range(4):
        loop.step()
    assert ctrl.calls[0] == ("init", ["car-02", "car-00"], 1)  # init once, before the first reset
    assert ctrl.calls[1] == ("reset", ["car-02", "car-00"])
    decides = ctrl.of("decide")
    assert len(decides) == 4 and loop.stats.decisions == 4
    for _, drivers, ordered_ids, _obs in decides:
        assert drivers == ["car-02", "car-00"] and ordered_ids == ["car-02", "car-00"]
    # The last decision saw the environment's observation of the step before it (same vector).
    latest = env.get_observation()
    loop.step()
    last = ctrl.of("decide")[-1][3]
    for item in last:
        np.testing.assert_array_equal(item["vector"], latest[item["driver_id"]]["vector"])


def test_action_repeat_steps_the_env_k_times_per_decision():
    env = make_env()
    ctrl = Recording()
    loop = DriverControllerLoop(env, ctrl, action_repeat=3)
    result = loop.reset(seed=3)
    assert result["info"]["step"] == 0
    result = loop.step()
    assert result["info"]["step"] == 3  # the world's env-step counter, not the loop's own count
    loop.step()
    assert env.get_state("minimal")["snapshot"]["step"] == 6
    assert loop.stats.decisions == 2 and loop.stats.steps == 6
    # The same action map went to the env on each of the repeated steps.
    on_steps = ctrl.of("on_step")
    assert [c[4] for c in on_steps] == [1, 2, 3, 4, 5, 6]
    assert on_steps[0][1] == on_steps[1][1] == on_steps[2][1]
    assert on_steps[3][1] == on_steps[5][1]


def test_action_repeat_stops_early_when_done_and_run_stops_at_done():
    env = make_env(episode={"max_steps": 5})
    loop = DriverControllerLoop(env, Recording(), action_repeat=3)
    loop.reset(seed=3)
    result = loop.run()
    # 5 steps = 3 + 2: the second decision's repeat stopped at max-steps instead of stepping a 6th time.
    assert result["done"] and result["info"]["end_reason"] == "max-steps"
    assert result["info"]["step"] == 5 and loop.stats.steps == 5 and loop.stats.decisions == 2
    assert loop.step() is result and loop.stats.steps == 5  # nothing left to drive: no env step


def test_previous_actions_none_after_reset_then_the_prior_map():
    env = make_env()
    ctrl = Recording()
    loop = DriverControllerLoop(env, ctrl, action_repeat=2)
    loop.reset(seed=3)
    loop.step()
    ctrl.throttle = 0.8
    loop.step()
    on_steps = ctrl.of("on_step")
    assert on_steps[0][2] is None                      # first frame after reset
    assert on_steps[1][2] == on_steps[0][1]            # repeated step: the same map applied before
    assert on_steps[2][2]["car-00"]["throttle"] == 0.5 and on_steps[2][1]["car-00"]["throttle"] == 0.8
    assert set(on_steps[0][3]) == {"car-02", "car-00"}  # metrics of every controlled driver
    loop.reset(seed=3)
    loop.step()
    assert ctrl.of("on_step")[-2][2] is None           # again after a loop reset
    assert loop.stats.resets == 2


def test_reset_drivers_merges_partial_observations():
    env = make_env(observation={"output": "full"})
    ctrl = Recording()
    loop = DriverControllerLoop(env, ctrl)
    loop.reset(seed=3)
    for _ in range(3):
        loop.step()
    before = loop.observations["car-02"]
    result = loop.reset_drivers({"car-00": {"distance_meters": 400.0, "offset_meters": 0.0, "speed_kph": 90.0}})
    assert list(result["observation"]) == ["car-00"]  # scope "reset": only the reset driver
    assert set(loop.observations) == {"car-02", "car-00"}
    assert loop.observations["car-02"] is before
    assert loop.previous_actions is not None and "car-00" not in loop.previous_actions
    loop.step()
    _, drivers, ids, obs = ctrl.of("decide")[-1]
    assert drivers == ["car-02", "car-00"] and ids == ["car-02", "car-00"]
    # car-00's observation is the reset one: placed at race distance 400 m, 90 km/h.
    me = obs[1]["object"]["self"]
    assert me["race_distance_meters"] == pytest.approx(400.0, abs=1e-6)
    assert me["speed_kph"] == pytest.approx(90.0, abs=1e-6)
    assert ctrl.of("on_step")[-1][2] == {"car-02": {"steering": 0.0, "throttle": 0.5, "brake": 0.0}}


def test_ended_drivers_are_left_out_of_the_action_map():
    env = make_env()
    ctrl = Recording()
    loop = DriverControllerLoop(env, ctrl)
    loop.reset(seed=3)
    loop.step()
    # 45 m off the centreline is beyond the oval's 41 m grass edge: a start in the barrier is terminal.
    result = loop.reset_drivers({"car-00": {"distance_meters": 300.0, "offset_meters": 45.0}})
    assert result["info"]["drivers"]["car-00"]["terminated"]

    class Greedy(Recording):  # still returns an action for every controlled driver
        def decide_batch(self, ctx):
            super().decide_batch(ctx)
            return {d: {"steering": 0.0, "throttle": 0.5, "brake": 0.0} for d in ("car-02", "car-00")}

    loop.controller = greedy = Greedy()
    result = loop.step()  # the loop asks only running drivers (the env would ignore car-00's action)
    assert greedy.of("decide")[-1][1] == ["car-02"]
    assert set(greedy.of("on_step")[-1][1]) == {"car-02"}
    assert loop.stats.last_error is None and not result["done"]


def test_controller_error_is_stored_and_reraised():
    class Broken(Recording):
        def decide_batch(self, ctx):
            raise RuntimeError("model exploded")

    loop = DriverControllerLoop(make_env(), Broken())
    loop.reset(seed=3)
    with pytest.raises(RuntimeError, match="model exploded"):
        loop.step()
    assert isinstance(loop.stats.last_error, RuntimeError) and loop.stats.steps == 0


def test_runtime_error_is_stored_and_reraised():
    class NaNModel(Recording):
        def decide_batch(self, ctx):
            return {d: {"steering": math.nan, "throttle": 0.5, "brake": 0.0} for d in ctx.controlled_drivers}

    env = make_env()
    loop = DriverControllerLoop(env, NaNModel())
    loop.reset(seed=3)
    with pytest.raises(PaddockError):
        loop.step()
    assert isinstance(loop.stats.last_error, PaddockError)
    assert env.get_state("minimal")["snapshot"]["step"] == 0  # strict validation: nothing was stepped


def test_fresh_loop_step_resets_itself():
    env = make_env()
    ctrl = Recording()
    loop = DriverControllerLoop(env, ctrl)
    result = loop.step()
    assert [c[0] for c in ctrl.calls[:3]] == ["init", "reset", "decide"]
    assert result["info"]["step"] == 1


def test_bad_arguments():
    with pytest.raises(ValueError):
        DriverControllerLoop(make_env(), Recording(), action_repeat=0)
    with pytest.raises(TypeError):
        DriverControllerLoop(make_env(), object())
