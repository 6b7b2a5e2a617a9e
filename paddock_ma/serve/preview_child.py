"""The preview server in a child process, supervised so that the run it shows never depends on it.

``PreviewChild(server_class, host, port)`` (``preview.PreviewProcess`` is it, with a hub's interface)
spawns a child running ``server_class`` (``preview.PreviewServer``, handed over by reference so that this
module imports nothing of ``preview``) and feeds it over a pipe. The run's thread only leaves the newest
frame (or the track picture) in a slot and wakes a sender thread; it never writes to the pipe, takes no
lock and never waits, so a reply of the run (a protocol worker's ``reset``) is never held by the child
and never fails because of it:

* a child that stops reading (stopped with SIGSTOP, swamped) blocks only the sender thread: frames
  offered meanwhile replace each other unsent, and one warning says so after ``STALL_SECONDS``;
* a child that dies (its pipe breaks) is restarted on the same address with the newest track and
  frame, a warning on stderr saying so; after ``MAX_RESTARTS`` deaths within ``RESTART_WINDOW``
  seconds (or a restart that cannot bind) the preview is switched off with a warning and frames are
  dropped from then on, the run going on.

The pipe's messages, parent to child: b"T" a track picture's JSON, b"S" a pickled ``EngineStatics``
(once per engine), b"C" a ``WorldCopy``'s pickled parts (the child builds the packet: the run's process
pays only the copy), b"F" a packet's JSON. At start the child answers ("ready", port) or ("error",
message); a bind error is an ``listen.AddressError`` in the parent.
"""

from __future__ import annotations

import collections
import json
import multiprocessing
import pickle
import queue
import sys
import threading
import time

from ..env.views.world_copy import WorldCopy
from ..env.views.frames import copy_frame
from .listen import AddressError, exposure_warning, parse_host, parse_port, url_of

START_SECONDS = 120.0          # for a child to import, bind and answer (a cold machine)
STALL_SECONDS = 10.0           # a write blocked this long: the child is not reading
MAX_RESTARTS = 3
RESTART_WINDOW = 60.0


def _warn(message: str) -> None:
    print(f"paddock-ma preview: {message}", file=sys.stderr, flush=True)


def plain_json(value):
    """JSON for numpy scalars a frame may carry (``json.dumps``'s ``default``)."""
    if hasattr(value, "item"):
        return value.item()
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


def _packet_json(frame) -> bytes:
    return json.dumps(frame, allow_nan=False, default=plain_json).encode()


