"""``paddock-ma view [RECORDING ...]``: the viewer page, over a live stream and recorded runs.

Serves the static page (``static/``: no build step, no CDN, works offline) at http://127.0.0.1:8787/ by
default. It opens the live stream of this server (``--demo`` runs the oval with built-in drivers and
publishes it, or point ``?live=ws://HOST:PORT/preview`` at any run's preview server) and every frame
recording given on the command line (``recording.FrameRecorder`` files) and every trace given with
``--trace`` (``paddock-ma record``) or ``--dataset`` (``paddock-ma collect``; world ``--world`` of either is
replayed into frames, its divergence shown if it has one). The page draws the track
(kerbs, runoff, pit lane), every car with its id, the followed car's rays and radar, its metrics and end
reason, with a timeline to scrub.
"""

from __future__ import annotations

import argparse
import sys
import threading

from ..env.errors import PaddockError
from .preview import DEFAULT_HOST, DEFAULT_PORT, PreviewServer, attach_preview
from .recording import FrameRecording


def run_demo(server: PreviewServer, env_id: str = "paddock/oval-batch-v0", steps: int | None = None, fps: float = 10.0,
             stop: threading.Event | None = None) -> None:
    """Drive ``env_id``'s world 0 with the built-in driver (every car released to it) and publish it."""
    import numpy as np

    from ..catalog import make
    env = make(env_id, num_worlds=1)
    attach_preview(env, server, world=0, fps=fps)
    env.reset(seed=0)
    actions = np.zeros((1, len(env.controlled), 3), np.float32)
    release = np.ones((1, len(env.controlled)), bool)
    n = 0
    while (steps is None or n < steps) and not (stop is not None and stop.is_set()):
        result = env.step(actions, release=release)
        if result.done.all():
            env.reset(seed=n)
        n += 1


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="paddock-ma view", description=__doc__.split("\n\n")[0])
    p.add_argument("recordings", nargs="*", help="frame recordings (JSON lines) to open")
    p.add_argument("--trace", action="append", default=[], help="a trace (paddock-ma record) to replay and open")
    p.add_argument("--dataset", action="append", default=[], help="a dataset directory (paddock-ma collect) to replay and open")
    p.add_argument("--world", type=int, default=0, help="the world of a trace or dataset to show")
    p.add_argument("--host", default=DEFAULT_HOST, help="address to bind (default 127.0.0.1: this machine only)")
    p.add_argument("--port", type=int, default=DEFAULT_PORT)
    p.add_argument("--demo", action="store_true", help="run the oval with built-in drivers and stream it live")
    return p


def main(argv=None) -> int:
    args = parser().parse_args(argv)
    try:
        from .dataset_replay import DatasetSource
        from .trace import TraceSource
        sources = ([FrameRecording(path) for path in args.recordings]
                   + [TraceSource(path, args.world) for path in args.trace]
                   + [DatasetSource(path, args.world) for path in args.dataset])
    except PaddockError as exc:
        print(f"error: {exc.message}", file=sys.stderr)
        return 2
    server = PreviewServer(args.host, args.port, viewer_sources=sources).start()
    print(f"paddock-ma view: open {server.url}/ ({len(sources)} recording(s){', live demo' if args.demo else ''})",
          flush=True)
    try:
        if args.demo:
            run_demo(server)
        else:
            threading.Event().wait()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
