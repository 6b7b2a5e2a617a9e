"""The single-file PPO over the car vector env runs end to end and reports its figures."""

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_ppo_vector_example_trains_a_few_iterations(tmp_path):
    out = tmp_path / "ppo.json"
    proc = subprocess.run([sys.executable, str(ROOT / "examples" / "ppo_vector.py"), "--total-steps", "384",
                           "--num-worlds", "2", "--rollout", "8", "--epochs", "2", "--minibatches", "2",
                           "--out", str(out)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    doc = json.loads(out.read_text())
    rows = doc["history"]
    assert [r["iteration"] for r in rows] == [1, 2, 3]
    assert rows[-1]["agent_steps"] == 3 * 8 * 16
    assert all(r["sampled_agent_steps_per_s"] > 0 and r["loss"] == r["loss"] for r in rows)
    bad = subprocess.run([sys.executable, str(ROOT / "examples" / "ppo_vector.py"), "--learning-rate", "1"],
                         capture_output=True, text=True, timeout=120)
    assert bad.returncode != 0 and "--lr" in bad.stderr


def test_rllib_vector_ppo_example_samples_the_vector_env_through_rllib(tmp_path):
    out = tmp_path / "rllib.json"
    proc = subprocess.run([sys.executable, str(ROOT / "examples" / "rllib_vector_ppo.py"), "--iterations", "2",
                           "--num-worlds", "2", "--rollout", "32", "--train-batch", "1024", "--minibatch", "256",
                           "--epochs", "1", "--out", str(out)], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = json.loads(out.read_text())["history"]
    assert [r["iteration"] for r in rows] == [1, 2]
    assert rows[-1]["env_steps"] >= 2 * 1024      # 2 worlds x 8 cars per runner, sampled as one vector env
