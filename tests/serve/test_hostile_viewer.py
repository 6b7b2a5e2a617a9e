"""The viewer (``paddock-ma view --trace``) and its preview stream against a hostile page and a careless
client, as a real process on loopback: no absolute paths, non-ASCII digits, a world the trace does not
have, trace sources replayed once (never on the event loop, never twice at once), forged Host and
Origin on pages and WebSockets, unmasked frames, and connections that idle or trickle."""

import json
import socket
import threading
import time

import pytest

from paddock_ma.errors import ERROR_CODES

from ..helpers.raw_http import (LOOPBACK, closed_within, exchange, free_port, request_bytes, ws_frame, ws_open)
from ..helpers.servers import ServerProcess, run_cli

IDLE_SECONDS = 10          # the servers' idle and header timeout (serve.guards)


@pytest.fixture(scope="module")
def trace(tmp_path_factory):
    """A one-world trace long enough that replaying it takes seconds (the blocking the probe saw)."""
    path = tmp_path_factory.mktemp("trace") / "oval.trace.json"
    done = run_cli(["record", "--env", "paddock/oval-batch-v0", "--worlds", "1", "--steps", "200",
                    "--out", str(path)], timeout=300)
    assert done.returncode == 0, done.stderr
    return path


def start_viewer(trace):
    port = free_port()
    return ServerProcess(["view", "--trace", str(trace), "--port", str(port)], port).wait_listening()


@pytest.fixture(scope="module")
def viewer(trace):
    s = start_viewer(trace)
    yield s
    s.stop()


def get(port, path, headers=None):
    answer = exchange(port, request_bytes("GET", path, port, headers=headers))
    assert answer is not None, f"GET {path}: closed without an answer"
    return answer


def assert_json_error(answer, status, field=None):
    assert answer.status == status, answer
    assert answer.headers["content-type"].startswith("application/json"), answer
    body = answer.json()
    assert body["ok"] is False and body["code"] in ERROR_CODES and isinstance(body["error"], str)
    if field is not None:
        assert body["field"] == field, body
    return body


def test_sources_name_no_absolute_path(viewer, trace):
    answer = get(viewer.port, "/viewer/sources")
    assert answer.status == 200
    listing = answer.json()["sources"]
    assert len(listing) == 1 and listing[0]["kind"] == "trace" and trace.name in listing[0]["name"]
    assert str(trace.parent) not in answer.body.decode() and "/tmp" not in answer.body.decode()


@pytest.mark.parametrize("index", ["%C2%B2", "%D9%A3", "1", "-0", "0x0", "%200", "00000000000000000000001"])
def test_a_source_index_that_is_not_one_is_404_json(viewer, index):
    assert_json_error(get(viewer.port, f"/viewer/source/{index}"), 404, "index")


def test_a_world_the_trace_does_not_have_is_refused_at_start(trace):
    done = run_cli(["view", "--trace", str(trace), "--world", "1", "--port", str(free_port())], timeout=60)
    assert done.returncode == 2 and "world" in done.stderr and "Traceback" not in done.stderr, done.stderr


def test_a_source_is_replayed_once_off_the_loop_and_cached(trace):
    """Three viewers open the trace at once on a fresh server: one replay, the others collapsed onto it,
    later requests served from the cache; meanwhile the frame endpoint answers at once."""
    server = start_viewer(trace)
    try:
        answers, started = [], threading.Barrier(4)

        def fetch():
            started.wait()
            answers.append(get(server.port, "/viewer/source/0"))
        threads = [threading.Thread(target=fetch) for _ in range(3)]
        for t in threads:
            t.start()
        started.wait()
        waits = []
        while any(t.is_alive() for t in threads):
            t0 = time.monotonic()
            assert get(server.port, "/preview/frame").status == 200
            waits.append(time.monotonic() - t0)
            time.sleep(0.02)
        for t in threads:
            t.join()
        assert [a.status for a in answers] == [200] * 3
        assert len({a.body for a in answers}) == 1 and json.loads(answers[0].body)["frames"]
        assert max(waits) < 0.5, waits
        statuses = sorted(a.headers.get("cache-status", "") for a in answers)
        assert sum("fwd=miss" in s and "collapsed" not in s for s in statuses) == 1, statuses
        t0 = time.monotonic()
        again = get(server.port, "/viewer/source/0")
        assert again.body == answers[0].body and "hit" in again.headers["cache-status"]
        assert time.monotonic() - t0 < 2.0
    finally:
        server.stop()


# -- Host and Origin: pages and the WebSocket ---------------------------------------------------------------
@pytest.mark.parametrize("path", ["/", "/viewer/sources", "/viewer/source/0", "/preview/frame", "/preview/track"])
def test_a_foreign_host_or_origin_reads_nothing(viewer, path):
    assert_json_error(get(viewer.port, path, {"Host": f"evil.example:{viewer.port}"}), 403, "Host")
    assert_json_error(get(viewer.port, path, {"Origin": "http://evil.example"}), 403, "Origin")
    answer = get(viewer.port, path, {"Origin": "null"})
    assert "access-control-allow-origin" not in answer.headers


def test_the_websocket_refuses_foreign_pages_and_serves_local_ones(viewer):
    for headers in ({"Origin": "http://evil.example"}, {"Host": f"evil.example:{viewer.port}"}, {"Origin": "null"}):
        sock, answer = ws_open(viewer.port, headers=headers)
        sock.close()
        assert answer.status == 403, headers
    for headers in ({"Origin": "http://localhost:5173"}, {"Origin": f"http://127.0.0.1:{viewer.port}"}, {}):
        sock, answer = ws_open(viewer.port, headers=headers)
        sock.close()
        assert answer.status == 101, headers


def test_an_unmasked_client_frame_closes_the_websocket(viewer):
    sock, answer = ws_open(viewer.port)
    assert answer.status == 101
    sock.sendall(ws_frame(0x1, b"hello", masked=False))
    assert closed_within(sock, 5)
    sock.close()
    sock, answer = ws_open(viewer.port)                 # the server still serves streams
    sock.sendall(ws_frame(0x1, b"hello", masked=True))
    assert not closed_within(sock, 1)
    sock.close()


# -- idle and slow connections ------------------------------------------------------------------------------
def test_idle_and_trickling_connections_are_closed(viewer):
    idle = [socket.create_connection((LOOPBACK, viewer.port), timeout=30) for _ in range(20)]
    trickle = socket.create_connection((LOOPBACK, viewer.port), timeout=30)
    kept = socket.create_connection((LOOPBACK, viewer.port), timeout=30)
    kept.sendall(request_bytes("GET", "/preview/frame", viewer.port, headers={"Connection": "keep-alive"}))
    t0 = time.monotonic()
    stop = threading.Event()

    def drip():
        for byte in b"GET /preview/frame HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"a" * 100:
            if stop.wait(0.5):
                return
            try:
                trickle.sendall(bytes([byte]))
            except OSError:
                return
    threading.Thread(target=drip, daemon=True).start()
    try:
        assert all(closed_within(s, IDLE_SECONDS + 5 - (time.monotonic() - t0)) for s in idle)
        assert closed_within(trickle, IDLE_SECONDS + 5 - (time.monotonic() - t0))
        assert closed_within(kept, 5)                  # answered, then idle: closed too
        assert time.monotonic() - t0 < IDLE_SECONDS + 6
    finally:
        stop.set()
        for s in idle + [trickle, kept]:
            s.close()
    assert get(viewer.port, "/preview/frame").status == 200
