"""The aiohttp application of every server here: PaddockJS's policy and preview endpoints and the viewer.

Routes (each present when its part is given):

* ``POST /policy/reset`` ``{driverIds, actionSpec?, observationSpec?, configuration?}`` -> ``{ok, session:
  {id, controlledDrivers}}``; ``POST /policy/reset-state`` ``{driverIds}`` -> ``{ok, session, resetDrivers}``;
  ``POST /policy/decide-batch`` ``{driverIds, observations, ...}`` -> ``{ok, session, actions, meta:
  {serverTsMs}}`` (PaddockJS's ``createPolicyServerController`` and ``examples/python/base_policy_server.py``).
* ``GET /preview`` (WebSocket: ``{type: "preview:status"}`` then ``{type: "preview:snapshot", snapshot,
  observation, meta}`` frames), ``GET /preview/frame`` (the newest frame, or a waiting status),
  ``GET /preview/track`` (the track picture of ``frames.track_picture``; our addition, for the viewer).
* ``GET /`` and ``/static/*``: the viewer; ``GET /viewer/sources`` and ``/viewer/source/{i}``: recorded
  runs the viewer can open (``viewer.py``).

Errors are JSON ``{ok: false, error, code, field}`` with a 4xx status (``error`` is the message
PaddockJS's client shows). CORS: any local origin (http(s)://localhost, 127.0.0.1 or [::1], any port,
and ``null`` for a page opened from a file) may call every route.
"""

from __future__ import annotations

import asyncio
import re
import time
from pathlib import Path

import orjson
from aiohttp import WSMsgType, web

from ..errors import INTERNAL_ERROR, INVALID_REQUEST, PaddockError
from .policies import driver_id_list

STATIC = Path(__file__).parent / "static"
LOCAL_ORIGIN = re.compile(r"^(https?://(localhost|127\.0\.0\.1|\[::1\])(:\d+)?|null)$")
MAX_BODY = 16 * 1024 * 1024


def error_response(status: int, code: str, message: str, field: str | None = None) -> web.Response:
    return web.json_response({"ok": False, "error": message, "code": code, "field": field}, status=status)


@web.middleware
async def local_cors(request: web.Request, handler):
    """CORS headers for local origins; preflights answered here."""
    origin = request.headers.get("Origin")
    allowed = origin is not None and LOCAL_ORIGIN.match(origin) is not None
    if request.method == "OPTIONS" and allowed:
        response = web.Response(status=204)
    else:
        response = await handler(request)
    if allowed:
        response.headers["Access-Control-Allow-Origin"] = origin
        response.headers["Access-Control-Allow-Methods"] = "GET, POST, OPTIONS"
        response.headers["Access-Control-Allow-Headers"] = "Content-Type"
        response.headers["Vary"] = "Origin"
    return response


async def _json_body(request: web.Request) -> dict:
    try:
        body = orjson.loads(await request.read())       # 4x the standard library's speed on vector bodies
    except orjson.JSONDecodeError as exc:
        raise PaddockError(INVALID_REQUEST, f"body: not JSON ({exc})", "body") from None
    if not isinstance(body, dict):
        raise PaddockError(INVALID_REQUEST, f"body: expected a JSON object, got {type(body).__name__}", "body")
    return body


def _policy_routes(app: web.Application, policy) -> None:
    session = {"id": 0, "controlledDrivers": []}

    def guarded(fn):
        async def handler(request):
            try:
                return web.json_response(fn(await _json_body(request)))
            except PaddockError as exc:
                return error_response(400, exc.code, exc.message, exc.field)
            except Exception as exc:  # noqa: BLE001 (a bug must still answer in the contract's shape)
                return error_response(500, INTERNAL_ERROR, f"{type(exc).__name__}: {exc}", None)
        return handler

    def reset(body):
        ids = driver_id_list(body)
        policy.reset(ids)
        session["id"] += 1
        session["controlledDrivers"] = ids
        return {"ok": True, "session": dict(session), "policy": policy.describe()}

    def reset_state(body):
        ids = driver_id_list(body)
        policy.reset_state(ids)
        return {"ok": True, "session": {"id": session["id"]}, "resetDrivers": ids}

    def decide(body):
        ids = driver_id_list(body)
        actions = policy.decide(ids, body.get("observations"))
        return {"ok": True, "session": {"id": session["id"]}, "actions": actions,
                "meta": {"serverTsMs": int(time.time() * 1000)}}

    app.router.add_post("/policy/reset", guarded(reset))
    app.router.add_post("/policy/reset-state", guarded(reset_state))
    app.router.add_post("/policy/decide-batch", guarded(decide))


def _preview_routes(app: web.Application, hub) -> None:
    async def frame(request):
        if hub.latest_text is not None:
            return web.Response(text=hub.latest_text, content_type="application/json")
        return web.json_response({"type": "preview:status", "status": "waiting-for-frame", "session": hub.session})

    async def track(request):
        if hub.track is None:
            return error_response(404, INVALID_REQUEST, "no run is publishing to this server yet", "track")
        return web.json_response(hub.track)

    async def stream(request):
        ws = web.WebSocketResponse(heartbeat=30)
        await ws.prepare(request)
        await ws.send_json({"type": "preview:status", "status": "connected", "session": hub.session})
        sender = asyncio.ensure_future(hub.stream(ws.send_str))
        try:
            async for msg in ws:       # client messages are ignored; the loop ends when it goes away
                if msg.type in (WSMsgType.ERROR, WSMsgType.CLOSE):
                    break
        finally:
            sender.cancel()
        return ws

    app.router.add_get("/preview", stream)
    app.router.add_get("/preview/frame", frame)
    app.router.add_get("/preview/track", track)


def _viewer_routes(app: web.Application, sources) -> None:
    async def index(request):
        return web.FileResponse(STATIC / "index.html")

    async def listing(request):
        return web.json_response({"sources": [s.describe() for s in sources or []]})

    async def source(request):
        i = request.match_info["index"]
        if not i.isdigit() or int(i) >= len(sources or []):
            return error_response(404, INVALID_REQUEST, f"no recorded source {i!r}", "index")
        return web.json_response(sources[int(i)].document())

    app.router.add_get("/", index)
    app.router.add_static("/static/", STATIC)
    app.router.add_get("/viewer/sources", listing)
    app.router.add_get("/viewer/source/{index}", source)


def build_app(hub=None, policy=None, viewer_sources=None, viewer: bool = True) -> web.Application:
    """The application with the policy routes (``policy``: a ``ServedActor``-like object), the preview
    routes (``hub``: a ``PreviewHub``) and the viewer (static page and ``viewer_sources``)."""
    app = web.Application(middlewares=[local_cors], client_max_size=MAX_BODY)

    async def not_served(request):
        return error_response(404, INVALID_REQUEST, f"{request.path}: this server has no policy loaded "
                              "(start it with paddock-ma policy-server --checkpoint FILE)", "path")
    if policy is not None:
        _policy_routes(app, policy)
    else:
        app.router.add_post("/policy/{name}", not_served)
    if hub is not None:
        async def bind(app):
            hub.bind(asyncio.get_running_loop())
        app.on_startup.append(bind)
        _preview_routes(app, hub)
    if viewer:
        _viewer_routes(app, viewer_sources)
    return app
