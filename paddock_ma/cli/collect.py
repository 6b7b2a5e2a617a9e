"""``paddock-ma collect`` and ``paddock-ma verify``: datasets collected over Ray shards (``paddock_ma.distributed``).

* ``paddock-ma collect --env ENV_ID --shards N --worlds-per-shard W --steps S --out DIR [--address auto|local|HOST:PORT]
  [--policy builtin|random|MODULE:FN] [--seed N] [--preview HOST:PORT --preview-world G]``: Parquet fragments and a manifest (``distributed.collect``),
  a progress bar with steps/s, a summary. Exit 0 when complete, 2 on bad input (nothing done), 1 on a
  fleet failure or an OS error (named with its path), 130 on Ctrl-C, 143 on SIGTERM: the run is resumable
  with the same command, and the message says how far it got.
* ``paddock-ma verify DIR``: exit 0 when complete and untouched, 1 naming the first problem, 3 for an
  interrupted run that is consistent as far as it goes (expected vs present steps, rows and files, and
  the command that resumes it).
"""

from __future__ import annotations

import sys

from .serve import host_port


def add_parsers(sub) -> None:
    c = sub.add_parser("collect", help="collect a Parquet dataset of transitions over Ray shards",
                       description="Step N EnvShards of W worlds each on a Ray cluster and write one Parquet row "
                                   "per transition plus _manifest.json; an interrupted run resumes with the same "
                                   "command.")
    c.add_argument("--env", required=True, help="catalogue env id, e.g. paddock/oval-batch-v0 (paddock-ma envs)")
    c.add_argument("--shards", type=int, required=True, help="number of EnvShard actors (one CPU each)")
    c.add_argument("--worlds-per-shard", type=int, required=True, help="worlds each shard steps per call")
    c.add_argument("--steps", type=int, required=True, help="steps per world")
    c.add_argument("--out", required=True, help="dataset directory (local, or a path every node mounts) or object store "
                   "URI (s3://BUCKET/PREFIX, gs://..., abfs://...): new, empty, or a resumable run of this config; "
                   "credentials come from the store's usual environment variables and profiles")
    c.add_argument("--address", default="local", help="local (a private Ray), auto, or HOST:PORT of a Ray head")
    c.add_argument("--policy", default="builtin", help="builtin, random, or MODULE:FN (see distributed.policies)")
    c.add_argument("--seed", type=int, default=0)
    c.add_argument("--fragment-steps", type=int, default=64, help="steps per Parquet fragment (a multiple of "
                   "--snapshot-every)")
    c.add_argument("--snapshot-every", type=int, default=16, help="steps between shard snapshots")
    c.add_argument("--file-worlds", type=int, default=64, help="worlds per Parquet file (files are cut by world "
                   "blocks, so the dataset does not depend on --shards)")
    c.add_argument("--deadline", type=_seconds, default=30.0, help="seconds a shard call may take before the shard "
                   "is declared hung and replaced")
    c.add_argument("--capacity-wait", type=_seconds, default=600.0, help="seconds a shard that cannot be placed "
                   "or keeps failing is retried (with backoff, the other shards running) before the run stops; "
                   "it then resumes with the same command (default 600: a lost node is replaced in minutes)")
    c.add_argument("--preview", metavar="HOST:PORT", type=host_port, default=None,
                   help="also publish one world live on ws://HOST:PORT/preview and GET /preview/frame, "
                        "PaddockJS's preview stream (paddock-ma view shows it), e.g. 127.0.0.1:8787")
    c.add_argument("--preview-world", type=int, default=0, help="the world --preview publishes (global index)")
    c.add_argument("--writes", choices=("auto", "shards", "driver"), default="auto",
                   help="who writes the Parquet files: the shards (each writes its own blocks straight to --out; needs "
                        "--worlds-per-shard a multiple of --file-worlds), the driver (every row travels to it), or auto "
                        "(the shards when the layout allows); the bytes are the same")
    c.add_argument("--no-progress", action="store_true")
    c.set_defaults(func=cmd_collect)

    v = sub.add_parser("verify", help="check a collected dataset: complete, untouched (hashes, counts, provenance, "
                       "no stray file, no lost or duplicated transition); exit 0 ok, 1 a problem, 3 an interrupted "
                       "run (resumable)")
    v.add_argument("dir")
    v.set_defaults(func=cmd_verify)


def _seconds(text: str) -> float:
    """A finite number of seconds > 0 (argparse type: a bad value exits 2 before anything starts)."""
    import argparse
    import math
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"got {text!r}; expected a finite number of seconds > 0 (more than a "
                                         "shard's start-up plus a step, e.g. 30)")
    return value


