"""``paddock-ma bench`` without a subcommand (``make bench``): ``core`` then ``env`` at their default
workloads, in one process, one report with both reports' keys."""

from __future__ import annotations


def run(seconds: float = 3.0) -> dict:
    """``core`` then ``env`` with their default workloads, ``seconds`` per timed workload."""
    from . import core, env

    return {**core.run(seconds=seconds), **env.run(seconds=seconds)}


def format_report(report: dict) -> str:
    """The core's tables, then the environment's."""
    from . import core, env

    return core.format_report(report) + "\n\n" + env.format_report(report)
