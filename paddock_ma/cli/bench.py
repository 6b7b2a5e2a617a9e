"""``paddock-ma bench [BENCHMARK]``: the benchmarks of ``paddock_ma.bench``, from one table.

``BENCHMARKS`` gives each benchmark its module and its options: one flag per parameter of the module's
``run``, with its argparse type (``cli.arguments``), metavar and help. The defaults are ``run``'s own, read
from its signature (and shown in each option's help), so nothing here restates them. A timed benchmark
also takes ``--seconds S`` (``run``'s ``seconds``), ``--json`` (the report as JSON instead of Markdown)
and ``--out FILE`` (also write the JSON report to FILE), before or after its name; the servers'
benchmarks print their report as one JSON line. Without a subcommand, ``paddock-ma bench`` runs
``bench.default``: ``core`` then ``env`` at their defaults (``make bench``).
"""

from __future__ import annotations

import argparse
import inspect
import json
import sys
from dataclasses import dataclass
from types import ModuleType
from typing import Callable

from ..bench import core, default, env, fleet, policy_server, preview, protocol, sampling, threads
from ..bench.report import emit
from .arguments import count, counts, names, positive_number, seconds

DESCRIPTION = """\
Measure paddock_ma's speed; BENCHMARKS.md keeps the figures with the commands that made them.
Without a subcommand: core then env at their defaults (as `paddock-ma bench core` and
`paddock-ma bench env` in one process, one report). --seconds, --json and --out apply to
every timed benchmark and may be given before or after its name."""


@dataclass(frozen=True)
class Option:
    """A flag setting ``run``'s ``parameter``, its text converted by ``type`` (None: the text itself).
    A parameter whose default is a bool is a switch: ``--x`` sets one whose default is False, ``--no-x``
    (or another name for the opposite) clears one whose default is True."""

    flag: str
    parameter: str
    type: Callable[[str], object] | None
    metavar: str | None
    help: str


@dataclass(frozen=True)
class Benchmark:
    """A benchmark's module (its ``run`` and, when ``timed``, ``format_report``), its help and options;
    ``refuses``: what ``run`` raises, before running anything, for an input it cannot run (exit 2)."""

    module: ModuleType
    help: str
    description: str
    options: tuple[Option, ...] = ()
    timed: bool = True
    refuses: tuple[type[Exception], ...] = ()


def _worlds(help: str = "world counts") -> Option:
    return Option("--worlds", "worlds", counts, "W,W,...", help)


def _physics() -> Option:
    return Option("--physics", "physics", names(core.PHYSICS_MODES), "MODE,...",
                  "physics modes: simulator and/or arcade")


def _warmup(help: str = "untimed steps first") -> Option:
    return Option("--warmup-steps", "warmup_steps", count, "N", help)


BENCHMARKS = {
    "core": Benchmark(core, "the simulation core: car-ticks/s, track building, start-up, memory",
                      "Car-ticks/s of the core (built-in drivers, all rules, no sensors) at each world count, "
                      "procedural track builds and locate, and the compile/start-up cost in fresh processes.", (
        _worlds(),
        Option("--cars", "cars", count, "N", "cars per world"),
        Option("--track", "track", None, "NAME", "shipped track name, as paddock-ma tracks lists them"),
        Option("--ticks-per-call", "ticks_per_call", count, "N", "ticks per step_state call"),
        Option("--track-seeds", "track_seeds", count, "N", "procedural tracks built for the track-building figures"),
        Option("--no-start", "with_start", None, None, "skip the compile/start-up measurement"),
        _physics())),
    "env": Benchmark(env, "the environment contract: BatchEnv and PaddockEnv car-steps/s",
                     "BatchEnv car-steps/s on the environment workload (20 controlled cars a world, 16 rays, radar, "
                     "frame skip 4) with the split between core, sensing and Python, and PaddockEnv's dict API on "
                     "one world.", (
        _worlds("BatchEnv world counts"),
        Option("--actions", "actions", names(env.ACTIONS), "KIND,...",
               "constant (steer 0, throttle 0.6) and/or driver (the built-in driver's controls; the cars drive laps)"),
        Option("--ray-floor", "ray_floor", None, None,
               "also BatchEnv with every ray across the track (the march's cheapest rays) and with no rays"),
        _warmup("untimed BatchEnv steps first"),
        Option("--no-paddock-env", "paddock_env", None, None, "skip the PaddockEnv (dict API) rows"),
        _physics())),
    "threads": Benchmark(threads, "BatchEnv(parallel=True) on several numba thread counts",
                         "BatchEnv(parallel=True) (worlds stepped and sensed on numba threads) on the environment "
                         "workload at each thread count, in the order given.", (
        Option("--threads", "threads", counts, "N,N,...",
               "numba thread counts, e.g. 1,2; repeat to interleave runs: 1,2,1,2"),
        _worlds(),
        Option("--actions", "actions", names(env.ACTIONS), "KIND,...", "constant and/or driver, as bench env"),
        _warmup()), refuses=(ValueError,)),
    "protocol": Benchmark(protocol, "the JSON worker protocol against in-process arrays",
                          "The environment workload's cars driven by a lane-keeping trainer: in-process arrays, "
                          "in-process JSON and a paddock-ma serve worker (one world with dict messages; W worlds "
                          "batched, JSON numbers and f32-base64), and a Node.js trainer.", (
        Option("--worlds", "worlds", count, "N", "worlds of the batched paths"),
        Option("--cars", "cars", count, "N", "controlled cars per world"))),
    "sampling": Benchmark(sampling, "training-side sampling: RLlib's two paths, plain torch, the engine",
                          "Agent-steps/s on one core of RLlib's vector path, RLlib's packed multi-agent path, a "
                          "plain-torch sampler and the bare engine, one policy network, one workload.", (
        Option("--env", "env_id", None, "ENV_ID", "catalogue env id, as paddock-ma envs lists them"),
        Option("--worlds", "worlds", count, "N", "worlds"),
        Option("--rollout", "rollout", count, "N", "steps per sub-env between timing checks"),
        Option("--paths", "paths", names(sampling.PATHS), "PATH,...",
               f"a subset of {','.join(sampling.PATHS)}, run in that order"))),
    "fleet": Benchmark(fleet, "the Ray fleet against the in-process engine; JSON; collection",
                       "Car-steps/s of ShardCore in process and of ShardFleet on a private local Ray (each shard "
                       "count, each number of calls in flight, each worlds per shard), one shard call on arrays and "
                       "on JSON, and a collection with Parquet.", (
        Option("--env", "env", None, "ENV_ID", "catalogue env id, as paddock-ma envs lists them"),
        _worlds("worlds per shard"),
        Option("--shards", "shards", counts, "N,N,...", "shard counts"),
        Option("--depths", "depths", counts, "N,N,...", "calls in flight per shard"),
        Option("--collect-steps", "collect_steps", count, "N", "steps per world of the collection row"))),
    "policy-server": Benchmark(policy_server, "decide-batch latency of the policy server (p50/p99, 20 drivers)",
                               policy_server.__doc__.split("\n\n")[0], (
        Option("--drivers", "drivers", count, "N", "drivers in each request"),
        Option("--requests", "requests", count, "N", "timed requests")), timed=False),
    "preview": Benchmark(preview, "what publishing a live preview costs a run (interleaved pairs: slowdown median, "
                                  "spread)", preview.__doc__.split("\n\n")[0], (
        Option("--worlds", "worlds", count, "N", "worlds of 8 cars"),
        Option("--steps", "steps", count, "N", "steps a round"),
        Option("--fps", "fps", positive_number, "FPS", "frames the preview publishes per second"),
        Option("--pairs", "pairs", count, "N", "interleaved rounds without and with the preview"),
        Option("--thread", "process", None, None, "the server on a thread of this process (PreviewServer)")),
        timed=False),
}


