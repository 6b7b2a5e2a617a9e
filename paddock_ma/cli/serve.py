"""``paddock-ma serve``: the JSON worker protocol as NDJSON on stdin/stdout (``paddock_ma.protocol.server``,
which defines the options: ``--env ENV_ID`` or ``--config FILE``, ``--worlds W``, ``--max-line-bytes N``)."""

from __future__ import annotations

import sys


def add_parsers(sub) -> None:
    from ..protocol.server import add_arguments

    serve = sub.add_parser("serve", help="serve the JSON worker protocol as NDJSON on stdin/stdout",
                           description="Answer one JSON request per stdin line with one reply line on stdout "
                                       "(DESIGN section 6); stdout carries replies only, logs go to stderr.")
    add_arguments(serve)
    serve.add_argument("--preview", metavar="HOST:PORT", type=host_port, default=None,
                       help="also publish world 0 at 10 frames/s on ws://HOST:PORT/preview and "
                            "GET /preview/frame, PaddockJS's live preview (e.g. 127.0.0.1:8787)")
    serve.set_defaults(func=cmd_serve)


def host_port(text: str) -> tuple[str, int]:
    """argparse type of a HOST:PORT option (``--preview``): -> (host, port) (``serve.listen.parse_bind_address``:
    IPv6 in brackets, ``[::1]:8787``)."""
    import argparse

    from ..serve.listen import AddressError, parse_bind_address
    try:
        return parse_bind_address(text, "")
    except AddressError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def cmd_serve(args) -> int:
    from ..protocol import server

    on_dispatcher = None
    if args.preview is not None:
        def on_dispatcher(dispatcher):
            from ..serve.preview import PreviewProcess, attach_preview

            preview = PreviewProcess(*args.preview).start()
            attach_preview(dispatcher, preview)      # its engine's observer, kept across rebuilds
            print(f"paddock-ma serve: live preview on {preview.url}/preview/frame", file=sys.stderr, flush=True)
    from ..serve.listen import AddressError
    try:
        return server.run(args, on_dispatcher=on_dispatcher)
    except AddressError as exc:                  # the preview cannot listen (a port in use): before any request
        print(f"paddock-ma serve: error: --preview: {exc}", file=sys.stderr, flush=True)
        return 2
