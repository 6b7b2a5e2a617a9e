"""The PettingZoo adapter: API conformance (zero warnings), lives, determinism, bad input, rendering."""

import warnings

import numpy as np
import pytest
from pettingzoo.test import parallel_api_test, parallel_seed_test

from paddock_ma.adapters.pettingzoo_env import PaddockParallelEnv, parallel_env
from paddock_ma.errors import PaddockError
from paddock_ma.sim.core import layout as L

ENV_ID = "paddock/oval-batch-v0"
# Three short rays and two radar slots keep a step cheap; the adapter does not depend on the senses.
FEW_SENSES = {"rays": {"rays": [{"id": "l", "angle_degrees": -30.0, "length_meters": 60.0},
                                {"id": "c", "angle_degrees": 0.0, "length_meters": 80.0},
                                {"id": "r", "angle_degrees": 30.0, "length_meters": 60.0}]},
              "nearby_cars": {"max_cars": 2}}


def make(n_cars=2, auto_reset=False, life_steps=150, max_lives=3, max_world_steps=200, **kw):
    ctl = [f"car-{i:02d}" for i in range(n_cars)]
    return parallel_env(ENV_ID, drivers=max(n_cars, 2), controlled_drivers=ctl, sensors=FEW_SENSES,
                        episode={"max_steps": life_steps}, auto_reset=auto_reset, max_lives=max_lives,
                        max_world_steps=max_world_steps, reset_placement="random", **kw)


def run_without_warnings(fn):
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        fn()
    return [f"{w.category.__name__}: {w.message}" for w in rec]


@pytest.mark.parametrize("n_cars", [1, 2, 8, 20])
@pytest.mark.parametrize("auto_reset", [False, True])
def test_parallel_api_test_passes_without_warnings(n_cars, auto_reset):
    # With auto-reset, lives of 25 steps x 3 lives: every car uses every life and retires, so the world
    # ends with every possible agent finished (PettingZoo warns when the world ends with agents that
    # never appeared). Without auto-reset the world cap (200 steps) truncates every car.
    env = make(n_cars, auto_reset, life_steps=25 if auto_reset else 150, max_world_steps=None if auto_reset else 200)
    warns = run_without_warnings(lambda: parallel_api_test(env, num_cycles=1000))
    assert warns == []
    expected = n_cars * (3 if auto_reset else 1)
    assert len(env.possible_agents) == expected


def test_parallel_seed_test():
    warns = run_without_warnings(lambda: parallel_seed_test(lambda: make(4, True, life_steps=30)))
    assert warns == []


def test_spaces_are_per_instance_and_stable():
    a, b = make(2), make(2)
    agent = a.possible_agents[0]
    assert a.observation_space(agent) is a.observation_space(agent)
    assert a.action_space(agent) is a.action_space(agent)
    assert a.action_space(agent) is not b.action_space(agent)
    space = a.action_space(agent)
    np.testing.assert_array_equal(space.low, [-1, 0, 0])
    np.testing.assert_array_equal(space.high, [1, 1, 1])
    obs, _ = a.reset(seed=3)
    assert obs[agent].shape == a.observation_space(agent).shape and obs[agent].dtype == np.float32
    assert a.metadata["name"] == "paddock_ma_v0"


def _random_rollout(seed, steps, env=None):
    env = env or make(3, True, life_steps=40, max_lives=8, max_world_steps=None)
    obs, _ = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    trace = []
    for _ in range(steps):
        if not env.agents:
            obs, _ = env.reset(seed=seed + 1000)
        acts = {a: np.array([rng.uniform(-1, 1), rng.uniform(0, 1), rng.uniform(0, 0.2)], np.float32)
                for a in env.agents}
        obs, rew, term, trunc, info = env.step(acts)
        trace.append((obs, rew, term, trunc, int(env.state()[0])))
    return trace


