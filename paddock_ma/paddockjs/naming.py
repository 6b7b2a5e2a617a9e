"""PaddockJS's names <-> the Python API's names: one rule and its exceptions, both ways.

The rule: a Python name is snake_case, its wire spelling is the camelCase of it (``frame_skip`` <->
``frameSkip``, ``lateral_g`` <-> ``lateralG``). ``EXCEPTIONS`` lists the names PaddockJS spells its own
way (``lap_completed`` is ``completedLap``, ``under_30_kph`` is ``under30kph``); every other key of a
reply, observation, spec, state, event, metric, episode record, request or config follows the rule.

``wire_name`` and ``python_name`` apply the rule (and the exceptions) to one name. ``from_wire`` renames
the keys of a PaddockJS-shaped document (a config file, ``EnvConfig.from_paddockjs``, a protocol
request) for a reader that knows its ``names``: a key whose Python form the reader does not know is kept
as written, so the reader's own check names it as the sender spelt it, and keys that are data, not
names (driver ids under ``actions``, ``placements``, ``sensors_by_driver``,
``participant_interactions.drivers``), are kept too. The values of ``VALUE_NAMED_KEYS`` (ray channels:
``roadEdge`` <-> ``road_edge``) are names and follow the same rule.

This module sits below the config and the protocol (it imports nothing of ``paddock_ma``), so the
config reads PaddockJS-shaped documents without importing the protocol.
"""

from __future__ import annotations

import functools
import re

# PaddockJS's own spellings: the names the rule does not give.
EXCEPTIONS = {
    "lap_completed": "completedLap",
    "under_30_kph": "under30kph",
}
_EXCEPTIONS_BACK = {wire: py for py, wire in EXCEPTIONS.items()}
assert len(_EXCEPTIONS_BACK) == len(EXCEPTIONS), "two Python names share a wire name"

# Python keys whose dict value is keyed by data (driver ids): in replies, and in requests (where
# "observation" is the config's observation section, not a map of drivers).
REPLY_DATA_KEYED = frozenset({"observation", "metrics", "reward", "drivers", "per_driver"})
REQUEST_DATA_KEYED = frozenset({"actions", "placements", "sensors_by_driver", "drivers"})
# Python keys whose values are names with a wire spelling (ray channels: ``road_edge`` is ``roadEdge``).
VALUE_NAMED_KEYS = frozenset({"channels"})

_CAMEL = re.compile(r"[a-z][a-zA-Z0-9]*")
_UPPER = re.compile(r"[A-Z]")


class PythonNameError(ValueError):
    """A strict ``from_wire`` met a name spelt the Python way (``key``) where the wire spells it
    otherwise."""

    def __init__(self, key: str):
        super().__init__(f"{key}: a Python name; the wire spells it {wire_name(key)}")
        self.key = key


def camel_case(name: str) -> str:
    """The rule, one way: ``frame_skip`` -> ``frameSkip`` (a name without ``_`` is unchanged)."""
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def snake_case(name: str) -> str:
    """The rule, the other way: ``frameSkip`` -> ``frame_skip``; a string that is not a camelCase
    identifier (``car-00``, ``pit_intent``, ``S``) is returned unchanged."""
    if not _CAMEL.fullmatch(name):
        return name
    return _UPPER.sub(lambda m: "_" + m.group(0).lower(), name)


# A reply renames a few hundred keys of a few dozen distinct names: the two spellings are cached (bounded,
# since a request may carry any key).
@functools.lru_cache(maxsize=4096)
def wire_name(name: str) -> str:
    """The wire spelling of a Python name (its exception, else the rule)."""
    found = EXCEPTIONS.get(name)
    return found if found is not None else camel_case(name)


@functools.lru_cache(maxsize=4096)
def python_name(name: str) -> str:
    """The Python spelling of a wire name (its exception, else the rule)."""
    found = _EXCEPTIONS_BACK.get(name)
    return found if found is not None else snake_case(name)


def from_wire(value, parent: str | None = None, strict: bool = False, names=None):
    """A document's JSON value with Python key names.

    names: the Python names the reader knows (a container supporting ``in``); a key whose Python form
    is not among them is kept as written (``None``: every key is renamed). Keys under a
    ``REQUEST_DATA_KEYED`` parent are data and kept. strict: a known name spelt the Python way where
    the wire spelling differs (``pit_intent`` for ``pitIntent``) is refused (``PythonNameError``);
    config files may use either spelling, messages use the wire's.
    """
    kind = type(value)
    if kind is dict:
        if parent in REQUEST_DATA_KEYED:
            return {key: from_wire(item, None, strict, names) for key, item in value.items()}
        out = {}
        for key, item in value.items():
            if strict and wire_name(key) != key and (names is None or key in names):
                raise PythonNameError(key)
            name = python_name(key)
            if names is not None and name not in names:
                name = key
            out[name] = from_wire(item, name, strict, names)
        return out
    if kind is list:
        if parent in VALUE_NAMED_KEYS:
            return [_value_name(item, names) if type(item) is str else item for item in value]
        return [from_wire(item, None, strict, names) for item in value]
    return value


def _value_name(item: str, names) -> str:
    name = python_name(item)
    return name if names is None or name in names else item
