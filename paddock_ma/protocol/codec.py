"""Strict JSON framing of the worker protocol: bytes <-> JSON values, with caps.

Input (``decode``) accepts exactly one JSON value in UTF-8 and rejects, with ``WireError`` and code
``bad_json`` (or ``line_too_long``), what JavaScript's and Python's lenient parsers let through:
``NaN``/``Infinity``, duplicate object keys, invalid UTF-8, lone UTF-16 surrogates, integers wider
than 64 bits, nesting deeper than ``Limits.max_depth``, keys, strings or ids over their caps. No
``eval``, no ``pickle``: only ``json``.

Output (``encode``) is compact JSON (no spaces, UTF-8, keys in the order given) with no ``NaN`` or
``Infinity``: the values are made JSON-safe beforehand (``protocol.wire_names.to_wire``
turns numpy arrays into lists and non-finite floats into ``null``). Every transport encodes with this
one function, so their replies are byte-identical.

Compact vectors (opt-in, ``encoding: "f32-base64"``): a float32 array travels as the base64 text of
its little-endian bytes, ``{"f32": "<base64>", "shape": [...]}``; ``pack_f32``/``unpack_f32`` convert.
"""

from __future__ import annotations

import pybase64
import json
import math
import os
import re
from dataclasses import dataclass

import numpy as np

from ..errors import BAD_JSON, INVALID_REQUEST, LINE_TOO_LONG, PaddockError
from ..value_rules import integer_problem, is_finite_number

F32_ENCODING = "f32-base64"
PLAIN_ENCODING = "json"
ENCODINGS = (PLAIN_ENCODING, F32_ENCODING)


@dataclass(frozen=True)
class Limits:
    """Caps on one request. ``max_line_bytes`` bounds an NDJSON line (the newline excluded)."""
    max_line_bytes: int = 1 << 20
    max_depth: int = 32
    max_key_chars: int = 256
    max_string_chars: int = 1 << 20
    max_id_chars: int = 256         # unused: a request's id is echoed whatever its size (the line cap bounds it)
    max_drivers: int = 4096        # entries of one actions/placements object, per world


class WireError(PaddockError):
    """A request that is not one acceptable JSON value; ``code`` is ``bad_json`` or ``line_too_long``."""


def _reject_constant(name):
    raise ValueError(f"{name} is not JSON (non-finite numbers are not accepted)")


def _parse_int(text: str) -> int:
    value = int(text)
    if not -(1 << 63) <= value < (1 << 64):
        raise ValueError(f"integer {text[:24]}{'...' if len(text) > 24 else ''} does not fit in 64 bits")
    return value


def _parse_float(text: str) -> float:
    value = float(text)
    if not is_finite_number(value):            # 1e999 overflows to inf
        raise ValueError(f"number {text[:24]} is out of the float64 range")
    return value


def _object_pairs(pairs):
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen = set()
        for key, _ in pairs:
            if key in seen:
                raise ValueError(f"duplicate key {key[:64]!r} in an object")
            seen.add(key)
    return obj


_DECODER = json.JSONDecoder(object_pairs_hook=_object_pairs, parse_constant=_reject_constant,
                            parse_int=_parse_int, parse_float=_parse_float)


def decode(line: bytes | str, limits: Limits = Limits()):
    """One request line -> a JSON value (dict, list, str, number, bool or None), or WireError."""
    size = len(line.encode("utf-8", "surrogatepass") if isinstance(line, str) else line)
    if size > limits.max_line_bytes:
        raise WireError(LINE_TOO_LONG, line_too_long_message(size, limits.max_line_bytes), "request")
    if isinstance(line, (bytes, bytearray, memoryview)):
        try:
            text = bytes(line).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise WireError(BAD_JSON, f"request: not UTF-8 ({exc.reason} at byte {exc.start}); send UTF-8 JSON",
                            "request") from None
    else:
        text = line
    text = text.strip(" \t\r\n")
    try:
        value = _DECODER.decode(text)
    except RecursionError:
        raise WireError(BAD_JSON, f"request: nested deeper than {limits.max_depth} levels", "request") from None
    except ValueError as exc:             # json.JSONDecodeError and the hooks' errors
        raise WireError(BAD_JSON, f"request: not strict JSON: {exc}", "request") from None
    _check_value(value, limits)
    return value


def line_too_long_message(size: int, cap: int) -> str:
    """The ``line_too_long`` error text (one wording for every transport: their replies are the same bytes)."""
    return (f"request: {size} bytes is over the line cap of {cap} bytes; send smaller messages (fewer worlds "
            "per batched request, the f32-base64 encoding) or start the worker with a larger --max-line-bytes")


