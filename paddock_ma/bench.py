"""Benchmarks behind ``paddock-ma bench``: throughput of the core, compile and start-up costs, memory.

Figures are per core: the kernels run serially (``step_worlds``) in one process with numba pinned to
one thread. Each workload is timed after a warm-up call so the JIT compile is not counted; the
compile cost is measured separately in fresh subprocesses (cold cache, then warm cache).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

CORE_WORKLOAD = ("simulator physics, 20 cars per world, built-in drivers, all rules on "
                 "(tyre degradation, pit stops, stalled DNF), no sensors")


def bench_core(num_worlds: int, num_cars: int = 20, seconds: float = 3.0, track_name: str = "grand-prix",
               ticks_per_call: int = 4) -> dict:
    """Car-ticks per second of ``step_worlds`` over ``num_worlds`` worlds of ``num_cars`` cars."""
    from .sim.race import new_race
    from .sim.step import step_state
    from .sim.track import load_track

    track = load_track(track_name)
    state = new_race(track, num_worlds, num_cars, seed=1, standing_start=0, pit_stops=1,
                     tire_degradation=1, stalled_dnf=1, total_laps=50)
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


_COMPILE_SNIPPET = """
import time
t0 = time.perf_counter()
from paddock_ma.sim.race import new_race
from paddock_ma.sim.step import step_state
from paddock_ma.sim.track import load_track
t1 = time.perf_counter()
state = new_race(load_track("oval"), 1, 4, seed=1)
step_state(state, n_ticks=1)
t2 = time.perf_counter()
print(f"{t1 - t0:.3f} {t2 - t1:.3f}")
"""


def bench_start(cache_dir: str | None = None) -> dict:
    """Seconds to import and to build+step a first world, in a fresh process (cold and warm cache)."""
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache_dir or tmp, NUMBA_NUM_THREADS="1")
        out = {}
        for label in ("cold_cache", "warm_cache"):
            t0 = time.perf_counter()
            res = subprocess.run([sys.executable, "-c", _COMPILE_SNIPPET], env=env, capture_output=True,
                                 text=True, check=True)
            total = time.perf_counter() - t0
            imp, first = (float(x) for x in res.stdout.split())
            out[label] = {"process_seconds": round(total, 2), "import_seconds": round(imp, 2),
                          "first_step_seconds": round(first, 2)}
        return out


def run(worlds=(1, 64, 1024), seconds: float = 3.0, with_start: bool = True) -> dict:
    """The core benchmark suite; returns a JSON-able report."""
    os.environ.setdefault("NUMBA_NUM_THREADS", "1")
    report = {"workload": CORE_WORKLOAD, "core": [bench_core(w, seconds=seconds) for w in worlds]}
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
    if "start" in report:
        lines += ["", "| start | process (s) | import (s) | build + first step (s) |", "|---|---:|---:|---:|"]
        for label, row in report["start"].items():
            lines.append(f"| {label} | {row['process_seconds']} | {row['import_seconds']} | "
                         f"{row['first_step_seconds']} |")
    return "\n".join(lines)


def main_json(report: dict) -> str:
    return json.dumps(report, indent=2)


if __name__ == "__main__":  # pragma: no cover
    print(format_report(run()))
