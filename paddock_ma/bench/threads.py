"""``paddock-ma bench threads``: BatchEnv(parallel=True) (worlds stepped and sensed on numba threads)
at each of several thread counts, on the environment benchmark's workload (``bench.env``).

numba fixes its largest thread count (``NUMBA_NUM_THREADS``) when it is first imported, so a process
that times n threads must set it to at least n before that: ``paddock-ma bench threads`` does it from
its ``--threads``, and this module imports numba only inside ``run``.
"""

from __future__ import annotations

import os

from .report import table

DEFAULT_THREADS = (1, 2)


def run(worlds=(64,), threads=DEFAULT_THREADS, seconds: float = 3.0, actions=("constant", "driver"),
        warmup_steps: int = 300) -> dict:
    """BatchEnv(parallel=True) at each world count of ``worlds``, for each kind of ``actions``, at each
    thread count of ``threads`` in that order; returns the report (``threads``: one row per run, as
    ``bench.env.bench_batch_env`` with its thread count). Raises ValueError, before running anything,
    when this process's numba allows fewer threads than the largest count."""
    import numba

    from .env import ENV_WORKLOAD, bench_batch_env

    if max(threads) > numba.config.NUMBA_NUM_THREADS:
        raise ValueError(f"threads: got {max(threads)}, but numba allows {numba.config.NUMBA_NUM_THREADS} thread(s) "
                         f"in this process (NUMBA_NUM_THREADS={os.environ.get('NUMBA_NUM_THREADS')}); set "
                         f"NUMBA_NUM_THREADS to at least {max(threads)} before numba is imported")
    return {"env_workload": ENV_WORKLOAD,
            "threads": [bench_batch_env(w, seconds=seconds, actions_from=a, warmup_steps=warmup_steps, threads=t)
                        for w in worlds for a in actions for t in threads]}


def format_report(report: dict) -> str:
    """The rows as a Markdown table, each speed also as a multiple of its first row of the same actions
    and worlds (the first thread count)."""
    base, rows = {}, []
    for row in report["threads"]:
        ref = base.setdefault((row["actions"], row["worlds"]), row["car_steps_per_s"])
        rows.append((row["actions"], row["worlds"], row["threads"], f"{row['car_steps_per_s']:,}",
                     f"{row['car_steps_per_s'] / ref:.2f}", row["ms_per_step"], row["core_ms"], row["sensors_obs_ms"],
                     row["python_ms"]))
    return "\n".join([f"Environment workload: {report['env_workload']}.", "",
                      "BatchEnv(parallel=True): worlds stepped and sensed on numba threads.", ""] + table(
        ("actions", "worlds", "threads", "car-steps/s", "x first row", "ms/step", "core ms", "sensors+vectors ms",
         "other ms"), rows, left=1))
