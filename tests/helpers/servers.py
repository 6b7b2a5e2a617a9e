"""Real ``paddock-ma`` server processes for the hostile-client tests: started as a user starts them (the
CLI, on a free loopback port), their output kept in files (a server that logs much never blocks on a full
pipe), waited for, and stopped by pid. Also a bounded read of a stdio worker's reply line."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from .raw_http import LOOPBACK, free_port, http

ROOT = Path(__file__).resolve().parents[2]
ACTOR = ROOT / "tests" / "paddockjs" / "fixtures" / "checkpoint-actor.json"
SERVER_ENV = dict(os.environ, OMP_NUM_THREADS="1", NUMBA_NUM_THREADS="1")


class ServerProcess:
    """``python -m paddock_ma.cli ARGS`` with stdout and stderr in temporary files; ``url`` its base."""

    def __init__(self, args: list[str], port: int, stdin=None):
        self.port, self.url = port, f"http://{LOOPBACK}:{port}"
        self._out = tempfile.TemporaryFile()
        self._err = tempfile.TemporaryFile()
        self.proc = subprocess.Popen([sys.executable, "-m", "paddock_ma.cli", *args], cwd=ROOT, env=SERVER_ENV,
                                     stdin=stdin, stdout=self._out if stdin is None else subprocess.PIPE,
                                     stderr=self._err)

    def wait_listening(self, timeout: float = 120) -> "ServerProcess":
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"server exited {self.proc.returncode}: {self.stderr()[-3000:]}")
            try:
                http("GET", f"{self.url}/preview/frame", timeout=5)
                return self
            except OSError:
                time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"server did not listen within {timeout} s: {self.stderr()[-3000:]}")

    def stderr(self) -> str:
        self._err.seek(0)
        return self._err.read().decode(errors="replace")

    def stdout(self) -> str:
        self._out.seek(0)
        return self._out.read().decode(errors="replace")

    def wait(self, timeout: float = 120) -> int:
        return self.proc.wait(timeout)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def run_cli(args: list[str], timeout: float = 120) -> subprocess.CompletedProcess:
    """``python -m paddock_ma.cli ARGS`` to its end (a command that should refuse to start)."""
    return subprocess.run([sys.executable, "-m", "paddock_ma.cli", *args], cwd=ROOT, env=SERVER_ENV,
                          capture_output=True, text=True, timeout=timeout)


_PENDING: dict[int, bytes] = {}         # bytes read past a line's end, by stdout file descriptor


def read_line(proc: subprocess.Popen, timeout: float) -> bytes | None:
    """One line of ``proc``'s stdout (a pipe), or None when none came within ``timeout`` seconds."""
    fd = proc.stdout.fileno()
    data = _PENDING.pop(fd, b"")
    deadline = time.monotonic() + timeout
    while b"\n" not in data:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            _PENDING[fd] = data
            return None
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            return None
        data += chunk
    line, rest = data.split(b"\n", 1)
    if rest:
        _PENDING[fd] = rest
    return line + b"\n"


def ask_worker(proc: subprocess.Popen, message: dict, timeout: float) -> dict | None:
    """Send one NDJSON request to a stdio worker; its reply, or None when none came within ``timeout``."""
    proc.stdin.write((json.dumps(message) + "\n").encode())
    proc.stdin.flush()
    line = read_line(proc, timeout)
    return None if line is None else json.loads(line)


def child_pids(pid: int) -> list[int]:
    """The pids of ``pid``'s direct children (from /proc)."""
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                out.append(int(entry))
    return out


def cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def start_policy_server(checkpoint=ACTOR) -> ServerProcess:
    """``paddock-ma policy-server --checkpoint CHECKPOINT`` on a free loopback port, listening."""
    port = free_port()
    return ServerProcess(["policy-server", "--checkpoint", str(checkpoint), "--port", str(port)], port).wait_listening()
