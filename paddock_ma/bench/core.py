"""``paddock-ma bench core``: throughput of the simulation core, track building, start-up and memory.

Figures are per core: the kernels run serially (``step_worlds``) in one process with numba pinned to
one thread. Each workload is timed after a warm-up call so the JIT compile is not counted; the
compile cost is measured separately in fresh subprocesses (cold cache, then warm cache, and the
README snippet's first env step with this checkout's cache).

The simulation is imported inside the functions (the track rows, which define a kernel, in ``tracks``):
the command line reads ``run``'s signature before it sets numba's thread count.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time

from .report import table
from .timing import time_for

# The physics modes ``bench core`` and ``bench env`` run (``--physics``); the first is their default
# workload's: simulator, the mode PaddockJS's guide trains in.
PHYSICS_MODES = ("simulator", "arcade")

CORE_WORKLOAD = ("physics mode per row, 20 cars per world, built-in drivers, all rules on "
                 "(tyre degradation, pit stops, stalled DNF), no sensors")


def bench_core(num_worlds: int, num_cars: int = 20, seconds: float = 3.0, track_name: str = "grand-prix",
               ticks_per_call: int = 4, physics: str = "simulator") -> dict:
    """Car-ticks per second of ``step_worlds`` over ``num_worlds`` worlds of ``num_cars`` cars in
    ``physics`` mode (one of PHYSICS_MODES)."""
    from ..sim.core import layout as L
    from ..sim.race.start import new_race, scatter_cars
    from ..sim.step import step_state
    from ..sim.track.load import load_track

    track = load_track(track_name)
    if physics not in PHYSICS_MODES:
        raise ValueError(f"physics: got {physics!r}; expected one of {PHYSICS_MODES}")
    mode = L.PHYSICS_SIMULATOR if physics == "simulator" else L.PHYSICS_ARCADE
    state = new_race(track, num_worlds, num_cars, seed=1, standing_start=0, pit_stops=1,
                     tire_degradation=1, stalled_dnf=1, total_laps=50, physics_mode=mode)
    scatter_cars(track, state)      # each world's own draws: the worlds do not drive in lockstep
    step_state(state, n_ticks=ticks_per_call)  # compile / warm up
    timing = time_for(lambda: step_state(state, n_ticks=ticks_per_call), seconds)
    car_ticks = timing.calls * ticks_per_call * num_worlds * num_cars
    return {
        "physics": physics, "worlds": num_worlds, "cars_per_world": num_cars, "track": track_name,
        "ticks_per_call": ticks_per_call,
        "calls": timing.calls, "seconds": round(timing.seconds, 3),
        "car_ticks_per_s": round(car_ticks / timing.seconds),
        "memory_per_world_bytes": state.memory_bytes() // num_worlds,
        "destroyed": int(state.cars_i[:, :, 1].sum()),
    }


COMPILE_SNIPPET = """
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
FIRST_ENV_STEP_SNIPPET = """
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
from paddock_ma.sim.core import compile_status
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
    (its ``paddock-ma warm``); the row says whether the warm-up's marker was there and how
    many of the package's functions numba compiled (0 when the warm-up covered the run)."""
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache_dir or tmp, NUMBA_NUM_THREADS="1")
        out = {label: _start_row(COMPILE_SNIPPET, env) for label in ("cold_cache", "warm_cache")}
    if installed:
        # this process's cache directory (importing paddock_ma.sim put it in the environment, or the user did)
        out["installed_cache"] = _start_row(FIRST_ENV_STEP_SNIPPET, dict(os.environ, NUMBA_NUM_THREADS="1"))
    return out


def run(worlds=(1, 64, 1024), seconds: float = 3.0, cars: int = 20, track: str = "grand-prix",
        ticks_per_call: int = 4, track_seeds: int = 10, with_start: bool = True,
        physics: tuple = PHYSICS_MODES[:1]) -> dict:
    """The core benchmark; returns its report: ``core`` (one row per physics mode of ``physics`` and
    world count of ``worlds``, ``cars``
    cars a world on ``track``, ``ticks_per_call`` ticks per ``step_state`` call, ``seconds`` each),
    ``tracks`` (procedural builds over ``track_seeds`` seeds, ``locate``) and, ``with_start``, ``start``
    (compile and start-up in fresh processes)."""
    from .tracks import bench_tracks

    report = {"workload": CORE_WORKLOAD,
              "core": [bench_core(w, num_cars=cars, seconds=seconds, track_name=track, ticks_per_call=ticks_per_call,
                                  physics=mode) for mode in physics for w in worlds],
              "tracks": bench_tracks(track_seeds)}
    if with_start:
        report["start"] = bench_start()
    return report


def format_report(report: dict) -> str:
    """The report as Markdown tables (what BENCHMARKS.md keeps)."""
    lines = [f"Workload: {report['workload']}.", ""]
    lines += table(("physics", "worlds", "cars/world", "car-ticks/s (1 core)", "memory/world"),
                   [(r["physics"], r["worlds"], r["cars_per_world"], f"{r['car_ticks_per_s']:,}",
                     f"{r['memory_per_world_bytes'] / 1024:.1f} KiB") for r in report["core"]], left=1)
    if "tracks" in report:
        t = report["tracks"]
        lines += [""] + table(("procedural track build, median (s)", "max (s)", "locate with a good hint (ns/call)"),
                              [(t["procedural_median_s"], t["procedural_max_s"], t["locate_hint_ns"])])
    if "start" in report:
        rows = []
        for label, row in report["start"].items():
            compiled = "" if "functions_compiled" not in row else (
                f"{row['functions_compiled']}" + ("" if row["warm_marker"] else " (no warm-up marker)"))
            rows.append((label, row["process_seconds"], row["import_seconds"], row["first_step_seconds"], compiled))
        lines += [""] + table(("start", "process (s)", "import (s)", "build + first step (s)", "functions compiled"),
                              rows, left=1)
    return "\n".join(lines)
