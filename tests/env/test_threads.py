"""BatchEnv(parallel=True): the worlds stepped and their cars sensed on numba threads give the serial
engine's bits, whatever the thread count (issue 15, "Threads")."""

import hashlib
import json
import os
import subprocess
import sys

import numpy as np

from paddock_ma.bench.env import env_bench_config

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
WORLDS, CARS, STEPS = 6, 8, 300
SENSOR_BUFFERS = ("ray_dist", "ray_hit", "ray_kind", "ray_car", "ray_rel_speed", "radar", "radar_slot", "look")


def trace(parallel: bool, threads: int | None = None) -> list[str]:
    """Per call, one digest of everything the engine returns and holds: observations (and final ones),
    rewards, flags, metrics, the world checksums and every sensor buffer. The run mixes auto-resets
    (constant throttle crashes cars at the first corner; they come back at random places), steps of a
    subset of worlds, reset_drivers and a reset of some worlds."""
    import numba

    from paddock_ma.env.batch_env import BatchEnv

    if threads is not None:
        numba.set_num_threads(threads)
    env = BatchEnv(env_bench_config(CARS), WORLDS, auto_reset=True, reset_placement="random", parallel=parallel)
    digests = []
    resets = 0

    def digest(result):
        h = hashlib.sha256()
        for a in (result.obs, result.final_obs, result.reward, result.terminated, result.truncated,
                  result.episode_id, result.life, result.metrics, result.reset_mask, env.checksums()):
            h.update(b"-" if a is None else np.ascontiguousarray(a).tobytes())
        for name in SENSOR_BUFFERS:
            h.update(getattr(env.sensors, name).tobytes())
        digests.append(h.hexdigest())

    digest(env.reset(seed=5))
    digest(env.reset_drivers(np.ones((WORLDS, CARS), bool), "random"))
    rng = np.random.default_rng(0)
    some = np.arange(WORLDS) % 2 == 0
    for step in range(STEPS):
        actions = np.zeros((WORLDS, CARS, 3), np.float32)
        actions[..., 0] = rng.uniform(-0.2, 0.2, (WORLDS, CARS))
        actions[..., 1] = 0.6 + 0.4 * (step % 40 < 20)
        result = env.step(actions, worlds=some if step % 7 == 3 else None)
        resets += int(result.reset_mask.sum())
        digest(result)
        if step == 150:
            digest(env.reset(seed=6, worlds=~some))
        if step % 50 == 25:
            digest(env.reset_drivers(rng.random((WORLDS, CARS)) < 0.3, "random-moving"))
    assert resets > 10, f"{resets} auto-resets: the run does not cover crashes and new lives"
    return digests


_SCRIPT = """
import json, sys
sys.path.insert(0, {root!r})
from tests.env.test_threads import trace
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
                paddock_ma.make("paddock/oval-batch-v0", parallel=True).batch,
                gymnasium.make_vec("paddock/oval-batch-v0", num_envs=16, parallel=True).engine]
    for batch in threaded:
        assert kernels(batch) == (step_worlds_parallel, sense_worlds_parallel, fill_vectors_parallel)
