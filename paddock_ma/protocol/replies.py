"""Reply helpers of the worker protocol: error replies in wire names, and short texts of values."""

from __future__ import annotations

import re

from ..errors import PaddockError
from ..paddockjs.naming import wire_name
from .wire_names import REQUEST_NAMES, wire_field

_SNAKE_NAME = re.compile(r"\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b")


def error_reply(mid, code: str, message: str, field: str | None) -> dict:
    """``{"id", "ok": false, "type": "error", "error", "code", "field"?}``."""
    out = {"id": mid, "ok": False, "type": "error", "error": message, "code": code}
    if field is not None:
        out["field"] = field
    return out


def wire_message(exc: PaddockError) -> str:
    """The error's message in wire names: its field path, and every request name in its text
    (``known keys: controlled_drivers, ...`` reads ``controlledDrivers`` on the wire)."""
    message = exc.message
    if exc.field:
        wire = wire_field(exc.field)
        if wire != exc.field:
            message = message.replace(exc.field, wire)
    return _SNAKE_NAME.sub(lambda m: wire_name(m.group(0)) if m.group(0) in REQUEST_NAMES else m.group(0), message)


def json_kind(value) -> str:
    """``a number``, ``an object``, ... : what a JSON value is, for error texts."""
    if value is None:
        return "null"
    return {bool: "a boolean", int: "a number", float: "a number", str: "a string", list: "an array",
            dict: "an object"}.get(type(value), type(value).__name__)


def short(value) -> str:
    """``repr(value)`` cut to 60 characters, for error texts."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
