"""Benchmarks behind ``paddock-ma bench``: throughput of the core, compile and start-up costs, memory.

Figures are per core: the kernels run serially (``step_worlds``) in one process with numba pinned to
one thread. Each workload is timed after a warm-up call so the JIT compile is not counted; the
compile cost is measured separately in fresh subprocesses (cold cache, then warm cache). The threads
rows (``run(threads=...)``, ``paddock-ma bench --threads 1,2``) time BatchEnv with ``parallel=True``
(worlds stepped and sensed on numba threads) at each thread count (``numba.set_num_threads``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

from .sim.driver.builtin import ai_actions
from .sim.core.jit import kernel
from .sim.sensing.sensors import FRONT_HEAVY_ANGLES_DEG
from .sim.track.geometry import locate

CORE_WORKLOAD = ("simulator physics, 20 cars per world, built-in drivers, all rules on "
                 "(tyre degradation, pit stops, stalled DNF), no sensors")


def bench_core(num_worlds: int, num_cars: int = 20, seconds: float = 3.0, track_name: str = "grand-prix",
               ticks_per_call: int = 4) -> dict:
    """Car-ticks per second of ``step_worlds`` over ``num_worlds`` worlds of ``num_cars`` cars."""
    from .sim.race.start import new_race, scatter_cars
    from .sim.step import step_state
    from .sim.track.load import load_track

    track = load_track(track_name)
    state = new_race(track, num_worlds, num_cars, seed=1, standing_start=0, pit_stops=1,
                     tire_degradation=1, stalled_dnf=1, total_laps=50)
    scatter_cars(track, state)      # each world's own draws: the worlds do not drive in lockstep
    step_state(state, n_ticks=ticks_per_call)  # compile / warm up
    calls, start = 0, time.perf_counter()
    while True:
        step_state(state, n_ticks=ticks_per_call)
        calls += 1
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            break
    car_ticks = calls * ticks_per_call * num_worlds * num_cars
    return {
        "worlds": num_worlds, "cars_per_world": num_cars, "ticks_per_call": ticks_per_call,
        "calls": calls, "seconds": round(elapsed, 3),
        "car_ticks_per_s": round(car_ticks / elapsed),
        "memory_per_world_bytes": state.memory_bytes() // num_worlds,
        "destroyed": int(state.cars_i[:, :, 1].sum()),
    }


ENV_WORKLOAD = ("20 controlled batch-training cars per world, simulator physics, physical-driver profile, "
                "driver-front-heavy rays (PaddockJS 2.0.0's 16: 240 m within 70 degrees of ahead, 90 m to 100, 60 m "
                "behind) with all four channels, radar (6), frame skip 4, vector output, "
                "state_output none, cars starting and auto-reset at random track positions (each world's own draws); actions: constant (steer 0, throttle 0.6; "
                "PaddockEnv too) or the built-in driver's controls (driver: the cars drive laps)")


# Ray variants of the environment workload. "driver-front-heavy" is the workload itself; the other two
# are diagnostic (``paddock-ma bench --ray-floor``): as many rays (16) and channels, 120 m, all at +-90
# degrees to the car (a ray across the track ends after the fewest march samples: one past the white
# line, one past the kerb), and no rays at all (everything else of the step).
RAY_VARIANTS = ("driver-front-heavy", "perpendicular", "none")


def env_bench_config(num_cars: int = 20, rays: str = "driver-front-heavy") -> dict:
    """The issue's environment workload as an EnvConfig dict; ``rays`` one of RAY_VARIANTS."""
    if rays not in RAY_VARIANTS:
        raise ValueError(f"rays: got {rays!r}; expected one of {RAY_VARIANTS}")
    ids = [f"car-{i:02d}" for i in range(num_cars)]
    ray_config = {"layout": "driver-front-heavy", "channels": ["road_edge", "kerb", "illegal_surface", "car"]}
    if rays == "perpendicular":
        ray_config = {"channels": ray_config["channels"],
                      "rays": [{"id": f"r{i}", "angle_degrees": 90.0 if i % 2 else -90.0, "length_meters": 120.0}
                               for i in range(len(FRONT_HEAVY_ANGLES_DEG))]}
    elif rays == "none":
        ray_config = {"enabled": False}
    return {
        "drivers": num_cars, "controlled_drivers": ids, "track": "grand-prix", "frame_skip": 4,
        "physics_mode": "simulator", "total_laps": 1000,
        "rules": {"standing_start": False},
        "participant_interactions": {"default_profile": "batch-training"},
        "observation": {"profile": "physical-driver", "output": "vector", "include_schema": False},
        "sensors": {"rays": ray_config},
        "result": {"state_output": "none"},
    }


