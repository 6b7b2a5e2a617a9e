"""Benchmarks behind ``paddock-ma bench``: one module per benchmark, one timer, one report format.

* ``core``      the simulation core: car-ticks/s at several world counts, track building, start-up, memory.
* ``env``       the environment contract: BatchEnv and PaddockEnv car-steps/s (the environment workload).
* ``threads``   BatchEnv(parallel=True) at several numba thread counts.
* ``protocol``  the JSON worker protocol: in process, through a ``paddock-ma serve`` worker, from Node.js.
* ``sampling``  training-side sampling: RLlib's two paths, a plain-torch sampler and the bare engine.
* ``fleet``     the Ray fleet against the in-process engine, JSON against arrays, collection.

Each has ``run(...) -> report`` (a JSON-able dict) and ``format_report(report) -> str`` (Markdown);
``timing`` is the one timer they share and ``report`` renders and emits every report. ``run_default``
is ``paddock-ma bench`` without a subcommand: ``core`` then ``env`` at their defaults, one report.
Figures and the commands that made them are kept in BENCHMARKS.md.

Importing this package imports nothing heavy (no numba): the command line sets numba's thread count
before a benchmark module is loaded.
"""

from __future__ import annotations

BENCHMARKS = ("core", "env", "threads", "protocol", "sampling", "fleet")
DEFAULT = ("core", "env")


def run_default(seconds: float = 3.0) -> dict:
    """``core`` then ``env`` with their default workloads, ``seconds`` per timed workload; one report
    with both reports' keys."""
    from . import core, env

    return {**core.run(seconds=seconds), **env.run(seconds=seconds)}


def format_default(report: dict) -> str:
    """``run_default``'s report: the core's tables, then the environment's."""
    from . import core, env

    return core.format_report(report) + "\n\n" + env.format_report(report)
