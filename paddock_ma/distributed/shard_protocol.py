"""A shard's JSON protocol path: the worker protocol answered inside a shard's actor.

``ShardProtocol(config, num_worlds, env_id)`` builds, on its first request, a
``paddock_ma.protocol.messages.Dispatcher`` of ``num_worlds`` worlds of the same config. The
dispatcher's API constructs its engine itself, so the protocol's worlds are not the array path's
worlds (``shard.ShardCore``): the two paths share the actor and the config, never state.
"""

from __future__ import annotations


class ShardProtocol:
    """The worker protocol of one shard (see the module docstring). config: an EnvConfig dict;
    num_worlds: W; env_id: the catalogue id ``hello`` names (optional)."""

    def __init__(self, config: dict, num_worlds: int, env_id: str | None = None):
        self.config, self.num_worlds, self.env_id = config, num_worlds, env_id
        self._dispatcher = None

    def dispatcher(self):
        """The protocol's ``Dispatcher``, built on first use (a shard that never speaks JSON builds none)."""
        if self._dispatcher is None:
            from ..protocol.messages import Dispatcher
            self._dispatcher = Dispatcher(self.config, num_worlds=self.num_worlds, env_id=self.env_id)
        return self._dispatcher

    def handle(self, message) -> dict:
        """One decoded JSON request -> its reply (the worker protocol, ``protocol.messages``)."""
        return self.dispatcher().handle(message)

    def handle_line(self, line: bytes) -> bytes:
        """One NDJSON request line -> one reply line (strict JSON; never pickled or evaluated)."""
        if not isinstance(line, (bytes, str)):
            return self.dispatcher().error_line("bad_json", f"line: got {type(line).__name__}; expected bytes")
        return self.dispatcher().handle_line(line)
