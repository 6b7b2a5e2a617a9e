"""The aiohttp application of every server here: PaddockJS's policy and preview endpoints and the viewer.

Routes (each present when its part is given):

* ``POST /policy/reset`` ``{driverIds, actionSpec?, observationSpec?, configuration?}`` -> ``{ok, session:
  {id, controlledDrivers}}``; ``POST /policy/reset-state`` ``{driverIds}`` -> ``{ok, session, resetDrivers}``;
  ``POST /policy/decide-batch`` ``{driverIds, observations, ...}`` -> ``{ok, session, actions, meta:
  {serverTsMs}}`` (PaddockJS's ``createPolicyServerController`` and ``examples/python/base_policy_server.py``).
  A request is parsed, checked (``policies``), acted on and encoded on one worker thread of its own, in the
  order requests arrive (a small one, ``INLINE_BODY_BYTES``, on the loop itself when the worker is idle):
  a batch of a thousand drivers never holds the event loop, and the policy's state is touched by one
  request at a time, in order.
* ``GET /preview`` (WebSocket: ``{type: "preview:status"}`` then ``{type: "preview:snapshot", snapshot,
  observation, meta}`` frames), ``GET /preview/frame`` (the newest frame, or a waiting status),
  ``GET /preview/track`` (the track picture of ``frames.track_picture``; our addition, for the viewer).
* ``GET /`` and ``/static/*``: the viewer; ``GET /viewer/sources`` (each source's kind and name, never a
  path of this machine) and ``/viewer/source/{i}``: recorded runs the viewer can open, each built once
  off the event loop and cached (``source_cache``).

Every request first passes ``guards.guard`` (its target, ``Host`` and ``Origin``; CORS for local pages
only); the policy routes read their body with ``guards.read_json_body``. Errors are JSON ``{ok: false,
error, code, field}`` (``error`` is the message PaddockJS's client shows) with status 400 (a bad request;
``bad_json``, ``invalid_request``, or ``too_large`` for a batch or a session over its cap), 403 (a foreign
Host or Origin), 404, 405, 408 (a body that did not arrive), 413 (a body over the cap, ``too_large``),
415 (not JSON, or compressed) or 500 (``internal``: a bug, or a policy output that is not finite).
"""

from __future__ import annotations

import asyncio
import re
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import orjson
from aiohttp import WSMsgType, web

from ..errors import BAD_JSON, INTERNAL_ERROR, INVALID_REQUEST, PaddockError
from .guards import LOG, MAX_BODY_BYTES, error_response, guard, read_json_body
from .policies import driver_id_list
from .source_cache import SourceCache

STATIC = Path(__file__).parent / "static"
MAX_WS_MESSAGE_BYTES = 64 * 1024        # what a preview client may send (it needs to send nothing)
# A policy body up to this size (~100 drivers' 300-entry vectors, ~2 ms of work) is answered on the loop
# when the worker is idle: no thread hand-off, whose wake-ups would stretch a loaded machine's tail latency.
INLINE_BODY_BYTES = 256 * 1024
SOURCE_INDEX = re.compile(r"[0-9]{1,6}")


def _json_body(raw: bytes) -> dict:
    try:
        body = orjson.loads(raw)       # strict (no NaN), and 4x the standard library's speed on vector bodies
    except orjson.JSONDecodeError as exc:
        raise PaddockError(BAD_JSON, f"body: not JSON ({exc})"[:300], "body") from None
    if not isinstance(body, dict):
        raise PaddockError(INVALID_REQUEST, f"body: expected a JSON object, got {type(body).__name__}", "body")
    return body


def _answer(fn, raw: bytes) -> tuple[int, bytes]:
    """(status, JSON bytes) of a policy route's function on a raw body: on the policy's worker thread."""
    try:
        return 200, orjson.dumps(fn(_json_body(raw)))
    except PaddockError as exc:
        status = 500 if exc.code == INTERNAL_ERROR else 400
        return status, orjson.dumps({"ok": False, "error": exc.message, "code": exc.code, "field": exc.field})
    except Exception as exc:  # noqa: BLE001 (a bug must still answer in the contract's shape)
        LOG.exception("error in a policy route")
        return 500, orjson.dumps({"ok": False, "error": f"internal error ({type(exc).__name__}); the server's log "
                                  "has the details", "code": INTERNAL_ERROR, "field": None})


def _policy_routes(app: web.Application, policy) -> None:
    session = {"id": 0, "controlledDrivers": []}
    worker = ThreadPoolExecutor(1, thread_name_prefix="paddock-policy")

    async def stop_worker(app):
        worker.shutdown(wait=False, cancel_futures=True)
    app.on_cleanup.append(stop_worker)

    handed = [0]                # requests on the worker thread, not answered yet

    def route(fn):
        async def handler(request):
            raw = await read_json_body(request)
            if not handed[0] and len(raw) <= INLINE_BODY_BYTES:
                status, data = _answer(fn, raw)      # the worker is idle: order and exclusivity hold
            else:
                handed[0] += 1
                try:
                    status, data = await asyncio.get_running_loop().run_in_executor(worker, _answer, fn, raw)
                finally:
                    handed[0] -= 1
            return web.Response(body=data, status=status, content_type="application/json")
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

    app.router.add_post("/policy/reset", route(reset))
    app.router.add_post("/policy/reset-state", route(reset_state))
    app.router.add_post("/policy/decide-batch", route(decide))


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
        ws = web.WebSocketResponse(heartbeat=30, max_msg_size=MAX_WS_MESSAGE_BYTES)
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
    cache = SourceCache(sources)

    async def close_cache(app):
        cache.close()
    app.on_cleanup.append(close_cache)

    async def index(request):
        return web.FileResponse(STATIC / "index.html")

    async def listing(request):
        return web.json_response({"sources": cache.describe()})

    async def source(request):
        i = request.match_info["index"]
        if not SOURCE_INDEX.fullmatch(i) or int(i) >= len(cache):
            return error_response(404, INVALID_REQUEST, f"index: no recorded source {i[:40]!r}; this server has "
                                  f"{len(cache)} (GET /viewer/sources lists them)", "index")
        data, cache_status = await cache.get(int(i))
        return web.Response(body=data, content_type="application/json", headers={"Cache-Status": cache_status})

    app.router.add_get("/", index)
    app.router.add_static("/static/", STATIC)
    app.router.add_get("/viewer/sources", listing)
    app.router.add_get("/viewer/source/{index}", source)


def build_app(hub=None, policy=None, viewer_sources=None, viewer: bool = True) -> web.Application:
    """The application with the policy routes (``policy``: a ``ServedActor``-like object), the preview
    routes (``hub``: a ``PreviewHub``) and the viewer (static page and ``viewer_sources``). Serve it with
    ``listen.start_serving`` or ``listen.serve_app`` (the guarded protocol: timeouts, JSON protocol errors)."""
    app = web.Application(middlewares=[guard], client_max_size=MAX_BODY_BYTES)

    async def not_served(request):
        return error_response(404, INVALID_REQUEST, f"{request.path[:200]}: this server has no policy loaded "
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
