"""The policy server (``paddock-ma policy-server``) against a hostile page and a careless client, as a real
process on loopback: every request of issue 42's probe gets the answer the server's rules give it.

Numbers that poison a driver, foreign pages that would change the session, forged Host headers and
absolute-form targets (DNS rebinding), bodies over the cap or falsely compressed, unbounded ids and
batches, loose types; every error a JSON body with a code of the closed set, no ``NaN`` on the wire, and
a refused request changes no driver's state."""

import json
import socket
import threading
import time

import pytest

from paddock_ma.errors import ERROR_CODES

from ..helpers.raw_http import LOOPBACK, exchange, free_port, read_answer, request_bytes
from ..helpers.servers import ACTOR, ServerProcess, start_policy_server

STEPS = json.loads((ACTOR.parent / "checkpoint-steps.json").read_text())["steps"]
OBS = STEPS[0]["observations"]
DRIVERS = list(OBS)
LOCAL = "http://127.0.0.1:5173"
BODY_SECONDS = 10          # how long a body may take to arrive (serve.guards)


def strict_json(body: bytes):
    """The body parsed as strict JSON (NaN, Infinity refused, as a browser's JSON.parse does)."""
    def refuse(token):
        raise ValueError(f"not JSON: {token}")
    return json.loads(body, parse_constant=refuse)


def call(port, method, path, body=None, headers=None, raw=None):
    """(status, headers, strict-JSON body) of one request with exact bytes (JSON content type unless given)."""
    data = raw if raw is not None else (b"" if body is None else json.dumps(body).encode())
    fields = {"Content-Type": "application/json"} if method == "POST" else {}
    fields.update(headers or {})
    answer = exchange(port, request_bytes(method, path, port, data, fields))
    assert answer is not None, f"{method} {path}: the server closed the connection without an answer"
    return answer.status, answer.headers, strict_json(answer.body)


def assert_error(answer, status, code=None, field=None):
    got_status, headers, body = answer
    assert got_status == status, (got_status, body)
    assert headers["content-type"].startswith("application/json")
    assert body["ok"] is False and isinstance(body["error"], str) and body["code"] in ERROR_CODES, body
    if code is not None:
        assert body["code"] == code, body
    if field is not None:
        assert body["field"] == field, body
    return body


def decide_body(observations, ids=None):
    return {"driverIds": list(observations) if ids is None else ids, "observations": observations}


def with_vector_entry(driver, index, value):
    obs = json.loads(json.dumps(OBS))
    obs[driver]["vector"][index] = value
    return obs


@pytest.fixture(scope="module")
def server():
    s = start_policy_server()
    yield s
    s.stop()


def fresh_first_actions(port):
    assert call(port, "POST", "/policy/reset", {"driverIds": DRIVERS})[0] == 200
    status, _, body = call(port, "POST", "/policy/decide-batch", decide_body(OBS))
    assert status == 200, body
    return body["actions"]


# -- 1. finite numbers only, in and out ---------------------------------------------------------------------
@pytest.mark.parametrize("value", [1e308, -1e308, 1e12])
def test_a_huge_vector_entry_is_refused_and_poisons_no_driver(server, value):
    first = fresh_first_actions(server.port)
    assert call(server.port, "POST", "/policy/reset", {"driverIds": DRIVERS})[0] == 200
    body = assert_error(call(server.port, "POST", "/policy/decide-batch", decide_body(with_vector_entry("car-00", 5, value))),
                        400, "invalid_request")
    assert body["field"].startswith("observations.car-00.vector") and "car-00" in body["error"]
    status, _, after = call(server.port, "POST", "/policy/decide-batch", decide_body(OBS))
    assert status == 200 and after["actions"] == first          # the refused step moved no history


