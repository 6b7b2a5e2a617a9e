"""Ray shards keep one numba thread each (issue 15, "Threads"): a fleet's parallelism is its shards, so a
shard's engine is the serial one and its process runs one numba thread, whatever its driver runs."""

import pytest

from paddock_ma.distributed.shard import ShardCore, actor_class


@pytest.mark.ray
def test_a_shard_actor_runs_one_numba_thread_and_the_serial_engine(ray_local, env_config):
    class ThreadProbe(ShardCore):          # local: Ray ships it by value; EnvShard's options, ShardCore's start
        def threads(self):
            import os

            import numba
            return {"NUMBA_NUM_THREADS": os.environ.get("NUMBA_NUM_THREADS"), "threads": numba.get_num_threads(),
                    "step": self.engine.step_kernel.__name__, "sense": self.engine.sensors.sense_kernel.__name__}

    ray = ray_local
    probe = actor_class(ThreadProbe).remote(env_config, 0, 2)
    facts = ray.get(probe.threads.remote())
    ray.kill(probe)
    assert facts == {"NUMBA_NUM_THREADS": "1", "threads": 1, "step": "step_worlds", "sense": "sense_worlds"}
