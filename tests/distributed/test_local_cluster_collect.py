"""Collection on the local multi-node cluster (cluster/local_cluster.py: a head and two worker raylets):
shards on both nodes write their own files into one shared directory, a shard is SIGKILLed halfway
through writing a file, the run is stopped and resumed, and the dataset is the one written without Ray."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from paddock_ma.dataset.format import MANIFEST
from paddock_ma.dataset.manifest import new_manifest, run_base
from paddock_ma.dataset.verify import VERIFY_INCOMPLETE, inspect, verify
from .conftest import collect_config, free_port_base, load_launcher, parquet_bytes
from .writer_double import run_shard_writes

pytestmark = [pytest.mark.ray, pytest.mark.cluster]
ROOT = Path(__file__).resolve().parents[2]
DRIVER = Path(__file__).with_name("cluster_collect_driver.py")


def _driver(cluster, out, mode, once_dir) -> dict:
    """Run ``cluster_collect_driver.py`` (a driver process joined to the cluster); its shards' nodes."""
    proc = subprocess.run([sys.executable, str(DRIVER), cluster.address, str(out), mode, str(once_dir)], cwd=ROOT,
                          capture_output=True, text=True, timeout=1200,
                          env=dict(os.environ, PYTHONPATH=str(ROOT), **cluster.client_env()))
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_shards_on_two_nodes_write_one_directory_and_a_shard_killed_mid_write_resumes_to_the_same_bytes(
        tmp_path, warm_cache):
    cfg = collect_config(file_worlds=2)       # 2 shards x 2 worlds, 40 steps, fragments of 16: the shards write
    base = run_base(cfg.identity(), cfg.layout(), cfg.env_config(), "test")
    run_shard_writes(tmp_path / "reference", cfg, cfg.env_config(), new_manifest(base, cfg.identity(), cfg.env_config()))
    lc = load_launcher()
    cluster = lc.LocalCluster(num_workers=2, worker_cpus=2, base_port=free_port_base(3), state_dir=tmp_path / "c",
                              object_store_mb=80)
    out = tmp_path / "shared" / "ds"
    try:
        cluster.start()
        nodes = _driver(cluster, out, "first", tmp_path)
        m = json.loads((out / MANIFEST).read_text())
        failures = m["run"]["failures"]
        assert [(f["shard"], f["seq"]) for f in failures] == [(0, 16)]     # died writing fragment 1 (steps 17..32)
        listed = {f["path"] for f in m["files"]}      # fragments 0 and 1 of both blocks (2 of shard 1's, if ahead)
        assert {f"data/block-{b:04d}-frag-{f:06d}.parquet" for b in (0, 1) for f in (0, 1)} <= listed
        assert "data/block-0000-frag-000002.parquet" not in listed and m["run"]["writes"] == "shards"
        v = inspect(out)            # the torn file is a temporary, reported, never data
        assert v.problems == [] and v.exit_code == VERIFY_INCOMPLETE
        assert len(v.temporaries) == 1 and "data--block-0000-frag-000001.parquet" in v.temporaries[0]
        assert len({n for ns in nodes.values() for n in ns} - {"head"}) == 2, nodes     # both worker nodes
        _driver(cluster, out, "resume", tmp_path)                           # the same command: the resume
        assert json.loads((out / MANIFEST).read_text())["status"] == "complete" and verify(out) == []
        assert parquet_bytes(out) == parquet_bytes(tmp_path / "reference")
        files = lambda root: json.loads((root / MANIFEST).read_text())["files"]   # noqa: E731
        assert files(out) == files(tmp_path / "reference")
        assert not any((out / "_run" / "tmp").iterdir())
    finally:
        cluster.stop()
        shutil.rmtree(cluster.ray_temp_dir, ignore_errors=True)
