"""A bounded, seeded fuzz of a real policy server: mutated Policy Runner bodies, raw request heads and
WebSocket frames. Every answer is one of the servers' statuses with a strict-JSON body (an error: a code of
the closed set, never ``internal``; a success: finite controls in range), nothing brings the server down,
and after it all a fresh session decides exactly as a fresh session did before."""

import json
import random
import socket

import pytest

from paddock_ma.errors import ERROR_CODES

from ..helpers.raw_http import LOOPBACK, closed_within, exchange, request_bytes, ws_frame, ws_open
from ..helpers.servers import ACTOR, start_policy_server

STEPS = json.loads((ACTOR.parent / "checkpoint-steps.json").read_text())["steps"]
OBS = STEPS[0]["observations"]
ROUTES = ["/policy/reset", "/policy/reset-state", "/policy/decide-batch"]
ODD_VALUES = [None, True, False, 0, -1, 1e308, -1e308, 1e-320, 2**63 - 1, -(2**63), "", "x" * 5000, "1.5", [],
              {}, [[[[]]]], {"self": None}, {"vector": []}, [1.0] * 3000, "\u0000", "\ud7ff"]


def strict_json(body: bytes):
    def refuse(token):
        raise ValueError(f"not JSON: {token}")
    return json.loads(body, parse_constant=refuse)


@pytest.fixture(scope="module")
def server():
    s = start_policy_server()
    yield s
    s.stop()


def post(port, path, data: bytes):
    return exchange(port, request_bytes("POST", path, port, data, {"Content-Type": "application/json"}))


def first_decision(port):
    assert post(port, "/policy/reset", json.dumps({"driverIds": list(OBS)}).encode()).status == 200
    answer = post(port, "/policy/decide-batch", json.dumps({"driverIds": list(OBS), "observations": OBS}).encode())
    assert answer.status == 200
    return answer.json()["actions"]


def mutate(rng: random.Random, doc):
    """``doc`` with one random place replaced, removed or nested (a fifth of the time: a vector entry)."""
    doc = json.loads(json.dumps(doc))
    if rng.random() < 0.2:
        vector = rng.choice(list(doc["observations"].values()))["vector"]
        vector[rng.randrange(len(vector))] = rng.choice(ODD_VALUES + [1e300, -1e300, 1e307])
        return doc
    parent, key = None, None
    node = doc
    for _ in range(rng.randint(0, 6)):
        if isinstance(node, dict) and node:
            parent, key = node, rng.choice(list(node))
        elif isinstance(node, list) and node:
            parent, key = node, rng.randrange(len(node))
        else:
            break
        node = parent[key]
    if parent is None:
        return rng.choice(ODD_VALUES)
    choice = rng.random()
    if choice < 0.7:
        parent[key] = rng.choice(ODD_VALUES)
    elif choice < 0.85 and isinstance(parent, dict):
        del parent[key]
    else:
        parent[key] = [parent[key]] * rng.randint(1, 3)
    return doc


def raw_body(rng: random.Random) -> bytes:
    kind = rng.randrange(5)
    valid = json.dumps({"driverIds": list(OBS), "observations": OBS}).encode()
    if kind == 0:
        return bytes(rng.randrange(256) for _ in range(rng.randint(0, 200)))
    if kind == 1:
        return valid[:rng.randrange(len(valid))]
    if kind == 2:
        return b"[" * rng.choice([10, 2000, 100000])
    if kind == 3:
        return valid.replace(b"0.", b"NaN", 1) if rng.random() < 0.5 else valid.replace(b"1", b"Infinity", 1)
    return b'{"driverIds": ["a", "a"], "driverIds": 5, "observations": {"a": {"vector": [1e400]}}}'


def assert_answer(answer, label):
    assert answer is not None, f"{label}: closed without an answer"
    assert answer.status in (200, 400, 413), (label, answer)
    body = strict_json(answer.body)
    if answer.status != 200:
        assert body["ok"] is False and body["code"] in ERROR_CODES and body["code"] != "internal", (label, body)
        return
    for action in body.get("actions", {}).values():
        assert -1 <= action["steering"] <= 1 and 0 <= action["throttle"] <= 1 and 0 <= action["brake"] <= 1


def test_mutated_bodies_get_answers_by_the_rules(server):
    rng = random.Random(42)
    before = first_decision(server.port)
    valid = {"driverIds": list(OBS), "observations": OBS}
    for n in range(400):
        path = rng.choice(ROUTES)
        data = raw_body(rng) if n % 4 == 3 else json.dumps(mutate(rng, valid)).encode()
        assert_answer(post(server.port, path, data), f"#{n} {path} {data[:200]!r}")
    assert first_decision(server.port) == before


def test_raw_request_heads_get_json_answers_or_a_close(server):
    rng = random.Random(7)
    pieces = [b"GET", b"POST", b"OPTIONS", b"BREW", b" ", b"/", b"/policy/reset", b"/preview/frame", b"HTTP/1.1",
              b"HTTP/1.0", b"\r\n", b"Host: 127.0.0.1", b"Content-Length: 3", b"Content-Length: x",
              b"Transfer-Encoding: chunked", b"Origin: null", b":", b"\x00", b"\xff", b"%", b"?a=b", b"#"]
    for n in range(150):
        head = b"".join(rng.choice(pieces) for _ in range(rng.randint(1, 14))) + b"\r\n\r\n"
        with socket.create_connection((LOOPBACK, server.port), timeout=15) as sock:
            sock.sendall(head)
            sock.shutdown(socket.SHUT_WR)
            data = b""
            while chunk := sock.recv(65536):
                data += chunk
        if data:
            status = int(data.split(b" ", 2)[1])
            body = data.split(b"\r\n\r\n", 1)[1]
            if status != 200 and body:
                assert strict_json(body)["code"] in ERROR_CODES, (n, head, data[:300])
            assert status in (200, 204, 400, 403, 404, 405, 408, 413, 415), (n, head, data[:300])
    assert first_decision(server.port)


def test_random_websocket_frames_never_hurt_the_stream(server):
    rng = random.Random(3)
    for n in range(40):
        sock, answer = ws_open(server.port)
        assert answer.status == 101
        frames = b""
        for _ in range(rng.randint(1, 4)):
            payload = bytes(rng.randrange(256) for _ in range(rng.choice([0, 5, 125, 126, 300])))
            frames += ws_frame(rng.randrange(16), payload, masked=rng.random() < 0.7, fin=rng.random() < 0.8,
                               rsv=rng.randrange(8) if rng.random() < 0.2 else 0)
        if rng.random() < 0.2:
            frames = frames[:rng.randrange(len(frames) + 1)]
        try:
            sock.sendall(frames)
            closed_within(sock, 0.2)
        except OSError:
            pass
        sock.close()
    sock, answer = ws_open(server.port)
    assert answer.status == 101
    sock.close()
    assert exchange(server.port, request_bytes("GET", "/preview/frame", server.port)).status == 200
