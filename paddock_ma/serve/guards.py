"""What a request must be before any route of the servers sees it, and the one shape of every refusal.

The servers listen on this machine's loopback unless told otherwise, and a browser will send them what
any page asks it to: so a request is checked, in this order, by ``guard`` (the application's middleware):

1. its target is a path (origin form): an absolute-form target (``GET http://evil.example/...``) is a
   proxy's request, refused 400 (field ``path``);
2. its ``Host`` names this server (``host_allowed``): a loopback name or address (``localhost``,
   ``*.localhost``, 127.0.0.0/8, ``[::1]``), the address it was bound to, and when bound to every interface
   any IP literal or this machine's host name; any other name is DNS rebinding, refused 403 (field ``Host``);
3. an ``Origin``, if sent, is a local page's (``origin_allowed``: http(s) on a loopback name, or this
   server's own origin); ``null`` (a sandboxed frame, a file) and every other origin are refused 403
   (field ``Origin``) whatever the route, WebSocket handshakes included. CORS headers go to the allowed
   origins only, and a preflight (OPTIONS) is answered here;
4. a state-changing route reads its body with ``read_json_body``: ``Content-Type: application/json``
   (so a foreign page cannot send it without a preflight, which step 3 refuses), else 415; no
   ``Content-Encoding`` but identity, else 415; at most ``MAX_BODY_BYTES``, else 413 (code ``too_large``);
   all of it within ``BODY_SECONDS``, else 408.

Every refusal and every error, from a route, the router (404, 405) or a bug (500), is the JSON body
``{"ok": false, "error", "code", "field"}`` (``error_response``) with ``code`` from the closed set of
``paddock_ma.errors``; a 500 names the exception's type only (the traceback goes to the server's log), so
no reply carries a path of this machine. The HTTP protocol's own refusals (a malformed request line, an
oversized header) are answered in the same shape by ``listen.GuardedProtocol``.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import socket
from urllib.parse import urlsplit

from aiohttp import web

from ..errors import INTERNAL_ERROR, INVALID_REQUEST, TOO_LARGE

MAX_BODY_BYTES = 16 * 1024 * 1024      # a request body; 1,024 drivers' 300-entry vectors are ~6 MB
BODY_SECONDS = 10.0                    # for the whole body to arrive once its headers did
BIND_HOST = web.AppKey("paddock_bind_host", str)   # the address the app's server was bound to
WILDCARDS = ("0.0.0.0", "::")
LOG = logging.getLogger("paddock_ma.serve")


class Refused(Exception):
    """A request refused by the rules: the reply's ``status``, ``code``, ``message`` and ``field``."""

    def __init__(self, status: int, code: str, message: str, field: str | None = None):
        super().__init__(message)
        self.status, self.code, self.message, self.field = status, code, message, field


def error_response(status: int, code: str, message: str, field: str | None = None) -> web.Response:
    """The one JSON shape of a refusal: ``{ok: false, error, code, field}`` (``error``: the message
    PaddockJS's Policy Runner shows)."""
    return web.json_response({"ok": False, "error": message, "code": code, "field": field}, status=status)


# -- Host and Origin ---------------------------------------------------------------------------------------
def split_host(value: str) -> str:
    """The host of a ``Host`` header value or an origin's netloc, lower-case, IPv6 without brackets."""
    value = value.strip().lower()
    if value.startswith("["):
        return value[1:value.find("]")] if "]" in value else value
    return value.rsplit(":", 1)[0] if value.count(":") == 1 else value


def _ip(host: str):
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        return None


def is_loopback_name(host: str) -> bool:
    """``localhost``, ``*.localhost`` (RFC 6761: always this machine) or a loopback IP literal."""
    ip = _ip(host)
    return host == "localhost" or host.endswith(".localhost") or (ip is not None and ip.is_loopback)


def host_allowed(host_header: str | None, bound_host: str) -> bool:
    """Whether a ``Host`` header names this server (see the module docstring; no header: HTTP/1.0,
    which no browser sends, so no rebinding)."""
    if host_header is None:
        return True
    host = split_host(host_header)
    if is_loopback_name(host) or host == split_host(bound_host):
        return True
    if bound_host in WILDCARDS:
        return _ip(host) is not None or host in {socket.gethostname().lower(), socket.getfqdn().lower()}
    return False


def origin_allowed(origin: str, host_header: str | None) -> bool:
    """Whether a page of ``origin`` may call this server: http(s) on a loopback name, or the server's own
    origin (the page it served, reached by the ``Host`` the request names). Never ``null``."""
    try:
        parts = urlsplit(origin)
        netloc_host = split_host(parts.netloc)
    except ValueError:
        return False
    if parts.scheme not in ("http", "https") or not parts.netloc or parts.path not in ("", "/"):
        return False
    return is_loopback_name(netloc_host) or (host_header is not None and parts.netloc.lower() == host_header.lower())


