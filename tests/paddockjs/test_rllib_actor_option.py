"""examples/rllib_vector_ppo.py --actor paddockjs: RLlib's PPO module over the squashing wrapper is
PaddockJS's actor (its exported file reproduces the module's deterministic action), and the example
trains and exports it end to end on a local Ray cluster."""

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from paddock_ma.adapters.vector_env import CarVectorEnv
from paddock_ma.adapters.paddockjs_actor import PaddockActorVectorEnv
from paddock_ma.paddockjs.checkpoint import actor_document, evaluate_actor, load_actor

ROOT = Path(__file__).resolve().parents[2]


def example():
    spec = importlib.util.spec_from_file_location("rllib_vector_ppo_example", ROOT / "examples" / "rllib_vector_ppo.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def test_the_exported_actor_is_the_rllib_modules_deterministic_policy():
    from ray.rllib.algorithms.ppo.torch.default_ppo_torch_rl_module import DefaultPPOTorchRLModule
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    env = PaddockActorVectorEnv(CarVectorEnv("paddock/oval-batch-v0", 1), squash=True)
    obs, _ = env.reset(seed=0)
    torch.manual_seed(0)
    module = RLModuleSpec(module_class=DefaultPPOTorchRLModule, observation_space=env.single_observation_space,
                          action_space=env.single_action_space,
                          model_config={"fcnet_hiddens": [32, 32, 32], "fcnet_activation": "relu",
                                        "head_fcnet_hiddens": []}).build()
    doc = actor_document(example().paddockjs_actor(module))
    rows = []
    for _ in range(10):
        with torch.no_grad():
            means = module.forward_inference({"obs": torch.from_numpy(obs)})["action_dist_inputs"][:, :2].double().numpy()
        rows.append((obs.copy(), means))
        obs, *_ = env.step(means)        # the env applies the tanh: the controls PaddockJS's actor gives
    for inputs, means in rows:
        assert np.abs(evaluate_actor(doc, inputs) - np.tanh(means)).max() < 1e-5
    env.close()


@pytest.mark.ray
def test_rllib_vector_ppo_trains_and_exports_the_paddockjs_actor(tmp_path):
    out, ckpt = tmp_path / "actor.json", tmp_path / "algo"
    proc = subprocess.run([sys.executable, str(ROOT / "examples" / "rllib_vector_ppo.py"), "--actor", "paddockjs",
                           "--hidden", "16", "--iterations", "1", "--num-worlds", "1", "--rollout", "32",
                           "--train-batch", "256", "--minibatch", "128", "--epochs", "1", "--export", str(out),
                           "--checkpoint-dir", str(ckpt)],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    doc = load_actor(out)
    assert [len(layer["bias"]) for layer in doc["layers"]] == [16, 16, 16, 2]
    assert doc["metadata"]["env_steps"] >= 256 and json.loads(out.read_text())["obsDim"] == doc["obsDim"]
    # the RLlib checkpoint itself loads as the same actor (what policy-server --checkpoint DIR serves)
    from paddock_ma.paddockjs.checkpoint import load_actor_file
    inputs = np.random.default_rng(0).normal(size=(32, doc["obsDim"]))
    assert np.abs(evaluate_actor(load_actor_file(ckpt), inputs) - evaluate_actor(doc, inputs)).max() < 1e-12
