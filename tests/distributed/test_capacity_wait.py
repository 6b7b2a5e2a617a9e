"""Capacity loss on a multi-node cluster on this machine: the node that holds a shard goes and no other
node has a free CPU; the fleet keeps the other shard running while the lost one's replacement waits to
be placed; a node comes back (after the running shard's next 24 steps), and the collection completes
with the bytes of a run without the loss."""

import pytest

from paddock_ma.distributed.collect import CollectConfig, collect, verify

from .conftest import ENV_ID, NODE_STORE, OVERRIDES, multi_node_cluster

pytestmark = [pytest.mark.ray, pytest.mark.cluster, pytest.mark.chaos]


@pytest.fixture(scope="module")
def cluster(ray_session, warm_cache):
    yield from multi_node_cluster(ray_session, [1, 1])          # one CPU per shard, none spare


def _cfg():
    return CollectConfig(env=ENV_ID, num_shards=2, worlds_per_shard=2, steps=64, seed=9, policy="random",
                         fragment_steps=16, snapshot_every=8, env_overrides=OVERRIDES)


def _data(root):
    return {p.name: p.read_bytes() for p in (root / "data").glob("*.parquet")}


def test_a_lost_node_is_waited_for_and_the_collection_completes_with_the_same_bytes(cluster, tmp_path):
    clean = collect(_cfg(), tmp_path / "clean", progress=False, deadline_s=5.0)
    assert clean.failures == 0
    state = {"removed": None, "added": None}

    def lose_node_then_add_one(fleet, st):
        if state["removed"] is None and st.shard == 0 and st.seq == 6:
            node_id = fleet.shard_nodes()[0]
            node = next(n for n in cluster.list_all_nodes() if n.node_id == node_id)
            assert node is not cluster.head_node
            cluster.remove_node(node, allow_graceful=False)          # shard 1's node has no CPU to spare
            state["removed"] = (node_id, fleet.shards[1].seq)
        elif state["removed"] and state["added"] is None and st.shard == 1 and st.seq >= state["removed"][1] + 24:
            # shard 1 went on for 24 steps while shard 0 had nowhere to run (counted in steps, not seconds)
            assert fleet.shards[0].seq <= 6
            cluster.add_node(num_cpus=1, object_store_memory=NODE_STORE)
            state["added"] = st.seq

    res = collect(_cfg(), tmp_path / "lossy", progress=False, deadline_s=5.0, on_step=lose_node_then_add_one,
                  capacity_wait_s=300.0)
    assert state["removed"] and state["added"], res.manifest["run"]["failures"]
    assert {f["shard"] for f in res.manifest["run"]["failures"]} == {0}      # the running shard was kept
    assert verify(tmp_path / "lossy") == []
    assert _data(tmp_path / "lossy") == _data(tmp_path / "clean")
