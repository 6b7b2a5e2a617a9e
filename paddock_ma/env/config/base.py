"""The config machinery: plain dicts to frozen config dataclasses and back.

``ConfigSection`` gives every config section ``from_dict`` / ``to_dict`` / ``replace``. ``from_dict`` checks
every key against the dataclass's fields (a misspelt key is a ``ConfigError`` naming it, with a close
match and the known keys) and every value against its annotation (``_convert``: bools, ints, finite
floats, non-empty strings, literals, tuples, dicts, optional and union types, nested sections).
``deep_merge`` is the one merge rule (dicts key by key, anything else replaces). ``race_rule`` reads a race
rule's default from ``sim.race.start.RULE_DEFAULTS`` in the config's units.

The sections live in ``participants`` (drivers, scenario, interaction profiles), ``sensing``
(sensors and observation) and ``root`` (rules, episode, result and the ``EnvConfig`` root).
"""

from __future__ import annotations

import dataclasses
import functools
import types
import typing
from typing import Any, Literal, Union

from ...sim.race.start import RULE_DEFAULTS
from ...errors import ConfigError, suggest
from ...value_rules import is_finite_number, is_integer


def race_rule(name: str, scale: float = 1.0, kind=float):
    """The default of rule ``name``, defined once in ``sim.race.start.RULE_DEFAULTS`` (SI units), in the
    config's units (``scale``) and type (``kind``)."""
    return kind(RULE_DEFAULTS[name][1] * scale)


def _fail(path: str, value: Any, allowed: str):
    raise ConfigError(path, f"got {value!r}; {allowed}")


