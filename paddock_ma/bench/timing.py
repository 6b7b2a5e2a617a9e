"""The benchmarks' one timer: call a workload for a wall-clock budget (or a number of times) and count.

Every benchmark times its workload with ``time_for`` (a budget of seconds, the figures BENCHMARKS.md
keeps) or ``time_calls`` (a fixed number of calls, for per-call latencies), after its own warm-up, so
that the JIT compile and first-call costs are never counted. ``accumulating`` wraps a callable to add
up the seconds spent inside it, to split a timed step into its parts.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable


@dataclass(frozen=True)
class Timing:
    """What a timed run did: ``calls`` of the workload, ``units`` of work (the sum of what the workload
    returned, e.g. agent-steps; ``calls`` when it returns None), over ``seconds`` of wall clock during
    which this process used ``cpu_seconds`` of CPU."""

    calls: int
    units: int
    seconds: float
    cpu_seconds: float

    @property
    def per_call_seconds(self) -> float:
        return self.seconds / self.calls


def time_for(fn: Callable[[], int | None], seconds: float, warmup: int = 0) -> Timing:
    """Call ``fn()`` ``warmup`` times untimed, then until ``seconds`` of wall clock have passed (at least
    once; the clock is read after each call, so the last call is whole)."""
    for _ in range(warmup):
        fn()
    calls, units = 0, 0
    start, cpu = time.perf_counter(), time.process_time()
    while True:
        done = fn()
        calls += 1
        if done is None:
            units += 1
        elif isinstance(done, int):
            units += done
        else:
            raise TypeError(f"time_for: the workload returned {type(done).__name__}; expected its count of work "
                            "(an int) or None")
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            return Timing(calls, units, elapsed, time.process_time() - cpu)


def time_calls(fn: Callable[[], object], calls: int) -> Timing:
    """Call ``fn()`` exactly ``calls`` times (after any warm-up of the caller's) and time them."""
    start, cpu = time.perf_counter(), time.process_time()
    for _ in range(calls):
        fn()
    return Timing(calls, calls, time.perf_counter() - start, time.process_time() - cpu)


def accumulating(fn: Callable, spent: dict, key: str) -> Callable:
    """``fn`` wrapped to add the wall-clock seconds of each call to ``spent[key]`` (``spent`` starts the
    key at 0.0 if absent): a timed step's share spent in one of its parts."""
    spent.setdefault(key, 0.0)

    def call(*args, **kwargs):
        t0 = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            spent[key] += time.perf_counter() - t0
    return call
