"""``paddock-ma``'s entry point (the console script, ``python -m paddock_ma.cli``): the one argparse tree
of every command group's parsers, and ``main``, which parses, sets numba's thread count and runs the
command."""

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