def _timed(fn, seconds: float) -> tuple[int, float]:
    calls, start = 0, time.perf_counter()
    while True:
        fn()
        calls += 1
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            return calls, elapsed


def bench_batch_env(num_worlds: int, seconds: float = 3.0, actions_from: str = "constant",
                    warmup_steps: int = 300, rays: str = "driver-front-heavy", threads: int | None = None) -> dict:
    """BatchEnv car-steps/s on ENV_WORKLOAD, with the split between core, sensors+vectors and Python.

    actions_from: ``constant`` (steer 0, throttle 0.6: cars leave the track at the first corner, crash,
    and come back at random positions) or ``driver`` (each step's actions are the built-in driver's
    controls for the controlled cars, computed in one numba call that the timing includes: the cars
    drive laps, as a trained policy would). ``warmup_steps`` untimed steps first (300: 80 s of racing,
    about a lap of the grand prix). ``rays``: one of RAY_VARIANTS (the workload's, or a diagnostic one).
    ``threads``: None for the serial engine; n for ``BatchEnv(parallel=True)`` on n numba threads (the
    process's thread count is restored afterwards)."""
    import numba

    if threads is None:
        return _bench_batch_env(num_worlds, seconds, actions_from, warmup_steps, rays, False)
    before = numba.get_num_threads()
    numba.set_num_threads(threads)
    try:
        row = _bench_batch_env(num_worlds, seconds, actions_from, warmup_steps, rays, True)
    finally:
        numba.set_num_threads(before)
    row["threads"] = threads
    return row


def _bench_batch_env(num_worlds, seconds, actions_from, warmup_steps, rays, parallel):
    from .env.batch_env import BatchEnv

    env = BatchEnv(env_bench_config(rays=rays), num_worlds, auto_reset=True, reset_placement="random",
                   parallel=parallel)
    env.reset(seed=1)
    # every car starts at a random track position of its world's own draws: the worlds are not copies
    # of one another (64 identical worlds would drive the same stretch of track in lockstep)
    env.reset_drivers(np.ones((num_worlds, len(env.controlled)), bool), "random")
    k = len(env.controlled)
    actions = np.zeros((num_worlds, k, 3), np.float32)
    actions[..., 1] = 0.6
    slots = np.asarray(env.slots, np.int64)
    st = env.state

    def step():
        if actions_from == "driver":
            ai_actions(env.track, st.cars_f, st.cars_i, st.car_params, st.car_flags, st.rules, slots, actions)
        env.step(actions)

    for _ in range(warmup_steps):   # off the grid: a lap's mix of places, not the start straight
        step()
    # The split is timed inside the timed steps themselves: the env's core kernel and its sensing call
    # are wrapped (on this instance only) to add up their own time.
    spent = {"core": 0.0, "sense": 0.0}

    def timed_call(fn, key):
        def call(*args):
            t0 = time.perf_counter()
            out = fn(*args)
            spent[key] += time.perf_counter() - t0
            return out
        return call

    env.step_kernel = timed_call(env.step_kernel, "core")
    env.sensors.sense = timed_call(env.sensors.sense, "sense")
    calls, elapsed = _timed(step, seconds)
    per_step = elapsed / calls
    core_ms = 1e3 * spent["core"] / calls
    sense_ms = 1e3 * spent["sense"] / calls
    return {"worlds": num_worlds, "cars_per_world": k, "actions": actions_from, "rays": rays, "steps": calls,
            "seconds": round(elapsed, 3), "car_steps_per_s": round(calls * num_worlds * k / elapsed),
            "ms_per_step": round(1e3 * per_step, 3), "core_ms": round(core_ms, 3), "sensors_obs_ms": round(sense_ms, 3),
            "python_ms": round(max(0.0, 1e3 * per_step - core_ms - sense_ms), 3)}


