"""``paddock-ma serve``: the JSON worker protocol as NDJSON on stdin/stdout (``paddock_ma.protocol.server``;
``workers/stdio_worker.py`` runs the same command): ``--env ENV_ID`` or ``--config FILE``, ``--worlds W``,
``--max-line-bytes N``, ``--preview HOST:PORT``."""

from __future__ import annotations

import sys

from ..protocol.codec import Limits
from ..protocol.server import MAX_WORLDS, MIN_LINE_BYTES
from .arguments import host_port, whole_number


def add_parsers(sub) -> None:
    serve = sub.add_parser("serve", help="serve the JSON worker protocol as NDJSON on stdin/stdout",
                           description="Answer one JSON request per stdin line with one reply line on stdout "
                                       "(docs/design.md section 6); stdout carries replies only, logs go to stderr.")
    which = serve.add_mutually_exclusive_group(required=True)
    which.add_argument("--env", metavar="ENV_ID", help="a catalogued environment id (see `paddock-ma envs`)")
    which.add_argument("--config", metavar="FILE",
                       help="a JSON file holding one config object (snake_case or PaddockJS camelCase names)")
    serve.add_argument("--worlds", type=whole_number(1, MAX_WORLDS, "worlds"), default=1, metavar="W",
                       help="worlds stepped together (batched requests when W > 1; default 1)")
    serve.add_argument("--max-line-bytes", type=whole_number(MIN_LINE_BYTES, unit="bytes"), default=None,
                       metavar="N", help="cap on one request line in bytes, newline excluded "
                                         f"(default {Limits().max_line_bytes})")
    serve.add_argument("--preview", metavar="HOST:PORT", type=host_port, default=None,
                       help="also publish world 0 at 10 frames/s on ws://HOST:PORT/preview and "
                            "GET /preview/frame, PaddockJS's live preview (e.g. 127.0.0.1:8787)")
    serve.set_defaults(func=cmd_serve)


def cmd_serve(args) -> int:
    from ..protocol import server

    from ..serve.listen import AddressError

    try:
        return server.run(env=args.env, config=args.config, worlds=args.worlds, max_line_bytes=args.max_line_bytes,
                          on_dispatcher=None if args.preview is None else _preview_on(*args.preview))
    except AddressError as exc:                  # the preview cannot listen (a port in use): before any request
        print(f"paddock-ma serve: error: --preview: {exc}", file=sys.stderr, flush=True)
        return 2


def _preview_on(host: str, port: int):
    """What ``server.run`` calls with its dispatcher: publish world 0 from a preview process at host:port."""
    def attach(dispatcher) -> None:
        from ..serve.preview import PreviewProcess, attach_preview

        preview = PreviewProcess(host, port).start()
        attach_preview(dispatcher, preview)      # its engine's observer, kept across rebuilds
        print(f"paddock-ma serve: live preview on {preview.url}/preview/frame", file=sys.stderr, flush=True)
    return attach
