"""Capacity loss on a multi-node cluster on this machine (a head without CPUs, one node of one CPU per
shard, none spare): the node holding shard 0 is removed. The fleet keeps stepping shard 1 while shard 0's
replacement waits to be placed; a node is added back and the collection completes with the bytes of a run
without the loss. When no node comes back within ``capacity_wait_s`` the run stops, resumably.

Every wait is on an event, never on the clock: shard 0 is held at the step after the removal (so it
cannot finish on its dying node), shard 1 is held at step ``HOLD`` until the fleet has created shard 0's
replacement (its ``replace`` event), then runs ``GO_ON`` steps while that replacement cannot be placed;
the node is added once those steps are handed out and the fleet has said the shard waits (its ``wait``
or ``retry`` event, which the progress line shows). Both holds end on events that come from Ray's
failure detection (the removed node's worker exits within seconds; at worst Ray declares the node dead,
in 10-30 s), well inside ``DEADLINE``.
"""

import io

import pytest

from paddock_ma.dataset.verify import verify
from paddock_ma.distributed.collection.config import CollectConfig
from paddock_ma.distributed.collection.run import collect
from paddock_ma.distributed.fleet_types import FleetError
from paddock_ma.distributed.testing import FaultyShardCore

from .conftest import ENV_ID, NODE_STORE, OVERRIDES, multi_node_cluster

pytestmark = [pytest.mark.ray, pytest.mark.cluster, pytest.mark.chaos]

HOLD, GO_ON = 20, 16
DEADLINE = 60.0         # seconds a held step may take: only Ray's failure detection stands between it and its event


@pytest.fixture(scope="module")
def cluster(ray_session, warm_cache):
    yield from multi_node_cluster(ray_session, [1, 1])          # one CPU per shard, none spare


def _cfg():
    return CollectConfig(env=ENV_ID, num_shards=2, worlds_per_shard=2, steps=64, seed=9, policy="random",
                         fragment_steps=16, snapshot_every=8, env_overrides=OVERRIDES)


def _data(root):
    return {p.name: p.read_bytes() for p in (root / "data").glob("*.parquet")}


@pytest.fixture(scope="module")
def clean(cluster, tmp_path_factory):
    out = tmp_path_factory.mktemp("clean") / "ds"
    assert collect(_cfg(), out, progress=False, deadline_s=DEADLINE).failures == 0
    return _data(out)


def _remove_node_of_shard(cluster, fleet, shard):
    node_id = fleet.shard_nodes()[shard]
    node = next(n for n in cluster.list_all_nodes() if n.node_id == node_id)
    assert node is not cluster.head_node and node_id not in [v for k, v in fleet.shard_nodes().items() if k != shard]
    cluster.remove_node(node, allow_graceful=False)
    return node_id


def test_the_running_shard_goes_on_while_a_lost_one_waits_for_a_node(cluster, clean, tmp_path):
    from rich.console import Console

    held = FaultyShardCore.with_faults({0: {"hold_at_seq": 7}, 1: {"hold_at_seq": HOLD}}, once_dir=tmp_path)
    log = []                  # ("event", kind, shard) and ("step", shard, seq), in the order the fleet gave them
    state = {"removed": None, "added": None, "waited": False, "gone_on": False}

    def add_node_when_both_seen():
        if state["added"] is None and state["waited"] and state["gone_on"]:
            assert ("event", "placed", 0) not in log          # no node had room for it
            cluster.add_node(num_cpus=1, object_store_memory=NODE_STORE)
            state["added"] = len(log)

    def on_event(ev):
        log.append(("event", ev["kind"], ev["shard"]))
        if ev["kind"] == "replace" and ev["shard"] == 0 and state["removed"]:
            FaultyShardCore.release_file(tmp_path, 1).write_text("")      # shard 1 may go on now
        if ev["kind"] in ("wait", "retry") and ev["shard"] == 0:      # the fleet says shard 0 waits
            state["waited"] = True
            add_node_when_both_seen()

    def on_step(fleet, st):
        log.append(("step", st.shard, st.seq))
        if state["removed"] is None and (st.shard, st.seq) == (0, 6):     # shard 0 is held at step 7 there
            state["removed"] = _remove_node_of_shard(cluster, fleet, 0)
        if (st.shard, st.seq) == (1, HOLD + GO_ON):
            state["gone_on"] = True
            add_node_when_both_seen()

    out = io.StringIO()
    res = collect(_cfg(), tmp_path / "lossy", progress=False, deadline_s=DEADLINE, shard_cls=held, on_step=on_step,
                  on_event=on_event, capacity_wait_s=600.0, console=Console(file=out, width=300))
    assert state["removed"] and state["added"], log
    assert {f["shard"] for f in res.manifest["run"]["failures"]} == {0}, res.manifest["run"]["failures"]
    replaced, placed = log.index(("event", "replace", 0)), log.index(("event", "placed", 0))
    # shard 1's steps HOLD..HOLD+GO_ON came while shard 0's replacement existed and was not placed
    assert all(replaced < log.index(("step", 1, s)) < placed for s in range(HOLD, HOLD + GO_ON + 1)), log
    assert placed >= state["added"]                         # it was placed on the node added back
    assert "collect: shard 0 waits for" in out.getvalue()          # what the progress line says
    assert verify(tmp_path / "lossy") == []
    assert _data(tmp_path / "lossy") == clean


def test_without_a_node_the_run_stops_after_the_capacity_wait_and_resumes(cluster, clean, tmp_path):
    held = FaultyShardCore.with_faults({0: {"hold_at_seq": 7}}, once_dir=tmp_path)
    removed = []

    def on_step(fleet, st):
        if not removed and (st.shard, st.seq) == (0, 6):
            removed.append(_remove_node_of_shard(cluster, fleet, 0))

    with pytest.raises(FleetError, match=r"capacity_wait_s") as err:
        collect(_cfg(), tmp_path / "ds", progress=False, deadline_s=10.0, shard_cls=held, on_step=on_step,
                capacity_wait_s=10.0)
    assert removed and any(e["kind"] == "replace" and e["shard"] == 0 for e in err.value.events)
    cluster.add_node(num_cpus=1, object_store_memory=NODE_STORE)          # the cluster has room again
    res = collect(_cfg(), tmp_path / "ds", progress=False, deadline_s=DEADLINE)   # the same call resumes it
    assert res.failures == 0
    assert verify(tmp_path / "ds") == []
    assert _data(tmp_path / "ds") == clean
