"""examples/ppo_vector.py --actor paddockjs trains PaddockJS's checkpoint network and exports it: the JSON
file and the torch checkpoint (through ``paddock-ma export-paddockjs``) are the same actor."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np

from paddock_ma.cli.main import main
from paddock_ma.paddockjs.checkpoint import FORMAT, evaluate_actor, load_actor

ROOT = Path(__file__).resolve().parents[2]


def test_ppo_vector_trains_and_exports_the_paddockjs_actor(tmp_path):
    exported, saved, again = tmp_path / "actor.json", tmp_path / "actor.pt", tmp_path / "again.json"
    proc = subprocess.run([sys.executable, str(ROOT / "examples" / "ppo_vector.py"), "--actor", "paddockjs",
                           "--total-steps", "256", "--num-worlds", "2", "--rollout", "8", "--epochs", "1",
                           "--minibatches", "2", "--hidden", "16", "--export", str(exported), "--save", str(saved)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    doc = load_actor(exported)
    assert doc["format"] == FORMAT and doc["metadata"]["agent_steps"] == 256
    assert [len(l["bias"]) for l in doc["layers"]] == [16, 16, 16, 2]
    assert main(["export-paddockjs", str(saved), "--out", str(again)]) == 0
    inputs = np.random.default_rng(0).normal(size=(64, doc["obsDim"]))
    assert np.array_equal(evaluate_actor(json.loads(again.read_text()), inputs), evaluate_actor(doc, inputs))


def test_ppo_vector_trains_on_a_paddockjs_config_and_names_it_in_the_export(tmp_path):
    """``--config`` trains on a PaddockJS options file (trackSeed 2097, the Policy Runner's track); the
    exported file's metadata carries the physics mode the Policy Runner reads and the trackSeed."""
    exported = tmp_path / "actor.json"
    proc = subprocess.run([sys.executable, str(ROOT / "examples" / "ppo_vector.py"), "--actor", "paddockjs",
                           "--config", str(ROOT / "examples" / "paddockjs_trackseed_config.json"),
                           "--total-steps", "128", "--num-worlds", "1", "--rollout", "8", "--epochs", "1",
                           "--minibatches", "2", "--hidden", "16", "--export", str(exported)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    meta = load_actor(exported)["metadata"]
    assert meta["physicsMode"] == "simulator" and meta["trackSeed"] == 2097 and meta["frameSkip"] == 4
    assert meta["config"] == "paddockjs_trackseed_config.json" and meta["agent_steps"] == 128
