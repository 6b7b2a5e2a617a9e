"""The NDJSON stdio worker: requests on stdin, replies on stdout, one JSON object per line.

``serve(dispatcher, stdin, stdout)`` reads stdin in bounded chunks (never a whole unbounded line),
splits it at ``\\n`` (a ``\\r`` before it is dropped), and answers each non-blank line with the line
``dispatcher.handle_line`` returns, in order, flushed one by one; pipelined requests need no waiting.
A line longer than ``max_line_bytes`` (newline excluded) is not kept: past the cap its bytes are only
counted, and at its newline it gets one ``line_too_long`` reply (id null), the very bytes the in-process
dispatcher answers that line with; the line after it is served normally. Blank lines (only spaces,
tabs, ``\\r``) get no reply.

The worker ends with exit code 0 on end of input (the client closed stdin or died), on SIGTERM or
SIGINT (after finishing the reply it is writing, if any), and when stdout's reader has gone away.

``run(...)`` is the ``paddock-ma serve`` command (``cli/serve.py`` parses its options; ``workers/stdio_worker.py``
runs the same command): it moves file descriptor 1 to stderr before anything heavy is imported (so what
numba, Ray or a ``print`` writes never reaches the frames) and keeps a private duplicate of the real
stdout for the replies.
"""

from __future__ import annotations

import json
import os
import signal
import stat
import sys
import threading
from typing import BinaryIO

DEFAULT_CHUNK_BYTES = 1 << 16
# Linux's fcntl to resize a pipe (not exported by Python's fcntl module before 3.10 on every build).
_F_SETPIPE_SZ = 1031
WIDE_PIPE_BYTES = 1 << 20
# The serve command's bounds on --max-line-bytes and --worlds (cli/serve.py's option types).
MIN_LINE_BYTES = 256
MAX_WORLDS = 1 << 16
_BLANK = b" \t\r"


def is_blank(line: bytes) -> bool:
    """Whether a request line holds only spaces, tabs and carriage returns (no reply is sent)."""
    return not line.strip(_BLANK)


def protect_stdout() -> BinaryIO:
    """Point fd 1 (and ``sys.stdout``) at stderr and return a binary writer on the real stdout.

    Everything written to stdout afterwards by Python code or C libraries lands on stderr; only the
    returned stream carries protocol frames. Call it once, before importing numba or Ray.
    """
    sys.stdout.flush()
    frames_fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return os.fdopen(frames_fd, "wb")


def widen_pipe(fd: int, size: int = WIDE_PIPE_BYTES) -> int:
    """Grow the kernel buffer of the pipe ``fd`` to ``size`` bytes (or the most an unprivileged process
    may set, ``/proc/sys/fs/pipe-max-size``); the buffer size after, or 0 when ``fd`` is not a pipe or
    the system cannot (not Linux). Best effort: a smaller pipe only costs speed.

    Why: a batched compact reply is megabytes (64 worlds x 20 cars x 298 float32 are 2.0 MB of base64),
    and through Linux's default 64 KiB pipe it crosses in ~27 writer/reader hand-offs; with 1 MiB, in
    two. Measured on the 2-core machine: 1.7 MB round trips ~3-5 ms -> ~1-1.5 ms.
    """
    try:
        import fcntl
        if not stat.S_ISFIFO(os.fstat(fd).st_mode):
            return 0
        try:
            with open("/proc/sys/fs/pipe-max-size") as handle:
                size = min(size, int(handle.read()))
        except (OSError, ValueError):
            pass
        return fcntl.fcntl(fd, _F_SETPIPE_SZ, size)
    except (ImportError, OSError, ValueError):
        return 0


class _Stop(BaseException):
    """Raised by the signal handler while the loop waits for input: leave the loop, exit 0."""


class _Signals:
    """SIGTERM/SIGINT handling: stop at once while idle (reading), after the current reply while busy."""

    def __init__(self):
        self.busy = False
        self.pending = False
        self._previous = {}

    def _handler(self, signum, frame):
        if self.busy:
            self.pending = True
        else:
            raise _Stop()

    def install(self) -> None:
        if threading.current_thread() is not threading.main_thread():
            return                          # signal handlers can only be set from the main thread
        for sig in (signal.SIGTERM, signal.SIGINT):
            self._previous[sig] = signal.signal(sig, self._handler)

    def restore(self) -> None:
        for sig, previous in self._previous.items():
            signal.signal(sig, previous)
        self._previous.clear()


def _fallback_error(message: str) -> bytes:
    """An ``internal`` error reply built without the dispatcher (used only if the dispatcher failed)."""
    return json.dumps({"id": None, "ok": False, "type": "error", "error": message, "code": "internal"},
                      separators=(",", ":")).encode("utf-8")


