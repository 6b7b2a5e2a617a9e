"""Real Ray for the distributed tests: one local instance for the session, a multi-node Cluster for node loss.

Never ``ray stop``: the local instance is ``ray.shutdown()``-ed and the Cluster tears down its own nodes.
Tests marked ``cluster`` run last, after the local instance is shut down (a driver joins one cluster at a
time).
"""

import os

os.environ.setdefault("RAY_AUTH_MODE", "disabled")       # throwaway test clusters: no token file
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("NUMBA_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

ENV_ID = "paddock/oval-batch-v0"
# short episodes so cars end (truncated at max-steps) and start new lives within a short test
OVERRIDES = {"episode": {"max_steps": 20}}
LOCAL_INIT = dict(address="local", num_cpus=2, object_store_memory=150 * 1024**2, include_dashboard=False,
                  log_to_driver=False)


def pytest_collection_modifyitems(config, items):
    here = os.path.dirname(__file__)
    mine = [i for i in items if str(i.fspath).startswith(here)]
    late = [i for i in mine if i.get_closest_marker("cluster") and "local_cluster" not in str(i.fspath)]
    if late:
        rest = [i for i in items if i not in late]
        items[:] = rest + late


@pytest.fixture(scope="session")
def env_config():
    from paddock_ma.distributed.collect import resolve_env
    return resolve_env(ENV_ID, OVERRIDES)


@pytest.fixture(scope="session")
def warm_cache(env_config):
    """Compile (or load) numba's cache in this process first, so shards do not all compile at once."""
    from paddock_ma.distributed.shard import ShardCore
    core = ShardCore(env_config, 0, 1)
    core.reset(0)
    core.step(1, None)
    core.step(2, np.zeros((1, len(core.env.controlled), 3), np.float32))
    return True


@pytest.fixture(scope="session")
def ray_session():
    """The session's Ray state: ``local()`` joins the local instance, ``shutdown()`` leaves it."""
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
def ray_local(ray_session, warm_cache):
    return ray_session.local()
