"""WorkerClient against real workers: requests and raw lines, compact vectors, big pipelined batches, and
no worker left running after close, after a failure, on garbage collection, or when the parent is killed."""

import gc
import json
import os
import signal
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from paddock_ma import catalog
from paddock_ma.protocol import codec
from paddock_ma.protocol.client import WorkerClient, WorkerError, WorkerTimeout, decode_f32, decode_vectors
from paddock_ma.protocol.messages import PROTOCOL_VERSION, Dispatcher

from tests.helpers.worker import ENV_ID, ROOT, is_gone, wait_gone

SLEEPER = [sys.executable, "-c", "import time; time.sleep(120)"]     # ignores stdin, never replies
ACTIONS = {"car-00": {"steering": 0.05, "throttle": 0.7, "brake": 0}}


@pytest.fixture(scope="module")
def client():
    with WorkerClient(ENV_ID, timeout=120, cwd=ROOT) as worker:
        yield worker
    assert worker.returncode == 0


def test_requests_are_numbered_and_answered(client):
    first = client.request({"type": "hello", "protocolVersion": PROTOCOL_VERSION})
    second = client.request({"type": "getActionSpec"})
    assert first["ok"] and first["result"]["protocolVersion"] == PROTOCOL_VERSION
    assert isinstance(first["id"], int) and second["id"] == first["id"] + 1
    assert second["result"]["controlledDrivers"] == ["car-00"]
    named = client.request({"id": "mine", "type": "warp"})
    assert named["id"] == "mine" and named["ok"] is False and named["code"] == "unknown_type"


def test_raw_lines_are_the_in_process_dispatchers_bytes(client):
    local = Dispatcher(catalog.env_config(ENV_ID), env_id=ENV_ID)
    lines = [b'{"id":1,"type":"getObservationSpec"}', b'{"id":2,"type":"reset","options":{"seed":11}}',
             codec.encode({"id": 3, "type": "step", "actions": ACTIONS}), b'{"id":4,"type":"snapshot"}']
    for line in lines:
        assert client.request_line(line) == local.handle_line(line)


def test_f32_vectors_decode_to_the_plain_json_numbers(client):
    plain = client.request({"type": "reset", "options": {"seed": 5}})["result"]
    packed = client.request({"type": "reset", "options": {"seed": 5}, "encoding": "f32-base64"})["result"]
    vector = packed["observation"]["car-00"]["vector"]
    assert set(vector) == {"f32", "shape"}
    expected = np.asarray(plain["observation"]["car-00"]["vector"], dtype=np.float32)
    assert decode_f32(vector).dtype == np.float32
    assert decode_f32(vector).tobytes() == expected.tobytes()
    assert decode_f32(plain["observation"]["car-00"]["vector"]).tobytes() == expected.tobytes()
    decoded = decode_vectors(packed)
    assert decoded["observation"]["car-00"]["vector"].tobytes() == expected.tobytes()
    assert decoded["metrics"] == plain["metrics"]


def test_a_pipelined_batch_bigger_than_the_pipes_does_not_deadlock(client):
    padding = b" " * 2000                                           # ~0.6 MB of requests, ~1 MB of replies
    lines = [b'{"id":%d,"type":"getActionSpec"}%s' % (i, padding) for i in range(300)]
    replies = client.pipeline(lines, timeout=60)
    assert [json.loads(r)["id"] for r in replies] == list(range(300))
    assert len(set(replies)) == 300 and all(b'"ok":true' in r for r in replies)


def test_lines_that_get_no_reply_or_hold_a_newline_are_refused(client):
    with pytest.raises(ValueError, match="blank"):
        client.request_line(b"  ")
    with pytest.raises(ValueError, match="newline"):
        client.request_line(b'{"id":1,\n"type":"hello"}')
    with pytest.raises(ValueError, match="newline"):
        client.pipeline([b'{"id":1}\n{"id":2}'])
    assert client.request({"type": "hello"})["ok"]


def test_close_ends_the_worker_with_code_0_and_is_idempotent():
    worker = WorkerClient(ENV_ID, timeout=120, cwd=ROOT)
    assert worker.request({"type": "hello"})["ok"]
    assert worker.close() == 0
    assert is_gone(worker.pid)
    assert worker.close() == 0


