"""The NDJSON stdio worker as a real subprocess: framing, caps, ordering, clean exits, bad arguments.

One worker (``--max-line-bytes 4096``) serves the framing tests; a few more start for what ends a
worker (end of input, SIGTERM) and for the entry program and ``--config``. Bad-argument runs stop
before anything is compiled. One in-process test feeds ``serve`` its input in pieces of every size.
"""

import io
import json
import random
import signal
import subprocess
import sys

import pytest

from paddock_ma import catalog
from paddock_ma.protocol.client import WorkerClient
from paddock_ma.protocol.messages import Dispatcher
from paddock_ma.protocol.codec import Limits
from paddock_ma.protocol.server import serve

from tests.helpers.worker import ENV_ID, ROOT, WORKER_ENV, ask, finish, reply_of, serve_argv, start

CAP = 4096


@pytest.fixture(scope="module")
def worker():
    with WorkerClient(ENV_ID, max_line_bytes=CAP, timeout=120, cwd=ROOT) as client:
        yield client


def hello(i) -> bytes:
    return b'{"id":%d,"type":"hello"}' % i


def test_pipelined_requests_are_answered_in_order_as_the_in_process_dispatcher_does(worker):
    steps = [json.dumps({"id": f"s{t}", "type": "step", "actions": {"car-00": {
        "steering": (t % 7 - 3) / 10, "throttle": 0.9, "brake": 0}}}).encode() for t in range(40)]
    lines = [b'{"id":"r","type":"reset","options":{"seed":3}}', *steps,
             b'{"id":"bad","type":"step","actions":{"car-00":{"steering":0}}}',   # rejected, changes nothing
             b'{"id":"o","type":"getObservation"}', b'{"id":"g","type":"getState","stateOptions":{"output":"minimal"}}']
    replies = worker.pipeline(lines)
    ids = [json.loads(r)["id"] for r in replies]
    assert ids == ["r", *[f"s{t}" for t in range(40)], "bad", "o", "g"]
    local = Dispatcher(catalog.env_config(ENV_ID), env_id=ENV_ID, limits=Limits(max_line_bytes=CAP))
    assert replies == [local.handle_line(line) for line in lines]          # byte for byte
    assert json.loads(replies[-3])["code"] == "invalid_action"


def test_an_overlong_line_gets_one_line_too_long_reply_and_the_next_line_is_served(worker):
    at_cap = b'{"id":2,"type":"hello","client":"' + b"c" * (CAP - 40) + b'"}'
    at_cap = at_cap[:-2] + b" " * (CAP - len(at_cap)) + at_cap[-2:]              # exactly CAP bytes
    assert len(at_cap) == CAP
    over = b'{"id":3,"pad":"' + b"x" * CAP + b'"}'
    huge = b'{"id":4,"pad":"' + b"y" * (300 * 1024) + b'"}'                         # spans several read chunks
    lines = [hello(1), at_cap, over, hello(5), huge, hello(6), at_cap + b"\r", at_cap + b" \r"]
    raw = worker.pipeline(lines)
    replies = [json.loads(r) for r in raw]
    assert [r["id"] for r in replies] == [1, 2, None, 5, None, 6, 2, None]
    assert [r["ok"] for r in replies] == [True, True, False, True, False, True, True, False]
    for r in (replies[2], replies[4], replies[7]):
        assert r["code"] == "line_too_long" and r["type"] == "error"
        assert str(CAP) in r["error"] and "--max-line-bytes" in r["error"]
    assert f"{len(huge)} bytes" in replies[4]["error"]                  # the discarded line was measured
    local = Dispatcher(catalog.env_config(ENV_ID), env_id=ENV_ID, limits=Limits(max_line_bytes=CAP))
    assert raw[:6] == [local.handle_line(line) for line in lines[:6]]  # byte for byte, discarded lines too
    assert raw[7] == local.handle_line(lines[7][:-1])                   # the '\r' ends the line


def test_blank_lines_get_no_reply_and_crlf_line_ends_are_accepted(worker):
    replies = worker.pipeline([b"", b"   ", b"\r", b"\t \r", hello(7) + b"\r", b"", hello(8)])
    assert [json.loads(r)["id"] for r in replies] == [7, 8]
    assert all(json.loads(r)["ok"] for r in replies)


