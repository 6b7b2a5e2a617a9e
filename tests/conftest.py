"""Settings and fixtures of the whole test session.

numba fixes its thread count when its threads first launch and refuses any later compile if
``NUMBA_NUM_THREADS`` then reads otherwise; Ray shards (and ``ShardCore`` run in process) pin it to 1.
Setting it here, first, before any test module is imported, keeps it one value for the whole session
whatever order the tests run in. Tests that need several threads start a child process with their own
value (tests/env/test_threads.py).

Ray: one local instance for the session (``ray_session``, ``ray_local``), started only when a test asks
for it. Never ``ray stop``: the local instance is ``ray.shutdown()``-ed, and a multi-node test Cluster
(tests/distributed) tears down its own nodes.
"""

import os

import pytest

os.environ.setdefault("NUMBA_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("RAY_AUTH_MODE", "disabled")       # throwaway test clusters: no token file

# the local instance: two CPUs and a small object store. No job-wide thread settings: a shard pins its
# own (distributed.shard.ACTOR_OPTIONS), and tests/distributed/test_shard_threads.py checks that it does.
LOCAL_INIT = dict(address="local", num_cpus=2, object_store_memory=150 * 1024**2, include_dashboard=False,
                  log_to_driver=False)


@pytest.fixture(scope="session")
def ray_session():
    """The session's Ray state: ``local()`` joins the local instance (starting it), ``shutdown()`` leaves
    it (a driver joins one cluster at a time, so a multi-node test leaves it first)."""
    import ray

    class Session:
        mode = None

        def local(self):
            if self.mode != "local":
                if ray.is_initialized():
                    ray.shutdown()
                ray.init(**LOCAL_INIT)
                self.mode = "local"
            return ray

        def shutdown(self):
            if ray.is_initialized():
                ray.shutdown()
            self.mode = None

    s = Session()
    yield s
    s.shutdown()


@pytest.fixture
def ray_ready():
    """What must be done in this process before Ray workers start (nothing by default; the distributed
    tests override it to compile the kernels once here, so shards do not all compile at once)."""
    return None


@pytest.fixture
def ray_local(ray_session, ray_ready):
    """The ``ray`` module, joined to the session's local instance."""
    return ray_session.local()
