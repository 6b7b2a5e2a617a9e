"""The worker protocol's side of PaddockJS's names: replies out, requests in.

The naming rule and its exceptions live in ``paddockjs.naming`` (below the config and the protocol);
this module applies them to messages. ``to_wire`` renames the keys of a Python result by the rule and
makes its values JSON-safe (numpy arrays to lists, non-finite floats to ``null``: ``env.json_safe``'s
``wire_converter`` with the protocol's options); ``from_request`` is
``from_wire`` for a message: wire names only, renamed into ``REQUEST_NAMES`` (the names a request may
carry), anything else kept as sent so the reader's check names it as sent. Keys that are data, not
names (driver ids under ``observation``, ``metrics``, ``reward``, ``info.drivers``, ``per_driver``,
``actions``, ``placements``, ``sensors_by_driver``, ``participant_interactions.drivers``), are left as
they are.
"""

from __future__ import annotations

from ..env.actions import ACTION_FIELDS
from ..env.config.root import CONFIG_NAMES
from ..env.json_safe import wire_converter
from ..errors import INVALID_REQUEST, PaddockError
from ..paddockjs.naming import REPLY_DATA_KEYED, PythonNameError, from_wire, wire_name
from .codec import PackedF32

# The Python names a request may carry below its top level: config keys (reset options), action fields,
# and the result and state options.
REQUEST_NAMES = CONFIG_NAMES | frozenset(ACTION_FIELDS) | {"observation_scope", "state_output", "output"}


# A reply's value in wire names and JSON-safe values (``env.json_safe.wire_converter``, the one rule): the keys
# under PaddockJS's data-keyed reply fields kept, packed float32 arrays left for ``codec.encode`` to write.
to_wire = wire_converter(REPLY_DATA_KEYED, packed=(PackedF32,))


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