def test_a_huge_speed_then_its_negative_are_refused_and_later_steps_stay_finite(server):
    first = fresh_first_actions(server.port)
    assert call(server.port, "POST", "/policy/reset", {"driverIds": DRIVERS})[0] == 200
    for speed in (1e308, -1e308):
        obs = json.loads(json.dumps(OBS))
        obs["car-01"]["object"]["self"]["speedKph"] = speed
        assert_error(call(server.port, "POST", "/policy/decide-batch", decide_body(obs)), 400, "invalid_request",
                     "observations.car-01.object.self.speedKph")
    status, _, after = call(server.port, "POST", "/policy/decide-batch", decide_body(OBS))
    assert status == 200 and after["actions"] == first


@pytest.fixture(scope="module")
def overflowing_server(tmp_path_factory):
    """A policy whose finite weights overflow to inf - inf = NaN when the first vector entry is 10, and
    stay finite when it is 0.5: in-range inputs, a non-finite output."""
    big = 1e308
    doc = {"format": "paddockjs-distilled-actor-v1", "obsDim": 4, "layers": [
        {"weight": [[big, 0, 0, 0], [big, 0, 0, 0]], "bias": [0, 0]},
        {"weight": [[1, -1], [0, 0]], "bias": [0, 0.1]},
        {"weight": [[1, 0], [0, 1]], "bias": [0, 0]},
        {"weight": [[1, 0], [0, 1]], "bias": [0, 0]}]}
    path = tmp_path_factory.mktemp("actor") / "overflowing.json"
    path.write_text(json.dumps(doc))
    port = free_port()
    s = ServerProcess(["policy-server", "--checkpoint", str(path), "--port", str(port)], port).wait_listening()
    yield s
    s.stop()


def test_a_non_finite_policy_output_is_an_error_naming_the_driver_and_advances_no_state(overflowing_server):
    port = overflowing_server.port
    calm = {"vector": [0.5, 0.0, 0.0, 0.0]}
    wild = {"vector": [10.0, 0.0, 0.0, 0.0]}
    assert call(port, "POST", "/policy/reset", {"driverIds": ["calm", "wild"]})[0] == 200
    status, _, first = call(port, "POST", "/policy/decide-batch", decide_body({"calm": calm}))
    assert status == 200
    assert call(port, "POST", "/policy/reset", {"driverIds": ["calm", "wild"]})[0] == 200
    body = assert_error(call(port, "POST", "/policy/decide-batch", decide_body({"calm": calm, "wild": wild})),
                        500, "internal", "actions.wild")
    assert "wild" in body["error"] and "calm" not in body["error"]
    status, _, again = call(port, "POST", "/policy/decide-batch", decide_body({"calm": calm}))
    assert status == 200 and again["actions"] == first["actions"]    # calm's history did not move either


# -- 2. same-origin protection -----------------------------------------------------------------------------
def session_id(port):
    status, _, body = call(port, "POST", "/policy/decide-batch", decide_body({}, ids=[]))
    assert status == 200
    return body["session"]["id"]


@pytest.mark.parametrize("headers, status", [
    ({"Origin": "http://evil.example", "Content-Type": "text/plain"}, 403),
    ({"Origin": "http://evil.example", "Content-Type": "application/json"}, 403),
    ({"Origin": "null", "Content-Type": "application/json"}, 403),
    ({"Origin": LOCAL, "Content-Type": "text/plain"}, 415),
    ({"Content-Type": "application/x-www-form-urlencoded"}, 415),
    ({"Content-Type": None}, 415),
])
def test_a_foreign_page_cannot_replace_the_session(server, headers, status):
    before = session_id(server.port)
    answer = call(server.port, "POST", "/policy/reset", raw=b'{"driverIds":["pwned"]}', headers=headers)
    assert_error(answer, status, "invalid_request")
    assert "Access-Control-Allow-Origin".lower() not in answer[1] or headers.get("Origin") == LOCAL
    assert session_id(server.port) == before


