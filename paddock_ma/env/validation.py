"""The one rule for the integers the API takes (counts, indices, sequence numbers; seeds in ``seeding``)
and for the finite numbers it takes (distances, speeds, seconds).

An integer is a Python ``int`` or a numpy integer, never a boolean (``True`` is an ``int`` to Python,
but a flag given where a count or an index is expected is a mistake to report, not the number 1). A
finite number is an integer or a Python or numpy float, never a boolean, neither NaN nor infinite.

``integer_problem`` says what is wrong with a value (or None); ``check_integer`` raises ``ConfigError``
naming the field (or the caller's exception type) and returns the value as an ``int``.
"""

from __future__ import annotations

import math

import numpy as np

from .errors import ConfigError

def is_integer(value) -> bool:
    """True for an ``int`` or a numpy integer; False for a boolean (Python's or numpy's) and anything else."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def is_finite_number(value) -> bool:
    """True for an integer or a float (Python's or numpy's) that is finite; False for a boolean, NaN, +-inf
    and anything else."""
    return (isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_))
            and math.isfinite(value))


def _bound(n: int) -> str:
    """``n`` as written in messages: large powers of two as ``2**k``."""
    return f"2**{n.bit_length() - 1}" if n >= 2**31 and n & (n - 1) == 0 else str(n)


def integer_problem(value, low: int | None = None, high: int | None = None) -> str | None:
    """None when ``value`` is an integer with ``low <= value < high`` (either bound optional), else the
    message ``got <value>; expected an integer ...``."""
    if is_integer(value) and (low is None or value >= low) and (high is None or value < high):
        return None
    if low is not None and high is not None:
        expected = f"an integer in [{_bound(low)}, {_bound(high)})"
    elif low is not None:
        expected = f"an integer >= {_bound(low)}"
    elif high is not None:
        expected = f"an integer below {_bound(high)}"
    else:
        expected = "an integer"
    return f"got {value!r}; expected {expected}"


def check_integer(value, field: str, low: int | None = None, high: int | None = None, error=None) -> int:
    """``int(value)`` when it is an integer in ``[low, high)``; else raises ``ConfigError(field, problem)``,
    or ``error(f"{field}: {problem}")`` when an exception type ``error`` is given (a shard's, a fleet's)."""
    problem = integer_problem(value, low, high)
    if problem is not None:
        raise ConfigError(field, problem) if error is None else error(f"{field}: {problem}")
    return int(value)
