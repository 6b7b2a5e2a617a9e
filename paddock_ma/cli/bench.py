"""``paddock-ma bench [core|env|threads|protocol|sampling|fleet|policy-server|preview]``: the benchmarks of ``paddock_ma.bench``.

Every subcommand takes ``--seconds S`` (timed seconds per workload), ``--json`` (the report as JSON
instead of Markdown) and ``--out FILE`` (also write the JSON report to FILE), before or after its name;
its other options are its benchmark's ``run`` arguments. Without a subcommand, ``paddock-ma bench`` runs
the default: ``core`` then ``env`` at their defaults (``make bench``).
"""

from __future__ import annotations

import argparse
import sys

from ..bench.physics_modes import PHYSICS_MODES
from ..bench.threads import DEFAULT_THREADS, thread_counts

DESCRIPTION = """\
Measure paddock_ma's speed; BENCHMARKS.md keeps the figures with the commands that made them.
Without a subcommand: core then env at their defaults (as `paddock-ma bench core` and
`paddock-ma bench env` in one process, one report). --seconds, --json and --out apply to
every subcommand and may be given before or after its name."""


def _counts(text: str) -> tuple[int, ...]:
    """``"1,64,1024"`` -> (1, 64, 1024): comma-separated whole numbers >= 1."""
    try:
        values = tuple(int(t) for t in text.split(","))
    except ValueError:
        values = ()
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError(f"got {text!r}; expected comma-separated whole numbers >= 1, e.g. 16,64")
    return values


def _count(text: str) -> int:
    values = _counts(text)
    if len(values) != 1:
        raise argparse.ArgumentTypeError(f"got {text!r}; expected one whole number >= 1")
    return values[0]


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value > 0:
        raise argparse.ArgumentTypeError(f"got {text!r}; expected a number of seconds > 0, e.g. 0.5")
    return value