def test_two_thousand_seeded_steps_are_identical_and_seed_matters():
    t1 = _random_rollout(7, 2000)
    t2 = _random_rollout(7, 2000)
    lives_seen = set()
    for (o1, r1, te1, tr1, c1), (o2, r2, te2, tr2, c2) in zip(t1, t2):
        assert c1 == c2
        assert o1.keys() == o2.keys() and r1 == r2 and te1 == te2 and tr1 == tr2
        for a in o1:
            np.testing.assert_array_equal(o1[a], o2[a])
            lives_seen.add(a)
    # 2000 steps of 40-step lives x 8 lives x 3 cars: episodes wrap (world reset), lives 0..7 all appear
    assert {a.split("@")[1] for a in lives_seen} == {str(i) for i in range(8)}
    t3 = _random_rollout(8, 50)
    assert any(a[4] != b[4] for a, b in zip(t1[:50], t3))


def test_lives_newborn_semantics_and_retirement():
    env = make(2, True, life_steps=10, max_lives=2, max_world_steps=None)
    obs, infos = env.reset(seed=1)
    assert sorted(obs) == ["car-00@0", "car-01@0"] and env.agents == ["car-00@0", "car-01@0"]
    act = {a: np.array([0.0, 0.5, 0.0], np.float32) for a in env.agents}
    for _ in range(9):
        obs, rew, term, trunc, info = env.step({a: act["car-00@0"] for a in env.agents})
    assert set(obs) == {"car-00@0", "car-01@0"} and not any(term.values())
    obs, rew, term, trunc, info = env.step({a: act["car-00@0"] for a in env.agents})
    # life 0 ends by the 10-step cap (truncated); life 1 appears in the same call with a zero reward
    assert trunc["car-00@0"] and trunc["car-01@0"] and not term["car-00@0"]
    assert info["car-00@0"]["episode"]["end_reason"] == "max-steps"
    assert info["car-00@0"]["life_summary"]["steps"] == 10
    assert rew["car-00@1"] == 0.0 and not term["car-00@1"] and not trunc["car-00@1"]
    assert info["car-00@1"]["newborn"] and info["car-00@1"]["life"] == 1
    assert env.agents == ["car-00@1", "car-01@1"]
    with pytest.raises(PaddockError) as exc:
        env.step({a: act["car-00@0"] for a in ["car-00@0", "car-01@1"]})
    assert exc.value.code == "episode_ended" and "car-00@0" in exc.value.message
    for _ in range(10):
        obs, rew, term, trunc, info = env.step({a: act["car-00@0"] for a in env.agents})
    # second and last life ended: the cars retire and the world episode ends
    assert env.agents == [] and info["car-00@1"]["life_summary"]["retired"]


def test_world_step_cap_truncates_every_live_agent():
    env = make(3, False, life_steps=1000, max_world_steps=5)
    env.reset(seed=2)
    for _ in range(5):
        obs, rew, term, trunc, info = env.step({a: np.array([0, 1, 0], np.float32) for a in env.agents})
    assert set(trunc) == {"car-00@0", "car-01@0", "car-02@0"} and all(trunc.values())
    assert info["car-00@0"]["life_summary"]["end_reason"] == "world-step-cap"
    assert env.agents == []


def test_default_reward_is_legal_progress_and_custom_reward_fn_is_used():
    env = make(1, False)
    env.reset(seed=4)
    _, rew, _, _, info = env.step({"car-00@0": np.array([0, 1, 0], np.float32)})
    assert rew["car-00@0"] == pytest.approx(info["car-00@0"]["metrics"]["legal_progress_delta_meters"])
    # rolling start at 70-84 km/h (scenarios.grid_placements) for 4 ticks of 1/60 s: ~1.3 m per step
    assert 0.5 < rew["car-00@0"] < 3.0
    env2 = make(1, False, reward_fn=lambda metrics: 42.0 + metrics[..., 0] * 0.0)
    env2.reset(seed=4)
    _, rew2, _, _, _ = env2.step({"car-00@0": np.array([0, 1, 0], np.float32)})
    assert rew2["car-00@0"] == 42.0


