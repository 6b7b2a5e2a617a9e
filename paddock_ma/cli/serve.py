"""``paddock-ma serve``: the JSON worker protocol as NDJSON on stdin/stdout (``paddock_ma.protocol.server``,
which defines the options: ``--env ENV_ID`` or ``--config FILE``, ``--worlds W``, ``--max-line-bytes N``)."""

from __future__ import annotations


def add_parsers(sub) -> None:
    from ..protocol.server import add_arguments

    serve = sub.add_parser("serve", help="serve the JSON worker protocol as NDJSON on stdin/stdout",
                           description="Answer one JSON request per stdin line with one reply line on stdout "
                                       "(DESIGN section 6); stdout carries replies only, logs go to stderr.")
    add_arguments(serve)
    serve.set_defaults(func=cmd_serve)


def cmd_serve(args) -> int:
    from ..protocol import server

    return server.run(args)