def test_a_worker_that_failed_to_start_raises_a_clear_error_and_leaves_nothing_running():
    with WorkerClient("paddock/nope", stderr="capture", timeout=60, cwd=ROOT) as worker:
        with pytest.raises(WorkerError) as info:
            worker.request({"type": "hello"})
        with pytest.raises(WorkerError):                       # every later request fails the same way
            worker.request({"type": "hello"})
    assert "exited with code 2" in str(info.value) and "paddock/nope" in str(info.value)
    assert worker.returncode == 2 and is_gone(worker.pid)


def test_a_killed_worker_raises_and_an_exception_in_the_block_still_reaps_it():
    with pytest.raises(WorkerError, match="code -9"):
        with WorkerClient(ENV_ID, timeout=120, cwd=ROOT) as worker:
            assert worker.request({"type": "hello"})["ok"]
            os.kill(worker.pid, signal.SIGKILL)
            worker.request({"type": "hello"})
    assert is_gone(worker.pid)


def test_a_silent_worker_times_out_and_close_kills_it():
    worker = WorkerClient(command=SLEEPER, close_timeout=0.5)
    with pytest.raises(WorkerTimeout):
        worker.request({"type": "hello"}, timeout=0.3)
    with pytest.raises(WorkerError, match="timed out"):         # later replies could not be matched
        worker.request_line(b'{"id":2,"type":"hello"}', timeout=0.3)
    assert worker.close() == -signal.SIGTERM       # close_timeout passed, so close terminated it
    assert is_gone(worker.pid)


def test_a_forgotten_client_is_reaped_when_collected():
    worker = WorkerClient(command=SLEEPER)
    pid = worker.pid
    del worker
    gc.collect()
    assert wait_gone(pid, 10)


PARENT = textwrap.dedent("""
    import sys, time
    from paddock_ma.protocol.client import WorkerClient
    worker = WorkerClient({env_id!r}, timeout=120)
    silent = WorkerClient(command={sleeper!r})       # never reads stdin: only PR_SET_PDEATHSIG ends it
    print(worker.pid, silent.pid, flush=True)
    assert worker.request({{"type": "hello"}})["ok"]
    print("ready", flush=True)
    time.sleep(120)
""")


def test_no_worker_outlives_a_parent_killed_with_sigkill():
    code = PARENT.format(env_id=ENV_ID, sleeper=SLEEPER)
    parent = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, cwd=ROOT, text=True)
    try:
        worker_pid, silent_pid = map(int, parent.stdout.readline().split())
        assert parent.stdout.readline().strip() == "ready"
        assert not is_gone(worker_pid) and not is_gone(silent_pid)
        parent.kill()
        parent.wait(10)
        assert wait_gone(worker_pid, 5), "the worker outlived its killed parent"
        assert wait_gone(silent_pid, 5), "PR_SET_PDEATHSIG did not end the child of a killed parent"
    finally:
        parent.kill()
        parent.wait()
        parent.stdout.close()


def test_the_reply_reader_splits_lines_of_any_size_across_reads():
    import queue
    import threading

    from paddock_ma.protocol.client import pump_lines
    from paddock_ma.protocol.server import widen_pipe

    read_fd, write_fd = os.pipe()
    assert widen_pipe(write_fd) >= 1 << 16          # a pipe can be widened (Linux: up to pipe-max-size)
    big = b"x" * (3 << 20)                          # longer than one read of the reader
    lines = queue.Queue()
    reader = threading.Thread(target=pump_lines, args=(read_fd, lines))
    reader.start()
    with os.fdopen(write_fd, "wb") as out:
        out.write(b'{"a":1}\n{"b":2}\n' + big[:1000])
        out.flush()
        out.write(big[1000:] + b"\n" + b'{"last":true}')      # the last line has no newline
    reader.join(timeout=30)
    os.close(read_fd)
    got = [lines.get_nowait() for _ in range(lines.qsize())]
    assert got == [b'{"a":1}\n', b'{"b":2}\n', big + b"\n", b'{"last":true}', None]


def test_widen_pipe_leaves_what_is_not_a_pipe(tmp_path):
    from paddock_ma.protocol.server import widen_pipe
    with open(tmp_path / "f", "wb") as handle:
        assert widen_pipe(handle.fileno()) == 0
