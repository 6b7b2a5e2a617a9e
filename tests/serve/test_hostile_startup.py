"""Starting the servers as a careless user would, and ``paddock-ma serve --preview`` with its preview child
stopped or killed: addresses are checked before binding (IPv6 brackets, an empty host, binding beyond
loopback said out loud), a port in use is one clear line, and the worker's replies never wait on the
preview child nor report an error for a change that happened."""

import os
import signal
import socket
import subprocess
import time

import pytest

from ..helpers.raw_http import LOOPBACK, free_port, http
from ..helpers.servers import ACTOR, ServerProcess, ask_worker, child_pids, cmdline, run_cli


@pytest.fixture
def busy_port():
    """A port held by a listening socket on 127.0.0.1 for the test's length."""
    sock = socket.socket()
    sock.bind((LOOPBACK, 0))
    sock.listen()
    yield sock.getsockname()[1]
    sock.close()


def assert_refused(done, *words):
    assert done.returncode == 2, (done.returncode, done.stderr[-2000:])
    assert "Traceback" not in done.stderr, done.stderr[-2000:]
    for word in words:
        assert word in done.stderr, (word, done.stderr[-2000:])


def test_a_port_in_use_is_one_clear_message(busy_port):
    assert_refused(run_cli(["policy-server", "--checkpoint", str(ACTOR), "--port", str(busy_port)]),
                   f"{busy_port}", "in use")
    assert_refused(run_cli(["view", "--port", str(busy_port)]), f"{busy_port}", "in use")
    assert_refused(run_cli(["serve", "--env", "paddock/oval-batch-v0", "--preview", f"127.0.0.1:{busy_port}"]),
                   f"{busy_port}", "in use")


def test_binding_beyond_loopback_is_said_before_binding(busy_port):
    """0.0.0.0 on a port that 127.0.0.1 holds: the warning comes first, then the bind fails (so this test
    never listens on another interface)."""
    done = run_cli(["policy-server", "--checkpoint", str(ACTOR), "--host", "0.0.0.0", "--port", str(busy_port)])
    assert_refused(done, "every interface", "in use")
    done = run_cli(["serve", "--env", "paddock/oval-batch-v0", "--preview", f"0.0.0.0:{busy_port}"])
    assert_refused(done, "every interface", "in use")


@pytest.mark.parametrize("args, words", [
    (["policy-server", "--checkpoint", str(ACTOR), "--host", ""], ["--host", "0.0.0.0"]),
    (["view", "--host", "", "--port", "1"], ["--host"]),
    (["view", "--host", "not a host!", "--port", "1"], ["--host"]),
    (["serve", "--env", "paddock/oval-batch-v0", "--preview", ":8787"], ["--preview"]),
    (["serve", "--env", "paddock/oval-batch-v0", "--preview", "::1:8787"], ["--preview", "[::1]:8787"]),
    (["serve", "--env", "paddock/oval-batch-v0", "--preview", "[::1]"], ["--preview"]),
])
def test_bad_addresses_are_refused_before_binding(args, words):
    assert_refused(run_cli(args), *words)


def ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6) as s:
            s.bind(("::1", 0))
        return True
    except OSError:
        return False


@pytest.mark.skipif(not ipv6_loopback(), reason="no IPv6 loopback on this machine")
def test_an_ipv6_loopback_address_in_brackets_serves():
    port = free_port()
    server = ServerProcess(["policy-server", "--checkpoint", str(ACTOR), "--host", "[::1]", "--port", str(port)], port)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            assert server.proc.poll() is None, server.stderr()
            try:
                status, _, _ = http("GET", f"http://[::1]:{port}/preview/frame", timeout=5)
                break
            except OSError:
                time.sleep(0.2)
        assert status == 200 and f"http://[::1]:{port}" in server.stdout()
    finally:
        server.stop()


# -- serve --preview: the child supervised --------------------------------------------------------------------
def preview_child(pid: int, timeout: float = 60) -> int:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        children = [c for c in child_pids(pid) if "resource_tracker" not in cmdline(c)]
        if children:
            return children[0]
        time.sleep(0.1)
    raise AssertionError("no preview child process")


def frame_step(port: int):
    try:
        frame = http("GET", f"http://{LOOPBACK}:{port}/preview/frame", timeout=2)[2]
    except OSError:
        return None
    return frame.get("snapshot", {}).get("step") if isinstance(frame, dict) else None


@pytest.fixture
def worker():
    port = free_port()
    server = ServerProcess(["serve", "--env", "paddock/gp-v0", "--preview", f"{LOOPBACK}:{port}"], port,
                           stdin=subprocess.PIPE)
    try:
        reply = ask_worker(server.proc, {"id": 1, "type": "reset", "options": {"seed": 3}}, timeout=180)
        assert reply and reply["ok"], reply
        server.wait_listening()
        yield server
    finally:
        server.proc.stdin.close()
        server.stop()


def step_message(proc, i):
    drivers = ask_worker(proc, {"id": 2, "type": "getActionSpec"}, 30)["result"]["controlledDrivers"]
    return {"id": i, "type": "step", "actions": {d: {"steering": 0.0, "throttle": 0.5, "brake": 0.0} for d in drivers}}


def test_a_stopped_preview_child_never_holds_a_reply(worker):
    child = preview_child(worker.proc.pid)
    os.kill(child, signal.SIGSTOP)
    try:
        for seed, track in enumerate(("oval", "grand-prix", "oval")):
            t0 = time.monotonic()
            reply = ask_worker(worker.proc, {"id": 10 + seed, "type": "reset", "options": {"seed": seed, "track": track}}, 10)
            assert reply is not None and reply["ok"] and time.monotonic() - t0 < 5, reply
            step = step_message(worker.proc, 20)
            for i in range(30):
                assert ask_worker(worker.proc, step, 5)["ok"]
    finally:
        os.kill(child, signal.SIGCONT)
    deadline = time.monotonic() + 60                              # the child reads again: frames resume
    while (frame_step(worker.port) or 0) < 31 and time.monotonic() < deadline:
        assert ask_worker(worker.proc, step, 10)["ok"] is True
        time.sleep(0.2)
    assert (frame_step(worker.port) or 0) >= 31


def test_a_killed_preview_child_is_restarted_and_replies_say_ok_for_applied_changes(worker):
    child = preview_child(worker.proc.pid)
    os.kill(child, signal.SIGKILL)
    time.sleep(0.5)
    reply = ask_worker(worker.proc, {"id": 10, "type": "reset", "options": {"seed": 1, "track": "oval"}}, 10)
    assert reply is not None and reply["ok"] is True, reply
    state = ask_worker(worker.proc, {"id": 11, "type": "getState"}, 10)
    assert state["result"]["snapshot"]["track"]["name"] == "oval"
    step = step_message(worker.proc, 12)
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        assert ask_worker(worker.proc, step, 10)["ok"] is True
        frame = http("GET", f"http://{LOOPBACK}:{worker.port}/preview/track", timeout=2)[2] \
            if frame_step(worker.port) is not None else None
        if isinstance(frame, dict) and frame.get("name") == "oval":
            break
        time.sleep(0.3)
    else:
        raise AssertionError(f"the preview did not come back: {worker.stderr()[-2000:]}")
    assert "preview" in worker.stderr() and "restart" in worker.stderr()
