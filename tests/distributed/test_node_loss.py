"""Faults on a 4-raylet cluster on this machine (ray.cluster_utils.Cluster): a collection survives three
removed nodes (one added back after each), and five SIGKILLed shard processes and a hung shard; its files
equal those of a run with no fault."""

import os
import signal
import time

import pytest

from paddock_ma.dataset.verify import verify
from paddock_ma.distributed.collection.config import CollectConfig
from paddock_ma.distributed.collection.run import collect
from paddock_ma.distributed.testing import FaultyShardCore

from .conftest import ENV_ID, NODE_STORE, OVERRIDES, measured_hang_deadline, multi_node_cluster

pytestmark = [pytest.mark.ray, pytest.mark.cluster, pytest.mark.chaos]


@pytest.fixture(scope="module")
def cluster(ray_session, warm_cache):
    yield from multi_node_cluster(ray_session, [1, 1, 1])


def _cfg():
    return CollectConfig(env=ENV_ID, num_shards=2, worlds_per_shard=2, steps=48, seed=8, policy="random",
                         fragment_steps=16, snapshot_every=8, env_overrides=OVERRIDES)


def _data(root):
    return {p.name: p.read_bytes() for p in (root / "data").glob("*.parquet")}


@pytest.fixture(scope="module")
def clean(cluster, tmp_path_factory):
    out = tmp_path_factory.mktemp("clean") / "ds"
    assert collect(_cfg(), out, progress=False, deadline_s=60.0).failures == 0
    return out


def test_removed_nodes_are_survived_with_identical_files(cluster, clean, env_config, tmp_path):
    removed = []

    def lose_node(fleet, st):
        if st.shard == 0 and st.seq in (6, 20, 34):
            node_id = fleet.shard_nodes()[0]
            node = next(n for n in cluster.list_all_nodes() if n.node_id == node_id)
            assert node is not cluster.head_node
            cluster.remove_node(node, allow_graceful=False)
            removed.append(node_id)
            cluster.add_node(num_cpus=1, object_store_memory=NODE_STORE)

    t0 = time.monotonic()
    deadline = measured_hang_deadline(env_config, floor=5.0)
    res = collect(_cfg(), tmp_path / "lossy", progress=False, deadline_s=deadline, on_step=lose_node)
    assert len(removed) == 3 and res.failures >= 3, res.manifest["run"]["failures"]
    assert verify(tmp_path / "lossy") == []
    assert _data(tmp_path / "lossy") == _data(clean)
    # shard 0 ran on a new node after each loss (Ray placed the replacement on a live one)
    assert len(set(removed)) == 3
    print("node loss run:", round(time.monotonic() - t0, 1), "s;", [f["reason"][:70] for f in res.manifest["run"]["failures"]])


def test_killed_and_hung_shards_on_the_cluster_give_identical_files(cluster, clean, env_config, tmp_path):
    kills = {(0, 5), (1, 14), (0, 23), (1, 31), (0, 40)}

    def kill(fleet, st):
        if (st.shard, st.seq) in kills:
            os.kill(fleet.shard_pids()[st.shard], signal.SIGKILL)   # the shard's process, on its node

    deadline = measured_hang_deadline(env_config, floor=5.0)
    res = collect(_cfg(), tmp_path / "killed", progress=False, deadline_s=deadline, on_step=kill,
                  shard_cls=FaultyShardCore.with_faults({1: {"hang_at_seq": 9}}, once_dir=tmp_path))   # first life
    reasons = [f["reason"] for f in res.manifest["run"]["failures"]]
    # the hang shows as a missed deadline, or (seen once on this cluster) as the actor's death
    # (a healthy step that load made slower than the deadline, short to find the hang soon, is failed too)
    assert len(reasons) >= 6 and all(r.startswith(("deadline", "ActorDiedError")) for r in reasons), reasons
    assert verify(tmp_path / "killed") == []
    assert _data(tmp_path / "killed") == _data(clean)
