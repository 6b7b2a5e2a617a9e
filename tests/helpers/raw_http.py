"""Hand-made HTTP/1.1 and WebSocket traffic for the hostile-client tests of ``paddock_ma.serve``: exact
bytes on a loopback socket (absolute-form targets, forged Host and Origin headers, malformed request
lines, unmasked WebSocket frames), and the answer parsed back. Every socket has a timeout, so a test that
waits for a server's answer or for it to close a connection stops by itself."""

from __future__ import annotations

import base64
import json
import os
import socket
import struct
import time
import urllib.error
import urllib.request

LOOPBACK = "127.0.0.1"


def free_port() -> int:
    with socket.socket() as s:
        s.bind((LOOPBACK, 0))
        return s.getsockname()[1]


def http(method, url, body=None, headers=None, raw=None, timeout=30):
    """(status, headers, parsed JSON or text) of one request through urllib (JSON content type unless
    the headers say otherwise)."""
    data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
    req = urllib.request.Request(url, data=data, method=method,
                                 headers={"Content-Type": "application/json", **(headers or {})})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            status, hdrs, text = r.status, dict(r.headers), r.read().decode()
    except urllib.error.HTTPError as e:
        status, hdrs, text = e.code, dict(e.headers), e.read().decode()
    try:
        return status, hdrs, json.loads(text)
    except ValueError:
        return status, hdrs, text


class Answer:
    """A parsed HTTP answer: ``status``, ``headers`` (lower-case names), ``body`` bytes, ``json()``."""

    def __init__(self, status: int, headers: dict, body: bytes):
        self.status, self.headers, self.body = status, headers, body

    def json(self):
        return json.loads(self.body)

    def __repr__(self) -> str:
        return f"Answer({self.status}, {self.headers.get('content-type')!r}, {self.body[:300]!r})"


def read_answer(sock: socket.socket) -> Answer | None:
    """One HTTP answer read from ``sock`` (Content-Length or to the close); None if it closed first."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            return None
        data += chunk
    head, body = data.split(b"\r\n\r\n", 1)
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    length = headers.get("content-length")
    while length is not None and len(body) < int(length):
        chunk = sock.recv(65536)
        if not chunk:
            break
        body += chunk
    if length is None:
        while chunk := sock.recv(65536):
            body += chunk
    return Answer(status, headers, body)


def exchange(port: int, data: bytes, timeout: float = 30) -> Answer | None:
    """Send ``data`` (whole requests, exact bytes) on a new connection; the first answer (or None)."""
    with socket.create_connection((LOOPBACK, port), timeout=timeout) as sock:
        sock.sendall(data)
        return read_answer(sock)


def request_bytes(method: str, target: str, port: int, body: bytes = b"", headers: dict | None = None) -> bytes:
    """A request's exact bytes: Host 127.0.0.1:port unless ``headers`` gives one (or None to leave it out)."""
    fields = {"Host": f"{LOOPBACK}:{port}", "Connection": "close", **(headers or {})}
    if body or method == "POST":
        fields.setdefault("Content-Length", str(len(body)))
    text = f"{method} {target} HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in fields.items() if v is not None)
    return text.encode("latin-1") + b"\r\n" + body


def closed_within(sock: socket.socket, seconds: float) -> bool:
    """Whether the server closes ``sock`` within ``seconds`` (reading and dropping whatever it sends)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        sock.settimeout(max(0.05, deadline - time.monotonic()))
        try:
            if not sock.recv(65536):
                return True
        except socket.timeout:
            return False
        except OSError:
            return True
    return False


# -- WebSocket (RFC 6455) ----------------------------------------------------------------------------------
def ws_open(port: int, path: str = "/preview", headers: dict | None = None, timeout: float = 30):
    """(socket, Answer) of a WebSocket handshake; the socket stays open after a 101."""
    sock = socket.create_connection((LOOPBACK, port), timeout=timeout)
    key = base64.b64encode(os.urandom(16)).decode()
    fields = {"Upgrade": "websocket", "Connection": "Upgrade", "Sec-WebSocket-Key": key,
              "Sec-WebSocket-Version": "13", **(headers or {})}
    data = request_bytes("GET", path, port, headers=fields)
    sock.sendall(data)
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = sock.recv(1)
        if not chunk:
            break
        head += chunk
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1]) if lines and lines[0] else 0
    if status != 101:
        sock.close()
    return sock, Answer(status, {}, b"")


def ws_frame(opcode: int, payload: bytes = b"", masked: bool = True, fin: bool = True, rsv: int = 0) -> bytes:
    """One WebSocket frame's bytes (a client's frames are masked, RFC 6455 section 5.3)."""
    first = (0x80 if fin else 0) | (rsv & 7) << 4 | opcode & 0xF
    n = len(payload)
    mask_bit = 0x80 if masked else 0
    if n < 126:
        head = struct.pack("!BB", first, mask_bit | n)
    elif n < 1 << 16:
        head = struct.pack("!BBH", first, mask_bit | 126, n)
    else:
        head = struct.pack("!BBQ", first, mask_bit | 127, n)
    if not masked:
        return head + payload
    key = os.urandom(4)
    return head + key + bytes(b ^ key[i % 4] for i, b in enumerate(payload))
