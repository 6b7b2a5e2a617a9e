"""``paddock-ma demo``: the main job on a local Ray cluster (``paddock_ma.distributed.demo.run_demo``)."""

from __future__ import annotations

from .arguments import count, integer


def add_parsers(sub) -> None:
    demo = sub.add_parser("demo", help="the main job on a local Ray cluster: a collection of about a minute, its "
                                       "throughput, the dataset's summary, verify's verdict, a PNG of trajectories",
                          description="The distributed demo: a collection on a local Ray cluster, its throughput, a "
                                      "dataset summary, verify's verdict, and a PNG of collected trajectories replayed "
                                      "from the dataset and drawn on the track.")
    demo.add_argument("--env", default="paddock/oval-batch-v0", help="catalogue env id (default paddock/oval-batch-v0)")
    demo.add_argument("--shards", type=count, default=2, help="EnvShard actors (default 2)")
    demo.add_argument("--worlds-per-shard", type=count, default=16, help="worlds each shard steps (default 16)")
    demo.add_argument("--steps", type=count, default=4000, help="steps per world (4000: about a minute on 2 cores)")
    demo.add_argument("--seed", type=integer, default=1, help="the collection's seed (default 1)")
    demo.add_argument("--out", default=None, help="dataset directory (default: a new temporary one)")
    demo.add_argument("--png", default="trajectories.png", help="the trajectories' picture (default trajectories.png)")
    demo.add_argument("--replay-worlds", type=count, default=2, help="worlds replayed and drawn (default 2)")
    demo.set_defaults(func=cmd_demo)


def cmd_demo(args) -> int:
    from ..distributed.demo import run_demo

    return run_demo(env=args.env, shards=args.shards, worlds_per_shard=args.worlds_per_shard, steps=args.steps,
                    seed=args.seed, out=args.out, png=args.png, replay_worlds=args.replay_worlds)
