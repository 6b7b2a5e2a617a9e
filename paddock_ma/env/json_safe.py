"""Values as plain JSON: the one rule for numbers the environment hands to JSON (recorded rollouts, the
worker protocol's replies, which add PaddockJS's key names in ``protocol.wire_names.to_wire``).

numpy scalars become Python numbers (``np.bool_`` a bool), arrays nested lists, and non-finite floats
(NaN, +-inf, which strict JSON has no form for) ``None``.
"""

from __future__ import annotations

import math

import numpy as np


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