def test_a_local_page_keeps_its_cors_and_null_gets_none(server):
    status, headers, _ = call(server.port, "POST", "/policy/reset", {"driverIds": DRIVERS}, headers={"Origin": LOCAL})
    assert status == 200 and headers["access-control-allow-origin"] == LOCAL
    status, headers, _ = call(server.port, "GET", "/preview/frame", headers={"Origin": "null"})
    assert "access-control-allow-origin" not in headers
    answer = call(server.port, "OPTIONS", "/policy/reset", headers={"Origin": "null", "Access-Control-Request-Method": "POST"})
    assert "access-control-allow-origin" not in answer[1] and answer[0] == 403


@pytest.mark.parametrize("method, path", [("GET", "/preview/frame"), ("POST", "/policy/reset")])
def test_a_foreign_host_header_is_refused(server, method, path):
    before = session_id(server.port)
    answer = call(server.port, method, path, {"driverIds": ["pwned"]} if method == "POST" else None,
                  headers={"Host": f"evil.example:{server.port}"})
    assert_error(answer, 403, "invalid_request", "Host")
    assert session_id(server.port) == before
    for host in (f"localhost:{server.port}", f"127.0.0.1:{server.port}", "localhost"):
        assert call(server.port, "GET", "/preview/frame", headers={"Host": host})[0] == 200


def test_an_absolute_form_target_is_refused(server):
    before = session_id(server.port)
    for method, body in (("GET", None), ("POST", {"driverIds": ["pwned"]})):
        answer = call(server.port, method, f"http://evil.example:{server.port}/policy/reset" if body else
                      f"http://evil.example:{server.port}/preview/frame", body,
                      headers={"Host": f"evil.example:{server.port}"})
        assert_error(answer, 400, "invalid_request", "path")
    answer = call(server.port, "GET", f"http://127.0.0.1:{server.port}/preview/frame")
    assert_error(answer, 400, "invalid_request", "path")
    assert session_id(server.port) == before


# -- 3. JSON error bodies for every status -----------------------------------------------------------------
def test_a_body_over_the_cap_is_413_too_large(server):
    head = request_bytes("POST", "/policy/decide-batch", server.port, b"",
                         {"Content-Type": "application/json", "Content-Length": str(17 * 1024 * 1024)})
    answer = exchange(server.port, head + b'{"driverIds": [' + b" " * 65536)
    assert answer is not None
    assert_error((answer.status, answer.headers, strict_json(answer.body)), 413, "too_large", "body")


def test_a_body_that_never_arrives_is_408(server):
    with socket.create_connection((LOOPBACK, server.port), timeout=BODY_SECONDS + 10) as sock:
        sock.sendall(request_bytes("POST", "/policy/reset", server.port, b"",
                                   {"Content-Type": "application/json", "Content-Length": "100"}) + b'{"driver')
        t0 = time.monotonic()
        answer = read_answer(sock)
    assert answer is not None and time.monotonic() - t0 < BODY_SECONDS + 5
    assert_error((answer.status, answer.headers, strict_json(answer.body)), 408, "invalid_request", "body")


def test_a_false_content_encoding_is_415(server):
    answer = call(server.port, "POST", "/policy/decide-batch", raw=b'{"driverIds": []}',
                  headers={"Content-Encoding": "gzip"})
    assert_error(answer, 415, "invalid_request", "Content-Encoding")


@pytest.mark.parametrize("method, path, status", [
    ("GET", "/viewer/source/%C2%B2", 404), ("GET", "/viewer/source/%D9%A3", 404), ("GET", "/viewer/source/-1", 404),
    ("GET", "/viewer/source/99999999999999999999", 404), ("GET", "/nothing/here", 404), ("GET", "/static/../x", 404),
    ("GET", "/policy/reset", 405), ("DELETE", "/preview/frame", 405), ("PUT", "/policy/decide-batch", 405),
])
def test_404_and_405_are_json(server, method, path, status):
    assert_error(call(server.port, method, path), status, "invalid_request")


