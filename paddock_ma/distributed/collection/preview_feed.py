"""Live preview of a collection: one world of the fleet on PaddockJS's preview stream.

``FleetPreview(fleet, hub, world, fps)`` asks the shard holding global world ``world`` for a copy of
it (``ShardCore.preview_copy``: the shard pays the copy, not the packet) at most ``fps`` times a second
and hands each to ``hub`` (a live preview server's hub: ``track``, ``publish_threadsafe``, ``url``,
``stop``; the command line's ``PreviewProcess``), which builds the packet. ``poll()`` is called by the
collection loop after each step it receives and never waits: a frame request rides the shard's call
queue between two steps (the frame reads the state only, so the dataset is unchanged) and is published
when Ray says it is ready; a frame lost with its shard is dropped, and the next request goes to the
replacement.
"""

from __future__ import annotations

import time

from ...value_rules import integer_problem, is_finite_number


class FleetPreview:
    """One world of a ``ShardFleet`` published to a preview hub (see the module docstring)."""

    def __init__(self, fleet, hub, world: int, fps: float = 10.0):
        if integer_problem(world, 0, fleet.total_worlds) is not None:
            raise ValueError(f"preview_world: got {world}; the fleet has worlds 0..{fleet.total_worlds - 1}")
        if not (is_finite_number(fps) and fps > 0):
            raise ValueError(f"preview_fps: got {fps!r}; expected frames a second > 0 (e.g. 10)")
        self.fleet, self.hub, self.world = fleet, hub, world
        self.shard, self.local = divmod(world, fleet.worlds_per_shard)
        self.period = 1.0 / fps
        self.published = 0
        self.dropped = 0              # requests whose shard failed before answering
        self._pending = None          # (kind, ref) in flight: "track" once, then "frame"
        self._last = -1e18

    def poll(self) -> None:
        """Publish a frame that has arrived; request the next when one is due. Returns at once."""
        import ray

        if self._pending is not None:
            kind, ref = self._pending
            ready, _ = ray.wait([ref], timeout=0)
            if not ready:
                return
            self._pending = None
            try:
                value = ray.get(ref)
            except Exception:         # noqa: BLE001 - the shard failed; the fleet replaces it
                self.dropped += 1
                return
            if kind == "track":
                self.hub.track = value
            else:
                self.hub.publish_threadsafe(value)
                self.published += 1
        actor = self.fleet.shards[self.shard].actor
        now = time.monotonic()
        if actor is None or now - self._last < self.period:
            return
        self._last = now
        if self.hub.track is None:
            self._pending = ("track", actor.track_picture.remote())
        else:
            self._pending = ("frame", actor.preview_copy.remote(self.local))     # the server builds the packet
