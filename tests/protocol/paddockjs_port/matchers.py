"""Vitest's ``expect`` as the port of PaddockJS's environment tests needs it, over JSON values.

Each assertion is recorded, not raised: ``Expectations`` keeps every assertion's outcome so the port can
count the assertions that hold (an assertion that raises while its value is read, e.g. a missing key,
does not hold). The semantics are vitest's, applied to what JSON carries: ``to_be`` is ``Object.is``
(``True`` is not ``1``), ``to_equal`` is recursive equality with asymmetric matchers, ``to_match_object``
is a recursive subset match (lists element by element, same length), ``to_be_truthy`` is JavaScript's
truthiness (an empty list or object is truthy), ``to_be_close_to(v, digits)`` is ``|a - v| < 10**-digits / 2``.

An expected value given as a callable is read lazily, inside the assertion (so a missing key in it
fails that assertion only). A value that is missing where JavaScript reads ``undefined`` is ``UNDEFINED``
(``prop``).
"""

from __future__ import annotations

import inspect
import math
import re


class _Undefined:
    def __repr__(self):
        return "undefined"


UNDEFINED = _Undefined()


def prop(obj, key):
    """``obj[key]`` as JavaScript reads it: ``UNDEFINED`` when ``obj`` is an object without ``key``."""
    if isinstance(obj, dict):
        return obj.get(key, UNDEFINED)
    if isinstance(obj, list) and isinstance(key, int):
        return obj[key] if 0 <= key < len(obj) else UNDEFINED
    raise TypeError(f"cannot read {key!r} of {type(obj).__name__}")


def attempt(thunk, default=UNDEFINED):
    """``thunk()``, or ``default`` when reading it fails (a later assertion on it then fails)."""
    try:
        return thunk()
    except Exception:
        return default


def find(items, **where):
    """JavaScript's ``items.find(item => item.k === v ...)`` over JSON objects; ``UNDEFINED`` if none."""
    for item in items:
        if isinstance(item, dict) and all(item.get(k, UNDEFINED) == v for k, v in where.items()):
            return item
    return UNDEFINED


def is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def is_finite(value) -> bool:
    """``Number.isFinite``: a number, not NaN or infinite (JSON ``null`` is not)."""
    return is_number(value) and math.isfinite(value)


def truthy(value) -> bool:
    """JavaScript truthiness of a JSON value."""
    if value is None or value is UNDEFINED or value is False:
        return False
    if is_number(value):
        return value != 0 and not math.isnan(value)
    if isinstance(value, str):
        return value != ""
    return True


# ---- asymmetric matchers ---------------------------------------------------------------------
class Matcher:
    def matches(self, value) -> bool:
        raise NotImplementedError


class Any(Matcher):
    """``expect.any(Number | String | Boolean | Array | Object)``."""

    def __init__(self, kind: str):
        self.kind = kind

    def matches(self, value) -> bool:
        return {
            "Number": is_number, "String": lambda v: isinstance(v, str), "Boolean": lambda v: isinstance(v, bool),
            "Array": lambda v: isinstance(v, list), "Object": lambda v: isinstance(v, (dict, list)),
        }[self.kind](value)

    def __repr__(self):
        return f"Any<{self.kind}>"


class ObjectContaining(Matcher):
    def __init__(self, expected: dict):
        self.expected = expected

    def matches(self, value) -> bool:
        return isinstance(value, dict) and all(k in value and equals(value[k], v) for k, v in self.expected.items())

    def __repr__(self):
        return f"ObjectContaining{self.expected!r}"


class ArrayContaining(Matcher):
    def __init__(self, expected: list):
        self.expected = expected

    def matches(self, value) -> bool:
        return isinstance(value, list) and all(any(equals(v, e) for v in value) for e in self.expected)

    def __repr__(self):
        return f"ArrayContaining{self.expected!r}"


class CloseTo(Matcher):
    def __init__(self, expected: float, digits: int = 2):
        self.expected, self.digits = expected, digits

    def matches(self, value) -> bool:
        return is_number(value) and abs(value - self.expected) < 10 ** -self.digits / 2

    def __repr__(self):
        return f"CloseTo({self.expected}, {self.digits})"


class StringContaining(Matcher):
    def __init__(self, expected: str):
        self.expected = expected

    def matches(self, value) -> bool:
        return isinstance(value, str) and self.expected in value

    def __repr__(self):
        return f"StringContaining({self.expected!r})"


def same(a, b) -> bool:
    """``Object.is`` over JSON values."""
    if isinstance(a, bool) or isinstance(b, bool) or a is None or b is None or a is UNDEFINED or b is UNDEFINED:
        return a is b
    if is_number(a) and is_number(b):
        return a == b or (math.isnan(a) and math.isnan(b))
    if isinstance(a, str) and isinstance(b, str):
        return a == b
    return a is b


def equals(actual, expected) -> bool:
    """``toEqual``: recursive equality; matchers in ``expected`` match."""
    if isinstance(expected, Matcher):
        return expected.matches(actual)
    if isinstance(expected, dict):
        return (isinstance(actual, dict) and set(actual) == set(expected)
                and all(equals(actual[k], v) for k, v in expected.items()))
    if isinstance(expected, list):
        return (isinstance(actual, list) and len(actual) == len(expected)
                and all(equals(a, e) for a, e in zip(actual, expected)))
    return same(actual, expected)


