"""Collection on the local multi-node cluster (cluster/local_cluster.py: a head and two worker raylets):
shards on both nodes write their own files into one shared directory, a shard is SIGKILLed halfway
through writing a file, the run is stopped and resumed, and the dataset is the one written without Ray."""

import json
import shutil

import pytest

from paddock_ma.dataset.format import MANIFEST
from paddock_ma.dataset.manifest import new_manifest, run_base
from paddock_ma.dataset.verify import VERIFY_INCOMPLETE, inspect, verify
from paddock_ma.distributed.collection.run import collect
from paddock_ma.distributed.testing import FaultyShardCore

from .conftest import collect_config, free_port_base, load_launcher, parquet_bytes
from .writer_double import run_shard_writes

pytestmark = [pytest.mark.ray, pytest.mark.cluster]


class _Stop(Exception):
    pass


def test_shards_on_two_nodes_write_one_directory_and_a_shard_killed_mid_write_resumes_to_the_same_bytes(
        tmp_path, ray_session, warm_cache, monkeypatch):
    import ray

    cfg = collect_config(file_worlds=2)       # 2 shards x 2 worlds, 40 steps, fragments of 16: the shards write
    base = run_base(cfg.identity(), cfg.layout(), cfg.env_config(), "test")
    run_shard_writes(tmp_path / "reference", cfg, cfg.env_config(), new_manifest(base, cfg.identity(), cfg.env_config()))
    lc = load_launcher()
    cluster = lc.LocalCluster(num_workers=2, worker_cpus=2, base_port=free_port_base(3), state_dir=tmp_path / "c",
                              object_store_mb=80)
    out, nodes = tmp_path / "shared" / "ds", {}
    try:
        cluster.start()
        ray_session.shutdown()                      # this driver joins the launcher's cluster
        for key, value in cluster.client_env().items():
            monkeypatch.setenv(key, value)
        ray.init(address=cluster.address, log_to_driver=False)
        node_of = {n["NodeID"]: next((k for k in n["Resources"] if k.startswith("node")), "head") for n in ray.nodes()}

        def watch(fleet, st):
            for shard, node in fleet.shard_nodes().items():
                if node:
                    nodes.setdefault(shard, set()).add(node_of.get(node, node))
            if st.seq >= 36 and all(sh.seq >= 36 for sh in fleet.shards):
                raise _Stop()

        dying = FaultyShardCore.with_faults({0: {"die_writing_at_seq": 32}}, once_dir=tmp_path)
        with pytest.raises(_Stop):
            collect(cfg, out, progress=False, on_step=watch, shard_cls=dying, address=cluster.address, deadline_s=120)
        m = json.loads((out / MANIFEST).read_text())
        failures = m["run"]["failures"]
        assert [(f["shard"], f["seq"]) for f in failures] == [(0, 16)]     # died writing fragment 1 (steps 17..32)
        assert len(m["files"]) == 4 and m["run"]["writes"] == "shards"     # fragments 0 and 1 of both blocks
        v = inspect(out)            # the torn file is a temporary, reported, never data
        assert v.problems == [] and v.exit_code == VERIFY_INCOMPLETE
        assert len(v.temporaries) == 1 and "data--block-0000-frag-000001.parquet" in v.temporaries[0]
        assert len(set().union(*nodes.values())) == 2, nodes                # the shards ran on both worker nodes
        res = collect(cfg, out, progress=False, address=cluster.address, deadline_s=120)      # the resume
        assert res.manifest["status"] == "complete" and verify(out) == []
        assert parquet_bytes(out) == parquet_bytes(tmp_path / "reference")
        files = lambda root: json.loads((root / MANIFEST).read_text())["files"]   # noqa: E731
        assert files(out) == files(tmp_path / "reference")
        assert not any((out / "_run" / "tmp").iterdir())
    finally:
        ray.shutdown()
        cluster.stop()
        shutil.rmtree(cluster.ray_temp_dir, ignore_errors=True)