def _reply_to(dispatcher, line: bytes) -> bytes:
    """The dispatcher's reply line to ``line``; an ``internal`` error reply if it raised anyway."""
    try:
        return dispatcher.handle_line(line)
    except Exception as exc:            # the dispatcher never raises; a bug must not end the worker
        message = f"internal error while handling the request: {type(exc).__name__}: {exc}"
        try:
            return dispatcher.error_line("internal", message)
        except Exception:
            return _fallback_error(message)


def _too_long_reply(dispatcher, size: int, cap: int) -> bytes:
    """The ``line_too_long`` reply to a line of ``size`` bytes, worded as ``codec.decode`` words it, so
    a line the worker discarded gets the bytes the in-process dispatcher answers it with (the tests
    compare the two)."""
    from .codec import line_too_long_message

    message = line_too_long_message(size, cap)
    try:
        return dispatcher.error_line("line_too_long", message, "request")
    except Exception:
        return _fallback_error(message)


class LineSplitter:
    """Splits a byte stream at ``\\n`` into request lines, keeping at most ``max_line_bytes + 1`` bytes of a
    line (one more for a ``\\r`` before its newline): past that, a line's bytes are only counted.

    ``feed(chunk)`` yields ``(line, size)`` for each line the chunk completes: ``line`` its bytes (newline
    removed), or None for an overlong line, whose ``size`` is its length without a last ``\\r``.
    ``rest()`` yields the last line of the stream when it has no newline.
    """

    def __init__(self, max_line_bytes: int):
        self.cap = max_line_bytes
        self.partial = bytearray()      # the current line's bytes so far
        self.discarding = False         # inside an overlong line: its bytes are counted, not kept
        self.discarded = 0              # the overlong line's size so far
        self.ends_with_cr = False       # whether its last byte so far is '\r'

    def feed(self, chunk: bytes):
        start = 0
        while start < len(chunk):
            newline = chunk.find(b"\n", start)
            end = len(chunk) if newline < 0 else newline
            if self.discarding:
                self.discarded += end - start
                if end > start:
                    self.ends_with_cr = chunk[end - 1] == 13
            else:
                self.partial += chunk[start:end]
                if len(self.partial) > self.cap + 1:            # +1: room for a '\r' before the '\n'
                    self.discarding, self.discarded = True, len(self.partial)
                    self.ends_with_cr = self.partial[-1] == 13
                    self.partial.clear()
            if newline < 0:
                break
            start = newline + 1
            yield self._take()

    def rest(self):
        if self.discarding or self.partial:
            yield self._take()

    def _take(self) -> tuple:
        if self.discarding:
            self.discarding = False
            return None, self.discarded - self.ends_with_cr
        line = bytes(self.partial)
        self.partial.clear()
        return line, len(line)


class _Replies:
    """Answers the lines of a ``LineSplitter`` with ``dispatcher`` on ``stdout``, one flushed frame each."""

    def __init__(self, dispatcher, stdout: BinaryIO, max_line_bytes: int):
        self.dispatcher, self.stdout, self.cap = dispatcher, stdout, max_line_bytes

    def answer(self, line: bytes | None, size: int) -> bool:
        """Reply to one line (None: an overlong one of ``size`` bytes, discarded); False to stop serving."""
        if line is not None:
            if line.endswith(b"\r"):
                line = line[:-1]
            if is_blank(line):
                return True
            size = len(line)
        if line is None or size > self.cap:
            return self.send(_too_long_reply(self.dispatcher, size, self.cap))
        return self.send(_reply_to(self.dispatcher, line))

    def send(self, reply: bytes) -> bool:
        """Write one frame; False when the reader has gone away."""
        try:
            self.stdout.write(reply)        # two writes, not reply + newline: no copy of a megabyte reply
            self.stdout.write(b"\n")
            self.stdout.flush()
        except (OSError, ValueError):       # BrokenPipeError, or stdout closed
            return False
        return True


