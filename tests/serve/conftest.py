"""Real server processes for the serve tests: started on a free port, waited for, stopped by pid."""

import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.helpers.raw_http import free_port, http

ROOT = Path(__file__).resolve().parents[2]
ACTOR = ROOT / "tests" / "paddockjs" / "fixtures" / "checkpoint-actor.json"


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
