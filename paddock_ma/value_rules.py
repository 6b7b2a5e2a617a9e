"""The rules for the plain values every layer takes, written once: integers (counts, indices, sequence
numbers; seeds add their range in ``env.seeding``), finite numbers (distances, speeds), durations in
seconds, a choice out of a fixed set, and the placement policies of a reset.

This module is a leaf: it imports nothing of ``paddock_ma`` but ``errors``, so the simulation's track
loaders, the contract, the adapters, the protocol, the fleet and the command line all use the same rule.

- An integer is a Python ``int`` or a numpy integer, never a boolean (``True`` is an ``int`` to Python,
  but a flag given where a count or an index is expected is a mistake to report, not the number 1).
- A finite number is an integer or a Python or numpy float, never a boolean, neither NaN nor infinite.
- A duration is a finite number of seconds > 0 (or, where a caller allows it, ``inf``: no limit).

``*_problem`` says what is wrong with a value (``"got <value>; expected ..."``) or returns None.
``check_*`` raises ``ConfigError(field, problem)``, or ``error(f"{field}: {problem}")`` when an exception
type ``error`` is given (a shard's, a fleet's, a track file's), and returns the value in its plain type.
"""

from __future__ import annotations

import math

import numpy as np

from .errors import ConfigError, suggest

# How a reset places a car (``env/reset/placements.py`` implements each): PaddockJS's grid slots, a
# random legal position at rest, the same at a random speed below the placement's cap (collection that
# should see the car at speed from a life's first step), or the config's scenario placement.
PLACEMENT_POLICIES = ("grid", "random", "random-moving", "scenario")


def is_integer(value) -> bool:
    """True for an ``int`` or a numpy integer; False for a boolean (Python's or numpy's) and anything else."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def is_finite_number(value) -> bool:
    """True for an integer or a float (Python's or numpy's) that is finite; False for a boolean, NaN, +-inf
    and anything else."""
    return (isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_))
            and math.isfinite(value))


def _bound(n) -> str:
    """``n`` as written in messages: large powers of two as ``2**k``."""
    if is_integer(n) and n >= 2**31 and n & (n - 1) == 0:
        return f"2**{int(n).bit_length() - 1}"
    return str(n)


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


def number_problem(value, low: float | None = None, high: float | None = None) -> str | None:
    """None when ``value`` is a finite number with ``low <= value <= high`` (either bound optional), else
    the message ``got <value>; expected a finite number ...``."""
    if is_finite_number(value) and (low is None or value >= low) and (high is None or value <= high):
        return None
    if low is not None and high is not None:
        expected = f"a finite number in [{low}, {high}]"
    elif low is not None:
        expected = f"a finite number >= {low}"
    elif high is not None:
        expected = f"a finite number <= {high}"
    else:
        expected = "a finite number"
    return f"got {value!r}; expected {expected}"


def seconds_problem(value, allow_inf: bool = False) -> str | None:
    """None when ``value`` is a number of seconds > 0, finite unless ``allow_inf`` (then ``inf`` means no
    limit); else the message ``got <value>; expected ...``."""
    number = isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_))
    if number and value > 0 and (math.isfinite(value) or (allow_inf and value == math.inf)):
        return None
    more = " or inf (no limit)" if allow_inf else ""
    return f"got {value!r}; expected a finite number of seconds > 0{more}, e.g. 0.5"


def choice_problem(value, choices, none_ok: bool = False) -> str | None:
    """None when ``value`` is one of ``choices`` (or None where ``none_ok``), else ``got <value>; expected
    one of ...`` with the closest choice suggested."""
    if (value is None and none_ok) or (value is not None and _member(value, choices)):
        return None
    listed = ", ".join(repr(c) for c in choices) + (" or None" if none_ok else "")
    return f"got {value!r}; expected one of {listed}" + (suggest(value, choices) if isinstance(value, str) else "")


def _member(value, choices) -> bool:
    # ``in`` over a tuple compares with ==, so 1 == True would make a boolean a member of (0, 1)
    return any(type(value) is type(c) and value == c for c in choices)


def _raise(problem: str | None, field: str, error) -> None:
    if problem is not None:
        raise ConfigError(field, problem) if error is None else error(f"{field}: {problem}")


def check_integer(value, field: str, low: int | None = None, high: int | None = None, error=None) -> int:
    """``int(value)`` when it is an integer in ``[low, high)``; else raises (see the module's docstring)."""
    _raise(integer_problem(value, low, high), field, error)
    return int(value)


def check_number(value, field: str, low: float | None = None, high: float | None = None, error=None) -> float:
    """``float(value)`` when it is a finite number in ``[low, high]``; else raises."""
    _raise(number_problem(value, low, high), field, error)
    return float(value)


def check_seconds(value, field: str, allow_inf: bool = False, error=None) -> float:
    """``float(value)`` when it is a number of seconds > 0 (``inf`` only where allowed); else raises."""
    _raise(seconds_problem(value, allow_inf), field, error)
    return float(value)


def check_choice(value, field: str, choices, none_ok: bool = False, error=None):
    """``value`` when it is one of ``choices`` (or None where ``none_ok``); else raises."""
    _raise(choice_problem(value, choices, none_ok), field, error)
    return value


def check_placement(value, field: str, none_ok: bool = False, error=None):
    """``value`` when it is one of ``PLACEMENT_POLICIES`` (or None where ``none_ok``); else raises."""
    return check_choice(value, field, PLACEMENT_POLICIES, none_ok, error)
