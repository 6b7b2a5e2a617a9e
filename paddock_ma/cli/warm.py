"""``paddock-ma warm``: compile the simulation's kernels into numba's cache ahead of a first run
(``paddock_ma.warm``; ``make install`` runs it)."""

from __future__ import annotations


def add_parsers(sub) -> None:
    warm = sub.add_parser("warm", help="compile the simulation's kernels into numba's cache ahead of a first run "
                                       "(make install runs it)")
    warm.add_argument("--force", action="store_true", help="run every exercise even if the cache is marked warm")
    warm.add_argument("--quiet", action="store_true", help="print nothing when done")
    warm.set_defaults(func=cmd_warm)


def cmd_warm(args) -> int:
    from ..warm import main

    return main(["--force"] * args.force + ["--quiet"] * args.quiet)
