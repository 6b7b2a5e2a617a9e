"""Values as plain JSON: the one rule for numbers the environment hands to JSON, and the one conversion of
a result into PaddockJS's wire form.

numpy scalars become Python numbers (``np.bool_`` a bool), arrays nested lists, and non-finite floats
(NaN, +-inf, which strict JSON has no form for) ``None``. ``json_safe`` does that to anything, leniently,
keeping the keys (recorded rollouts). ``wire_converter``'s function also renames the keys by PaddockJS's
naming rule (``paddockjs.naming``): the worker protocol's replies and the live preview's frames.
"""

from __future__ import annotations

import math

import numpy as np

from ..paddockjs.naming import REPLY_DATA_KEYED, VALUE_NAMED_KEYS, wire_name

_INF = float("inf")
# name -> wire name, memoised: a reply or a frame renames hundreds of keys of a few dozen names (a plain
# dict is a third of an lru_cache's cost per key); cleared when full, since a document may carry any key
_WIRE_NAMES: dict = {}
_WIRE_NAMES_MAX = 4096
NAMES_ONLY = frozenset()     # wire_converter's data_keyed for documents whose keys are all names


def json_scalar(value):
    """A number as a plain JSON value: booleans -> bool, integers -> int, floats -> float, or None when
    not finite (Python's or numpy's). Anything else is returned unchanged."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        value = float(value)
        return value if math.isfinite(value) else None
    return value


def json_array(array: np.ndarray) -> list:
    """A numpy array as nested lists of plain numbers; non-finite floats become None."""
    if array.dtype.kind == "f" and not np.isfinite(array).all():
        out = array.astype(object)
        out[~np.isfinite(array)] = None
        return out.tolist()
    return array.tolist()


def json_safe(value):
    """``value`` as plain JSON types, leniently: dicts (keys -> str), lists and tuples -> lists, arrays ->
    nested lists, numbers by ``json_scalar``; anything exotic (an enum, a path) becomes its text rather
    than failing ``json.dumps``."""
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    if isinstance(value, np.ndarray):
        return json_safe(json_array(value))
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, (bool, int, float, np.bool_, np.integer, np.floating)):
        return json_scalar(value)
    return str(value)


def wire_converter(data_keyed=REPLY_DATA_KEYED, packed: tuple = ()):
    """The function ``convert(value, parent=None)`` turning ``value`` (a result, spec, state, event list, a
    preview frame's parts) into PaddockJS's wire form: the one rule the worker protocol's replies
    (``protocol.wire_names.to_wire``) and the live preview's frames (``env.views.frames``) follow.

    Keys are renamed by the naming rule (``naming.wire_name``: ``lap_completed`` -> ``completedLap``,
    ``frame_skip`` -> ``frameSkip``), except the keys of a dict under a ``data_keyed`` parent, which are data
    (driver ids under PaddockJS's ``observation``, ``metrics``, ``reward``, ``drivers``, ``per_driver``: the
    default); ``NAMES_ONLY`` for documents whose keys are all names. Strings in a list under a
    ``naming.VALUE_NAMED_KEYS`` key (ray channels) are names too. Values: Python floats non-finite ->
    None, numpy arrays -> ``json_array``, numpy scalars -> Python numbers, tuples -> lists; instances of
    ``packed`` (the protocol's packed float32 arrays) pass unchanged; anything else is a TypeError.
    (A closure, not a function taking the options: a reply or a frame converts thousands of values, and
    the options passed down every call would cost half as much again.)
    """
    names = _WIRE_NAMES

    def convert(value, parent: str | None = None):
        kind = type(value)
        if kind is dict:
            if parent in data_keyed:
                return {key: convert(item) for key, item in value.items()}
            out = {}
            for key, item in value.items():
                name = names.get(key)
                if name is None:
                    name = _remember_wire_name(key)
                out[name] = convert(item, key)
            return out
        if kind is list or kind is tuple:
            if parent in VALUE_NAMED_KEYS:
                return [wire_name(item) if type(item) is str else convert(item) for item in value]
            return [convert(item) for item in value]
        if kind is float:
            return value if -_INF < value < _INF else None
        if kind is bool or kind is int or kind is str or value is None:
            return value
        if isinstance(value, np.ndarray):
            return json_array(value)
        if packed and isinstance(value, packed):
            return value
        if isinstance(value, np.generic):
            return convert(value.item())
        raise TypeError(f"{kind.__name__} has no JSON form")

    return convert


def _remember_wire_name(key: str) -> str:
    if len(_WIRE_NAMES) >= _WIRE_NAMES_MAX:
        _WIRE_NAMES.clear()
    name = _WIRE_NAMES[key] = wire_name(key)
    return name