def bench_paddock_env(seconds: float = 3.0, actions_from: str = "constant") -> dict:
    """PaddockEnv (one world, dict API) car-steps/s on ENV_WORKLOAD without auto-reset: a crashed
    car is reset through reset_drivers by the loop, as a user's loop would. actions_from: as
    ``bench_batch_env``; with ``driver`` the timing includes the numba call computing the built-in
    driver's controls and turning them into the action dicts (a policy's output would be turned so)."""
    from .env.environment import PaddockEnv

    env = PaddockEnv(env_bench_config())
    env.reset(seed=1)
    env.batch.reset_drivers(np.ones((1, len(env.controlled)), bool), "random")    # as bench_batch_env
    constant = {d: {"steering": 0.0, "throttle": 0.6, "brake": 0.0} for d in env.controlled}
    batch = env.batch
    st = batch.state
    slots = np.asarray(batch.slots, np.int64)
    controls = np.zeros((1, len(slots), 3), np.float32)

    def actions():
        if actions_from != "driver":
            return constant
        ai_actions(batch.track, st.cars_f, st.cars_i, st.car_params, st.car_flags, st.rules, slots, controls)
        running = batch.running_mask()[0].tolist()
        return {d: {"steering": s, "throttle": t, "brake": b}
                for d, live, (s, t, b) in zip(env.controlled, running, controls[0].tolist()) if live}

    def one_step():
        result = env.step(actions())
        ended = [d for d, info in result["info"]["drivers"].items() if info["terminated"] or info["truncated"]]
        if ended:
            env.reset_drivers({d: None for d in ended}, observation_scope="reset", state_output="none")

    for _ in range(300):     # as bench_batch_env: off the grid first
        one_step()
    calls, elapsed = _timed(one_step, seconds)
    k = len(env.controlled)
    return {"worlds": 1, "cars_per_world": k, "actions": actions_from, "steps": calls, "seconds": round(elapsed, 3),
            "car_steps_per_s": round(calls * k / elapsed), "ms_per_step": round(1e3 * elapsed / calls, 3)}


_COMPILE_SNIPPET = """
import time
t0 = time.perf_counter()
from paddock_ma.sim.race.start import new_race
from paddock_ma.sim.step import step_state
from paddock_ma.sim.track.load import load_track
t1 = time.perf_counter()
state = new_race(load_track("oval"), 1, 4, seed=1)
step_state(state, n_ticks=1)
t2 = time.perf_counter()
print(f"{t1 - t0:.3f} {t2 - t1:.3f}")
"""


# The README snippet's first step (paddock/gp-batch-v0, 4 worlds): what a user's first run waits for.
_FIRST_ENV_STEP_SNIPPET = """
import time
t0 = time.perf_counter()
import numpy as np
import paddock_ma
from paddock_ma.env.batch_env import BatchEnv
t1 = time.perf_counter()
env = paddock_ma.make("paddock/gp-batch-v0", num_worlds=4)
env.reset(seed=7)
env.step(np.zeros((4, 8, 3), np.float32))
t2 = time.perf_counter()
from paddock_ma import warm
from paddock_ma.sim import compile_status
status = compile_status.installed()
print(f"{t1 - t0:.3f} {t2 - t1:.3f} {int(warm.is_warm())} {status.compiled if status else -1}")
"""