@pytest.mark.parametrize("bad, code, needle", [
    ({"car-00@0": np.array([0, np.inf, 0], np.float32), "car-01@0": np.zeros(3, np.float32)}, "invalid_action",
     "car-00@0"),
    ({"car-00@0": np.zeros(3, np.float32), "car-01@0": np.array([np.nan, 0, 0])}, "invalid_action", "car-01@0"),
    ({"car-00@0": np.zeros(3, np.float32), "car-01@0": np.zeros(2, np.float32)}, "invalid_action", "car-01@0"),
    ({"car-00@0": np.zeros(3, np.float32), "car-01@0": "fast"}, "invalid_action", "car-01@0"),
    ({"car-00@0": np.zeros(3, np.float32)}, "invalid_action", "car-01@0"),   # missing live agent
    ({"car-00@0": np.zeros(3, np.float32), "car-01@0": np.zeros(3, np.float32), "car-09@0": np.zeros(3)},
     "unknown_driver", "car-09@0"),
    ({"car-00@0": np.zeros(3, np.float32), "car-01@0": np.zeros(3, np.float32), "car-01@1": np.zeros(3)},
     "episode_ended", "car-01@1"),                                           # declared, not born yet
])
def test_bad_actions_raise_naming_the_agent_and_step_nothing(bad, code, needle):
    env = make(2, True, life_steps=50)
    env.reset(seed=5)
    before = int(env.state()[0])
    with pytest.raises(PaddockError) as exc:
        env.step(bad)
    assert exc.value.code == code and needle in exc.value.message
    assert int(env.state()[0]) == before


def test_pit_actions_need_pit_stops_and_use_a_dict_space():
    with pytest.raises(PaddockError):
        make(1, pit_actions=True)
    env = parallel_env("paddock/technical-race-v0", pit_actions=True, max_world_steps=3, sensors=FEW_SENSES)
    agent = env.possible_agents[0]
    space = env.action_space(agent)
    assert set(space.spaces) == {"vehicle", "pit_intent", "pit_compound"}
    env.reset(seed=1)
    acts = {a: {"vehicle": np.array([0, 1, 0], np.float32), "pit_intent": 1, "pit_compound": 0} for a in env.agents}
    env.step(acts)
    ci = env.engine.state.cars_i[0, env.engine.slots]
    assert (ci[:, L.I_PIT_INTENT] == 1).all()
    with pytest.raises(PaddockError) as exc:
        env.step({a: {"vehicle": np.zeros(3, np.float32), "pit_intent": 5, "pit_compound": 0} for a in env.agents})
    assert "pit_intent" in exc.value.message


def test_render_rgb_array_shape_and_changes_with_state():
    env = make(2, False, render_mode="rgb_array", render_size=320, render_rays=True)
    env.reset(seed=6)
    img1 = env.render()
    ny, nx = env.engine.track.grid_surf.shape
    assert img1.dtype == np.uint8 and img1.ndim == 3 and img1.shape[2] == 3
    assert max(img1.shape[:2]) == 320 and abs(img1.shape[0] / img1.shape[1] - ny / nx) < 0.02
    # the background shows asphalt, grass and gravel colours
    colours = {tuple(c) for c in img1.reshape(-1, 3)[::7]}
    assert {(92, 92, 96), (60, 130, 60), (196, 176, 120)} <= colours
    for _ in range(30):
        env.step({a: np.array([0, 1, 0], np.float32) for a in env.agents})
    img2 = env.render()
    assert img2.shape == img1.shape and (img1 != img2).any(axis=2).sum() > 10


def test_options_are_validated():
    with pytest.raises(PaddockError):
        parallel_env(ENV_ID, max_lives=0)
    with pytest.raises(PaddockError):
        parallel_env(ENV_ID, reset_placement="anywhere")
    with pytest.raises(PaddockError) as exc:
        parallel_env(ENV_ID, episodes={"max_steps": 3})       # misspelt config key
    assert "episodes" in exc.value.message
    assert isinstance(make(1), PaddockParallelEnv)