def match_object(actual, expected) -> bool:
    """``toMatchObject``: ``expected``'s keys, recursively, are in ``actual`` with matching values."""
    if isinstance(expected, Matcher):
        return expected.matches(actual)
    if isinstance(expected, dict):
        return isinstance(actual, dict) and all(k in actual and match_object(actual[k], v) for k, v in expected.items())
    if isinstance(expected, list):
        return (isinstance(actual, list) and len(actual) == len(expected)
                and all(match_object(a, e) for a, e in zip(actual, expected)))
    return same(actual, expected)


# ---- recorded assertions ---------------------------------------------------------------------
class Expectations:
    """The assertions of one ported test: ``x(lambda: value).to_be(1)`` records whether it held.

    ``declared`` is the number of assertions the PaddockJS test makes when it runs; ``cannot_hold``
    records one that cannot hold over JSON, with its reason (counted, not held, and not a failure).
    """

    def __init__(self, name: str, declared: int):
        self.name = name
        self.declared = declared
        self.outcomes: list[tuple[str, bool, str]] = []   # (where, held, detail)
        self.cannot: list[tuple[str, str]] = []

    def __call__(self, thunk) -> "Assertion":
        return Assertion(self, thunk)

    def cannot_hold(self, what: str, reason: str) -> None:
        self.cannot.append((what, reason))

    @property
    def held(self) -> int:
        return sum(1 for _, ok, _ in self.outcomes if ok)

    def failures(self) -> list[str]:
        return [f"{where}: {detail}" for where, ok, detail in self.outcomes if not ok]

    def done(self) -> None:
        """Fail the test unless every assertion it makes (save the named ones) ran and held."""
        ran = len(self.outcomes) + len(self.cannot)
        problems = self.failures()
        if ran != self.declared:
            problems.append(f"{ran} assertions ran; PaddockJS's test makes {self.declared}")
        assert not problems, f"{self.name}: " + "\n  ".join(["assertions that do not hold:"] + problems)


class Assertion:
    def __init__(self, owner: Expectations, thunk, negate: bool = False):
        self.owner, self.thunk, self.negate = owner, thunk, negate
        caller = inspect.stack()[2]
        self.where = f"line {caller.lineno}: {(caller.code_context or ['?'])[0].strip()}"

    @property
    def not_(self) -> "Assertion":
        twin = Assertion.__new__(Assertion)
        twin.owner, twin.thunk, twin.negate, twin.where = self.owner, self.thunk, not self.negate, self.where
        return twin

    def _check(self, name: str, expected, predicate) -> None:
        try:
            value = self.thunk()
            wanted = expected() if callable(expected) else expected
            ok = bool(predicate(value, wanted)) != self.negate
            detail = "" if ok else f"{'not ' if self.negate else ''}{name}({_short(wanted)}) got {_short(value)}"
        except Exception as exc:      # reading the value failed: the assertion does not hold
            ok, detail = False, f"{name}: {type(exc).__name__}: {exc}"
        self.owner.outcomes.append((self.where, ok, detail))

    def to_be(self, expected):
        self._check("toBe", expected, same)

    def to_equal(self, expected):
        self._check("toEqual", expected, equals)

    def to_match_object(self, expected):
        self._check("toMatchObject", expected, match_object)

    def to_be_null(self):
        self._check("toBeNull", None, lambda v, _: v is None)

    def to_be_undefined(self):
        self._check("toBeUndefined", None, lambda v, _: v is UNDEFINED)

    def to_be_defined(self):
        self._check("toBeDefined", None, lambda v, _: v is not UNDEFINED)

    def to_be_truthy(self):
        self._check("toBeTruthy", None, lambda v, _: truthy(v))

    def to_be_greater_than(self, n):
        self._check("toBeGreaterThan", n, lambda v, w: is_number(v) and v > w)

    def to_be_greater_than_or_equal(self, n):
        self._check("toBeGreaterThanOrEqual", n, lambda v, w: is_number(v) and v >= w)

    def to_be_less_than(self, n):
        self._check("toBeLessThan", n, lambda v, w: is_number(v) and v < w)

    def to_be_close_to(self, n, digits: int = 2):
        self._check("toBeCloseTo", n, lambda v, w: CloseTo(w, digits).matches(v))

    def to_have_length(self, n):
        self._check("toHaveLength", n, lambda v, w: isinstance(v, (list, str)) and len(v) == w)

    def to_have_property(self, key):
        self._check("toHaveProperty", key, lambda v, k: isinstance(v, dict) and k in v)

    def to_contain(self, item):
        self._check("toContain", item,
                    lambda v, i: (i in v) if isinstance(v, str) else isinstance(v, list) and any(same(e, i) for e in v))

    def to_match(self, pattern):
        self._check("toMatch", pattern, lambda v, p: isinstance(v, str) and re.search(p, v) is not None)


def _short(value, limit: int = 300) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."
