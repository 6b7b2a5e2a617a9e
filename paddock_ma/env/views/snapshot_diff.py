"""Where two snapshot documents of the same engine differ: the first car and state field, or world field,
named by the state layout (``first_difference``). ``paddock-ma replay`` uses it to say what diverged."""

from __future__ import annotations

import base64

import numpy as np

from ...sim.core import layout as L


def decode_array(text: str, dtype, shape) -> np.ndarray:
    """An array of a snapshot document (base64 of its bytes) as ``dtype[shape]``."""
    return np.frombuffer(base64.b64decode(text), dtype=dtype).reshape(shape)


def _field_names(prefix: str, count: int) -> list[str]:
    names = [f"{prefix}[{i}]" for i in range(count)]
    for name, value in vars(L).items():
        if name.startswith(prefix + "_") and isinstance(value, int) and 0 <= value < count and \
                names[value].endswith("]"):
            names[value] = name
    return names


def first_difference(mine: dict, recorded: dict, driver_ids, world: int) -> str:
    """The first car and state field (or world field) in which two snapshot documents differ in ``world``."""
    shape = recorded["shape"]
    cars = shape["cars"]
    specs = (("cars_f", np.float64, L.NF, "F"), ("cars_i", np.int32, L.NI, "I"))
    for name, dtype, count, prefix in specs:
        a = decode_array(mine["arrays"][name], dtype, (shape["worlds"], cars, count))[world]
        b = decode_array(recorded["arrays"][name], dtype, (shape["worlds"], cars, count))[world]
        diff = np.argwhere(a != b)
        if diff.size:
            c, f = diff[0]
            return (f"car {driver_ids[c]!r} field {_field_names(prefix, count)[f]} ({name}): "
                    f"{a[c, f].item()!r}, recorded {b[c, f].item()!r}")
    for name, dtype, count, prefix in (("world_f", np.float64, L.NWF, "WF"), ("world_i", np.int64, L.NWI, "WI")):
        a = decode_array(mine["arrays"][name], dtype, (shape["worlds"], count))[world]
        b = decode_array(recorded["arrays"][name], dtype, (shape["worlds"], count))[world]
        diff = np.flatnonzero(a != b)
        if diff.size:
            return f"world field {_field_names(prefix, count)[diff[0]]} ({name}): {a[diff[0]].item()!r}, recorded {b[diff[0]].item()!r}"
    return "the state arrays agree there (the difference is in parameters or was undone)"