def _as_flags(message: str) -> str:
    """A library message in the command line's words: its parameter ``out`` is the flag ``--out``."""
    import re
    return re.sub(r"^out(?=: )|(?:(?<=new )|(?<=another ))out(?= directory)", "--out", message)


def _stopped(out, why: str) -> str:
    """What a stopped run left and how to go on (from the directory's verdict)."""
    from ..dataset.verify import inspect
    v = inspect(out)
    if v.problems or not v.expected:
        return f"paddock-ma collect: {why}; {out}: {v.problems[0] if v.problems else 'nothing committed yet'}"
    p, e = v.present, v.expected
    return (f"paddock-ma collect: {why}; the run stopped after its last committed fragment ({p['steps']} of "
            f"{e['steps']} steps, {p['files']} of {e['files']} files); it is resumable: run the same command again")


def cmd_collect(args) -> int:
    from rich.console import Console
    from rich.table import Table

    from ..dataset.format import CollectError
    from ..distributed.collection.config import CollectConfig
    from ..distributed.collection.run import collect
    from ..distributed.collection.signals import Terminated
    from ..distributed.fleet_types import FleetError
    from ..serve.preview import PreviewProcess

    console = Console(stderr=True)
    cfg = CollectConfig(env=args.env, num_shards=args.shards, worlds_per_shard=args.worlds_per_shard,
                        steps=args.steps, seed=args.seed, policy=args.policy, fragment_steps=args.fragment_steps,
                        snapshot_every=args.snapshot_every, file_worlds=args.file_worlds)
    try:
        res = collect(cfg, args.out, address=args.address, deadline_s=args.deadline, progress=not args.no_progress,
                      console=console, stop_on_sigterm=True, capacity_wait_s=args.capacity_wait,
                      preview=None if args.preview is None else PreviewProcess(*args.preview),
                      preview_world=args.preview_world, writes=args.writes)
    except CollectError as exc:
        print(f"paddock-ma collect: error: {_as_flags(str(exc))}", file=sys.stderr)
        return 2
    except Terminated:
        print(_stopped(args.out, "terminated (SIGTERM)"), file=sys.stderr)
        return 143
    except KeyboardInterrupt:
        print(_stopped(args.out, "interrupted"), file=sys.stderr)
        return 130
    except OSError as exc:            # a full disk, a lost mount, permissions changed under the run
        where = exc.filename or args.out
        print(f"paddock-ma collect: cannot write {where}: {exc.strerror or exc}", file=sys.stderr)
        print(_stopped(args.out, "fix that (free space, the mount, permissions)"), file=sys.stderr)
        return 1
    except FleetError as exc:
        print(f"paddock-ma collect: the fleet failed: {exc}\nthe run is resumable: run the same command again",
              file=sys.stderr)
        return 1
    table = Table(title=f"collected {args.env} into {res.out}")
    table.add_column("what")
    table.add_column("value", justify="right")
    m = res.manifest
    for what, value in (("worlds", f"{cfg.num_shards * cfg.worlds_per_shard:,} ({cfg.num_shards} shards x "
                         f"{cfg.worlds_per_shard})"), ("steps per world", f"{cfg.steps:,}"),
                        ("rows (transitions)", f"{res.rows:,}"), ("files", f"{len(m['files'])}"),
                        ("seconds", f"{res.seconds:.1f}"), ("shard-steps/s", f"{res.steps_per_s:,.1f}"),
                        ("transitions/s (incl. Parquet)", f"{res.transitions_per_s:,.0f}"),
                        ("shard failures recovered", f"{res.failures}"), ("config hash", m["config_hash"][:16])):
        table.add_row(what, value)
    Console().print(table)
    return 0


def cmd_verify(args) -> int:
    from ..dataset.verify import VERIFY_INCOMPLETE, inspect

    v = inspect(args.dir)
    if v.problems:
        print(f"paddock-ma verify: {args.dir}: {v.problems[0]}", file=sys.stderr)
        if len(v.problems) > 1:
            print(f"({len(v.problems) - 1} more problems)", file=sys.stderr)
    elif v.exit_code == VERIFY_INCOMPLETE:
        print(f"paddock-ma verify: {args.dir}: {v.incomplete_message()}", file=sys.stderr)
    else:
        e = v.expected
        print(f"{args.dir}: ok (complete: {e['steps']:,} steps, {e['rows']:,} rows, {e['files']} files)")
    return v.exit_code
