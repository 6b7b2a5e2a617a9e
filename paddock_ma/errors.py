"""PaddockError and its closed set of error codes, shared by the Python API and the worker protocol.

Every error names the field (a dotted key path such as ``sensors.rays.length_meters`` or
``actions.car-03.steering``), shows the bad value and says what is allowed. A rejected call changes no
state. The protocol turns a PaddockError into ``{"code", "message", "field"}`` unchanged.
"""

from __future__ import annotations

import difflib

# The closed set of codes. Add one only when a caller must react to it differently from all others.
INVALID_CONFIG = "invalid_config"        # a config key, type or value is wrong
INVALID_ACTION = "invalid_action"        # an action is missing, non-finite, of the wrong type or out of set
UNKNOWN_DRIVER = "unknown_driver"        # a driver id that is not in this environment (or not controlled)
EPISODE_ENDED = "episode_ended"          # the adapters: an action for an agent id whose life ended
NOT_RESET = "not_reset"                  # the environment must be reset before this call
INVALID_REQUEST = "invalid_request"      # a protocol message of the wrong shape or type
SNAPSHOT_REJECTED = "snapshot_rejected"  # a snapshot of another version, track or shape, or modified
INTERNAL_ERROR = "internal"              # a bug or a failing user callback; the message says which
# What only the wire needs (the worker protocol, paddock_ma.protocol):
BAD_JSON = "bad_json"                    # a line that is not one strict JSON object (NaN, duplicate keys, caps)
LINE_TOO_LONG = "line_too_long"          # an NDJSON line over the cap
UNKNOWN_TYPE = "unknown_type"            # a message whose "type" is missing or not a protocol message type
VERSION_MISMATCH = "version_mismatch"    # the peer speaks an incompatible protocol major version
# What only the HTTP servers need (paddock_ma.serve): the caller must make the request smaller (split a
# batch, start a new session), not correct a value.
TOO_LARGE = "too_large"                  # a body, a batch of drivers or a session's drivers over a cap

ERROR_CODES = (INVALID_CONFIG, INVALID_ACTION, UNKNOWN_DRIVER, EPISODE_ENDED, NOT_RESET, INVALID_REQUEST,
               SNAPSHOT_REJECTED, INTERNAL_ERROR, BAD_JSON, LINE_TOO_LONG, UNKNOWN_TYPE, VERSION_MISMATCH,
               TOO_LARGE)


class PaddockError(Exception):
    """An error of the environment contract: ``code`` (one of ERROR_CODES), ``message``, ``field``."""

    def __init__(self, code: str, message: str, field: str | None = None):
        if code not in ERROR_CODES:
            raise ValueError(f"unknown PaddockError code {code!r}")
        super().__init__(message)
        self.code = code
        self.message = message
        self.field = field

    def to_dict(self) -> dict:
        out = {"code": self.code, "message": self.message}
        if self.field is not None:
            out["field"] = self.field
        return out

    def __repr__(self) -> str:
        return f"PaddockError({self.code!r}, {self.message!r}, field={self.field!r})"


class ConfigError(PaddockError, ValueError):
    """A configuration error (code ``invalid_config``); also a ValueError for plain Python callers."""

    def __init__(self, field: str, message: str):
        super().__init__(INVALID_CONFIG, f"{field}: {message}", field)


def suggest(name: str, choices) -> str:
    """`` (did you mean 'x'?)`` for the closest of ``choices`` to ``name``, or an empty string."""
    close = difflib.get_close_matches(str(name), [str(c) for c in choices], n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""
