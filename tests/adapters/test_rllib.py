"""The RLlib adapter: ids and newborn lives, RLlib's env checker, sampling with lives, a PPO smoke run."""

import importlib.util
import json
import math
from pathlib import Path

import numpy as np
import pytest

from paddock_ma.adapters.rllib_env import PaddockMultiAgentEnv, register
from paddock_ma.errors import PaddockError

from tests.helpers.barrier import drive_into_barrier, into_the_barrier

FEW_SENSES = {"rays": {"rays": [{"id": "c", "angle_degrees": 0.0, "length_meters": 80.0}]},
              "nearby_cars": {"max_cars": 1}}
BASE = {"env_id": "paddock/oval-batch-v0", "overrides": {"sensors": FEW_SENSES}}


def full_throttle(env):
    return {a: np.array([0.0, 1.0, 0.0], np.float32) for a in env.agents}


def test_ids_spaces_and_newborn_lives():
    env = PaddockMultiAgentEnv(dict(BASE, num_worlds=2, max_lives=3, seed=11, infos="full", reset_placement="grid"))
    assert len(env.possible_agents) == 2 * 8 * 3
    assert env.possible_agents[:3] == ["w0/car-00@0", "w0/car-00@1", "w0/car-00@2"]
    assert set(env.observation_spaces) == set(env.action_spaces) == set(env.possible_agents)
    obs, infos = env.reset()
    assert sorted(obs) == sorted(f"w{w}/car-{k:02d}@0" for w in range(2) for k in range(8))
    (obs, rew, term, trunc, info), _ = drive_into_barrier(env, [(1, 3)])
    assert term["w1/car-03@0"] and info["w1/car-03@0"]["life_summary"]["crashed"]
    # the newborn appears with an observation and an info only
    assert "w1/car-03@1" in obs and "w1/car-03@1" not in rew
    assert "w1/car-03@1" not in term and "w1/car-03@1" not in trunc
    assert info["w1/car-03@1"]["newborn"]
    assert term["__all__"] is False and trunc["__all__"] is False
    assert "w1/car-03@1" in env.agents and "w1/car-03@0" not in env.agents
    # the ended life can no longer act; the newborn must
    with pytest.raises(PaddockError):
        env.step({**full_throttle(env), "w1/car-03@0": np.zeros(3, np.float32)})
    acts = full_throttle(env)
    del acts["w1/car-03@1"]
    with pytest.raises(PaddockError):
        env.step(acts)
    obs, rew, term, trunc, info = env.step(full_throttle(env))
    assert "w1/car-03@1" in rew and not term["w1/car-03@1"]
    # the last life retires: crash life 1 and 2
    for _ in range(2):
        (obs, rew, term, trunc, info), _ = drive_into_barrier(env, [(1, 3)])
    assert info["w1/car-03@2"]["life_summary"]["retired"]
    assert not any(a.startswith("w1/car-03") for a in env.agents)


def test_all_over_comes_from_the_worlds():
    env = PaddockMultiAgentEnv(dict(BASE, num_worlds=2, auto_reset=False, max_world_steps=1000, seed=3))
    env.reset()
    (obs, rew, term, trunc, info), ended = drive_into_barrier(env, [(0, k) for k in range(8)])
    # world 0 is over (every car crashed) but world 1 runs: the env episode goes on
    assert sorted(ended) == [f"w0/car-{k:02d}@0" for k in range(8)] and all(ended.values())
    assert term["__all__"] is False
    assert all(a.startswith("w1/") for a in env.agents) and len(env.agents) == 8
    (obs, rew, term, trunc, info), ended = drive_into_barrier(env, [(1, k) for k in range(8)])
    assert len(ended) == 8 and term["__all__"] is True and env.agents == []


def test_world_step_cap_truncates_all():
    env = PaddockMultiAgentEnv(dict(BASE, num_worlds=2, max_world_steps=3, seed=3))
    env.reset()
    for _ in range(3):
        obs, rew, term, trunc, info = env.step(full_throttle(env))
    assert trunc["__all__"] is True and term["__all__"] is False
    assert sum(v for a, v in trunc.items() if a != "__all__") == 16


def test_reward_by_name_and_callable():
    env = PaddockMultiAgentEnv(dict(BASE, seed=1, reward=lambda m: np.full(m.shape[:2], 7.0)))
    env.reset()
    _, rew, *_ = env.step(full_throttle(env))
    assert set(rew.values()) == {7.0}
    with pytest.raises(PaddockError):
        PaddockMultiAgentEnv(dict(BASE, reward="fastest"))
    with pytest.raises(PaddockError):
        PaddockMultiAgentEnv(dict(BASE, worlds=3))


def test_rllib_env_checker_passes():
    from ray.rllib.utils.pre_checks.env import check_multiagent_environments
    env = PaddockMultiAgentEnv(dict(BASE, num_worlds=2, seed=1))
    check_multiagent_environments(env)   # raises ValueError on a malformed env


class CrashyEnv(PaddockMultiAgentEnv):
    """The even cars of every world drive into the barrier whatever the policy says, life after life, so
    lives end out of step with each other and with the odd cars'."""

    def step(self, action_dict):
        crashers = {self.lives.agent_of(w, k) for w in range(self.num_worlds)
                    for k in range(0, len(self.engine.controlled), 2)}
        return super().step({a: into_the_barrier(self, a) if a in crashers else act
                             for a, act in action_dict.items()})


