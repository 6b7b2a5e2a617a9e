"""Live preview: the latest frame of a run, pushed to WebSocket clients without ever blocking the run.

``PreviewHub`` lives on an asyncio loop: ``publish_threadsafe(frame)`` (any thread, O(1): the frame goes
into a one-frame slot and the loop is woken once) -> the loop serialises the newest frame and each
client's own task sends it the newest frame when it is ready for one, so a slow client skips frames and
never holds up the run or the other clients. ``latest`` is what ``GET /preview/frame`` returns.

``PreviewServer`` runs the app (``serve.app``) on a daemon thread: ``ws://HOST:PORT/preview``,
``GET /preview/frame``, ``GET /preview/track`` and the viewer page at ``/``, bound to 127.0.0.1 unless
a host is given (``listen``: the address checked, a port in use one clear ``AddressError``).
``PreviewProcess`` is the same server in a child process, which also builds the frames (the run's thread
only copies the world's small arrays and offers them to a one-frame slot): the choice for a run that must
not share its interpreter lock with the server; the child is supervised (``preview_child``: never waited
on, restarted when it dies). ``attach_preview(engine, server,
world=0, fps=10)`` observes a ``BatchEnv`` (``BatchEnv.add_observer``; whatever drives it: PaddockEnv, the
adapters, a vector env, a protocol Dispatcher) so that its reset, step and reset_drivers publish world
``world``'s frame at most ``fps`` times a second of wall clock (or every ``every`` steps); the wall clock
only paces publishing, never the simulation.
"""

from __future__ import annotations

import asyncio
import json
import sys
import threading
import time

from ..env.batch_env import BatchEnv
from ..env.views.frames import copy_frame, frame_extra, track_picture
from ..env.views.world_copy import EngineStatics, WorldCopy, copy_world
from .listen import open_listener, start_serving, url_of
from .preview_child import PreviewChild, plain_json

DEFAULT_HOST, DEFAULT_PORT = "127.0.0.1", 8787


