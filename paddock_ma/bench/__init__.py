"""Benchmarks behind ``paddock-ma bench``: one module per benchmark, one timer, one report format.

* ``core``           the simulation core: car-ticks/s at several world counts, start-up, memory (``tracks``:
  track building and ``locate``).
* ``env``            the environment contract: BatchEnv and PaddockEnv car-steps/s (the environment workload).
* ``threads``        BatchEnv(parallel=True) at several numba thread counts.
* ``protocol``       the JSON worker protocol: in process, through a ``paddock-ma serve`` worker, from Node.js.
* ``sampling``       training-side sampling: RLlib's two paths, a plain-torch sampler and the bare engine.
* ``fleet``          the Ray fleet against the in-process engine, JSON against arrays, collection.
* ``policy_server``  decide-batch latency of ``paddock-ma policy-server``; ``preview``: what publishing a
  live preview costs a run.
* ``default``        ``paddock-ma bench`` without a subcommand: ``core`` then ``env``, one report.

Each has ``run(...) -> report`` (a JSON-able dict), whose parameters and defaults are its command's
options (``cli/bench.py`` reads them from the signature), and, when timed, ``format_report(report) -> str``
(Markdown); ``timing`` is the one timer they share and ``report`` renders and emits every report. Figures
and the commands that made them are kept in BENCHMARKS.md.

Importing a benchmark's module imports nothing heavy (no numba): the command line reads the signatures
before it sets numba's thread count, and a benchmark loads the simulation inside its functions.
"""
