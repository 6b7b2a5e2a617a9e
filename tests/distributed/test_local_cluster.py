"""cluster/local_cluster.py: a head and worker raylets on this machine, stopped by the pids it recorded."""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .conftest import free_port_base, load_launcher

ROOT = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.ray, pytest.mark.cluster]


def test_launcher_starts_nodes_and_stops_exactly_its_processes(tmp_path):
    lc = load_launcher()
    bystander = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    base = free_port_base(6)       # its nodes, and a second start's block 400 ports on
    cluster = lc.LocalCluster(num_workers=1, base_port=base, state_dir=tmp_path / "c", object_store_mb=80)
    try:
        cluster.start()
        status = lc.LocalCluster.load(tmp_path / "c").status()
        assert [n["name"] for n in status["nodes"]] == ["head", "node1"]
        assert all(n["alive"] for n in status["nodes"])
        # a second start over the same state dir is refused, naming the fix
        with pytest.raises(lc.LocalClusterError, match="stop it first"):
            lc.LocalCluster(num_workers=1, base_port=base + 400, state_dir=tmp_path / "c").start()
        probe = ("import ray, json; ray.init(address=%r, log_to_driver=False); "
                 "print(json.dumps(sorted(k for n in ray.nodes() if n['Alive'] for k in n['Resources'] "
                 "if k in ('head', 'node1', 'worker'))))" % cluster.address)
        out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60,
                             env=dict(os.environ, RAY_AUTH_MODE="disabled"))
        assert json.loads(out.stdout.strip().splitlines()[-1]) == ["head", "node1", "worker"], out.stderr[-2000:]
    finally:
        pids = lc.LocalCluster.load(tmp_path / "c").stop() if (tmp_path / "c" / "cluster.json").exists() else []
    assert pids, "stop signalled nothing"
    time.sleep(0.5)
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as fh:
                assert fh.read().rsplit(")", 1)[1].split()[0] == "Z", f"pid {pid} survived stop"
        except FileNotFoundError:
            pass
    assert bystander.poll() is None, "stop touched a process it did not start"
    bystander.kill()
    assert not (tmp_path / "c" / "cluster.json").exists()
    import shutil
    shutil.rmtree(cluster.ray_temp_dir, ignore_errors=True)       # the stopped cluster's Ray logs


def test_launcher_rejects_bad_values(tmp_path):
    lc = load_launcher()
    with pytest.raises(lc.LocalClusterError, match="num_workers"):
        lc.LocalCluster(num_workers=-1, state_dir=tmp_path)
    with pytest.raises(lc.LocalClusterError, match="base_port"):
        lc.LocalCluster(base_port=80, state_dir=tmp_path)
    with pytest.raises(lc.LocalClusterError, match="does not exist"):
        lc.LocalCluster.load(tmp_path / "nothing")
