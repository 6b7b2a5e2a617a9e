"""examples/rllib_ppo.py trains with several env runners spread over a multi-node cluster (--address)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import free_port_base, load_launcher

ROOT = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.ray, pytest.mark.cluster, pytest.mark.slow]


def test_rllib_example_trains_with_env_runners_on_two_nodes(tmp_path):
    lc = load_launcher()
    base = free_port_base(3)
    cluster = lc.LocalCluster(num_workers=2, base_port=base, state_dir=tmp_path / "c", object_store_mb=100,
                              head_cpus=1, worker_cpus=1)
    out = tmp_path / "ppo.json"
    try:
        cluster.start()
        proc = subprocess.run(
            [sys.executable, str(ROOT / "examples" / "rllib_ppo.py"), "--address", cluster.address,
             "--iterations", "1", "--num-env-runners", "2", "--num-worlds", "1", "--train-batch", "200",
             "--minibatch", "100", "--rollout-fragment-length", "25", "--epochs", "1", "--few-rays",
             "--out", str(out)],
            capture_output=True, text=True, timeout=600, env=dict(os.environ, **cluster.client_env()))
    finally:
        cluster.stop()
    assert proc.returncode == 0, proc.stderr[-3000:]
    doc = json.loads(out.read_text())
    assert len(doc["iterations"]) == 1 and doc["iterations"][0]["env_steps_sampled"] > 0
    # two env runners, each on a node of its own (one CPU per worker node)
    assert len(doc["env_runner_nodes"]) == 2 and len(set(doc["env_runner_nodes"])) == 2