def test_rllib_env_runner_schedules_newborn_lives():
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.env.multi_agent_env_runner import MultiAgentEnvRunner
    from ray.tune.registry import register_env

    register_env("paddock_ma_crashy", lambda cfg: CrashyEnv(dict(cfg)))
    config = (PPOConfig().environment("paddock_ma_crashy", env_config=dict(
        BASE, num_worlds=2, max_lives=4, max_world_steps=120, seed=5, reset_placement="grid"))
        .env_runners(num_env_runners=0, rollout_fragment_length=40)
        .multi_agent(policies={"shared"}, policy_mapping_fn=lambda aid, *a, **k: "shared"))
    runner = MultiAgentEnvRunner(config=config)
    episodes = []
    for _ in range(4):
        episodes += runner.sample(num_timesteps=40, random_actions=False)
    agents = {aid: len(sa) for ep in episodes for aid, sa in ep.agent_episodes.items()}
    reborn = {a: n for a, n in agents.items() if not a.endswith("@0")}
    # 160 env steps (worlds capped at 120) with 8 cars crashing every ~40 steps: >= 10 reborn lives that
    # acted for steps before their crash
    assert len(reborn) >= 10
    assert sum(n for n in reborn.values()) > 10 * 5
    runner.stop()


def test_life_totals_match_the_life_summaries():
    """The env's running life totals equal the sums over the ``life_summary`` infos, across resets."""
    # 80-step lives: in PaddockJS's simulator model the crasher crabs at ~0.7 rad to the track and the
    # gravel and grass hold it near 17 m/s, so it meets the barrier (41 m out) ~60 steps after the grid
    env = PaddockMultiAgentEnv(dict(BASE, num_worlds=2, max_lives=4, seed=5, reset_placement="grid",
                                    overrides={"sensors": FEW_SENSES, "episode": {"max_steps": 80}}))
    seen = {"lives_ended": 0, "lives_crashed": 0, "legal_meters": 0.0, "steps": 0}
    for episode in range(2):
        env.reset()
        for t in range(120):
            # car 2 of each world crashes life after life; the other lives end at 80 steps
            crashers = {env.lives.agent_of(w, 2) for w in range(2)}
            _, _, _, _, infos = env.step({a: into_the_barrier(env, a) if a in crashers else np.zeros(3, np.float32)
                                          for a in env.agents})
            for info in infos.values():
                summary = info.get("life_summary")
                if summary:
                    seen["lives_ended"] += 1
                    seen["lives_crashed"] += int(summary["crashed"])
                    seen["legal_meters"] += summary["legal_progress_meters"]
                    seen["steps"] += summary["steps"]
            if not env.agents:
                break
    totals = env.life_totals()
    assert totals["lives_crashed"] >= 4 and totals["lives_ended"] > totals["lives_crashed"]
    assert {k: totals[k] for k in ("lives_ended", "lives_crashed", "steps")} == \
        {k: seen[k] for k in ("lives_ended", "lives_crashed", "steps")}
    assert totals["legal_meters"] == pytest.approx(seen["legal_meters"], rel=1e-9)
    assert totals["legal_meters"] > 0


def _load_example():
    path = Path(__file__).resolve().parents[2] / "examples" / "rllib_ppo.py"
    spec = importlib.util.spec_from_file_location("rllib_ppo_example", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.ray
@pytest.mark.timeout(600)
def test_ppo_example_two_iterations(ray_local, tmp_path):
    ex = _load_example()
    out = tmp_path / "ppo.json"
    args = ex.parse_args(["--iterations", "2", "--num-env-runners", "1", "--num-worlds", "2", "--train-batch", "256",
                          "--minibatch", "128", "--epochs", "1", "--rollout-fragment-length", "16",
                          "--life-steps", "20", "--max-world-steps", "60", "--few-rays", "--eval-every", "2",
                          "--lookahead", "30,90", "--start-speed", "200", "--reset-placement", "random-moving",
                          "--out", str(out),
                          "--plot", str(tmp_path / "ppo.png")])
    rows = ex.run(args)
    assert [r["iteration"] for r in rows] == [1, 2]
    assert all(r["env_steps_sampled"] > 0 for r in rows)
    # 20-step lives over >= 16 env steps x 16 cars per iteration: lives finish, per-life figures exist.
    # Legal progress per life: 20 steps of 4 ticks from 200 km/h (or up to 250 km/h for a reborn life)
    # gives < 100 m per life.
    last = rows[-1]
    assert last["lives_finished"] > 0
    assert 0.0 <= last["life_crash_rate"] <= 1.0
    assert math.isfinite(last["life_legal_progress_m"]) and -50 < last["life_legal_progress_m"] < 200
    assert out.exists() and (tmp_path / "ppo.png").stat().st_size > 1000
    # the speed-start evaluation ran before training and at the last iteration, on the same starts
    saved = json.loads(out.read_text())
    for ev in (saved["initial_eval"], last):
        assert 0.0 <= ev["speed_start_crash_rate"] <= 1.0 and math.isfinite(ev["speed_start_progress_m"])
    assert "speed_start_crash_rate" not in rows[0]


def test_register_returns_the_name():
    assert register() == "paddock_ma"
