"""Fixtures of the distributed tests: the env they collect from, a compiled kernel cache before Ray
starts (``ray_ready``; the Ray fixtures are the session's, tests/conftest.py), and a multi-node Cluster
for node loss and join.

Tests marked ``cluster`` run last, after the local instance is shut down (a driver joins one cluster at a
time).
"""

import os

import numpy as np
import pytest

ENV_ID = "paddock/oval-batch-v0"
# short episodes so cars end (truncated at max-steps) and start new lives within a short test
OVERRIDES = {"episode": {"max_steps": 20}}
FAULT_TEST_TIMEOUT_S = 1800     # pytest-timeout's limit for these tests (a guard against hangs, not a speed)


def pytest_collection_modifyitems(config, items):
    here = os.path.dirname(__file__)
    mine = [i for i in items if str(i.fspath).startswith(here)]
    for item in mine:
        # a fault test starts several replacement actors; on a loaded machine each start takes tens of
        # seconds (a Ray worker process, its imports and kernel cache): past the suite's 600 s hang guard
        item.add_marker(pytest.mark.timeout(FAULT_TEST_TIMEOUT_S))
    late = [i for i in mine if i.get_closest_marker("cluster") and "local_cluster" not in str(i.fspath)]
    if late:
        rest = [i for i in items if i not in late]
        items[:] = rest + late


@pytest.fixture(scope="session")
def env_config():
    from paddock_ma.catalog import resolve_config_dict
    return resolve_config_dict(ENV_ID, OVERRIDES)


@pytest.fixture(scope="session")
def warm_cache(env_config):
    """Compile (or load) numba's cache in this process first, so shards do not all compile at once."""
    from paddock_ma.distributed.shard import ShardCore
    core = ShardCore(env_config, 0, 1)
    core.reset(0)
    core.step(1, None)
    core.step(2, np.zeros((1, len(core.env.controlled), 3), np.float32))
    return True


@pytest.fixture
def ray_ready(warm_cache):
    return warm_cache


def collect_config(**kw):
    """The collect tests' CollectConfig (2 shards x 2 worlds of ENV_ID, 40 steps, random policy, fragments
    of 16 steps), with ``kw`` overriding any field."""
    from paddock_ma.distributed.collect import CollectConfig

    base = dict(env=ENV_ID, num_shards=2, worlds_per_shard=2, steps=40, seed=3, policy="random", fragment_steps=16,
                snapshot_every=8, env_overrides=OVERRIDES)
    base.update(kw)
    return CollectConfig(**base)


def dataset_bytes(root) -> dict:
    """{file name: bytes} of every Parquet file of the dataset at ``root``."""
    return {p.name: p.read_bytes() for p in sorted((root / "data").glob("*.parquet"))}


@pytest.fixture(scope="module")
def clean(ray_session, warm_cache, tmp_path_factory):
    """The fault-free dataset of ``collect_config()`` on the session's local Ray: what the fault, resume
    and preview tests compare their datasets with, byte for byte."""
    from paddock_ma.distributed.collect import collect

    ray_session.local()
    out = tmp_path_factory.mktemp("clean") / "ds"
    res = collect(collect_config(), out, progress=False)
    assert res.failures == 0
    return out


_shard_timings: dict = {}


def measured_shard_timing(env_config, steps: int = 16) -> tuple:
    """(seconds for a shard actor started as the fleet starts them to become ready and reset, seconds of
    the slowest of ``steps`` step round trips), on this machine and this Ray, now: a loaded machine
    stretches the first to a minute and the second to seconds. Measured once per Ray instance."""
    import time

    import ray

    from paddock_ma.distributed.shard import actor_class

    key = ray.get_runtime_context().gcs_address
    if key not in _shard_timings:
        t0 = time.monotonic()
        shard = actor_class().remote(env_config, 0, 2)
        try:
            ray.get(shard.reset.remote(1))
            start = time.monotonic() - t0
            slowest = 0.0
            for seq in range(1, steps + 1):
                t0 = time.monotonic()
                ray.get(shard.step.remote(seq, None))
                slowest = max(slowest, time.monotonic() - t0)
        finally:
            ray.kill(shard)
        _shard_timings[key] = (start, slowest)
    return _shard_timings[key]


def measured_hang_deadline(env_config, floor: float = 3.0, factor: float = 5.0) -> float:
    """Seconds of ``deadline_s`` for a test that plants a hung shard: short, so the hang is found soon, yet
    ``factor`` times the slowest measured step round trip (a constant would fail healthy steps on a loaded
    machine, and each failure costs a replacement's start), and at least ``floor``."""
    return max(floor, factor * measured_shard_timing(env_config)[1])


NODE_STORE = 80 * 1024**2       # object store of each raylet of a test Cluster
# The GCS declares a removed node dead after `threshold` failed health checks `period` apart (defaults
# 5 x 3 s: 15-30 s of every node-loss test). A killed raylet refuses the check at once, while a live one
# on a loaded machine still answers within the 10 s check timeout, so 3 x 1 s finds the loss sooner
# without declaring a slow node dead.
FAST_NODE_DEATH = {"health_check_initial_delay_ms": 1000, "health_check_period_ms": 1000,
                   "health_check_failure_threshold": 3}


def multi_node_cluster(ray_session, node_cpus):
    """A ``ray.cluster_utils.Cluster`` on this machine: a head without CPUs and one raylet per entry of
    ``node_cpus``; this driver joins it. Yields it (use from a fixture with ``yield from``), then leaves
    and tears down its nodes."""
    import ray
    from ray.cluster_utils import Cluster

    ray_session.shutdown()                      # a driver joins one cluster at a time
    c = Cluster(initialize_head=True, head_node_args={"num_cpus": 0, "object_store_memory": NODE_STORE,
                                                      "include_dashboard": False,
                                                      "_system_config": FAST_NODE_DEATH})
    for cpus in node_cpus:
        c.add_node(num_cpus=cpus, object_store_memory=NODE_STORE)
    c.wait_for_nodes()
    ray.init(address=c.address, log_to_driver=False)
    yield c
    ray.shutdown()
    c.shutdown()


def load_launcher():
    """``cluster/local_cluster.py`` (a script, not a package module) as a module."""
    import importlib.util
    import sys
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "cluster" / "local_cluster.py"
    spec = importlib.util.spec_from_file_location("local_cluster", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["local_cluster"] = mod
    spec.loader.exec_module(mod)
    return mod


def free_port_base(nodes: int) -> int:
    """First port of ``nodes`` free blocks of 100 (the launcher's layout), below Linux's ephemeral range
    (32768+, where Ray's own outgoing connections take ports) and above Ray's worker ports (10002-19999)."""
    import socket

    first = 20000 + (os.getpid() % 50) * 200
    for base in list(range(first, 32000 - 100 * nodes, 200)) + list(range(20000, first, 200)):
        socks = []
        try:
            for port in range(base, base + 100 * nodes):
                sock = socket.socket()
                socks.append(sock)
                sock.bind(("", port))
            return base
        except OSError:
            continue
        finally:
            for sock in socks:
                sock.close()
    raise RuntimeError("no free block of ports between 20000 and 32000")
