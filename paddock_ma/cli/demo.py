"""``paddock-ma demo``: the main job on a local Ray cluster (``paddock_ma.distributed.demo``, which owns
its options: ``paddock-ma demo --help``)."""

from __future__ import annotations

import argparse


def add_parsers(sub) -> None:
    demo = sub.add_parser("demo", add_help=False,
                          help="the main job on a local Ray cluster: a collection of about a minute, its throughput, "
                               "the dataset's summary, verify's verdict, a PNG of trajectories (demo --help)")
    demo.add_argument("rest", nargs=argparse.REMAINDER)
    demo.set_defaults(func=lambda args: run_demo(args.rest))


def run_demo(argv: list[str]) -> int:
    from ..distributed.demo import main

    return main(argv)
