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
* ``app``: the aiohttp application every server here is (routes, CORS for local origins, JSON errors).

aiohttp is the server library: already installed with ``ray[default]`` (its dashboard uses it), maintained,
and one library for HTTP, WebSocket and static files.
"""
