"""The command line's argparse types: one per kind of value, each judged by ``paddock_ma.value_rules``.

A type takes the text of one option and returns its value, or raises ``argparse.ArgumentTypeError`` with
``got '<text>'; expected ...``, which argparse prints after the option's name before it exits 2, so a
bad value is refused before any work starts.

* ``seconds``: a duration, a finite number of seconds > 0. No option takes ``inf``: none of them means
  "no limit" (a run's deadlines and budgets are all finite).
* ``positive_number``: a finite number > 0 that is not a duration (frames per second).
* ``whole_number(low, high, unit)``: an integer from ``low`` to ``high``, either bound optional;
  ``count`` (>= 1), ``index`` (>= 0) and ``port`` are its common cases, ``integer`` takes any whole number
  (a seed, or a count the library checks itself, naming its own field).
* ``counts``: comma-separated counts, e.g. ``16,64`` (several world counts or thread counts in one run).
* ``names(choices)``: comma-separated names out of ``choices``, e.g. ``constant,driver``.
* ``host_port``: ``HOST:PORT`` -> ``(host, port)``.
"""

from __future__ import annotations

import argparse
from typing import Callable

from ..value_rules import integer_problem, number_problem, seconds_problem


def _refuse(text: str, expected: str):
    return argparse.ArgumentTypeError(f"got {text!r}; expected {expected}")


def _float(text: str):
    """``float(text)``, or the text itself when it is no number (the value rules then refuse it)."""
    try:
        return float(text)
    except ValueError:
        return text


def seconds(text: str) -> float:
    """A duration: a finite number of seconds > 0."""
    problem = seconds_problem(_float(text))
    if problem is not None:
        raise _refuse(text, problem.split("; expected ", 1)[1])
    return float(text)


def positive_number(text: str) -> float:
    """A finite number > 0 (a rate, e.g. frames per second)."""
    value = _float(text)
    if number_problem(value) is not None or not value > 0:
        raise _refuse(text, "a finite number > 0, e.g. 10")
    return value


def whole_number(low: int | None = None, high: int | None = None, unit: str = "") -> Callable[[str], int]:
    """The type of an integer from ``low`` to ``high`` (both inclusive, either None for no bound);
    ``unit`` names what is counted in the message (``worlds``: "a whole number of worlds from 1 to 8")."""
    if low is not None and high is not None:
        rule = f" from {low} to {high}"
    elif low is not None:
        rule = f", at least {low}"
    elif high is not None:
        rule = f", at most {high}"
    else:
        rule = ""
    expected = f"a whole number{' of ' + unit if unit else ''}{rule}"

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise _refuse(text, expected) from None
        if integer_problem(value, low, None if high is None else high + 1) is not None:
            raise _refuse(text, expected)
        return value
    parse.__name__ = "whole number"          # argparse names a type by it in some messages
    return parse


integer = whole_number()
count = whole_number(1)
index = whole_number(0)
port = whole_number(0, 65535)       # 0: any free port


def counts(text: str) -> tuple[int, ...]:
    """``"1,64,1024"`` -> (1, 64, 1024): comma-separated whole numbers >= 1 (repeats kept, in order)."""
    try:
        values = tuple(int(t) for t in text.split(","))
    except ValueError:
        values = ()
    if not values or any(integer_problem(v, 1) for v in values):
        raise _refuse(text, "comma-separated whole numbers >= 1, e.g. 16,64")
    return values


def names(choices: tuple[str, ...]) -> Callable[[str], tuple[str, ...]]:
    """The type of comma-separated names out of ``choices``, e.g. ``constant,driver`` -> a tuple."""
    def parse(text: str) -> tuple[str, ...]:
        given = tuple(text.split(","))
        if not text or any(n not in choices for n in given):
            raise _refuse(text, f"comma-separated names from {','.join(choices)}")
        return given
    return parse


def host_port(text: str) -> tuple[str, int]:
    """``HOST:PORT`` -> (host, port), the port from 1 to 65535, an IPv6 host in brackets (``[::1]:8787``),
    judged by the servers' one address rule (``serve.listen.parse_bind_address``)."""
    from ..serve.listen import AddressError, parse_bind_address

    try:
        host, port = parse_bind_address(text, "")
    except AddressError:
        port = 0
    if port == 0:
        raise argparse.ArgumentTypeError(f"got {text!r}; give HOST:PORT with a port from 1 to 65535 (an IPv6 host "
                                         "in brackets), e.g. 127.0.0.1:8787 or [::1]:8787")
    return host, port
