"""Where and how the servers listen: addresses checked before anything binds, one clear line when a socket
cannot be bound, and the app served over a guarded HTTP protocol.

* ``parse_host(text)``, ``parse_port(value)``, ``parse_bind_address("HOST:PORT")`` (IPv6 in brackets,
  ``[::1]:8787``): ``AddressError`` with the fix for an empty host, an unbracketed IPv6 address, a port
  out of range.
* ``exposure_warning(host, port)``: the line a server prints before it binds beyond loopback (every
  interface for ``0.0.0.0`` / ``::``).
* ``open_listener(host, port)``: all of the above, then the bound, listening socket; a port in use,
  an address not of this machine or a privileged port is an ``AddressError`` naming it.
* ``GuardedProtocol``: aiohttp's connection handler with an idle and header timeout (``IDLE_SECONDS``:
  a connection whose next request has not fully arrived that long after it opened or after its last
  answer is closed; a slow or silent client holds nothing), the HTTP protocol's refusals (a malformed
  request line, an oversized header) as the JSON of ``guards.error_response``, and WebSocket frames
  per RFC 6455 (a client's frame that is not masked closes the connection, section 5.1).
* ``start_serving(app, sock, host)`` (on a running loop) and ``serve_app(app, host, port)`` (the commands:
  checks, binds, serves until SIGINT or SIGTERM; 2 and one line on stderr when it cannot bind).
"""

from __future__ import annotations

import asyncio
import errno
import ipaddress
import re
import signal
import socket
import struct
import sys
from http import HTTPStatus

from aiohttp import web

from ..errors import INTERNAL_ERROR, INVALID_REQUEST, TOO_LARGE
from .guards import BIND_HOST, WILDCARDS, error_response, is_loopback_name

IDLE_SECONDS = 10.0
_HOSTNAME = re.compile(r"^(?=.{1,253}\.?$)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*\.?$",
                       re.IGNORECASE)


class AddressError(Exception):
    """An address a server cannot listen on; the message names it and the fix."""


def _said(option: str) -> str:
    """A message's start naming the option (none when argparse names it already)."""
    return f"{option}: " if option else ""


# -- addresses ---------------------------------------------------------------------------------------------
def parse_host(text: str, option: str = "--host") -> str:
    """The host to bind of ``text``: an IP address (IPv6 with or without brackets) or a host name."""
    host = str(text).strip()
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
        if not _is_ipv6(host):
            raise AddressError(f"{_said(option)}got {text!r}; brackets hold an IPv6 address, e.g. [::1]")
    if not host:
        raise AddressError(f"{_said(option)}got {text!r}; give an address: 127.0.0.1 (this machine only, the default) "
                           "or 0.0.0.0 (every interface)")
    if _is_ipv6(host) or _HOSTNAME.match(host):
        return host
    raise AddressError(f"{_said(option)}got {text!r}; expected an IP address or a host name, e.g. 127.0.0.1, [::1] "
                       "or localhost")


def _is_ipv6(host: str) -> bool:
    try:
        return isinstance(ipaddress.ip_address(host), ipaddress.IPv6Address)
    except ValueError:
        return False


def parse_port(value, option: str = "--port") -> int:
    """A port number 0..65535 (0: any free port) of an int or ASCII digits."""
    text = str(value).strip()
    if isinstance(value, int) and not isinstance(value, bool):
        port = value
    elif text.isascii() and text.isdigit():
        port = int(text)
    else:
        port = -1
    if not 0 <= port <= 65535:
        raise AddressError(f"{_said(option)}got {value!r}; expected a port number from 0 to 65535, e.g. 8787")
    return port


def parse_bind_address(text: str, option: str = "--preview") -> tuple[str, int]:
    """``HOST:PORT`` or ``[IPV6]:PORT`` -> (host, port)."""
    text = str(text).strip()
    if text.startswith("["):
        close = text.find("]")
        if close < 0 or text[close + 1:close + 2] != ":":
            raise AddressError(f"{_said(option)}got {text!r}; give [IPV6]:PORT, e.g. [::1]:8787")
        host, port = text[:close + 1], text[close + 2:]
    else:
        if text.count(":") > 1:
            raise AddressError(f"{_said(option)}got {text!r}; write an IPv6 address in brackets, e.g. [::1]:8787")
        host, colon, port = text.rpartition(":")
        if not colon:
            raise AddressError(f"{_said(option)}got {text!r}; give HOST:PORT, e.g. 127.0.0.1:8787")
    return parse_host(host, option), parse_port(port, option)


def url_of(host: str, port: int) -> str:
    """The base URL to reach a server bound to ``host`` (a wildcard: through this machine's loopback)."""
    host = {"0.0.0.0": "127.0.0.1", "::": "::1"}.get(host, host)
    return f"http://[{host}]:{port}" if _is_ipv6(host) else f"http://{host}:{port}"


def exposure_warning(host: str, port: int) -> str | None:
    """What binding ``host`` exposes, when it is more than this machine; None for loopback."""
    if host in WILDCARDS:
        return (f"paddock-ma: warning: binding {host} listens on every interface: anyone who can reach this "
                f"machine on port {port} can use this server (its policy, frames and recorded runs); the default "
                "127.0.0.1 keeps it to this machine")
    if not is_loopback_name(host.lower()):
        return (f"paddock-ma: warning: binding {host} makes this server reachable from other machines on that "
                "network; the default 127.0.0.1 keeps it to this machine")
    return None


