"""Capacity loss on a multi-node cluster on this machine: the node that holds a shard goes, no other node
has a free CPU, the fleet keeps the other shard running and retries the lost one with backoff; a node
comes back (once the fleet says it is retrying), and the collection completes with the bytes of a run
without the loss."""

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
    state = {"removed": None, "retries": []}

    def add_back_once_retrying(ev):
        """On the fleet's own word that the lost shard is being retried (not after a guessed time), add a
        node (from this thread: Ray starts a node from the main thread only)."""
        if ev["kind"] == "retry":
            if not state["retries"]:
                cluster.add_node(num_cpus=1, object_store_memory=NODE_STORE)
            state["retries"].append(ev)

    def lose_node(fleet, st):
        if state["removed"] is None and st.shard == 0 and st.seq == 6:
            node_id = fleet.shard_nodes()[0]
            node = next(n for n in cluster.list_all_nodes() if n.node_id == node_id)
            assert node is not cluster.head_node
            cluster.remove_node(node, allow_graceful=False)          # shard 1's node has no CPU to spare
            state["removed"] = node_id

    res = collect(_cfg(), tmp_path / "lossy", progress=False, deadline_s=5.0, on_step=lose_node,
                  on_event=add_back_once_retrying, capacity_wait_s=300.0)
    assert state["removed"] is not None and state["retries"], res.manifest["run"]["failures"]
    assert {e["shard"] for e in state["retries"]} == {0}                 # the running shard was kept
    assert res.failures >= 2
    assert verify(tmp_path / "lossy") == []
    assert _data(tmp_path / "lossy") == _data(tmp_path / "clean")
