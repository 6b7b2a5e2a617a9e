"""``paddock-ma``: the command line. One argparse tree; one module per command group, argument parsing
only; each command calls a library function with plain arguments. ``cli.arguments`` holds the one
argparse type of each kind of value (seconds, whole numbers, counts, names, addresses).

* ``paddock-ma demo``     the main job on a local Ray cluster (``cli.demo``; ``paddock_ma.distributed.demo``).
* ``paddock-ma warm``     compile the simulation's kernels ahead into numba's cache (``cli.warm``; ``paddock_ma.warm``).
* ``paddock-ma race``     built-in drivers race on every shipped track; a table (``cli.race``; ``rollout.race``).
* ``paddock-ma bench``    the benchmarks: ``bench core|env|threads|protocol|sampling|fleet|policy-server|preview``;
  with no subcommand, ``core`` then ``env`` (``cli.bench``; ``paddock_ma.bench``).
* ``paddock-ma envs``     the environment catalogue; ``paddock-ma tracks`` the shipped tracks (``cli.listing``).
* ``paddock-ma serve``    the JSON worker protocol as NDJSON on stdin/stdout (``cli.serve``; ``protocol.server``).
* ``paddock-ma collect``  a Parquet dataset over Ray shards; ``paddock-ma verify DIR`` checks one (``cli.collect``).
* ``paddock-ma export-paddockjs | policy-server | view | record | replay``  the bridge to PaddockJS and the
  viewer (``cli.bridge``).
"""

from __future__ import annotations

import argparse
import os
import sys

from . import bench, bridge, collect, demo, listing, race, serve, warm

# Registration order is the order ``paddock-ma --help`` lists the commands in.
COMMAND_GROUPS = (demo, warm, race, bench, listing, serve, collect, bridge)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="paddock-ma", description="paddock_ma's command line: the demo, races, benchmarks, the catalogue, "
                                       "the worker protocol and dataset collection.",
        epilog="paddock-ma COMMAND --help describes each command.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for group in COMMAND_GROUPS:
        group.add_parsers(sub)
    return parser


def main(argv=None) -> int:
    args = build_parser().parse_args(sys.argv[1:] if argv is None else list(argv))
    # numba's thread count is fixed when numba is imported: one thread, unless the command times several
    # (``bench threads --threads``). Parsing imports no numba (the command modules load the simulation
    # inside their functions), so this line still comes before numba starts.
    os.environ.setdefault("NUMBA_NUM_THREADS", str(max(getattr(args, "threads", None) or (1,))))
    return args.func(args)