def test_invalid_utf8_and_bad_json_get_bad_json_replies_and_the_worker_stays_up(worker):
    lines = [b'{"id":1,"type":"hello","client":"\xff\xfe"}', b"\xc3\x28", b'{"id":2,"type":"hello"', b"NaN",
             b'{"id":3,"id":4,"type":"hello"}', b"null", hello(9)]
    replies = [json.loads(r) for r in worker.pipeline(lines)]
    assert [r.get("code") for r in replies[:5]] == ["bad_json"] * 5
    assert replies[5]["ok"] is False and replies[5]["code"] == "invalid_request"
    assert replies[6] == {**replies[6], "id": 9, "ok": True, "type": "hello:result"}
    assert worker.returncode is None


def test_stdout_carries_only_frames_while_libraries_print_and_eof_ends_the_worker_at_once():
    """numba's cache debugging prints to stdout as kernels load; the frames stay clean. The entry program
    serves the last line even without its newline, and end of input ends it with code 0 (the wait is a
    hang detector, not a speed test: a loaded machine may take seconds to run the step)."""
    env = dict(WORKER_ENV, NUMBA_DEBUG_CACHE="1")
    process = start([sys.executable, str(ROOT / "workers" / "stdio_worker.py"), "--env", ENV_ID], env=env)
    try:
        first = ask(process, b'{"id":1,"type":"reset","options":{"seed":1}}')
        assert first["ok"] and first["id"] == 1
        process.stdin.write(b'{"id":2,"type":"step","actions":{"car-00":{"steering":0,"throttle":1,"brake":0}}}\n'
                            b'{"id":3,"type":"getObservationSpec"}')                  # no final newline
        process.stdin.flush()
        process.stdin.close()
        code = process.wait(120)
        rest = process.stdout.read()
        stderr = process.stderr.read().decode("utf-8", "replace")
    finally:
        finish(process)
    assert code == 0
    lines = rest.splitlines(keepends=True)
    assert [reply_of(line)["id"] for line in lines] == [2, 3]
    assert all(reply_of(line)["ok"] for line in lines)
    assert "[cache]" in stderr, "numba printed nothing: the test did not exercise stray prints"
    assert "Traceback" not in stderr


def test_sigterm_while_idle_exits_cleanly_and_config_files_are_served(tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(catalog.env_config(ENV_ID).to_dict()))
    process = start(serve_argv("--config", str(path)))
    try:
        reply = ask(process, hello(1))
        assert reply["ok"] and reply["result"]["envId"] is None
        assert reply["result"]["controlledDrivers"] == ["car-00"]
        process.send_signal(signal.SIGTERM)
        code = process.wait(60)       # a hang detector
        assert process.stdout.read() == b""
        stderr = process.stderr.read().decode("utf-8", "replace")
    finally:
        finish(process)
    assert code == 0
    assert "Traceback" not in stderr


def test_sigterm_during_a_burst_finishes_the_reply_being_written_and_exits_cleanly():
    process = start(serve_argv("--env", ENV_ID))
    try:
        assert ask(process, b'{"id":0,"type":"reset","options":{"seed":2}}')["ok"]
        step = b'{"id":%d,"type":"step","actions":{"car-00":{"steering":0,"throttle":1,"brake":0}}}\n'
        process.stdin.write(b"".join(step % i for i in range(1, 301)))
        process.stdin.flush()
        assert reply_of(process.stdout.readline())["id"] == 1
        process.send_signal(signal.SIGTERM)
        rest = process.stdout.read()
        code = process.wait(60)       # a hang detector
        stderr = process.stderr.read().decode("utf-8", "replace")
    finally:
        finish(process)
    assert code == 0
    assert "Traceback" not in stderr
    ids = [reply_of(line)["id"] for line in rest.splitlines(keepends=True)]
    assert ids == list(range(2, 2 + len(ids)))          # whole frames, in order, then nothing
    assert len(ids) < 299, "the worker answered the whole burst: SIGTERM came too late to test anything"


