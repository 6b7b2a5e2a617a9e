"""Running a policy and watching runs outside Python: PaddockJS's Policy Runner contract and a viewer.

* ``policy_server``: ``paddock-ma policy-server``, the Policy Runner's HTTP policy endpoints for an actor
  trained here (``policies``), plus the preview endpoints.
* ``preview``: ``PreviewHub`` (latest frame, WebSocket clients), ``PreviewServer`` (a background aiohttp
  server) and ``attach_preview`` (a ``BatchEnv`` observer that publishes its frames at a chosen rate).
* ``frames``: the one adapter from an engine's state to PaddockJS's preview packet and the track picture.
* ``viewer``: ``paddock-ma view``, the static viewer page (``static/``) over a live stream, a frame
  recording (``recording``), a trace (``trace``: ``paddock-ma record`` / ``replay``) or a dataset world
  (``dataset_replay``).
* benchmarks of these servers: ``paddock-ma bench policy-server`` (decide-batch latency) and ``bench preview``
  (what publishing costs a run), in ``paddock_ma.bench``.
* ``app``: the aiohttp application every server here is (routes; policy work on a thread of its own).
* ``guards``: what a request must be before a route sees it (target, Host, Origin, CORS for local pages,
  JSON bodies within their cap) and the one JSON shape of every refusal; ``listen``: addresses checked
  before binding, the socket bound with one clear message, the connection's timeouts, JSON protocol
  errors and masked WebSocket frames; ``source_cache``: recorded sources built once, off the loop, kept
  within a memory bound; ``preview_child``: the supervised preview child (never waited on, restarted).

aiohttp is the server library: already installed with ``ray[default]`` (its dashboard uses it), maintained,
and one library for HTTP, WebSocket and static files.
"""