def serve(dispatcher, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None,
          max_line_bytes: int | None = None, chunk_bytes: int = DEFAULT_CHUNK_BYTES,
          handle_signals: bool = True) -> int:
    """Answer NDJSON requests from ``stdin`` on ``stdout`` until end of input; returns the exit code (0).

    ``dispatcher`` has ``handle_line(bytes) -> bytes`` and ``error_line(code, message, field, id)``
    (``paddock_ma.protocol.messages.Dispatcher``). ``stdin``/``stdout`` are binary streams (default
    ``sys.stdin.buffer``/``sys.stdout.buffer``); ``max_line_bytes`` caps one request line without its
    newline (default: the dispatcher's ``limits.max_line_bytes``). Memory held for a partial line never
    exceeds the cap plus one chunk.
    """
    stdin = sys.stdin.buffer if stdin is None else stdin
    stdout = sys.stdout.buffer if stdout is None else stdout
    if max_line_bytes is None:
        max_line_bytes = getattr(getattr(dispatcher, "limits", None), "max_line_bytes", 1 << 20)
    read = getattr(stdin, "read1", None) or stdin.read
    lines, replies = LineSplitter(max_line_bytes), _Replies(dispatcher, stdout, max_line_bytes)
    signals = _Signals()
    if handle_signals:
        signals.install()
    try:
        while True:
            signals.busy = False            # a stop signal may interrupt the read ...
            if signals.pending:
                return 0
            try:
                chunk = read(chunk_bytes)
            except InterruptedError:
                continue
            signals.busy = True             # ... but not a reply: it is finished first
            if not chunk:
                break
            for line, size in lines.feed(chunk):
                if not replies.answer(line, size) or signals.pending:
                    return 0
        for line, size in lines.rest():     # a last line without its newline
            replies.answer(line, size)
        return 0
    except _Stop:
        return 0
    finally:
        signals.busy = True
        signals.restore()


# ---------------------------------------------------------------------------------------------
# The command: paddock-ma serve / workers/stdio_worker.py
# ---------------------------------------------------------------------------------------------
class UsageError(Exception):
    """A bad ``serve`` argument, found before serving: the message names the value and the fix."""


def load_config(env: str | None, config: str | None):
    """``(EnvConfig, env_id or None)`` of the ``--env`` id or, without one, the ``--config`` file; or
    UsageError."""
    from ..errors import PaddockError

    if env is not None:
        from .. import catalog
        try:
            return catalog.env_config(env), env
        except PaddockError as exc:
            raise UsageError(f"--env {env!r}: {exc.message.split(': ', 1)[-1]}. "
                             "Run `paddock-ma envs` to list the environment ids.") from None
    from . import codec
    path = config
    try:
        with open(path, "rb") as handle:
            raw = handle.read()
    except OSError as exc:
        raise UsageError(f"--config {path!r}: cannot read the file ({exc.strerror or exc}); "
                         "give the path of a JSON config file") from None
    try:
        doc = codec.decode(raw, codec.Limits(max_line_bytes=max(len(raw), 1)))
    except PaddockError as exc:
        raise UsageError(f"--config {path!r}: {exc.message.replace('request: ', '', 1)}; "
                         "the file must hold one strict JSON object") from None
    if not isinstance(doc, dict):
        raise UsageError(f"--config {path!r}: holds a JSON {type(doc).__name__}, not an object; "
                         "the file must hold one config object")
    from .wire_names import config_from_wire
    try:
        return config_from_wire(doc), None
    except PaddockError as exc:
        raise UsageError(f"--config {path!r}: {exc.message}") from None


def run(env: str | None = None, config: str | None = None, worlds: int = 1, max_line_bytes: int | None = None,
        frames: BinaryIO | None = None, on_dispatcher=None) -> int:
    """Serve ``worlds`` worlds of the catalogued env ``env`` or of the config file ``config`` (one of the
    two), request lines capped at ``max_line_bytes`` (None: the codec's default); 2 (and a message on
    stderr) on a bad argument. ``on_dispatcher(dispatcher)``, when given, is called once the dispatcher
    exists, before the first request (the CLI attaches a live preview there)."""
    frames = protect_stdout() if frames is None else frames
    os.environ.setdefault("NUMBA_NUM_THREADS", "1")
    from .codec import Limits
    from ..errors import PaddockError

    limits = Limits() if max_line_bytes is None else Limits(max_line_bytes=max_line_bytes)
    try:
        env_config, env_id = load_config(env, config)
        from .messages import PROTOCOL_VERSION, Dispatcher
        try:
            dispatcher = Dispatcher(env_config, num_worlds=worlds, env_id=env_id, limits=limits)
        except (PaddockError, ValueError) as exc:
            reason = exc.message if isinstance(exc, PaddockError) else str(exc)
            raise UsageError(f"{'--env ' + repr(env_id) if env_id else '--config ' + repr(config)} with "
                             f"--worlds {worlds}: {reason}") from None
    except UsageError as exc:
        print(f"paddock-ma serve: error: {exc}", file=sys.stderr, flush=True)
        return 2
    if on_dispatcher is not None:
        on_dispatcher(dispatcher)
    for stream in (frames, sys.stdin.buffer):
        try:
            widen_pipe(stream.fileno())
        except (OSError, ValueError, AttributeError):   # not a real file (tests pass streams)
            pass
    print(f"paddock-ma serve: ready, protocol {PROTOCOL_VERSION}, {env_id or config}, "
          f"{worlds} world(s), line cap {limits.max_line_bytes} bytes", file=sys.stderr, flush=True)
    return serve(dispatcher, sys.stdin.buffer, frames, max_line_bytes=limits.max_line_bytes)
