"""``paddock-ma export-paddockjs | policy-server | view | record | replay``: the bridge to PaddockJS and the
viewer.

* ``export-paddockjs``  a trained actor as PaddockJS's ``paddockjs-distilled-actor-v1`` JSON
  (``paddockjs.checkpoint.export_checkpoint``)
* ``policy-server``     PaddockJS's Policy Runner HTTP contract for a policy trained here
  (``serve.policy_server.serve_policy``)
* ``view``              the web viewer of a live run, a recording, a trace or a dataset (``serve.viewer.run_viewer``)
* ``record`` / ``replay`` checksummed traces of a run and their bit-exact re-run (``serve.trace``)

The servers' modules load the simulation (numba) when imported, so each command imports its module only
when it runs; options whose defaults live there (``--host``, ``--port``) are passed on only when given.
"""

from __future__ import annotations

import argparse
import sys

from .arguments import count, index, integer, port


def add_parsers(sub) -> None:
    _add_export(sub)
    _add_policy_server(sub)
    _add_view(sub)
    _add_record(sub)
    _add_replay(sub)


def _add_export(sub) -> None:
    p = sub.add_parser("export-paddockjs", help="write a trained actor as PaddockJS's checkpoint JSON "
                                                "(paddockjs-distilled-actor-v1)",
                       description="Write an example's torch checkpoint (or re-check a JSON actor) as a "
                                   "paddockjs-distilled-actor-v1 file for PaddockJS's Policy Runner.")
    p.add_argument("checkpoint", help="a torch checkpoint saved with --actor paddockjs --save, an RLlib checkpoint "
                   "directory (rllib_vector_ppo.py --actor paddockjs --checkpoint-dir), or an actor JSON")
    p.add_argument("--out", required=True, help="the JSON file to write")
    p.set_defaults(func=cmd_export_paddockjs)


def _add_server_address(p: argparse.ArgumentParser) -> None:
    p.add_argument("--host", default=argparse.SUPPRESS,
                   help="address to bind (default 127.0.0.1: this machine only)")
    p.add_argument("--port", type=port, default=argparse.SUPPRESS, help="port (default 8787, PaddockJS's)")


def _add_policy_server(sub) -> None:
    p = sub.add_parser("policy-server", help="serve a policy on PaddockJS's Policy Runner HTTP contract "
                                             "(127.0.0.1:8787)",
                       description="PaddockJS's Policy Runner drives with a policy trained here: POST "
                                   "/policy/reset, /policy/reset-state and /policy/decide-batch.")
    p.add_argument("--checkpoint", required=True,
                   help="paddockjs-distilled-actor-v1 JSON, a torch checkpoint saved by an example's --save, or an "
                        "RLlib checkpoint directory of rllib_vector_ppo.py --actor paddockjs --checkpoint-dir")
    _add_server_address(p)
    p.set_defaults(func=cmd_policy_server)


def _add_view(sub) -> None:
    p = sub.add_parser("view", help="the web viewer: a live preview stream, a recording, a trace or a dataset",
                       description="The viewer page, over a live stream and recorded runs.")
    p.add_argument("recordings", nargs="*", help="frame recordings (JSON lines) to open")
    p.add_argument("--trace", action="append", default=[], help="a trace (paddock-ma record) to replay and open")
    p.add_argument("--dataset", action="append", default=[],
                   help="a dataset directory (paddock-ma collect) to replay and open")
    p.add_argument("--world", type=index, default=0, help="the world of a trace or dataset to show")
    _add_server_address(p)
    p.add_argument("--demo", action="store_true", help="run the oval with built-in drivers and stream it live")
    p.add_argument("--config", default=None, help="with --demo: the race of this config file (PaddockJS's "
                   "options or ours) instead of the oval, paced to real time")
    p.set_defaults(func=cmd_view)


