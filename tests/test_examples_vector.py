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


def _example(name):
    import importlib.util
    spec = importlib.util.spec_from_file_location(f"{name}_example", ROOT / "examples" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod        # dataclasses look their module up
    spec.loader.exec_module(mod)
    return mod


def test_the_three_oval_examples_train_on_one_env_with_one_reward_and_life_length():
    import numpy as np

    from paddock_ma.env.episodes import M_DESTROYED, M_LEGAL_PROGRESS, M_OFF_TRACK
    mods = {name: _example(name) for name in ("rllib_ppo", "rllib_vector_ppo", "ppo_vector")}
    import oval_reward      # examples/, on the path once an example is loaded
    assert all(m.user_reward is oval_reward.user_reward and m.ENV_ID == oval_reward.ENV_ID for m in mods.values())
    assert mods["rllib_ppo"].parse_args([]).life_steps == oval_reward.LIFE_STEPS
    assert mods["ppo_vector"].Args().life_steps == oval_reward.LIFE_STEPS
    metrics = np.zeros((1, 3, 13), np.float32)
    metrics[0, :, M_LEGAL_PROGRESS] = [2.0, 1.0, 0.0]
    metrics[0, 1, M_OFF_TRACK] = 1.0
    metrics[0, 2, M_DESTROYED] = 1.0
    np.testing.assert_allclose(oval_reward.user_reward(metrics)[0], [2.0, 0.95, -200.0])


def test_compare_oval_plots_the_three_runs_from_their_json(tmp_path):
    compare = _example("compare_oval")
    for i, name in enumerate(compare.RUNS):
        rows = [{"elapsed_s": 10.0 * j, "lives_finished": 4, "lives_crashed": 4 - j, "life_meters": 100.0 * j,
                 "life_steps": 1000} for j in range(1, 4)]
        key = "iterations" if name == "rllib_multiagent" else "history"
        (tmp_path / f"oval_{name}.json").write_text(json.dumps({"load_at_start": [0.5, 0.4, 0.3], key: rows}))
    png = tmp_path / "c.png"
    assert compare.main(["--plot-only", "--out-dir", str(tmp_path), "--plot", str(png), "--window", "20"]) == 0
    assert png.stat().st_size > 10_000
    # 20 s windows: the iteration ending at 10 s, and those at 20 and 30 s pooled
    pooled = compare.binned(rows, 20.0)
    assert [(p["elapsed_s"], p["lives"], p["life_crash_rate"]) for p in pooled] == [(10.0, 4, 0.75), (30.0, 8, 0.375)]
    assert pooled[1]["legal_m_per_car_step"] == 0.25 and pooled[1]["crashes_per_km"] == 3 / 0.5
