"""``paddock-ma policy-server --checkpoint FILE``: PaddockJS's Policy Runner drives with a policy trained here.

Serves ``POST /policy/reset``, ``/policy/reset-state`` and ``/policy/decide-batch`` (``serve.app``) on
http://127.0.0.1:8787 by default, for an exported ``paddockjs-distilled-actor-v1`` JSON actor, a torch
checkpoint of the examples (``--actor paddockjs --save FILE.pt``) or an RLlib checkpoint directory
(``examples/rllib_vector_ppo.py --actor paddockjs --checkpoint-dir DIR``). In the Policy Runner pick the controller
"Policy server" and the address printed at start. The same server has the preview routes and the viewer.
"""

from __future__ import annotations

import argparse
import sys

from ..errors import PaddockError
from ..paddockjs.checkpoint import load_actor_file
from .policies import ServedActor
from .preview import DEFAULT_HOST, DEFAULT_PORT, PreviewHub


def load_policy(path) -> ServedActor:
    """The served policy of a checkpoint file (actor JSON or the examples' torch checkpoint)."""
    return ServedActor(load_actor_file(path))


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="paddock-ma policy-server", description=__doc__.split("\n\n")[0])
    p.add_argument("--checkpoint", required=True,
                   help="paddockjs-distilled-actor-v1 JSON, a torch checkpoint saved by an example's --save, or an "
                        "RLlib checkpoint directory of rllib_vector_ppo.py --actor paddockjs --checkpoint-dir")
    p.add_argument("--host", default=DEFAULT_HOST, help="address to bind (default 127.0.0.1: this machine only)")
    p.add_argument("--port", type=int, default=DEFAULT_PORT, help="port (default 8787, PaddockJS's)")
    return p


def main(argv=None) -> int:
    args = parser().parse_args(argv)
    try:
        policy = load_policy(args.checkpoint)
    except PaddockError as exc:
        print(f"error: {exc.message}", file=sys.stderr)
        return 2
    from .app import build_app
    from .listen import serve_app
    return serve_app(build_app(hub=PreviewHub(), policy=policy), args.host, args.port, lambda url: print(
        f"paddock-ma policy-server: {args.checkpoint} (obsDim {policy.obs_dim}) on {url} (Policy Runner: controller "
        "'Policy server')", flush=True))


if __name__ == "__main__":
    raise SystemExit(main())
