"""examples/rllib_ppo.py --actor paddockjs: the multi-agent env of lives gives each life PaddockJS's actor
input (history zero at a new life) and applies the actor's tanh; the example trains and exports."""

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from paddock_ma.adapters.paddockjs_actor_rllib import PaddockActorMultiAgentEnv
from paddock_ma.paddockjs.checkpoint import HISTORY_SIZE, load_actor, vector_speed_offset

ROOT = Path(__file__).resolve().parents[2]


def test_each_life_sees_paddockjs_history_features():
    env = PaddockActorMultiAgentEnv({"env_id": "paddock/oval-batch-v0", "num_worlds": 1, "max_lives": 2,
                                     "overrides": {"episode": {"max_steps": 5}}})
    obs, _ = env.reset(seed=1)
    agent = sorted(obs)[0]
    d = obs[agent].shape[0] - HISTORY_SIZE
    assert env.observation_spaces[agent].shape == (d + HISTORY_SIZE,) and env.action_spaces[agent].shape == (2,)
    s0, o0 = (x[0] for x in vector_speed_offset(obs[agent][None, :d]))
    assert obs[agent][d:d + 2].tolist() == [0.0, 0.0] and obs[agent][d + 2] == pytest.approx(s0 / 100, abs=1e-6)
    raw = np.array([0.3, 2.0])
    obs1, *_ = env.step({a: raw for a in obs})
    s1, o1 = (x[0] for x in vector_speed_offset(obs1[agent][None, :d]))
    assert obs1[agent][d:d + 2] == pytest.approx(np.tanh(raw), abs=1e-6)
    assert obs1[agent][d + 2] == pytest.approx((s1 - s0) / 100, abs=1e-5)
    assert obs1[agent][d + 3] == pytest.approx((o1 - o0) / 20, abs=1e-5)
    applied = env.engine.applied_controls()[0, 0]
    assert applied[1] == pytest.approx(np.tanh(2.0), abs=1e-6) and applied[2] == 0.0
    obs, *_ = env.reset(seed=2)                       # a new episode: every history starts at zero again
    assert all(v[d:d + 2].tolist() == [0.0, 0.0] for v in obs.values())


@pytest.mark.ray
def test_rllib_ppo_trains_and_exports_the_paddockjs_actor(tmp_path):
    out = tmp_path / "actor.json"
    proc = subprocess.run([sys.executable, str(ROOT / "examples" / "rllib_ppo.py"), "--actor", "paddockjs",
                           "--hidden", "16", "--iterations", "1", "--num-worlds", "1", "--train-batch", "200",
                           "--minibatch", "100", "--epochs", "1", "--rollout-fragment-length", "25",
                           "--export", str(out)], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    doc = load_actor(out)
    assert [len(layer["bias"]) for layer in doc["layers"]] == [16, 16, 16, 2]