BAD_ARGUMENTS = [
    (["--env", "paddock/gp-v9"], ["'paddock/gp-v9'", "paddock/gp-v0", "paddock-ma envs"]),
    (["--env", ENV_ID, "--worlds", "0"], ["--worlds", "'0'", "from 1 to"]),
    (["--env", ENV_ID, "--worlds", "many"], ["--worlds", "'many'"]),
    (["--env", ENV_ID, "--max-line-bytes", "12"], ["--max-line-bytes", "'12'", "at least"]),
    (["--config", "/nonexistent/config.json"], ["/nonexistent/config.json", "cannot read"]),
    ([], ["--env", "--config", "required"]),
]


@pytest.mark.parametrize("args,expected", BAD_ARGUMENTS, ids=lambda v: " ".join(v) if isinstance(v, list) else "")
def test_bad_arguments_exit_2_before_serving_with_a_message_naming_the_value(args, expected):
    out = subprocess.run(serve_argv(*args), input=b"", capture_output=True, timeout=120, cwd=ROOT, env=WORKER_ENV)
    stderr = out.stderr.decode()
    assert out.returncode == 2, stderr
    assert out.stdout == b""
    for text in expected:
        assert text in stderr


@pytest.mark.parametrize("content,expected", [
    (b'{"seed": NaN}', ["not strict JSON", "NaN"]),
    (b'{"seed": 1, "seed": 2}', ["duplicate key 'seed'"]),
    (b'[1, 2]', ["list, not an object"]),
    (b'{"sede": 1}', ["sede", "seed"]),
    (b'\xff{}', ["not UTF-8"]),
])
def test_bad_config_files_exit_2_naming_the_file_and_the_problem(tmp_path, content, expected):
    path = tmp_path / "bad.json"
    path.write_bytes(content)
    out = subprocess.run([sys.executable, str(ROOT / "workers" / "stdio_worker.py"), "--config", str(path)],
                         input=b"", capture_output=True, timeout=120, cwd=ROOT, env=WORKER_ENV)
    stderr = out.stderr.decode()
    assert out.returncode == 2, stderr
    assert out.stdout == b""
    assert str(path) in stderr
    for text in expected:
        assert text in stderr


class _Trickle(io.RawIOBase):
    """A stdin whose reads return pseudo-random small pieces (1 .. 2 * CAP bytes)."""

    def __init__(self, data: bytes, seed: int):
        self.data, self.at, self.rng = data, 0, random.Random(seed)

    def read1(self, size: int) -> bytes:
        n = min(size, self.rng.choice([1, 2, 3, 5, 64, CAP - 1, CAP, CAP + 1, CAP + 2, 2 * CAP]))
        piece = self.data[self.at:self.at + n]
        self.at += len(piece)
        return piece


def test_serve_frames_the_same_however_the_input_is_split():
    """In process: lines around the cap (with and without '\\r'), blank lines and a last line without its
    newline, read in pieces of every size, get the dispatcher's replies to each line, byte for byte."""
    local = Dispatcher(catalog.env_config(ENV_ID), env_id=ENV_ID, limits=Limits(max_line_bytes=CAP))

    def line(i, size):
        head = b'{"id":%d,"type":"hello","client":"' % i
        return head + b"c" * (size - len(head) - 2) + b'"}'

    rng = random.Random(1)
    lines = []
    for i in range(60):
        size = rng.choice([30, 200, CAP - 1, CAP, CAP + 1, CAP + 2, 3 * CAP])
        lines.append(line(i, size) + rng.choice([b"", b"\r"]))
        lines += rng.choice([[], [b""], [b" \t"], [b"\r"]])
    data = b"\n".join(lines)                                         # the last line has no newline

    expected = []
    for raw in data.split(b"\n"):
        raw = raw[:-1] if raw.endswith(b"\r") else raw
        if raw.strip(b" \t\r"):
            expected.append(local.handle_line(raw))
    assert len(expected) == 60 and sum(b'"line_too_long"' in r for r in expected) > 10

    for seed in range(4):
        out = io.BytesIO()
        assert serve(local, _Trickle(data, seed), out, max_line_bytes=CAP, chunk_bytes=CAP // 2,
                     handle_signals=False) == 0
        assert out.getvalue().endswith(b"\n")
        assert out.getvalue().splitlines() == expected