class PreviewHub:
    """The newest frame and the WebSocket clients of one server (see the module docstring)."""

    def __init__(self):
        self.loop: asyncio.AbstractEventLoop | None = None
        self.latest: dict | None = None
        self.latest_text: str | None = None
        self.track: dict | None = None
        self.session = {"id": 0}
        self.published = 0           # frames handed in
        self.sent = 0                # frames serialised for clients (the rest were replaced unsent)
        self._slot: dict | None = None
        self._wake_pending = False
        self._changed: asyncio.Condition | None = None
        self.clients = 0

    def bind(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self._changed = asyncio.Condition()

    # -- producers ------------------------------------------------------------------------------
    def publish_threadsafe(self, frame) -> None:
        """Hand in a frame (a packet dict, its JSON text, or a ``WorldCopy`` the loop builds it from) from
        any thread; returns at once (the slot keeps only the newest)."""
        self._slot = frame
        self.published += 1
        if not self._wake_pending and self.loop is not None:
            self._wake_pending = True
            self.loop.call_soon_threadsafe(self._take)

    def _take(self) -> None:
        self._wake_pending = False
        frame, self._slot = self._slot, None
        if frame is None:
            return
        if isinstance(frame, WorldCopy):
            frame = copy_frame(frame)
        self.latest = frame if isinstance(frame, dict) else None
        self.latest_text = frame if isinstance(frame, str) else json.dumps(frame, allow_nan=False, default=plain_json)
        self.sent += 1
        asyncio.ensure_future(self._notify())

    async def _notify(self) -> None:
        async with self._changed:
            self._changed.notify_all()

    # -- consumers ------------------------------------------------------------------------------
    async def stream(self, send_text) -> None:
        """Send each newest frame to one client until it goes away (``send_text``: its coroutine)."""
        last = None
        self.clients += 1
        try:
            while True:
                text = self.latest_text
                if text is not None and text is not last:
                    await send_text(text)
                    last = text
                    continue
                async with self._changed:
                    await self._changed.wait()
        finally:
            self.clients -= 1


class PreviewServer:
    """The serve app on a daemon thread. ``start()`` checks the address and binds on the caller's thread
    (``listen.AddressError``: a bad address, a port in use), then returns once it serves; ``url`` is its
    base. ``warn``: print the warning of an address beyond loopback."""

    def __init__(self, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT, policy=None, viewer_sources=None,
                 warn: bool = True):
        self.host, self.port = host, port
        self.hub = PreviewHub()
        self.policy, self.viewer_sources, self.warn = policy, viewer_sources, warn
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._stop: asyncio.Event | None = None
        self._error: BaseException | None = None

    @property
    def url(self) -> str:
        return url_of(self.host, self.port)

    def start(self) -> "PreviewServer":
        self.host, sock = open_listener(self.host, self.port, warn=self.warn)
        self.port = sock.getsockname()[1]
        self._thread = threading.Thread(target=self._run, args=(sock,), name="paddock-preview", daemon=True)
        self._thread.start()
        self._ready.wait(30)
        if self._error is not None:
            raise self._error
        return self

    def _run(self, sock) -> None:
        from .app import build_app

        async def main():
            self._stop = asyncio.Event()
            try:
                app = build_app(hub=self.hub, policy=self.policy, viewer_sources=self.viewer_sources)
                serving = await start_serving(app, sock, self.host)
            except Exception as exc:  # noqa: BLE001 (handed to start()'s caller)
                self._error = exc
                self._ready.set()
                return
            self._ready.set()
            await self._stop.wait()
            await serving.close()
        asyncio.run(main())

    def stop(self) -> None:
        if self.hub.loop is not None and self._stop is not None:
            self.hub.loop.call_soon_threadsafe(self._stop.set)
        if self._thread is not None:
            self._thread.join(10)


class PreviewProcess(PreviewChild):
    """The preview server in a child process (``preview_child.PreviewChild``: building, serialising and
    serving frames never compete with the run for this interpreter's lock, and the run never waits on
    the child), with a hub's interface for ``attach_preview`` (``track``, ``publish_threadsafe``,
    ``published``)."""

    def __init__(self, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT, viewer_sources=None):
        super().__init__(PreviewServer, host, port, viewer_sources)

    @property
    def hub(self):
        return self


class PreviewTap:
    """Publishes one world of a BatchEnv after its calls: a ``BatchEnv.add_observer`` observer
    (``attach_preview``). It follows the engine that calls it, so a PaddockEnv (or a protocol
    ``Dispatcher``) whose reset rebuilt its engine (config options; the observers move to the new one)
    keeps publishing, with the new track.

    On a call with no frame due the tap only counts and compares (a clock read against a deadline in
    nanoseconds, or a step count against the next due step). A due frame is a ``WorldCopy`` of the world
    (copies of its small arrays, tens of microseconds) handed to the publisher, which builds the packet
    on its own thread or process."""

    def __init__(self, engine, hub: PreviewHub, world: int, fps: float, every: int | None, observe):
        if not 0 <= world < engine.num_worlds:
            raise ValueError(f"world: got {world}; the engine has worlds 0..{engine.num_worlds - 1}")
        if every is not None and not (isinstance(every, int) and every >= 1):
            raise ValueError(f"every: got {every!r}; expected a whole number of steps >= 1 (or None for fps)")
        self.hub, self.world, self.observe = hub, world, observe
        self.period_ns = 0 if every is not None or not fps else int(1e9 / fps)     # fps 0: every call
        self.every = every
        self.calls = 0
        self.steps = 0
        self.seconds = 0.0           # CPU seconds the run's thread spent copying and handing in frames
        self.failures = 0            # frames that could not be published (a warning on stderr the first time)
        self._due_ns = 0                                   # fps: the clock time of the next frame
        self._due_step = every if every is not None else 0  # every: the step count of the next frame
        self._follow(engine)

    def _follow(self, engine) -> None:
        """Publish ``engine`` from now on (its statics, its observed drivers, its track if it changed)."""
        previous = getattr(self, "engine", None)
        self.engine, self.statics = engine, EngineStatics.of(engine)
        self._extra_observe = frame_extra(engine, self.observe)["observe"]   # a bad list fails here
        if previous is None or engine.track is not previous.track:
            self.hub.track = track_picture(engine)

    def __call__(self, name: str, engine) -> None:
        """The observer: after ``engine``'s call ``name`` ("reset", "step" or "reset_drivers")."""
        self.calls += 1
        if name == "step":
            self.steps += 1
            if self.steps < self._due_step or time.monotonic_ns() < self._due_ns:
                return
        elif name != "reset" and (self.every is not None or time.monotonic_ns() < self._due_ns):
            return                                   # reset_drivers: published only when a frame is due by time
        try:
            self._publish(name, engine)
        except Exception as exc:  # noqa: BLE001 (watching a run must never fail the call it watches)
            self._schedule_next()
            if not self.failures:
                print(f"paddock-ma preview: a frame could not be published ({type(exc).__name__}: {exc}); the run "
                      "goes on", file=sys.stderr, flush=True)
            self.failures += 1

    def _publish(self, name: str, engine) -> None:
        t0 = time.thread_time()                  # CPU time: a loaded machine's waits for a core do not count
        if engine is not self.engine:
            self._follow(engine)
        if engine.state is not None:
            self.hub.publish_threadsafe(copy_world(engine, self.world, self.statics, {
                "observe": self._extra_observe, "meta": {"call": name, "calls": self.calls}}))
        self._schedule_next()
        self.seconds += time.thread_time() - t0

    def _schedule_next(self) -> None:
        if self.every is not None:
            self._due_step = (self.steps // self.every + 1) * self.every
        else:
            self._due_ns = time.monotonic_ns() + self.period_ns

    def detach(self) -> None:
        """Stop publishing (from the engine it last followed)."""
        self.engine.remove_observer(self)


def attach_preview(engine, server_or_hub, world: int = 0, fps: float = 10.0, every: int | None = None,
                   observe=None) -> PreviewTap:
    """Publish world ``world`` of ``engine`` after each reset, step and reset_drivers, at most ``fps``
    frames a second (or every ``every`` steps); -> the tap (``detach()`` to stop). ``engine``: a BatchEnv,
    or what drives one, whose ``engine`` is observed (``engine_of``; an engine rebuilt by a reset with config
    options hands its observers to the new one). ``observe``:
    whose observation objects (rays, radar) the frames carry: None the first controlled driver, True all,
    False none, or a list of driver ids (``frames.observed_drivers``)."""
    engine = engine_of(engine)
    hub = server_or_hub.hub if isinstance(server_or_hub, (PreviewServer, PreviewProcess)) else server_or_hub
    tap = PreviewTap(engine, hub, world, fps, every, observe)
    engine.add_observer(tap)
    return tap


def engine_of(runner) -> BatchEnv:
    """The BatchEnv ``runner`` drives: its ``engine`` (a BatchEnv is its own; PaddockEnv, the adapters, the
    vector envs and the protocol's Dispatcher name theirs so), read through a gymnasium or PettingZoo
    wrapper's ``unwrapped``. TypeError for anything else."""
    for holder in (runner, getattr(runner, "unwrapped", None)):
        engine = getattr(holder, "engine", None)
        if isinstance(engine, BatchEnv):
            return engine
    raise TypeError(f"attach_preview: {type(runner).__name__} has no engine (BatchEnv) to observe; pass a "
                    "BatchEnv or what drives one (a PaddockEnv, an adapter, a vector env, a protocol Dispatcher), "
                    "or a gymnasium/PettingZoo wrapper of one")