def _defaults(module: ModuleType) -> dict:
    """``run``'s parameters with their defaults: the options' defaults."""
    return {name: p.default for name, p in inspect.signature(module.run).parameters.items()}


def _shown(value) -> str:
    """A default as it would be typed: ``1,64,1024``, ``3``, ``grand-prix``."""
    if isinstance(value, tuple):
        return ",".join(str(v) for v in value)
    return f"{value:g}" if isinstance(value, float) else str(value)


def _add_report_options(parser: argparse.ArgumentParser, seconds_help: str) -> None:
    """--seconds, --json and --out; SUPPRESS defaults so that a value given before the subcommand's name
    is kept (``run``'s own default applies when none was given)."""
    parser.add_argument("--seconds", type=seconds, default=argparse.SUPPRESS, metavar="S",
                        help=f"timed seconds per workload (default {seconds_help})")
    parser.add_argument("--json", action="store_true", default=argparse.SUPPRESS,
                        help="print the report as JSON instead of Markdown tables")
    parser.add_argument("--out", default=argparse.SUPPRESS, metavar="FILE",
                        help="also write the report as JSON to FILE")


def _add_benchmark(benches, name: str, bench: Benchmark) -> None:
    defaults = _defaults(bench.module)
    p = benches.add_parser(name, help=bench.help, description=bench.description)
    if bench.timed:
        _add_report_options(p, _shown(defaults["seconds"]))
    for o in bench.options:
        value = defaults[o.parameter]
        if isinstance(value, bool):
            p.add_argument(o.flag, dest=o.parameter, action="store_false" if value else "store_true", help=o.help)
        else:
            p.add_argument(o.flag, dest=o.parameter, type=o.type, default=value, metavar=o.metavar,
                           help=f"{o.help} (default {_shown(value)})")
    p.set_defaults(func=cmd_benchmark)


def add_parsers(sub) -> None:
    bench = sub.add_parser("bench", help="measure throughput, start-up and memory (bench --help: the benchmarks)",
                           description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    _add_report_options(bench, f"{_shown(_defaults(default)['seconds'])}; each benchmark states its own")
    bench.set_defaults(func=cmd_default)
    benches = bench.add_subparsers(dest="benchmark", metavar="BENCHMARK",
                                   title="benchmarks (default: core, then env)")
    for name, b in BENCHMARKS.items():
        _add_benchmark(benches, name, b)


def _run(name: str, bench: Benchmark, args) -> int:
    options = {o.parameter: getattr(args, o.parameter) for o in bench.options}
    if not bench.timed and any(report_option in args for report_option in ("seconds", "json", "out")):
        print(f"paddock-ma {name}: error: --seconds, --json and --out apply to the timed benchmarks only "
              "(this one prints its report as one JSON line)", file=sys.stderr)
        return 2
    if "seconds" in args:
        options["seconds"] = args.seconds
    try:
        report = bench.module.run(**options)
    except bench.refuses as exc:
        print(f"paddock-ma {name}: error: {exc}", file=sys.stderr)
        return 2
    if bench.timed:
        emit(report, bench.module.format_report, as_json=getattr(args, "json", False), out=getattr(args, "out", None))
    else:
        print(json.dumps(report))
    return 0


DEFAULT = Benchmark(default, "core then env at their defaults", DESCRIPTION)


def cmd_default(args) -> int:
    """``paddock-ma bench`` alone: ``bench.default``."""
    return _run("bench", DEFAULT, args)


def cmd_benchmark(args) -> int:
    """``paddock-ma bench NAME``: that benchmark's ``run`` with the options given, then its report."""
    return _run(f"bench {args.benchmark}", BENCHMARKS[args.benchmark], args)