def _cors(response: web.StreamResponse, origin: str) -> None:
    response.headers["Access-Control-Allow-Origin"] = origin
    response.headers["Access-Control-Allow-Methods"] = "GET, POST, OPTIONS"
    response.headers["Access-Control-Allow-Headers"] = "Content-Type"
    response.headers["Access-Control-Max-Age"] = "600"
    response.headers["Vary"] = "Origin"


def request_problem(request: web.Request) -> Refused | None:
    """Why ``request`` is refused before routing (target, Host, Origin), or None."""
    if not request.raw_path.startswith("/"):
        return Refused(400, INVALID_REQUEST, "path: the request target must be a path such as /policy/reset "
                       "(this server is not a proxy)", "path")
    host = request.headers.get("Host")
    if not host_allowed(host, request.config_dict.get(BIND_HOST, "127.0.0.1")):
        return Refused(403, INVALID_REQUEST, f"Host: {host[:80]!r} does not name this server; use "
                       "http://127.0.0.1:PORT or http://localhost:PORT", "Host")
    origin = request.headers.get("Origin")
    if origin is not None and not origin_allowed(origin, host):
        return Refused(403, INVALID_REQUEST, f"Origin: pages of {origin[:80]!r} may not call this server; only "
                       "pages served from this machine (localhost, 127.0.0.1, [::1]) may", "Origin")
    return None


def _http_error(request: web.Request, exc: web.HTTPException) -> web.Response:
    """A router's or a static route's HTTPException as the JSON refusal of its status."""
    if exc.status == 404:
        response = error_response(404, INVALID_REQUEST, f"path: nothing is served at {request.path[:200]!r}", "path")
    elif exc.status == 405:
        allowed = exc.headers.get("Allow", "")
        response = error_response(405, INVALID_REQUEST, f"method: {request.method} is not allowed on "
                                  f"{request.path[:200]!r}; allowed: {allowed}", "method")
        response.headers["Allow"] = allowed
    elif exc.status == 413:
        response = error_response(413, TOO_LARGE, f"body: over the cap of {MAX_BODY_BYTES} bytes", "body")
    else:
        response = error_response(exc.status, INTERNAL_ERROR if exc.status >= 500 else INVALID_REQUEST,
                                  f"{exc.reason}", None)
    return response


@web.middleware
async def guard(request: web.Request, handler):
    """The application's middleware: the checks of the module docstring, then the route; every refusal
    and error as JSON; CORS headers for allowed origins."""
    problem = request_problem(request)
    if problem is not None:
        return error_response(problem.status, problem.code, problem.message, problem.field)
    origin = request.headers.get("Origin")
    if request.method == "OPTIONS":
        response = web.Response(status=204)
    else:
        try:
            response = await handler(request)
        except Refused as exc:
            response = error_response(exc.status, exc.code, exc.message, exc.field)
            if exc.status in (408, 413):
                response.force_close()          # the rest of the body is not read
        except web.HTTPException as exc:
            if exc.status < 400:
                raise
            response = _http_error(request, exc)
        except (asyncio.CancelledError, ConnectionError):
            raise
        except Exception as exc:  # noqa: BLE001 (a bug must still answer in the contract's shape)
            LOG.exception("error answering %s %s", request.method, request.path)
            response = error_response(500, INTERNAL_ERROR, f"internal error ({type(exc).__name__}); the server's "
                                      "log has the details", None)
    if origin is not None and not response.prepared:
        _cors(response, origin)
    return response


# -- bodies --------------------------------------------------------------------------------------------------
async def read_json_body(request: web.Request, max_bytes: int = MAX_BODY_BYTES) -> bytes:
    """The raw bytes of a state-changing request's JSON body, or ``Refused`` (415, 413, 408, 400)."""
    if request.content_type != "application/json":
        raise Refused(415, INVALID_REQUEST, f"Content-Type: got {request.content_type!r}; send the body as "
                      "application/json", "Content-Type")
    encoding = request.headers.get("Content-Encoding", "identity").strip().lower()
    if encoding not in ("", "identity"):
        raise Refused(415, INVALID_REQUEST, f"Content-Encoding: got {encoding[:40]!r}; send the body "
                      "uncompressed", "Content-Encoding")
    if request.content_length is not None and request.content_length > max_bytes:
        raise Refused(413, TOO_LARGE, f"body: {request.content_length} bytes is over the cap of {max_bytes} bytes; "
                      "send fewer drivers a request", "body")
    try:
        async with asyncio.timeout(BODY_SECONDS):
            return await request.read()
    except TimeoutError:
        raise Refused(408, INVALID_REQUEST, f"body: not received in full within {BODY_SECONDS:g} s", "body") from None
    except web.HTTPRequestEntityTooLarge:
        raise Refused(413, TOO_LARGE, f"body: over the cap of {max_bytes} bytes; send fewer drivers a request",
                      "body") from None
    except (web.HTTPException, web.RequestPayloadError, ValueError, OSError) as exc:
        raise Refused(400, INVALID_REQUEST, f"body: could not be read ({type(exc).__name__})", "body") from None
