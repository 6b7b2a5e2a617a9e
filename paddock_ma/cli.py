"""``paddock-ma``: the command line (demo, race, bench, envs, tracks, serve, collect, verify).

* ``paddock-ma demo``   the main job on a local Ray cluster (``paddock_ma.distributed.demo``).
* ``paddock-ma warm``   compile the simulation's kernels ahead into numba's cache (``paddock_ma.warm``;
  ``make install`` runs it): a first run then loads them instead of compiling for minutes.
* ``paddock-ma race``   a short rollout: built-in drivers race on every shipped track; prints a table.
* ``paddock-ma bench``  the core benchmarks (see ``paddock_ma.bench``); ``--json`` for machine output;
  ``--threads 1,2`` also times BatchEnv(parallel=True) on that many numba threads; ``--sampling``,
  ``--protocol`` and ``--fleet`` run other benchmarks instead (``bench_sampling``, ``bench_protocol``,
  ``distributed.bench_fleet``).
* ``paddock-ma envs``   the environment catalogue (versioned env ids).
* ``paddock-ma tracks`` the shipped tracks with their lap lengths.
* ``paddock-ma collect`` a Parquet dataset over Ray shards; ``paddock-ma verify DIR`` checks one.
* ``paddock-ma serve``  the JSON worker protocol as NDJSON on stdin/stdout (``paddock_ma.protocol.server``):
  ``--env ENV_ID`` or ``--config FILE``, ``--worlds W``, ``--max-line-bytes N``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time


def _cmd_demo(args) -> int:
    from .distributed.demo import main

    return main(args.rest)


def _cmd_warm(args) -> int:
    from .warm import main

    return main(["--force"] * args.force + ["--quiet"] * args.quiet)


def _cmd_race(args) -> int:
    import numpy as np
    from rich.console import Console
    from rich.table import Table

    from .sim.core import layout as L
    from .sim.race.start import new_race, scatter_cars
    from .sim.step import step_state
    from .sim.track.load import list_tracks, load_track

    console = Console(width=max(120, Console().width))
    table = Table(title=f"paddock_ma demo: {args.worlds} worlds x {args.cars} built-in cars, "
                        f"{args.seconds:.0f} simulated s per track")
    for col in ("track", "lap (m)", "car-ticks/s", "laps done", "best lap (s)", "contacts", "destroyed",
                "checksum"):
        table.add_column(col, justify="right")
    ticks = int(args.seconds * 60)
    for name in list_tracks():
        track = load_track(name)
        state = new_race(track, args.worlds, args.cars, seed=args.seed, standing_start=0, total_laps=50)
        scatter_cars(track, state)      # each world's own draws: the worlds do not drive in lockstep
        step_state(state, n_ticks=1)  # compile outside the timing
        contacts = 0
        t0 = time.perf_counter()
        for _ in range(ticks // 4):
            step_state(state, n_ticks=4)
            contacts += int(state.cars_i[:, :, L.I_CNT_CONTACTS].sum())
        dt = time.perf_counter() - t0
        best = state.cars_f[:, :, L.F_BEST_LAP_TIME]
        best = best[best > 0]
        table.add_row(name, f"{track.length:.0f}", f"{ticks * args.worlds * args.cars / dt:,.0f}",
                      str(int(state.cars_i[:, :, L.I_COMPLETED_LAPS].sum())),
                      f"{best.min():.2f}" if best.size else "-", str(contacts // 2),
                      str(int(state.cars_i[:, :, L.I_DESTROYED].sum())), f"{state.checksum():016x}")
    console.print(table)
    return 0


def _cmd_bench(args) -> int:
    from . import bench

    if args.protocol:
        from . import bench_protocol

        report = bench_protocol.run(seconds=args.seconds, worlds=int(args.env_worlds.split(",")[0]))
        print(bench.main_json(report) if args.json else bench_protocol.format_report(report))
        return 0
    if args.sampling:
        from . import bench_sampling

        report = bench_sampling.run(worlds=int(args.env_worlds.split(",")[0]), seconds=args.seconds)
        print(bench.main_json(report) if args.json else bench_sampling.format_report(report))
        return 0
    if args.fleet:
        from .distributed import bench_fleet

        rows = bench_fleet.run(worlds=tuple(int(w) for w in args.env_worlds.split(",")), seconds=args.seconds)
        print(bench.main_json(rows) if args.json else bench_fleet.format_report(rows))
        return 0
    worlds = tuple(int(w) for w in args.worlds.split(","))
    env_worlds = tuple(int(w) for w in args.env_worlds.split(","))
    threads = _thread_counts(args)
    if threads:
        import numba

        if max(threads) > numba.config.NUMBA_NUM_THREADS:
            print(f"--threads {args.threads}: numba allows {numba.config.NUMBA_NUM_THREADS} thread(s) in this "
                  f"process (NUMBA_NUM_THREADS={os.environ.get('NUMBA_NUM_THREADS')}); unset it or set it to at "
                  f"least {max(threads)}", file=sys.stderr)
            return 2
    report = bench.run(worlds=worlds, env_worlds=env_worlds, seconds=args.seconds, with_start=not args.no_start,
                       ray_floor=args.ray_floor, threads=threads)
    print(bench.main_json(report) if args.json else bench.format_report(report))
    return 0


def _thread_counts(args) -> tuple[int, ...]:
    """``bench --threads 1,2`` as (1, 2); () for other commands or without the option."""
    text = getattr(args, "threads", None)
    if not text:
        return ()
    try:
        counts = tuple(int(t) for t in text.split(","))
    except ValueError:
        counts = (0,)
    if min(counts) < 1:
        raise SystemExit(f"--threads: got {text!r}; expected comma-separated counts >= 1")
    return counts


def _cmd_tracks(args) -> int:
    from .sim.track.load import list_tracks, load_track

    for name in list_tracks():
        track = load_track(name)
        print(f"{name:12s} {track.length:8.1f} m")
    return 0


def _cmd_envs(args) -> int:
    from .catalog import list_envs

    for env in list_envs():
        print(f"{env['id']:28s} {env['description']}")
    return 0


def _cmd_serve(args) -> int:
    from .protocol import server

    return server.run(args)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="paddock-ma", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)

    demo = sub.add_parser("demo", add_help=False,
                          help="the main job on a local Ray cluster: a collection of about a minute, its throughput, "
                               "the dataset's summary, verify's verdict, a PNG of trajectories (demo --help)")
    demo.add_argument("rest", nargs=argparse.REMAINDER)
    demo.set_defaults(func=_cmd_demo)

    warm = sub.add_parser("warm", help="compile the simulation's kernels into numba's cache ahead of a first run "
                                       "(make install runs it)")
    warm.add_argument("--force", action="store_true", help="run every exercise even if the cache is marked warm")
    warm.add_argument("--quiet", action="store_true", help="print nothing when done")
    warm.set_defaults(func=_cmd_warm)

    race = sub.add_parser("race", help="race built-in drivers on every shipped track with the numba core")
    race.add_argument("--worlds", type=int, default=8)
    race.add_argument("--cars", type=int, default=20)
    race.add_argument("--seconds", type=float, default=90.0, help="simulated seconds per track")
    race.add_argument("--seed", type=int, default=0)
    race.set_defaults(func=_cmd_race)

    bench = sub.add_parser("bench", help="measure the core's throughput, start-up and memory")
    bench.add_argument("--worlds", default="1,64,1024", help="comma-separated world counts")
    bench.add_argument("--env-worlds", default="64", help="comma-separated world counts for BatchEnv")
    bench.add_argument("--seconds", type=float, default=3.0, help="timed seconds per workload")
    bench.add_argument("--no-start", action="store_true", help="skip the compile/start-up measurement")
    bench.add_argument("--ray-floor", action="store_true",
                       help="also BatchEnv with every ray across the track (the march's cheapest rays) and with no rays")
    bench.add_argument("--protocol", action="store_true",
                       help="only the worker protocol: in process against JSON and a paddock-ma serve worker")
    bench.add_argument("--fleet", action="store_true",
                       help="only the Ray fleet (paddock/gp-batch-v0): 1 and 2 shards of --env-worlds worlds "
                            "against the in-process engine, JSON against arrays, collection with Parquet")
    bench.add_argument("--sampling", action="store_true",
                       help="only training-side sampling (paddock/gp-batch-v0, the first --env-worlds, e.g. 32): "
                            "RLlib's vector path, RLlib's packed multi-agent path, a plain-torch sampler and the "
                            "bare engine, agent-steps/s on one core")
    bench.add_argument("--threads", default="",
                       help="comma-separated numba thread counts (e.g. 1,2; repeat to interleave: 1,2,1,2): also "
                            "time BatchEnv(parallel=True) at --env-worlds on that many threads each")
    bench.add_argument("--json", action="store_true")
    bench.set_defaults(func=_cmd_bench)

    envs = sub.add_parser("envs", help="list the environment catalogue (versioned env ids)")
    envs.set_defaults(func=_cmd_envs)

    tracks = sub.add_parser("tracks", help="list the shipped tracks")
    tracks.set_defaults(func=_cmd_tracks)

    from .protocol.server import add_arguments
    serve = sub.add_parser("serve", help="serve the JSON worker protocol as NDJSON on stdin/stdout",
                           description="Answer one JSON request per stdin line with one reply line on stdout "
                                       "(DESIGN section 6); stdout carries replies only, logs go to stderr.")
    add_arguments(serve)
    serve.set_defaults(func=_cmd_serve)

    from .distributed.cli_collect import add_parsers as add_collect_parsers
    add_collect_parsers(sub)      # collect, verify
    return parser


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["demo"]:         # its options are the demo module's own (paddock-ma demo --help)
        os.environ.setdefault("NUMBA_NUM_THREADS", "1")
        return _cmd_demo(argparse.Namespace(rest=argv[1:]))
    args = build_parser().parse_args(argv)
    # one numba thread (set before numba is imported), unless the command asks for more (bench --threads)
    os.environ.setdefault("NUMBA_NUM_THREADS", str(max(_thread_counts(args) or (1,))))
    return args.func(args)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