@pytest.mark.parametrize("data", [
    b"GARBAGE\r\n\r\n",
    b"GET /preview/frame HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Long: " + b"a" * 70000 + b"\r\n\r\n",
    b"GET /" + b"a" * 70000 + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
    b"GET /preview/frame HTTP/9.9\r\nHost: 127.0.0.1\r\n\r\n",
    b"POST /policy/reset HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: -5\r\n\r\n",
    b"POST /policy/reset HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n",
])
def test_protocol_errors_are_400_json(server, data):
    answer = exchange(server.port, data)
    assert answer is not None and answer.status == 400, answer
    assert_error((answer.status, answer.headers, strict_json(answer.body)), 400, "invalid_request")


# -- 6. bounded input ---------------------------------------------------------------------------------------
def test_ten_thousand_drivers_in_one_request_are_refused_at_once(server):
    obs = {f"d{i}": {"vector": [0.1] * 12} for i in range(10_000)}
    t0 = time.monotonic()
    body = assert_error(call(server.port, "POST", "/policy/decide-batch", decide_body(obs)), 400, "too_large",
                        "driverIds")
    assert time.monotonic() - t0 < 5 and "1024" in body["error"]


@pytest.mark.parametrize("length", [300, 10 * 1024 * 1024])
def test_an_overlong_driver_id_is_refused_and_not_echoed(server, length):
    answer = call(server.port, "POST", "/policy/reset", {"driverIds": ["x" * length]})
    assert_error(answer, 400, "invalid_request", "driverIds[0]")
    assert len(json.dumps(answer[2])) < 2000


def test_remembered_drivers_are_capped_with_a_clear_error(server):
    assert call(server.port, "POST", "/policy/reset", {"driverIds": DRIVERS})[0] == 200
    refused = None
    for batch in range(6):
        answer = call(server.port, "POST", "/policy/reset-state", {"driverIds": [f"b{batch}-{i}" for i in range(1000)]})
        if answer[0] != 200:
            refused = answer
            break
    assert refused is not None, "6000 new driver ids were all remembered"
    body = assert_error(refused, 400, "too_large", "driverIds")
    assert "/policy/reset" in body["error"]
    assert fresh_first_actions(server.port)             # a new session starts afresh


@pytest.mark.parametrize("mutate, field", [
    (lambda o: o["car-00"]["vector"].__setitem__(3, "1.5"), "observations.car-00.vector"),
    (lambda o: o["car-00"]["vector"].__setitem__(3, True), "observations.car-00.vector"),
    (lambda o: o["car-00"].__setitem__("object", "fast"), "observations.car-00.object"),
    (lambda o: o["car-00"]["object"].__setitem__("self", 5), "observations.car-00.object.self"),
    (lambda o: o["car-00"]["object"]["self"].__setitem__("trackOffsetMeters", False),
     "observations.car-00.object.self.trackOffsetMeters"),
    (lambda o: o["car-00"]["object"]["self"].__setitem__("speedKph", "120"), "observations.car-00.object.self.speedKph"),
])
def test_loose_types_are_refused_naming_the_field(server, mutate, field):
    obs = json.loads(json.dumps(OBS))
    mutate(obs)
    body = assert_error(call(server.port, "POST", "/policy/decide-batch", decide_body(obs)), 400, "invalid_request")
    assert body["field"].startswith(field), body


# -- 5. heavy work off the event loop ----------------------------------------------------------------------
def test_the_largest_batches_leave_other_requests_answered(server):
    vector = OBS["car-00"]["vector"]
    obs = {f"d{i:04d}": {"vector": vector} for i in range(1024)}
    body = json.dumps(decide_body(obs)).encode()
    assert call(server.port, "POST", "/policy/reset", {"driverIds": list(obs)})[0] == 200
    done = []

    def batches():
        for _ in range(4):
            answer = exchange(server.port, request_bytes("POST", "/policy/decide-batch", server.port, body,
                                                         {"Content-Type": "application/json"}))
            done.append(answer.status)
    thread = threading.Thread(target=batches)
    thread.start()
    waits = []
    while thread.is_alive():
        t0 = time.monotonic()
        assert call(server.port, "GET", "/preview/frame")[0] == 200
        waits.append(time.monotonic() - t0)
    thread.join()
    assert done == [200] * 4 and max(waits) < 0.5, waits
