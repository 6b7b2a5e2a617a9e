"""Real server processes for the serve tests: started on a free port, waited for, stopped by pid."""

import json
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ACTOR = ROOT / "tests" / "paddockjs" / "fixtures" / "checkpoint-actor.json"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http(method, url, body=None, headers=None, raw=None):
    """(status, headers, parsed JSON or text) of one request."""
    data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
    req = urllib.request.Request(url, data=data, method=method,
                                 headers={"Content-Type": "application/json", **(headers or {})})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            status, hdrs, text = r.status, dict(r.headers), r.read().decode()
    except urllib.error.HTTPError as e:
        status, hdrs, text = e.code, dict(e.headers), e.read().decode()
    try:
        return status, hdrs, json.loads(text)
    except ValueError:
        return status, hdrs, text


def start_process(args, port, timeout=120):
    proc = subprocess.Popen([sys.executable, *args], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited: {proc.stderr.read()[-3000:]}")
        try:
            http("GET", f"http://127.0.0.1:{port}/preview/frame")
            return proc
        except OSError:
            time.sleep(0.2)
    proc.kill()
    raise RuntimeError("server did not start")


def stop_process(proc):
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


@pytest.fixture(scope="module")
def policy_server():
    port = free_port()
    proc = start_process(["-m", "paddock_ma.cli", "policy-server", "--checkpoint", str(ACTOR), "--port", str(port)],
                         port)
    yield f"http://127.0.0.1:{port}"
    stop_process(proc)
