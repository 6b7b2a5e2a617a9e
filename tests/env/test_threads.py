"""BatchEnv(parallel=True): the worlds stepped and their cars sensed on numba threads give the serial
engine's bits, whatever the thread count (issue 15, "Threads")."""

import json
import os
import subprocess
import sys

from paddock_ma.bench.env import env_bench_config
from tests.helpers.determinism import STEPS

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

_SCRIPT = """
import json, sys
sys.path.insert(0, {root!r})
from tests.helpers.determinism import engine_trace as trace
print(json.dumps({{"serial": trace(False), "parallel_1": trace(True, 1), "parallel_2": trace(True, 2)}}))
"""


def test_parallel_engine_is_bit_identical_to_serial_with_one_and_two_threads():
    # in a child process with NUMBA_NUM_THREADS=2: the two-thread case runs on any machine (one core too)
    env = dict(os.environ, NUMBA_NUM_THREADS="2")
    out = subprocess.run([sys.executable, "-c", _SCRIPT.format(root=ROOT)], env=env, capture_output=True,
                         text=True, check=True, timeout=900)
    runs = json.loads(out.stdout.strip().splitlines()[-1])
    serial = runs.pop("serial")
    assert len(serial) > STEPS
    for name, digests in runs.items():
        first = next((i for i, (a, b) in enumerate(zip(serial, digests)) if a != b), None)
        assert first is None and len(digests) == len(serial), f"{name}: differs from serial at call {first}"


def test_parallel_option_reaches_the_step_sensing_and_vectors_from_every_entry_point():
    import gymnasium

    import paddock_ma
    from paddock_ma.env.batch_env import BatchEnv
    from paddock_ma.sim.sensing.vectors import fill_vectors, fill_vectors_parallel
    from paddock_ma.sim.sensing.sensors import sense_worlds, sense_worlds_parallel
    from paddock_ma.sim.step import step_worlds, step_worlds_parallel

    def kernels(batch):
        return batch.step_kernel, batch.sensors.sense_kernel, batch.sensors.fill_kernel

    cfg = env_bench_config(2)
    assert kernels(BatchEnv(cfg, 2)) == (step_worlds, sense_worlds, fill_vectors)
    threaded = [BatchEnv(cfg, 2, parallel=True), paddock_ma.make("paddock/oval-batch-v0", num_worlds=2, parallel=True),
                paddock_ma.make("paddock/oval-batch-v0", parallel=True).engine,
                gymnasium.make_vec("paddock/oval-batch-v0", num_envs=16, parallel=True).engine]
    for batch in threaded:
        assert kernels(batch) == (step_worlds_parallel, sense_worlds_parallel, fill_vectors_parallel)