def _convert(value: Any, hint: Any, path: str) -> Any:
    """``value`` converted to ``hint`` (a type annotation), or ConfigError at ``path``."""
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if hint is Any:
        return value
    if origin in (Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        options = [a for a in args if a is not type(None)]
        # a list or an object goes to the option of its own shape, whose error has the inner path
        shaped = [a for a in options if _shape_of(a) is not None and isinstance(value, _shape_of(a))]
        if len(options) == 1 or len(shaped) == 1:
            return _convert(value, (shaped or options)[0], path)
        expected = []
        for option in options:
            try:
                return _convert(value, option, path)
            except ConfigError as exc:
                text = exc.message.split(": ", 1)[-1]
                expected.append(text.split("; ", 1)[-1] if text.startswith("got ") else text)
        # "got X; expected A or B": the value once, each alternative once
        alternatives = [e if i == 0 else e.removeprefix("expected ") for i, e in enumerate(dict.fromkeys(expected))]
        raise ConfigError(path, f"got {value!r}; " + " or ".join(alternatives))
    if origin is Literal:
        if value in args and type(value) is type(args[args.index(value)]):
            return value
        _fail(path, value, f"expected one of {', '.join(repr(a) for a in args)}{suggest(value, args)}")
    if hint is bool:
        if isinstance(value, bool):
            return value
        _fail(path, value, "expected true or false")
    if hint is int:
        if is_integer(value):
            return int(value)
        _fail(path, value, "expected an integer")
    if hint is float:
        if is_finite_number(value):
            return float(value)
        _fail(path, value, "expected a finite number")
    if hint is str:
        if isinstance(value, str) and value:
            return value
        _fail(path, value, "expected a non-empty string")
    if origin is tuple:
        if not isinstance(value, (list, tuple)):
            _fail(path, value, "expected a list")
        item = args[0]
        return tuple(_convert(v, item, f"{path}[{i}]") for i, v in enumerate(value))
    if origin is dict:
        if not isinstance(value, dict):
            _fail(path, value, "expected an object mapping names to values")
        key_hint, item = args
        return {_convert(k, key_hint, path): _convert(v, item, f"{path}.{k}") for k, v in value.items()}
    if dataclasses.is_dataclass(hint):
        if isinstance(value, hint):
            return value
        if not isinstance(value, dict):
            _fail(path, value, "expected an object")
        return _from_dict(hint, value, path)
    raise TypeError(f"config type {hint!r} at {path} is not supported")  # a bug in this module


def _shape_of(hint):
    """The container type a value must have for ``hint`` (list/tuple for tuples, dict for dicts and
    config objects), or None for a scalar hint."""
    origin = typing.get_origin(hint)
    if origin is tuple:
        return (list, tuple)
    if origin is dict or dataclasses.is_dataclass(hint):
        return dict
    return None


@functools.lru_cache(maxsize=None)
def _fields_of(cls) -> tuple[dict, list]:
    """(type hints, init field names) of a config dataclass; resolving the hints is slow (string
    annotations are evaluated), and placements are parsed per reset_drivers call."""
    return typing.get_type_hints(cls), [f.name for f in dataclasses.fields(cls) if f.init]


def section_names(cls, seen: set | None = None) -> set[str]:
    """Every field name of the config dataclass ``cls`` and of the sections nested in it (the keys a
    config document may use, in Python spelling)."""
    seen = set() if seen is None else seen
    if cls in seen:
        return set()
    seen.add(cls)
    hints, names = _fields_of(cls)
    out = set(names)

    def nested(hint):
        if dataclasses.is_dataclass(hint):
            out.update(section_names(hint, seen))
        for arg in typing.get_args(hint):
            nested(arg)
    for name in names:
        nested(hints[name])
    return out


def _from_dict(cls, data: dict, path: str):
    data = cls._prepare(data, path)
    hints, names = _fields_of(cls)
    kwargs = {}
    for key, value in data.items():
        key_path = f"{path}.{key}" if path else str(key)
        if key not in names:
            raise ConfigError(key_path, f"unknown key{suggest(key, names)}; known keys: {', '.join(names)}")
        kwargs[key] = _convert(value, hints[key], key_path)
    try:
        return cls(**kwargs)
    except TypeError:  # a required field is missing
        missing = [f.name for f in dataclasses.fields(cls)
                   if f.name not in kwargs and f.default is dataclasses.MISSING
                   and f.default_factory is dataclasses.MISSING]
        if not missing:
            raise  # not a missing field: a bug, not a config error
        where = f"{path}.{missing[0]}" if path else missing[0]
        raise ConfigError(where or cls.__name__, "is required") from None


def _to_dict(obj):
    if dataclasses.is_dataclass(obj):
        return {f.name: _to_dict(getattr(obj, f.name)) for f in dataclasses.fields(obj)
                if f.name != "reward"}
    if isinstance(obj, tuple):
        return [_to_dict(v) for v in obj]
    if isinstance(obj, dict):
        return {k: _to_dict(v) for k, v in obj.items()}
    return obj


def deep_merge(base: dict, extra: dict, replace: frozenset = frozenset(), _path: str = "") -> dict:
    """``extra`` over ``base``: a dict value is merged key by key into the dict it meets, anything else
    replaces (lists included); so does a dict at one of the dotted paths in ``replace``. Neither
    argument is modified."""
    out = dict(base)
    for key, value in extra.items():
        path = f"{_path}.{key}" if _path else str(key)
        merge = isinstance(value, dict) and isinstance(out.get(key), dict) and path not in replace
        out[key] = deep_merge(out[key], value, replace, path) if merge else value
    return out


class ConfigSection:
    """Mixin: ``from_dict`` / ``to_dict`` / ``replace`` for the frozen config dataclasses. A section
    that accepts an older or alternative shape rewrites it in ``_prepare`` (a dict in, a dict of its
    own keys out), before the keys are checked."""

    @classmethod
    def _prepare(cls, data: dict, path: str) -> dict:
        return data

    @classmethod
    def from_dict(cls, data: dict | None = None, _path: str = ""):
        if data is None:
            data = {}
        if not isinstance(data, dict):
            raise ConfigError(_path or cls.__name__, f"expected an object, got {type(data).__name__}")
        return _from_dict(cls, data, _path)

    def to_dict(self) -> dict:
        return _to_dict(self)

    def replace(self, **changes):
        return dataclasses.replace(self, **changes)


def require(cond: bool, path: str, message: str):
    if not cond:
        raise ConfigError(path, message)
