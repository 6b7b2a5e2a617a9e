"""The worker protocol's side of PaddockJS's camelCase names: replies out, requests in.

The one camelCase <-> snake_case table (``PYTHON_TO_WIRE``, ``from_wire``, ``wire_name``) lives in
``env.wire_names`` so that the config can read PaddockJS-shaped documents without importing the
protocol; it is re-exported here. ``to_wire`` renames the keys of a Python result and makes its values
JSON-safe (numpy arrays to lists, non-finite floats to ``null``); ``from_request`` is ``from_wire`` for
a message (wire names only). Keys that are data, not names (driver ids under ``observation``,
``metrics``, ``reward``, ``info.drivers``, ``per_driver``, ``actions``, ``placements``,
``sensors_by_driver``, ``participant_interactions.drivers``), are left as they are.
"""

from __future__ import annotations

import numpy as np

from ..env.json_safe import json_array as array_to_wire  # the one JSON-safe rule, named for the wire here
from ..env.json_safe import json_scalar
from ..paddockjs.naming import (  # the one table, re-exported for the protocol's users
    PYTHON_TO_WIRE, REPLY_DATA_KEYED, REQUEST_DATA_KEYED, WIRE_TO_PYTHON, from_wire, python_name, wire_name,
)
from .codec import PackedF32


def to_wire(value, parent: str | None = None):
    """``value`` with wire key names and JSON-safe values (see the module docstring)."""
    kind = type(value)
    if kind is dict:
        if parent in REPLY_DATA_KEYED:
            return {key: to_wire(item) for key, item in value.items()}
        return {wire_name(key): to_wire(item, key) for key, item in value.items()}
    if kind is list or kind is tuple:
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
    """``from_wire`` of a protocol message's field: strict (a request speaks wire names only)."""
    return from_wire(value, parent, strict=True)


def wire_field(field: str | None) -> str | None:
    """A dotted Python field path (``actions.car-00.pit_intent``) in wire names (``...pitIntent``)."""
    if field is None:
        return None
    return ".".join(wire_name(part) if part in PYTHON_TO_WIRE else part for part in field.split("."))


def config_from_wire(doc: dict):
    """An ``EnvConfig`` from a config object in Python names (snake_case) or PaddockJS's (camelCase):
    ``EnvConfig.from_paddockjs``."""
    from ..env.config.root import EnvConfig

    return EnvConfig.from_paddockjs(doc)


__all__ = ["PYTHON_TO_WIRE", "REPLY_DATA_KEYED", "REQUEST_DATA_KEYED", "WIRE_TO_PYTHON", "array_to_wire",
           "config_from_wire", "from_request", "from_wire", "python_name", "to_wire", "wire_field", "wire_name"]
