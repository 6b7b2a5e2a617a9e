"""Runs whose bits the determinism tests compare, importable by the child processes those tests start
with another numba thread count: a seeded race of the core (``seeded_race``) and a traced run of the
engine (``engine_trace``)."""

import hashlib

import numpy as np

from paddock_ma.bench.env import env_bench_config
from paddock_ma.sim.core import layout as L
from paddock_ma.sim.race.start import new_race

RACE = dict(standing_start=0, pit_stops=1, pit_variability=1, tire_degradation=1, total_laps=20)


def seeded_race(track, num_worlds, seed, cars=20):
    """A race whose course depends on the world RNG: worn tyres send the built-in drivers to the pits
    early, and pit crew variability draws service times from each world's generator."""
    state = new_race(track, num_worlds, cars, seed=seed, **RACE)
    state.cars_f[:, :, L.F_TIRE_ENERGY] = np.linspace(26.0, 60.0, cars)
    return state


WORLDS, CARS, STEPS = 6, 8, 300
SENSOR_BUFFERS = ("ray_dist", "ray_hit", "ray_kind", "ray_car", "ray_rel_speed", "radar", "radar_slot", "look")


def engine_trace(parallel: bool, threads: int | None = None) -> list[str]:
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