def _check_value(value, limits: Limits) -> None:
    """Depth, key and string caps, and well-formed Unicode, over the whole decoded value."""
    stack = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > limits.max_depth:
            raise WireError(BAD_JSON, f"request: nested deeper than {limits.max_depth} levels", "request")
        if type(node) is dict:
            for key, item in node.items():
                if len(key) > limits.max_key_chars:
                    raise WireError(BAD_JSON, f"request: an object key of {len(key)} characters is over the "
                                    f"cap of {limits.max_key_chars}", "request")
                _check_text(key, limits)
                if type(item) in (dict, list):
                    stack.append((item, depth + 1))
                elif type(item) is str:
                    _check_string(item, limits)
        elif type(node) is list:
            for item in node:
                if type(item) in (dict, list):
                    stack.append((item, depth + 1))
                elif type(item) is str:
                    _check_string(item, limits)
        elif type(node) is str:
            _check_string(node, limits)


def _check_string(text: str, limits: Limits) -> None:
    if len(text) > limits.max_string_chars:
        raise WireError(BAD_JSON, f"request: a string of {len(text)} characters is over the cap of "
                        f"{limits.max_string_chars}", "request")
    _check_text(text, limits)


def _check_text(text: str, limits: Limits) -> None:
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            raise WireError(BAD_JSON, "request: a string holds a lone UTF-16 surrogate (\\ud800-\\udfff "
                            "without its pair); send well-formed Unicode", "request") from None


class PackedF32:
    """A float32 array that ``encode`` writes as ``pack_f32``'s object without passing its base64 text
    through the JSON encoder (base64 needs no escaping; scanning megabytes of it for escapes is what a
    compact reply would otherwise spend its time on). The bytes are the same as ``encode(pack_f32(a))``."""
    __slots__ = ("array",)

    def __init__(self, array: np.ndarray):
        self.array = np.ascontiguousarray(array, dtype="<f4")

    def json_parts(self) -> tuple[bytes, bytes, bytes]:
        """The object's JSON text in three pieces (prefix, base64, suffix), joined once by ``encode``."""
        shape = ",".join(str(d) for d in self.array.shape)
        return b'{"f32":"', pybase64.b64encode(self.array.tobytes()), b'","shape":[' + shape.encode() + b"]}"


# A marker no reply can hold otherwise: NUL characters are escaped by the encoder, and the nonce is this
# process's own.
_NONCE = os.urandom(8).hex()
_MARKER = re.compile(rb'"\\u0000' + _NONCE.encode() + rb':(\d+)\\u0000"')


def encode(value) -> bytes:
    """A JSON-safe value (see ``wire_names.to_wire``; ``PackedF32`` allowed) as compact UTF-8 JSON bytes,
    no newline."""
    packed = []

    def splice(obj):
        if type(obj) is PackedF32:
            packed.append(obj)
            return f"\x00{_NONCE}:{len(packed) - 1}\x00"
        raise TypeError(f"{type(obj).__name__} has no JSON form")

    data = json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"),
                      default=splice).encode("utf-8")
    if not packed:
        return data
    parts, start = [], 0            # the text around the markers and each array's pieces, one join
    for marker in _MARKER.finditer(data):
        parts.append(data[start:marker.start()])
        parts.extend(packed[int(marker.group(1))].json_parts())
        start = marker.end()
    parts.append(data[start:])
    return b"".join(parts)


def pack_f32(array: np.ndarray) -> dict:
    """``{"f32": base64 of the little-endian float32 bytes, "shape": [...]}`` of ``array``."""
    arr = np.ascontiguousarray(array, dtype="<f4")
    return {"f32": pybase64.b64encode(arr.tobytes()).decode("ascii"), "shape": list(arr.shape)}


def unpack_f32(packed, field: str, shape: tuple | None = None) -> np.ndarray:
    """The float32 array of ``pack_f32``'s object, checked against ``shape`` when given."""
    if not isinstance(packed, dict) or set(packed) != {"f32", "shape"} or not isinstance(packed["f32"], str):
        raise PaddockError(INVALID_REQUEST, f"{field}: expected {{\"f32\": base64 text, \"shape\": [...]}} "
                           f"(the {F32_ENCODING} encoding)", field)
    dims = packed["shape"]
    if not isinstance(dims, list) or not all(integer_problem(d, low=0) is None for d in dims):
        raise PaddockError(INVALID_REQUEST, f"{field}.shape: got {dims!r}; expected a list of sizes", f"{field}.shape")
    try:
        raw = pybase64.b64decode(packed["f32"], validate=True)
    except ValueError:
        raise PaddockError(INVALID_REQUEST, f"{field}.f32: not base64 text", f"{field}.f32") from None
    count = math.prod(dims)
    if len(raw) != 4 * count:
        raise PaddockError(INVALID_REQUEST, f"{field}.f32: {len(raw)} bytes do not hold shape {dims} of float32 "
                           f"({4 * count} bytes)", f"{field}.f32")
    if shape is not None and tuple(dims) != tuple(shape):
        raise PaddockError(INVALID_REQUEST, f"{field}.shape: got {dims}; expected {list(shape)}", f"{field}.shape")
    return np.frombuffer(raw, dtype="<f4").astype(np.float32).reshape(dims)