def _start_row(snippet: str, env: dict) -> dict:
    t0 = time.perf_counter()
    res = subprocess.run([sys.executable, "-c", snippet], env=env, capture_output=True, text=True, check=True)
    total = time.perf_counter() - t0
    fields = res.stdout.split()
    row = {"process_seconds": round(total, 2), "import_seconds": round(float(fields[0]), 2),
           "first_step_seconds": round(float(fields[1]), 2)}
    if len(fields) > 2:
        row.update(warm_marker=bool(int(fields[2])), functions_compiled=int(fields[3]))
    return row


def bench_start(cache_dir: str | None = None, installed: bool = True) -> dict:
    """Seconds to import and to build+step a first world, in a fresh process (cold and warm cache).

    ``cold_cache`` and ``warm_cache``: the sim's first step (``new_race`` + ``step_state``: its physics and
    rules kernels, no sensing) compiled into an empty cache directory, then loaded from it. ``installed``:
    also ``installed_cache``, the README snippet's first env step (gp-batch-v0: reset, sensing, step) in a
    fresh process with this checkout's own cache, as a user's first run finds it after ``make install``
    (its ``python -m paddock_ma.warm``); the row says whether the warm-up's marker was there and how
    many of the package's functions numba compiled (0 when the warm-up covered the run)."""
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache_dir or tmp, NUMBA_NUM_THREADS="1")
        out = {label: _start_row(_COMPILE_SNIPPET, env) for label in ("cold_cache", "warm_cache")}
    if installed:
        # this process's cache directory (importing paddock_ma.sim put it in the environment, or the user did)
        out["installed_cache"] = _start_row(_FIRST_ENV_STEP_SNIPPET, dict(os.environ, NUMBA_NUM_THREADS="1"))
    return out


def bench_tracks(seeds: int = 10) -> dict:
    """Procedural track generation (centreline, validation, pit lane, query index and rasters) in
    seconds per track over ``seeds`` seeds, after a warm-up build; and ``locate`` with a good hint
    (a car moving 1.4 m per query along the grand-prix), ns per call."""
    from .sim.track.load import load_track, procedural_track

    build = procedural_track.__wrapped__      # bypass the per-seed cache
    build(100)
    times = []
    for seed in range(seeds):
        t0 = time.perf_counter()
        build(seed * 7919 + 1)
        times.append(time.perf_counter() - t0)
    tr = load_track("grand-prix")
    s = np.arange(0.0, 1.4 * 200_000, 1.4) % tr.length
    xs = np.interp(s, tr.cs, tr.cx)
    ys = np.interp(s, tr.cs, tr.cy)
    _locate_many(tr, xs[:10], ys[:10])
    t0 = time.perf_counter()
    _locate_many(tr, xs, ys)
    per = (time.perf_counter() - t0) / xs.shape[0] * 1e9
    return {"procedural_median_s": round(float(np.median(times)), 3), "procedural_max_s": round(max(times), 3),
            "locate_hint_ns": round(per, 1)}


@kernel
def _locate_many(tr, xs, ys):
    """``locate`` every point in turn with the previous answer as the hint; returns a checksum."""
    hint = 0
    acc = 0.0
    for i in range(xs.shape[0]):
        seg, s, off, h, k = locate(tr, xs[i], ys[i], hint)
        hint = seg
        acc += s
    return acc


def run(worlds=(1, 64, 1024), env_worlds=(64,), seconds: float = 3.0, with_start: bool = True,
        ray_floor: bool = False, threads=()) -> dict:
    """The benchmark suite; returns a JSON-able report. ray_floor: also BatchEnv with the diagnostic ray
    variants (RAY_VARIANTS), which show what the rays cost at their cheapest and what the rest costs.
    threads: thread counts (e.g. (1, 2); repeat them to interleave runs: (1, 2, 1, 2)) at which
    BatchEnv(parallel=True) is also timed, in that order for each world count and kind of actions
    (rows ``threads``; NUMBA_NUM_THREADS must allow the largest count)."""
    report = {"workload": CORE_WORKLOAD, "core": [bench_core(w, seconds=seconds) for w in worlds],
              "tracks": bench_tracks(),
              "env_workload": ENV_WORKLOAD,
              "batch_env": [bench_batch_env(w, seconds=seconds, actions_from=a) for w in env_worlds
                            for a in ("constant", "driver")],
              "paddock_env": [bench_paddock_env(seconds=seconds, actions_from=a) for a in ("constant", "driver")]}
    if ray_floor:
        report["batch_env"] += [bench_batch_env(w, seconds=seconds, actions_from=a, rays=r) for r in RAY_VARIANTS[1:]
                                for w in env_worlds for a in ("constant", "driver")]
    if threads:
        report["threads"] = [bench_batch_env(w, seconds=seconds, actions_from=a, threads=t) for w in env_worlds
                             for a in ("constant", "driver") for t in threads]
    if with_start:
        report["start"] = bench_start()
    return report


