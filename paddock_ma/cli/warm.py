"""``paddock-ma warm``: compile the simulation's kernels into numba's cache ahead of a first run
(``paddock_ma.warm``; ``make install`` runs it)."""

from __future__ import annotations

import argparse
import sys

from ..warm import PARTS


def add_parsers(sub) -> None:
    warm = sub.add_parser("warm", help="compile the simulation's kernels into numba's cache ahead of a first run "
                                       "(make install runs it)")
    warm.add_argument("--force", action="store_true", help="run every exercise even if the cache is marked warm")
    warm.add_argument("--quiet", action="store_true", help="print nothing when done")
    warm.add_argument("--part", choices=sorted(PARTS), help=argparse.SUPPRESS)     # warm()'s child processes
    warm.set_defaults(func=cmd_warm)


def cmd_warm(args) -> int:
    # numba's thread count is one here (cli.main sets it before numba starts): the demo's shard core pins
    # numba to one thread, which numba refuses once its threads run with another count
    from ..warm import cache_dir, is_warm, run_part, warm

    if args.part:
        return run_part(args.part)
    if not args.force and is_warm():
        if not args.quiet:
            print(f"paddock_ma: simulation kernels already compiled in {cache_dir()}", file=sys.stderr)
        return 0
    out = warm()
    if not args.quiet:
        print(f"paddock_ma: simulation kernels ready in {out['cache_dir']} ({out['compiled']} functions compiled, "
              f"{out['seconds']} s)", file=sys.stderr)
    return 0