class PreviewChild:
    """See the module docstring. ``start()`` returns once the child listens (``AddressError`` when it
    cannot bind); ``track`` (set once per track) and ``publish_threadsafe(frame)`` return at once."""

    def __init__(self, server_class, host: str, port: int, viewer_sources=None):
        self.server_class = server_class
        self.host, self.port, self.viewer_sources = host, port, viewer_sources
        self.published = 0
        self.restarts = 0
        self.off = False                  # switched off after too many deaths: frames are dropped
        self._ctx = multiprocessing.get_context("spawn")
        self._process = None
        self._conn = None
        self._track = None
        self._track_due = False           # the track must (re)reach the child
        self._last = None                 # the newest frame handed to the child, resent after a restart
        self._slot: collections.deque = collections.deque(maxlen=1)
        self._wake: queue.SimpleQueue = queue.SimpleQueue()
        self._wake_pending = False
        self._statics_sent = None
        self._writing_since = 0.0         # monotonic time a pipe write began, 0 when none is under way
        self._stall_warned = False
        self._deaths: collections.deque = collections.deque()
        self._closed = False

    @property
    def url(self) -> str:
        return url_of(self.host, self.port)

    def start(self) -> "PreviewChild":
        self.host, self.port = parse_host(self.host), parse_port(self.port)
        warning = exposure_warning(self.host, self.port)
        if warning:
            print(warning, file=sys.stderr, flush=True)
        self._spawn()
        threading.Thread(target=self._send_loop, name="paddock-preview-sender", daemon=True).start()
        return self

    def _spawn(self) -> None:
        conn, child_conn = self._ctx.Pipe()
        process = self._ctx.Process(target=serve_child, daemon=True, name="paddock-preview",
                                    args=(self.server_class, self.host, self.port, self.viewer_sources, child_conn))
        process.start()
        child_conn.close()                # the child's end lives in the child only: its death is our EOF
        try:
            if not conn.poll(START_SECONDS):
                raise OSError(f"preview server: the child process did not start within {START_SECONDS:g} s")
            status, value = conn.recv()
        except (EOFError, OSError) as exc:
            process.kill()
            process.join(5)
            raise OSError(f"preview server: the child process failed at start ({exc or 'it exited'})") from None
        if status != "ready":
            process.join(5)
            raise AddressError(value)
        self.port, self._conn, self._process, self._statics_sent = value, conn, process, None

    # -- the run's side: never waits -----------------------------------------------------------------------
    @property
    def track(self):
        return self._track

    @track.setter
    def track(self, picture: dict) -> None:
        self._track, self._track_due = picture, True
        self._wake_sender()

    def publish_threadsafe(self, frame) -> None:
        self.published += 1
        self._slot.append(frame)                  # replaces a frame the sender has not taken yet
        self._wake_sender()

    def _wake_sender(self) -> None:
        since = self._writing_since
        if since and not self._stall_warned and time.monotonic() - since > STALL_SECONDS:
            self._stall_warned = True
            _warn(f"the preview server process has not read for {STALL_SECONDS:g} s (stopped?); frames are "
                  "dropped until it reads again; the run goes on")
        if not self._wake_pending:
            self._wake_pending = True
            self._wake.put(None)

    # -- the sender thread ---------------------------------------------------------------------------------
    def _send_loop(self) -> None:
        while True:
            self._wake.get()
            self._wake_pending = False
            if self._closed:
                return
            if self.off:
                self._slot.clear()
                continue
            messages = []
            if self._track_due:
                self._track_due = False
                messages.append(b"T" + json.dumps(self._track).encode())
            try:
                frame = self._slot.pop()
            except IndexError:                    # taken on an earlier wake-up
                frame = None
            if frame is not None:
                messages += self._messages(frame)
                self._last = frame
            if messages:
                self._write(messages)

    def _messages(self, frame) -> list:
        """The pipe messages of one frame: b"S" statics (when they changed) and b"C" a copy's parts, or
        b"F" a packet's JSON."""
        if not isinstance(frame, WorldCopy):
            return [b"F" + _packet_json(frame)]
        out = []
        if frame.statics is not self._statics_sent:
            out.append(b"S" + pickle.dumps(frame.statics, pickle.HIGHEST_PROTOCOL))
            self._statics_sent = frame.statics
        out.append(b"C" + pickle.dumps(frame.parts(), pickle.HIGHEST_PROTOCOL))
        return out

    def _write(self, messages: list) -> None:
        self._writing_since = time.monotonic()
        try:
            for message in messages:
                self._conn.send_bytes(message)
        except (OSError, ValueError):             # BrokenPipeError: the child died
            self._writing_since = 0.0
            if not self._closed:
                self._restart()
            return
        self._writing_since = 0.0
        if self._stall_warned:
            self._stall_warned = False
            _warn("the preview server process reads again")

    def _restart(self) -> None:
        self._process.join(1)
        code = self._process.exitcode
        now = time.monotonic()
        self._deaths.append(now)
        while self._deaths and now - self._deaths[0] > RESTART_WINDOW:
            self._deaths.popleft()
        if len(self._deaths) > MAX_RESTARTS:
            self._switch_off(f"it exited {len(self._deaths)} times within {RESTART_WINDOW:g} s")
            return
        _warn(f"the preview server process exited (code {code}); restarting it on {self.url}")
        try:
            self._spawn()
        except (OSError, AddressError) as exc:
            self._switch_off(f"it could not be restarted: {exc}")
            return
        self.restarts += 1
        self._track_due = self._track is not None
        if self._last is not None and not self._slot:
            self._slot.append(self._last)
        self._wake_sender()

    def _switch_off(self, why: str) -> None:
        self.off = True
        self._slot.clear()
        _warn(f"the preview is switched off ({why}); the run goes on without it")

    def stop(self) -> None:
        self._closed = True
        self._wake.put(None)
        process = self._process
        if process is not None and process.is_alive():
            process.kill()                        # a stopped child does not take SIGTERM until continued
        if process is not None:
            process.join(10)


def serve_child(server_class, host, port, viewer_sources, conn) -> None:
    """The child: a ``server_class`` (``PreviewServer``) fed from the pipe (see the module docstring); ends
    with the pipe."""
    try:
        server = server_class(host, port, viewer_sources=viewer_sources, warn=False).start()
    except (AddressError, OSError) as exc:
        conn.send(("error", str(exc)))
        return
    conn.send(("ready", server.port))
    statics = None
    while True:
        try:
            message = conn.recv_bytes()
        except (EOFError, OSError):
            return
        kind, body = message[:1], message[1:]
        if kind == b"T":
            server.hub.track = json.loads(body)
        elif kind == b"S":
            statics = pickle.loads(body)
        elif kind == b"C":
            # built here, off the loop: the loop only sends text
            frame = copy_frame(WorldCopy(statics, **pickle.loads(body)))
            server.hub.publish_threadsafe(json.dumps(frame, allow_nan=False, default=plain_json))
        else:
            server.hub.publish_threadsafe(body.decode())
