"""``paddock-ma policy-server --checkpoint FILE``: PaddockJS's Policy Runner drives with a policy trained here.

Serves ``POST /policy/reset``, ``/policy/reset-state`` and ``/policy/decide-batch`` (``serve.app``) on
http://127.0.0.1:8787 by default, for an exported ``paddockjs-distilled-actor-v1`` JSON actor, a torch
checkpoint of the examples (``--actor paddockjs --save FILE.pt``) or an RLlib checkpoint directory
(``examples/rllib_vector_ppo.py --actor paddockjs --checkpoint-dir DIR``). In the Policy Runner pick the controller
"Policy server" and the address printed at start. The same server has the preview routes and the viewer.
"""

from __future__ import annotations

from ..paddockjs.checkpoint import load_actor_file
from .policies import ServedActor
from .preview import DEFAULT_HOST, DEFAULT_PORT, PreviewHub


def load_policy(path) -> ServedActor:
    """The served policy of a checkpoint file (actor JSON or the examples' torch checkpoint)."""
    return ServedActor(load_actor_file(path))


def serve_policy(checkpoint, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT) -> int:
    """Serve the policy of ``checkpoint`` (``load_policy``) with the preview routes and the viewer on
    http://host:port until SIGINT or SIGTERM (``serve.listen.serve_app``: the address checked before it
    binds, a warning beyond loopback); 0, or 2 with one line on stderr when it cannot bind. Raises
    PaddockError, before serving, for a checkpoint it cannot read."""
    policy = load_policy(checkpoint)
    from .app import build_app
    from .listen import serve_app

    return serve_app(build_app(hub=PreviewHub(), policy=policy), host, port, lambda url: print(
        f"paddock-ma policy-server: {checkpoint} (obsDim {policy.obs_dim}) on {url} (Policy Runner: controller "
        "'Policy server')", flush=True))