def format_report(report: dict) -> str:
    """The report as a Markdown table (what BENCHMARKS.md keeps)."""
    lines = [f"Workload: {report['workload']}.", "",
             "| worlds | cars/world | car-ticks/s (1 core) | memory/world |",
             "|---:|---:|---:|---:|"]
    for row in report["core"]:
        lines.append(f"| {row['worlds']} | {row['cars_per_world']} | {row['car_ticks_per_s']:,} | "
                     f"{row['memory_per_world_bytes'] / 1024:.1f} KiB |")
    lines += ["", f"Environment workload: {report['env_workload']}.", "",
              "| API | worlds | car-steps/s (1 core) | ms/step | core ms | sensors+vectors ms | other ms |",
              "|---|---:|---:|---:|---:|---:|---:|"]
    for row in report["batch_env"]:
        rays = "" if row["rays"] == RAY_VARIANTS[0] else f", rays: {row['rays']}"
        lines.append(f"| BatchEnv, {row['actions']} actions{rays} | {row['worlds']} | {row['car_steps_per_s']:,} | "
                     f"{row['ms_per_step']} | {row['core_ms']} | {row['sensors_obs_ms']} | {row['python_ms']} |")
    for row in report["paddock_env"]:
        lines.append(f"| PaddockEnv (dict), {row['actions']} actions | 1 | {row['car_steps_per_s']:,} | "
                     f"{row['ms_per_step']} | | | |")
    if report.get("threads"):
        lines += ["", "BatchEnv(parallel=True): worlds stepped and sensed on numba threads.", "",
                  "| actions | worlds | threads | car-steps/s | x first row | ms/step | core ms | sensors+vectors ms "
                  "| other ms |", "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
        base = {}
        for row in report["threads"]:
            ref = base.setdefault((row["actions"], row["worlds"]), row["car_steps_per_s"])
            lines.append(f"| {row['actions']} | {row['worlds']} | {row['threads']} | {row['car_steps_per_s']:,} | "
                         f"{row['car_steps_per_s'] / ref:.2f} | {row['ms_per_step']} | {row['core_ms']} | "
                         f"{row['sensors_obs_ms']} | {row['python_ms']} |")
    if "tracks" in report:
        t = report["tracks"]
        lines += ["", "| procedural track build, median (s) | max (s) | locate with a good hint (ns/call) |",
                  "|---:|---:|---:|",
                  f"| {t['procedural_median_s']} | {t['procedural_max_s']} | {t['locate_hint_ns']} |"]
    if "start" in report:
        lines += ["", "| start | process (s) | import (s) | build + first step (s) | functions compiled |",
                  "|---|---:|---:|---:|---:|"]
        for label, row in report["start"].items():
            compiled = "" if "functions_compiled" not in row else (
                f"{row['functions_compiled']}" + ("" if row["warm_marker"] else " (no warm-up marker)"))
            lines.append(f"| {label} | {row['process_seconds']} | {row['import_seconds']} | "
                         f"{row['first_step_seconds']} | {compiled} |")
    return "\n".join(lines)


def main_json(report: dict) -> str:
    return json.dumps(report, indent=2)


if __name__ == "__main__":  # pragma: no cover
    print(format_report(run()))
