"""A Python client of the NDJSON stdio worker: spawn ``paddock-ma serve``, send requests, read replies.

    with WorkerClient("paddock/gp-v0") as worker:
        spec = worker.request({"type": "getActionSpec"})["result"]
        reply = worker.request({"type": "reset", "options": {"seed": 7}})

``request(dict) -> dict`` numbers requests that carry no ``id`` and checks the reply's id;
``request_line(bytes) -> bytes`` and ``pipeline([bytes]) -> [bytes]`` move raw lines for byte-level
comparisons (one reply per non-blank line, in order). A reader thread drains the worker's stdout, so a
reply can wait under a ``timeout`` and a big pipelined batch cannot deadlock the pipes.

The worker never outlives its client: ``close()`` closes stdin (the worker exits at end of input),
waits, then terminates and kills it; a garbage-collected client is reaped the same way; on Linux the
worker also gets SIGTERM when the thread that started it dies (``PR_SET_PDEATHSIG``), even if the
parent is killed with SIGKILL. Start clients from a long-lived thread (the main thread) for that reason.

The worker inherits the environment (``NUMBA_CACHE_DIR`` included, so parent and worker share
compiled code); ``NUMBA_NUM_THREADS`` and ``OMP_NUM_THREADS`` default to 1.
"""

from __future__ import annotations

import collections
import ctypes
import json
import os
import queue
import shlex
import signal
import subprocess
import sys
import threading
import weakref
from typing import Iterable, Sequence

import numpy as np

from . import codec
from .server import is_blank, widen_pipe

_PR_SET_PDEATHSIG = 1
_STDERR_TAIL_BYTES = 1 << 16
FAILURE_EXIT_WAIT_S = 10.0     # seconds a failure report waits for the worker's exit code


class WorkerError(RuntimeError):
    """The worker failed as a process: it exited, closed its stdout, or broke the protocol's framing."""


class WorkerTimeout(WorkerError, TimeoutError):
    """No reply within the timeout; the worker's state is unknown afterwards, so close the client."""


def decode_f32(obj) -> np.ndarray:
    """A vector of a reply as float32: a ``{"f32": base64, "shape"}`` object or a plain JSON list."""
    if isinstance(obj, dict):
        return codec.unpack_f32(obj, "vector")
    return np.asarray(obj, dtype=np.float32)


def decode_vectors(value):
    """``value`` with every ``{"f32", "shape"}`` object inside it (at any depth) replaced by its array."""
    if isinstance(value, dict):
        if set(value) == {"f32", "shape"}:
            return decode_f32(value)
        return {key: decode_vectors(item) for key, item in value.items()}
    if isinstance(value, list):
        return [decode_vectors(item) for item in value]
    return value


def serve_command(env_id: str | None = None, *, config: str | os.PathLike | None = None, worlds: int | None = None,
                  max_line_bytes: int | None = None, args: Sequence[str] = ()) -> list[str]:
    """The argv of ``paddock-ma serve`` run by this interpreter (``python -m paddock_ma.cli serve ...``)."""
    command = [sys.executable, "-m", "paddock_ma.cli", "serve"]
    if env_id is not None:
        command += ["--env", env_id]
    if config is not None:
        command += ["--config", os.fspath(config)]
    if worlds is not None:
        command += ["--worlds", str(worlds)]
    if max_line_bytes is not None:
        command += ["--max-line-bytes", str(max_line_bytes)]
    return command + list(args)