def _threads(text: str) -> tuple[int, ...]:
    try:
        return thread_counts(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _names(choices: tuple[str, ...]):
    """A type for comma-separated names from ``choices``, e.g. ``constant,driver``."""
    def parse(text: str) -> tuple[str, ...]:
        names = tuple(text.split(","))
        bad = [n for n in names if n not in choices]
        if bad or not text:
            raise argparse.ArgumentTypeError(f"got {text!r}; expected comma-separated names from {','.join(choices)}")
        return names
    return parse


def _add_report_options(parser: argparse.ArgumentParser, seconds: str) -> None:
    """--seconds, --json and --out; SUPPRESS defaults so that a value given before the subcommand's name
    is kept (each command reads its own default when none was given)."""
    parser.add_argument("--seconds", type=_seconds, default=argparse.SUPPRESS, metavar="S",
                        help=f"timed seconds per workload (default {seconds})")
    parser.add_argument("--json", action="store_true", default=argparse.SUPPRESS,
                        help="print the report as JSON instead of Markdown tables")
    parser.add_argument("--out", default=argparse.SUPPRESS, metavar="FILE",
                        help="also write the report as JSON to FILE")


def _subparser(sub, name: str, help: str, description: str, seconds: float, func):
    p = sub.add_parser(name, help=help, description=description)
    _add_report_options(p, f"{seconds:g}")
    p.set_defaults(func=func, default_seconds=seconds)
    return p


def add_parsers(sub) -> None:
    bench = sub.add_parser("bench", help="measure throughput, start-up and memory (bench --help: the benchmarks)",
                           description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    _add_report_options(bench, "3; each subcommand states its own")
    bench.set_defaults(func=cmd_default, default_seconds=3.0)
    benches = bench.add_subparsers(dest="bench", metavar="BENCHMARK", title="benchmarks (default: core, then env)")

    core = _subparser(benches, "core", "the simulation core: car-ticks/s, track building, start-up, memory",
                      "Car-ticks/s of the core (built-in drivers, all rules, no sensors) at each world count, "
                      "procedural track builds and locate, and the compile/start-up cost in fresh processes.",
                      3.0, cmd_core)
    core.add_argument("--worlds", type=_counts, default=(1, 64, 1024), metavar="W,W,...",
                      help="world counts (default 1,64,1024)")
    core.add_argument("--cars", type=_count, metavar="N", default=20, help="cars per world (default 20)")
    core.add_argument("--track", metavar="NAME", default="grand-prix",
                      help="shipped track name (default grand-prix; paddock-ma tracks)")
    core.add_argument("--ticks-per-call", type=_count, metavar="N", default=4,
                      help="ticks per step_state call (default 4)")
    core.add_argument("--track-seeds", type=_count, metavar="N", default=10,
                      help="procedural tracks built for the track-building figures (default 10)")
    core.add_argument("--no-start", action="store_true", help="skip the compile/start-up measurement")
    core.add_argument("--physics", type=_names(PHYSICS_MODES), default=PHYSICS_MODES[:1], metavar="MODE,...",
                      help="physics modes: simulator and/or arcade (default simulator)")

    from ..bench.env import ACTIONS
    env = _subparser(benches, "env", "the environment contract: BatchEnv and PaddockEnv car-steps/s",
                     "BatchEnv car-steps/s on the environment workload (20 controlled cars a world, 16 rays, radar, "
                     "frame skip 4) with the split between core, sensing and Python, and PaddockEnv's dict API on "
                     "one world.", 3.0, cmd_env)
    env.add_argument("--worlds", type=_counts, default=(64,), metavar="W,W,...",
                     help="BatchEnv world counts (default 64)")
    env.add_argument("--actions", type=_names(ACTIONS), default=ACTIONS, metavar="KIND,...",
                     help="constant (steer 0, throttle 0.6) and/or driver (the built-in driver's controls; the cars "
                          "drive laps) (default constant,driver)")
    env.add_argument("--ray-floor", action="store_true",
                     help="also BatchEnv with every ray across the track (the march's cheapest rays) and with no rays")
    env.add_argument("--warmup-steps", type=_count, metavar="N", default=300,
                     help="untimed BatchEnv steps first (default 300)")
    env.add_argument("--no-paddock-env", action="store_true", help="skip the PaddockEnv (dict API) rows")
    env.add_argument("--physics", type=_names(PHYSICS_MODES), default=PHYSICS_MODES[:1], metavar="MODE,...",
                     help="physics modes: simulator and/or arcade (default simulator)")

    threads = _subparser(benches, "threads", "BatchEnv(parallel=True) on several numba thread counts",
                         "BatchEnv(parallel=True) (worlds stepped and sensed on numba threads) on the environment "
                         "workload at each thread count, in the order given.", 3.0, cmd_threads)
    threads.add_argument("--threads", type=_threads, default=DEFAULT_THREADS, metavar="N,N,...",
                         help="numba thread counts, e.g. 1,2; repeat to interleave runs: 1,2,1,2 (default 1,2)")
    threads.add_argument("--worlds", type=_counts, default=(64,), metavar="W,W,...", help="world counts (default 64)")
    threads.add_argument("--actions", type=_names(ACTIONS), default=ACTIONS, metavar="KIND,...",
                         help="constant and/or driver, as bench env (default constant,driver)")
    threads.add_argument("--warmup-steps", type=_count, metavar="N", default=300,
                         help="untimed steps first (default 300)")

    protocol = _subparser(benches, "protocol", "the JSON worker protocol against in-process arrays",
                          "The environment workload's cars driven by a lane-keeping trainer: in-process arrays, "
                          "in-process JSON and a paddock-ma serve worker (one world with dict messages; W worlds "
                          "batched, JSON numbers and f32-base64), and a Node.js trainer.", 3.0, cmd_protocol)
    protocol.add_argument("--worlds", type=_count, metavar="N", default=64,
                          help="worlds of the batched paths (default 64)")
    protocol.add_argument("--cars", type=_count, metavar="N", default=20, help="controlled cars per world (default 20)")

    from ..bench.sampling import PATHS, WORKLOAD
    sampling = _subparser(benches, "sampling", "training-side sampling: RLlib's two paths, plain torch, the engine",
                          "Agent-steps/s on one core of RLlib's vector path, RLlib's packed multi-agent path, a "
                          "plain-torch sampler and the bare engine, one policy network, one workload.",
                          5.0, cmd_sampling)
    sampling.add_argument("--env", metavar="ENV_ID", default=WORKLOAD,
                          help=f"catalogue env id (default {WORKLOAD}; paddock-ma envs)")
    sampling.add_argument("--worlds", type=_count, metavar="N", default=32, help="worlds (default 32)")
    sampling.add_argument("--rollout", type=_count, metavar="N", default=64,
                          help="steps per sub-env between timing checks (default 64)")
    sampling.add_argument("--paths", type=_names(PATHS), default=PATHS, metavar="PATH,...",
                          help=f"a subset of {','.join(PATHS)}, run in that order (default all)")

    fleet = _subparser(benches, "fleet", "the Ray fleet against the in-process engine; JSON; collection",
                       "Car-steps/s of ShardCore in process and of ShardFleet on a private local Ray (each shard "
                       "count, each number of calls in flight, each worlds per shard), one shard call on arrays and "
                       "on JSON, and a collection with Parquet.", 5.0, cmd_fleet)
    fleet.add_argument("--env", metavar="ENV_ID", default="paddock/gp-batch-v0",
                       help="catalogue env id (default paddock/gp-batch-v0; paddock-ma envs)")
    fleet.add_argument("--worlds", type=_counts, default=(16, 64, 256), metavar="W,W,...",
                       help="worlds per shard (default 16,64,256)")
    fleet.add_argument("--shards", type=_counts, default=(1, 2), metavar="N,N,...", help="shard counts (default 1,2)")
    fleet.add_argument("--depths", type=_counts, default=(1, 2), metavar="N,N,...",
                       help="calls in flight per shard (default 1,2)")
    fleet.add_argument("--collect-steps", type=_count, metavar="N", default=128,
                       help="steps per world of the collection row (default 128)")

    coll = _subparser(benches, "collect", "collection: rows/s and CPU a row, the driver or the shards writing",
                      "Rows/s of the fleet without writing, of a collection whose driver writes every row and of one "
                      "whose shards write their own files, interleaved, with the driver's and the shards' CPU a row "
                      "(shards on this machine) and bytes a row; --upload-uri: one file put by each S3 client.",
                      0.0, cmd_collect_bench)
    coll.add_argument("--env", metavar="ENV_ID", default="paddock/gp-batch-v0")
    coll.add_argument("--worlds", type=_count, metavar="W", default=256, help="worlds per shard (default 256)")
    coll.add_argument("--steps", type=_count, metavar="N", default=512, help="steps per world (default 512)")
    coll.add_argument("--shards", type=_counts, default=(1, 2), metavar="N,N,...", help="shard counts (default 1,2)")
    coll.add_argument("--writes", default="fleet,driver,shards", metavar="HOW,...",
                      help="fleet (no writing), driver, shards (default all three, interleaved)")
    coll.add_argument("--repeats", type=_count, metavar="N", default=2, help="rounds, order reversed each (default 2)")
    coll.add_argument("--file-worlds", type=_count, metavar="N", default=64)
    coll.add_argument("--fragment-steps", type=_count, metavar="N", default=64)
    coll.add_argument("--out-uri", default=None, help="collect under this object store prefix (default a temporary "
                      "local directory)")
    coll.add_argument("--upload-uri", default=None, help="also time one file's upload there by pyarrow, fsspec, boto3")
    coll.add_argument("--address", default="local", help="local (a private Ray) or HOST:PORT (e.g. cluster/local_cluster.py)")

    # the servers' benchmarks own their options (their own report: latency percentiles, slowdown)
    for name, (_, help_text) in SERVER_BENCHES.items():
        server = benches.add_parser(name, add_help=False, help=f"{help_text} (bench {name} --help)")
        server.add_argument("rest", nargs=argparse.REMAINDER)
        server.set_defaults(func=lambda args, name=name: run_server_bench(name, args.rest))


# subcommand -> (module of paddock_ma.bench, help)
SERVER_BENCHES = {
    "policy-server": ("policy_server", "decide-batch latency of the policy server (p50/p99, 20 drivers)"),
    "preview": ("preview", "what publishing a live preview costs a run (interleaved pairs: slowdown median, spread)"),
}


def run_server_bench(name: str, argv: list[str]) -> int:
    """``paddock-ma bench policy-server|preview ARGS``: that benchmark's own ``main``."""
    import importlib

    return importlib.import_module(f"paddock_ma.bench.{SERVER_BENCHES[name][0]}").main(argv) or 0


def _emit(args, report: dict, format_report) -> int:
    from ..bench.report import emit

    emit(report, format_report, as_json=getattr(args, "json", False), out=getattr(args, "out", None))
    return 0


def _seconds_of(args) -> float:
    return getattr(args, "seconds", args.default_seconds)


def cmd_default(args) -> int:
    from ..bench import format_default, run_default

    return _emit(args, run_default(seconds=_seconds_of(args)), format_default)


def cmd_core(args) -> int:
    from ..bench import core

    report = core.run(worlds=args.worlds, seconds=_seconds_of(args), cars=args.cars, track=args.track,
                      ticks_per_call=args.ticks_per_call, track_seeds=args.track_seeds, with_start=not args.no_start,
                      physics=args.physics)
    return _emit(args, report, core.format_report)


def cmd_env(args) -> int:
    from ..bench import env

    report = env.run(worlds=args.worlds, seconds=_seconds_of(args), actions=args.actions, ray_floor=args.ray_floor,
                     warmup_steps=args.warmup_steps, paddock_env=not args.no_paddock_env, physics=args.physics)
    return _emit(args, report, env.format_report)


def cmd_threads(args) -> int:
    from ..bench import threads

    try:
        report = threads.run(worlds=args.worlds, threads=args.threads, seconds=_seconds_of(args), actions=args.actions,
                             warmup_steps=args.warmup_steps)
    except ValueError as exc:
        print(f"paddock-ma bench threads: error: {exc}", file=sys.stderr)
        return 2
    return _emit(args, report, threads.format_report)


def cmd_protocol(args) -> int:
    from ..bench import protocol

    report = protocol.run(seconds=_seconds_of(args), worlds=args.worlds, cars=args.cars)
    return _emit(args, report, protocol.format_report)


def cmd_sampling(args) -> int:
    from ..bench import sampling

    report = sampling.run(env_id=args.env, worlds=args.worlds, seconds=_seconds_of(args), rollout=args.rollout,
                          paths=args.paths)
    return _emit(args, report, sampling.format_report)


def cmd_collect_bench(args) -> int:
    from ..bench import collection

    report = collection.run(env=args.env, worlds=args.worlds, steps=args.steps, shards=args.shards,
                            writes=tuple(args.writes.split(",")), repeats=args.repeats, file_worlds=args.file_worlds,
                            fragment_steps=args.fragment_steps, out_uri=args.out_uri, upload_uri=args.upload_uri,
                            address=args.address)
    return _emit(args, report, collection.format_report)


def cmd_fleet(args) -> int:
    from ..bench import fleet

    report = fleet.run(env=args.env, worlds=args.worlds, seconds=_seconds_of(args), collect_steps=args.collect_steps,
                       shards=args.shards, depths=args.depths)
    return _emit(args, report, fleet.format_report)
