"""The fleet grows onto a node that joins mid-collection: a shard moves there (restore + replay), and the
files equal those of a run on a fixed cluster."""

import time

import pytest

from paddock_ma.dataset.verify import verify
from paddock_ma.distributed.collection.config import CollectConfig
from paddock_ma.distributed.collection.run import collect

from .conftest import ENV_ID, NODE_STORE, OVERRIDES, multi_node_cluster

pytestmark = [pytest.mark.ray, pytest.mark.cluster, pytest.mark.chaos]


@pytest.fixture(scope="module")
def small_cluster(ray_session, warm_cache):
    """A head without CPUs and one node with two: both shards start on that node."""
    yield from multi_node_cluster(ray_session, [2])


def _cfg():
    return CollectConfig(env=ENV_ID, num_shards=2, worlds_per_shard=2, steps=160, seed=5, policy="random",
                         fragment_steps=16, snapshot_every=8, env_overrides=OVERRIDES)


def test_a_joining_node_gets_a_shard_and_nothing_is_lost(small_cluster, tmp_path):
    clean = collect(_cfg(), tmp_path / "clean", progress=False, deadline_s=60.0)
    assert clean.manifest["run"]["moves"] == []            # one node with room: nowhere to move
    added, nodes_after = [], {}

    def join(fleet, st):
        nodes = fleet.shard_nodes()
        if not added and st.seq >= 12 and None not in nodes.values():     # both shards have started
            assert len(set(nodes.values())) == 1                  # and share the two-CPU node
            added.append(small_cluster.add_node(num_cpus=1, object_store_memory=NODE_STORE))
            small_cluster.wait_for_nodes()
            time.sleep(5.5)                                         # past the fleet's rebalance interval
        if st.seq == 160:
            nodes_after.update(fleet.shard_nodes())

    res = collect(_cfg(), tmp_path / "grown", progress=False, deadline_s=60.0, on_step=join)
    moves = res.manifest["run"]["moves"]
    assert len(moves) == 1 and moves[0]["to_node"] == added[0].node_id, moves
    assert res.failures == 0
    assert len(set(nodes_after.values())) == 2 and added[0].node_id in nodes_after.values()
    assert verify(tmp_path / "grown") == []
    a = {p.name: p.read_bytes() for p in (tmp_path / "clean" / "data").glob("*.parquet")}
    b = {p.name: p.read_bytes() for p in (tmp_path / "grown" / "data").glob("*.parquet")}
    assert a == b
