"""``paddock-ma view [RECORDING ...]``: the viewer page, over a live stream and recorded runs.

Serves the static page (``static/``: no build step, no CDN, works offline) at http://127.0.0.1:8787/ by
default. It opens the live stream of this server (``--demo`` runs the oval, or ``--config FILE``'s race,
with built-in drivers and publishes it, or point ``?live=ws://HOST:PORT/preview`` at any run's preview server) and every frame
recording given on the command line (``recording.FrameRecorder`` files) and every trace given with
``--trace`` (``paddock-ma record``) or ``--dataset`` (``paddock-ma collect``; world ``--world`` of either is
replayed into frames, its divergence shown if it has one). The page draws the track
(kerbs, runoff, pit lane), every car with its id, the followed car's rays and radar, its metrics and end
reason, with a timeline to scrub.
"""

from __future__ import annotations

import sys
import threading

from .listen import AddressError
from .preview import DEFAULT_HOST, DEFAULT_PORT, PreviewServer, attach_preview
from .recording import FrameRecording


def run_demo(server: PreviewServer, env_id="paddock/oval-batch-v0", steps: int | None = None, fps: float = 10.0,
             stop: threading.Event | None = None, realtime: bool = False) -> None:
    """Drive world 0 of ``env_id`` (a catalogue id, an EnvConfig or a config dict) with the built-in driver
    (every car released to it) and publish it. ``realtime``: pace the loop to the race's own clock (frame
    skip / 60 s a step), as a spectator would watch it; the pacing never enters the simulation."""
    import time

    import numpy as np

    from ..catalog import resolve_config
    from ..env.batch_env import BatchEnv
    env = BatchEnv(resolve_config(env_id), 1)
    attach_preview(env, server, world=0, fps=fps)
    env.reset(seed=0)
    actions = np.zeros((1, len(env.controlled), 3), np.float32)
    release = np.ones((1, len(env.controlled)), bool)
    step_seconds = env.config.frame_skip / 60.0
    start = time.monotonic()
    n = 0
    while (steps is None or n < steps) and not (stop is not None and stop.is_set()):
        result = env.step(actions, release=release)
        if result.done.all():
            env.reset(seed=n)
        n += 1
        if realtime:
            ahead = start + n * step_seconds - time.monotonic()
            if ahead > 0:
                time.sleep(ahead)


def run_viewer(recordings=(), traces=(), datasets=(), world: int = 0, host: str = DEFAULT_HOST,
               port: int = DEFAULT_PORT, demo: bool = False, config=None) -> int:
    """Serve the viewer page on http://host:port over the frame recordings ``recordings``, the traces
    ``traces`` and the dataset directories ``datasets`` (world ``world`` of each replayed into frames) and,
    with ``demo``, a live race with built-in drivers (the oval, or the race of the config file ``config``
    paced to real time), until Ctrl-C; 0, or 2 with one line on stderr when it cannot bind (``AddressError``:
    a port in use, an address not of this machine). Raises PaddockError, before serving, for a source it
    cannot read."""
    race = None
    if config:
        from ..env.config.root import EnvConfig
        race = EnvConfig.load(config)
    from .dataset_replay import DatasetSource
    from .trace import TraceSource
    sources = ([FrameRecording(path) for path in recordings]
               + [TraceSource(path, world) for path in traces]
               + [DatasetSource(path, world) for path in datasets])
    try:
        server = PreviewServer(host, port, viewer_sources=sources).start()
    except AddressError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"paddock-ma view: open {server.url}/ ({len(sources)} recording(s){', live demo' if demo else ''})",
          flush=True)
    try:
        if demo:
            if race is not None:
                run_demo(server, race, realtime=True)
            else:
                run_demo(server)
        else:
            threading.Event().wait()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    return 0
