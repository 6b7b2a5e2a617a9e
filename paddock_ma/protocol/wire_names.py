"""The worker protocol's side of PaddockJS's names: replies out, requests in.

The naming rule and its exceptions live in ``paddockjs.naming`` (below the config and the protocol);
this module applies them to messages. ``to_wire`` renames the keys of a Python result by the rule and
makes its values JSON-safe (numpy arrays to lists, non-finite floats to ``null``); ``from_request`` is
``from_wire`` for a message: wire names only, renamed into ``REQUEST_NAMES`` (the names a request may
carry), anything else kept as sent so the reader's check names it as sent. Keys that are data, not
names (driver ids under ``observation``, ``metrics``, ``reward``, ``info.drivers``, ``per_driver``,
``actions``, ``placements``, ``sensors_by_driver``, ``participant_interactions.drivers``), are left as
they are.
"""

from __future__ import annotations

import numpy as np

from ..env.json_safe import json_array as array_to_wire  # the one JSON-safe rule, named for the wire here
from ..env.json_safe import json_scalar
from ..env.actions import ACTION_FIELDS
from ..env.config.root import CONFIG_NAMES
from ..errors import INVALID_REQUEST, PaddockError
from ..paddockjs.naming import (
    REPLY_DATA_KEYED, REQUEST_DATA_KEYED, VALUE_NAMED_KEYS, PythonNameError, from_wire, python_name, wire_name,
)
from .codec import PackedF32

# The Python names a request may carry below its top level: config keys (reset options), action fields,
# and the result and state options.
REQUEST_NAMES = CONFIG_NAMES | frozenset(ACTION_FIELDS) | {"observation_scope", "state_output", "output"}


def to_wire(value, parent: str | None = None):
    """``value`` with wire key names and JSON-safe values (see the module docstring)."""
    kind = type(value)
    if kind is dict:
        if parent in REPLY_DATA_KEYED:
            return {key: to_wire(item) for key, item in value.items()}
        return {wire_name(key): to_wire(item, key) for key, item in value.items()}
    if kind is list or kind is tuple:
        if parent in VALUE_NAMED_KEYS:     # names as values (ray channels): their wire spelling
            return [wire_name(item) if type(item) is str else to_wire(item) for item in value]
        return [to_wire(item) for item in value]
    if kind is float:
        return json_scalar(value)
    if kind is bool or kind is int or kind is str or value is None:
        return value
    if isinstance(value, np.ndarray):
        return array_to_wire(value)
    if isinstance(value, PackedF32):      # written by codec.encode
        return value
    if isinstance(value, np.generic):
        return to_wire(value.item())
    raise TypeError(f"{kind.__name__} has no JSON form")


def from_request(value, parent: str | None = None):
    """``from_wire`` of a protocol message's field over ``REQUEST_NAMES``: strict (a request speaks
    wire names only; a Python spelling is a PaddockError(invalid_request) naming it)."""
    try:
        return from_wire(value, parent, strict=True, names=REQUEST_NAMES)
    except PythonNameError as exc:
        raise PaddockError(INVALID_REQUEST, str(exc), exc.key) from None


def wire_field(field: str | None) -> str | None:
    """A dotted Python field path (``actions.car-00.pit_intent``) in wire names (``...pitIntent``): the
    parts that are request names are renamed, data (driver ids) and unknown keys are kept."""
    if field is None:
        return None
    return ".".join(wire_name(part) if part in REQUEST_NAMES else part for part in field.split("."))


def config_from_wire(doc: dict):
    """An ``EnvConfig`` from a config object in Python names (snake_case) or PaddockJS's (camelCase):
    ``EnvConfig.from_paddockjs``."""
    from ..env.config.root import EnvConfig

    return EnvConfig.from_paddockjs(doc)


__all__ = ["REPLY_DATA_KEYED", "REQUEST_DATA_KEYED", "REQUEST_NAMES", "array_to_wire",
           "config_from_wire", "from_request", "from_wire", "python_name", "to_wire", "wire_field", "wire_name"]