def _die_with_parent_hook():
    """A ``preexec_fn`` giving the child SIGTERM when this thread dies (Linux), or None elsewhere."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl    # looked up here: no dlopen after fork
    except (OSError, AttributeError):
        return None
    parent = os.getpid()

    def hook():
        prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, ctypes.c_ulong(0), ctypes.c_ulong(0), ctypes.c_ulong(0))
        if os.getppid() != parent:          # the parent died before the request took effect
            os.kill(os.getpid(), signal.SIGTERM)
    return hook


_READ_BYTES = 1 << 20


def pump_lines(fd: int, lines: queue.Queue) -> None:
    """Reader thread: every line read from the file descriptor ``fd`` into ``lines`` (newline kept; a
    last line without one as it is), then None at end of output.

    Reads up to 1 MiB a call with ``os.read`` rather than ``readline``: a reply of megabytes (a batched
    compact step) then arrives in a few reads instead of hundreds of 8 KiB ones.
    """
    partial: list[bytes] = []
    try:
        while True:
            chunk = os.read(fd, _READ_BYTES)
            if not chunk:
                break
            start = 0
            while True:
                newline = chunk.find(b"\n", start)
                if newline < 0:
                    if start < len(chunk):
                        partial.append(chunk[start:] if start else chunk)
                    break
                partial.append(chunk[start:newline + 1])
                lines.put(b"".join(partial))
                partial = []
                start = newline + 1
    except (OSError, ValueError):
        pass
    if partial:
        lines.put(b"".join(partial))
    lines.put(None)


class _Tail:
    """The last ``limit`` bytes of a stream, kept by a reader thread."""

    def __init__(self, limit: int = _STDERR_TAIL_BYTES):
        self.limit = limit
        self.chunks: collections.deque[bytes] = collections.deque()
        self.size = 0

    def pump(self, stream) -> None:
        try:
            for chunk in iter(lambda: stream.read1(4096), b""):
                self.chunks.append(chunk)
                self.size += len(chunk)
                while self.size > self.limit and len(self.chunks) > 1:
                    self.size -= len(self.chunks.popleft())
        except (OSError, ValueError):
            pass

    def text(self) -> str:
        return b"".join(list(self.chunks)).decode("utf-8", "replace")


def _reap(process: subprocess.Popen, timeout: float) -> None:
    """End ``process``: close its stdin, wait ``timeout``, then SIGTERM, then SIGKILL."""
    if process.poll() is None:
        try:
            process.stdin.close()
        except (OSError, ValueError):
            pass
        try:
            process.wait(timeout)
        except subprocess.TimeoutExpired:
            process.terminate()
            try:
                process.wait(2.0)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
    for stream in (process.stdin, process.stdout, process.stderr):
        if stream is not None:
            try:
                stream.close()
            except (OSError, ValueError):
                pass


class WorkerClient:
    """One worker process and its pipes. Not for concurrent use from several threads at once.

    ``env_id``/``config``/``worlds``/``max_line_bytes``/``args`` build ``paddock-ma serve``'s argv;
    ``command`` replaces it whole (any program speaking the protocol). ``timeout`` (seconds, None: wait
    forever) bounds each wait for a reply, start-up included. ``stderr``: None lets the worker write to
    this process's stderr; ``"capture"`` keeps its last 64 KiB for ``stderr_text()`` and error messages.
    """

    def __init__(self, env_id: str | None = None, *, config=None, worlds: int | None = None,
                 max_line_bytes: int | None = None, args: Sequence[str] = (), command: Sequence[str] | None = None,
                 env: dict | None = None, cwd=None, timeout: float | None = None, stderr=None,
                 close_timeout: float = 5.0, die_with_parent: bool = True):
        if command is None:
            command = serve_command(env_id, config=config, worlds=worlds, max_line_bytes=max_line_bytes, args=args)
        elif env_id is not None or config is not None or worlds is not None or max_line_bytes is not None or args:
            raise ValueError("WorkerClient: give either command (the whole argv) or env_id/config/worlds/"
                             "max_line_bytes/args, not both")
        environ = dict(os.environ if env is None else env)
        environ.setdefault("NUMBA_NUM_THREADS", "1")
        environ.setdefault("OMP_NUM_THREADS", "1")
        capture = stderr == "capture"
        self.command = list(command)
        self.timeout = timeout
        self.close_timeout = close_timeout
        self._stderr_tail = _Tail()
        self._process = subprocess.Popen(
            self.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE if capture else stderr, env=environ, cwd=cwd,
            preexec_fn=_die_with_parent_hook() if die_with_parent else None)
        self._finalizer = weakref.finalize(self, _reap, self._process, 2.0)
        self._replies: queue.Queue = queue.Queue()
        self._lock = threading.Lock()
        self._next_id = 0
        self._timed_out = False
        # the threads hold the pipes, not the client, so a forgotten client can be collected (and reaped)
        widen_pipe(self._process.stdout.fileno())       # megabyte replies cross in a few hand-offs
        self._readers = [threading.Thread(target=pump_lines, args=(self._process.stdout.fileno(), self._replies),
                                          name=f"worker-{self.pid}-stdout", daemon=True)]
        if capture:
            self._readers.append(threading.Thread(target=self._stderr_tail.pump, args=(self._process.stderr,),
                                                  name=f"worker-{self.pid}-stderr", daemon=True))
        for reader in self._readers:
            reader.start()

    # --- process -------------------------------------------------------------------------------
    @property
    def pid(self) -> int:
        return self._process.pid

    @property
    def returncode(self) -> int | None:
        """The worker's exit code, or None while it runs."""
        return self._process.poll()

    def stderr_text(self) -> str:
        """The last 64 KiB the worker wrote to stderr (with ``stderr="capture"``; empty otherwise)."""
        return self._stderr_tail.text()

    def close(self, timeout: float | None = None) -> int:
        """Close stdin, wait for the worker to exit (then SIGTERM, then SIGKILL); its exit code."""
        if self._finalizer.detach() is not None:        # only the first close reaps
            _reap(self._process, self.close_timeout if timeout is None else timeout)
        for reader in self._readers:
            reader.join(timeout=2.0)
        return self._process.returncode

    def __enter__(self) -> "WorkerClient":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _failure(self, what: str) -> WorkerError:
        try:
            # a worker that closed its stdout is exiting; on a loaded machine its teardown takes seconds
            code = self._process.wait(FAILURE_EXIT_WAIT_S)
        except subprocess.TimeoutExpired:
            code = None
        status = "is still running" if code is None else f"exited with code {code}"
        tail = self.stderr_text().strip()
        detail = f"; its stderr ends with:\n{tail[-2000:]}" if tail else ""
        return WorkerError(f"worker {self.pid} ({shlex.join(self.command)}) {what}: the process {status}{detail}")

    # --- lines ---------------------------------------------------------------------------------
    def _write(self, lines: Iterable[bytes]) -> None:
        stdin = self._process.stdin
        for line in lines:
            stdin.write(line + b"\n")
        stdin.flush()

    def _read_reply(self, timeout: float | None) -> bytes:
        if self._timed_out:
            raise WorkerError(f"worker {self.pid}: an earlier request timed out, so replies can no longer be "
                              "matched to requests; close this client and start another")
        try:
            line = self._replies.get(timeout=timeout)
        except queue.Empty:
            self._timed_out = True
            raise WorkerTimeout(f"worker {self.pid}: no reply within {timeout} s; close this client") from None
        if line is None:
            self._replies.put(None)         # every later read fails the same way
            raise self._failure("closed its stdout before replying")
        if not line.endswith(b"\n"):
            raise self._failure("wrote a reply without its newline")
        return line[:-1]

    @staticmethod
    def _check_line(line: bytes) -> bytes:
        line = bytes(line)
        if line.endswith(b"\n"):
            line = line[:-1]
        if b"\n" in line:
            raise ValueError("a request line must not contain a newline (one JSON object per line)")
        if is_blank(line):
            raise ValueError("a blank request line gets no reply; send a JSON object")
        return line

    def request_line(self, line: bytes, timeout: float | None = None) -> bytes:
        """Send one raw request line (newline optional) and return the raw reply line, without newline."""
        line = self._check_line(line)
        with self._lock:
            try:
                self._write([line])
            except (OSError, ValueError):
                raise self._failure("stopped reading requests") from None
            return self._read_reply(self.timeout if timeout is None else timeout)

    def pipeline(self, lines: Sequence[bytes], timeout: float | None = None) -> list[bytes]:
        """Send all ``lines`` at once (from a writer thread) and return their replies, in order.

        Blank lines are sent but get no reply; every other line gets exactly one (an overlong one too).
        """
        raw = [bytes(line[:-1] if line.endswith(b"\n") else line) for line in lines]
        if any(b"\n" in line for line in raw):
            raise ValueError("a request line must not contain a newline (one JSON object per line)")
        expected = sum(1 for line in raw if not is_blank(line))
        failure: list[BaseException] = []

        def write():
            try:
                self._write(raw)
            except BaseException as exc:        # reported after the replies (or their absence)
                failure.append(exc)

        with self._lock:
            writer = threading.Thread(target=write, name=f"worker-{self.pid}-stdin", daemon=True)
            writer.start()
            try:
                replies = [self._read_reply(self.timeout if timeout is None else timeout) for _ in range(expected)]
            finally:
                writer.join(timeout=5.0)
            if failure:
                raise self._failure("stopped reading requests")
            return replies

    # --- messages ------------------------------------------------------------------------------
    def request(self, message: dict, timeout: float | None = None) -> dict:
        """Send one request object (an ``id`` is added when it has none) and return its reply object.

        The reply's ``id`` must be the request's (or null, for an error about the line itself).
        Protocol errors come back as replies with ``ok: false``; only process failures raise.
        """
        if not isinstance(message, dict):
            raise TypeError(f"request: expected a dict, got {type(message).__name__}")
        if "id" not in message:
            self._next_id += 1
            message = {"id": self._next_id, **message}
        reply = json.loads(self.request_line(codec.encode(message), timeout))
        if not isinstance(reply, dict) or (reply.get("id") != message["id"] and reply.get("id") is not None):
            raise WorkerError(f"worker {self.pid}: reply {str(reply)[:200]} does not answer request id "
                              f"{message['id']!r}")
        return reply
