"""Shared helpers of the stdio worker tests: start real worker processes, check that processes are gone."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ENV_ID = "paddock/gp-v0"
REPLY_KEYS = {"id", "ok", "type"}
WORKER_ENV = dict(os.environ, OMP_NUM_THREADS="1", NUMBA_NUM_THREADS="1")


def serve_argv(*args: str) -> list[str]:
    """``paddock-ma serve ARGS`` run by this interpreter."""
    return [sys.executable, "-m", "paddock_ma.cli", "serve", *args]


def start(argv: list[str], env: dict | None = None, stderr=subprocess.PIPE) -> subprocess.Popen:
    """A worker process with binary pipes on stdin and stdout (and stderr unless given)."""
    return subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr,
                            env=WORKER_ENV if env is None else env, cwd=ROOT)


def ask(process: subprocess.Popen, line: bytes) -> dict:
    """Write one request line, read one reply line; the reply as a dict."""
    process.stdin.write(line + b"\n")
    process.stdin.flush()
    return reply_of(process.stdout.readline())


def reply_of(line: bytes) -> dict:
    """A reply line parsed and checked to be a protocol frame (a JSON object with id, ok and type)."""
    assert line.endswith(b"\n"), f"not a whole line: {line[:200]!r}"
    reply = json.loads(line)
    assert isinstance(reply, dict) and REPLY_KEYS <= set(reply), f"not a reply frame: {line[:200]!r}"
    return reply


def is_gone(pid: int) -> bool:
    """Whether process ``pid`` no longer runs (never existed, reaped, or a zombie awaiting its reaper)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            state = handle.read().rsplit(b")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return True
    return state in (b"Z", b"X")


def wait_gone(pid: int, timeout: float) -> bool:
    """Poll ``is_gone(pid)`` for up to ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if is_gone(pid):
            return True
        time.sleep(0.05)
    return is_gone(pid)


def finish(process: subprocess.Popen, timeout: float = 10.0) -> None:
    """End a test's worker whatever happened (close stdin, then kill)."""
    if process.poll() is None:
        try:
            process.stdin.close()
        except OSError:
            pass
        try:
            process.wait(timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    for stream in (process.stdin, process.stdout, process.stderr):
        if stream is not None:
            stream.close()