def _add_record(sub) -> None:
    p = sub.add_parser("record", help="record a trace: config, seed, every action, checksummed snapshots",
                       description="Run a catalogued env and write a trace.")
    p.add_argument("--env", default="paddock/oval-batch-v0", help="catalogued env id (paddock-ma envs)")
    p.add_argument("--worlds", type=count, default=1)
    p.add_argument("--seed", type=integer, default=0)
    p.add_argument("--steps", type=count, default=200)
    p.add_argument("--policy", default="builtin",
                   help="builtin: every car handed to the built-in driver; throttle: full throttle, straight; "
                        "actor: a PaddockJS actor file (--actor)")
    p.add_argument("--actor", help="an actor JSON or torch checkpoint for --policy actor")
    p.add_argument("--snapshot-every", type=count, default=25,
                   help="steps between snapshots (1: name the exact step's field)")
    p.add_argument("--out", required=True)
    p.set_defaults(func=cmd_record)


def _add_replay(sub) -> None:
    p = sub.add_parser("replay", help="re-run a trace and stop at the first divergence (step, world, car, field)",
                       description="Re-run a trace and check every step's checksums (exit 1 on divergence).")
    p.add_argument("trace")
    p.set_defaults(func=cmd_replay)


def _given(args, *names: str) -> dict:
    """The options among ``names`` given on the command line (the others keep the function's defaults)."""
    return {name: getattr(args, name) for name in names if name in args}


def _error(exc) -> int:
    print(f"error: {exc.message}", file=sys.stderr)
    return 2


def cmd_export_paddockjs(args) -> int:
    from ..errors import PaddockError
    from ..paddockjs.checkpoint import FORMAT, export_checkpoint

    try:
        doc = export_checkpoint(args.checkpoint, args.out)
    except PaddockError as exc:
        return _error(exc)
    sizes = [len(doc["layers"][0]["weight"][0])] + [len(layer["bias"]) for layer in doc["layers"]]
    print(f"wrote {args.out}: {FORMAT}, obsDim {doc['obsDim']}, layers {' -> '.join(map(str, sizes))}")
    return 0


def cmd_policy_server(args) -> int:
    from ..errors import PaddockError
    from ..serve.policy_server import serve_policy

    try:
        return serve_policy(args.checkpoint, **_given(args, "host", "port"))
    except PaddockError as exc:
        return _error(exc)


def cmd_view(args) -> int:
    if args.config and not args.demo:
        print("error: --config: give it with --demo (the race to run and stream)", file=sys.stderr)
        return 2
    from ..errors import PaddockError
    from ..serve.viewer import run_viewer

    try:
        return run_viewer(args.recordings, args.trace, args.dataset, args.world, demo=args.demo, config=args.config,
                          **_given(args, "host", "port"))
    except PaddockError as exc:
        return _error(exc)


def cmd_record(args) -> int:
    from ..errors import PaddockError
    from ..serve.trace import POLICIES, record_trace
    from ..value_rules import choice_problem

    # checked here, not by argparse's choices: serve.trace loads numba when imported, which parsing must not
    problem = choice_problem(args.policy, POLICIES)
    if problem is not None:
        print(f"paddock-ma record: error: argument --policy: {problem}", file=sys.stderr)
        return 2
    try:
        header = record_trace(args.out, args.env, args.worlds, args.seed, args.steps, args.policy, args.actor,
                              args.snapshot_every)
    except PaddockError as exc:
        return _error(exc)
    print(f"wrote {args.out}: {header['env']}, {header['num_worlds']} world(s), seed {header['seed']}, "
          f"{header['steps']} steps")
    return 0


def cmd_replay(args) -> int:
    from ..errors import PaddockError
    from ..serve.trace import replay_trace

    try:
        divergence = replay_trace(args.trace)
    except PaddockError as exc:
        return _error(exc)
    if divergence is not None:
        print(str(divergence))
        return 1
    print(f"{args.trace}: every step reproduced (checksums of every world match)")
    return 0