def open_listener(host, port, warn: bool = True) -> tuple[str, socket.socket]:
    """(host, the bound listening socket) after the checks of the module docstring; ``warn``: print the
    exposure warning on stderr first."""
    host, port = parse_host(host), parse_port(port)
    warning = exposure_warning(host, port)
    if warn and warning:
        print(warning, file=sys.stderr, flush=True)
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM,
                                                             flags=socket.AI_PASSIVE)[0]
    except socket.gaierror as exc:
        raise AddressError(f"{host}: not an address this machine can resolve ({exc.strerror})") from None
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(128)
    except OSError as exc:
        sock.close()
        where = url_of(host, port).removeprefix("http://")
        reason = {errno.EADDRINUSE: "is in use: another server (perhaps another paddock-ma) listens there; pick "
                                    "another port",
                  errno.EADDRNOTAVAIL: "is not an address of this machine",
                  errno.EACCES: "needs privileges this user lacks (ports below 1024); pick a port from 1024 up"}
        raise AddressError(f"{where} {reason.get(exc.errno, f'cannot be bound ({exc.strerror})')}") from None
    sock.setblocking(False)
    return host, sock


# -- the connection ------------------------------------------------------------------------------------------
class GuardedProtocol(web.RequestHandler):
    """aiohttp's connection handler with the guards of the module docstring."""

    __slots__ = ()

    def handle_error(self, request, status: int = 500, exc=None, message=None):
        if request.writer.output_size > 0:          # as aiohttp's: an answer already started cannot change
            raise ConnectionError("Response is sent already, cannot send another response with the error message")
        if status >= 500:
            self.log_exception("Error handling request", exc_info=exc)
            code, text = INTERNAL_ERROR, f"internal error ({type(exc).__name__}); the server's log has the details"
        else:
            code = TOO_LARGE if status == 413 else INVALID_REQUEST
            first = (message or HTTPStatus(status).phrase).strip().splitlines()
            text = f"request: not valid HTTP/1.1 ({(first[0] if first else '')[:160]})"
        response = error_response(status, code, text, "request")
        response.force_close()
        return response

    def set_parser(self, parser, data_received_cb=None) -> None:
        super().set_parser(MaskedFramesOnly(parser, self), data_received_cb)


class MaskedFramesOnly:
    """A WebSocket parser's front: follows the frame headers of a client's bytes and closes the connection
    at the first frame without a mask (RFC 6455 section 5.1: a server MUST close it); all else goes on to
    aiohttp's parser (which checks the rest of the RFC: opcodes, control frames, reserved bits, UTF-8)."""

    def __init__(self, parser, protocol: web.RequestHandler):
        self.parser, self.protocol = parser, protocol
        self.head = bytearray()          # the current frame's header bytes so far
        self.skip = 0                    # payload bytes of the current frame still to come
        self.refused = False

    def feed_data(self, data: bytes):
        if self.refused or not self._all_masked(data):
            self.refused = True
            self.protocol.force_close()
            return True, b""
        return self.parser.feed_data(data)

    def feed_eof(self) -> None:
        self.parser.feed_eof()

    def _all_masked(self, data: bytes) -> bool:
        i, n = 0, len(data)
        while i < n:
            if self.skip:
                take = min(self.skip, n - i)
                self.skip -= take
                i += take
                continue
            self.head.append(data[i])
            i += 1
            if len(self.head) < 2:
                continue
            if not self.head[1] & 0x80:
                return False
            length = self.head[1] & 0x7F
            extra = 2 if length == 126 else 8 if length == 127 else 0
            if len(self.head) == 2 + extra + 4:
                if extra:
                    length = struct.unpack("!H" if extra == 2 else "!Q", bytes(self.head[2:2 + extra]))[0]
                self.skip = length
                self.head.clear()
        return True


# -- serving -------------------------------------------------------------------------------------------------
class Serving:
    """A running server: its aiohttp runner and listening server; ``close()`` ends both."""

    def __init__(self, runner: web.AppRunner, server: asyncio.AbstractServer):
        self.runner, self.server = runner, server

    async def close(self) -> None:
        self.server.close()
        await self.runner.cleanup()
        await self.server.wait_closed()


async def start_serving(app: web.Application, sock: socket.socket, host: str) -> Serving:
    """Serve ``app`` on the bound ``sock`` (``host``: the address it was bound to, for the Host check)."""
    loop = asyncio.get_running_loop()
    app[BIND_HOST] = host
    runner = web.AppRunner(app, handle_signals=False, access_log=None)
    await runner.setup()
    server = await loop.create_server(
        lambda: GuardedProtocol(runner.server, loop=loop, keepalive_timeout=IDLE_SECONDS, access_log=None,
                                auto_decompress=False), sock=sock)
    return Serving(runner, server)


def serve_app(app: web.Application, host, port, announce=None) -> int:
    """A command's server: check and bind (``AddressError``: one line on stderr, exit code 2), call
    ``announce(url)``, serve until SIGINT or SIGTERM; -> 0."""
    try:
        host, sock = open_listener(host, port)
    except AddressError as exc:
        print(f"error: {exc}", file=sys.stderr, flush=True)
        return 2

    async def main():
        serving = await start_serving(app, sock, host)
        if announce is not None:
            announce(url_of(host, sock.getsockname()[1]))
        stop = asyncio.Event()
        for sig in (signal.SIGINT, signal.SIGTERM):
            asyncio.get_running_loop().add_signal_handler(sig, stop.set)
        await stop.wait()
        await serving.close()
    asyncio.run(main())
    return 0
