"""Fixtures of the adapter tests: one small local Ray instance per session, started only when asked."""

import os

import pytest

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("RAY_AUTH_MODE", "disabled")


@pytest.fixture(scope="session")
def ray_local():
    import ray

    started = False
    if not ray.is_initialized():
        ray.init(address="local", num_cpus=2, object_store_memory=150 * 1024**2, include_dashboard=False,
                 log_to_driver=False, runtime_env={"env_vars": {"OMP_NUM_THREADS": "1", "NUMBA_NUM_THREADS": "1"}})
        started = True
    yield ray
    if started:
        ray.shutdown()
