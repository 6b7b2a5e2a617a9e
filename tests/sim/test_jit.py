"""Every jitted function of the package states how numba compiles it (``sim/jit.py``): without
reference counting (``kernel``) or with it (``allocating_kernel``). A function that stated neither
would inherit the setting from whichever caller compiled it first."""

import importlib
import pkgutil
import re
from pathlib import Path

import numpy as np
import pytest
from numba.core.errors import TypingError
from numba.core.registry import CPUDispatcher

import paddock_ma
import paddock_ma.env
import paddock_ma.sim
from paddock_ma.sim.core.jit import allocating_kernel, kernel

PACKAGE = Path(paddock_ma.__file__).resolve().parent


def test_no_bare_njit_in_the_package():
    offenders = []
    for path in PACKAGE.rglob("*.py"):
        if path.relative_to(PACKAGE).as_posix() == "sim/core/jit.py":
            continue
        for n, line in enumerate(path.read_text().splitlines(), 1):
            if re.search(r"@(numba\.)?n?jit\b|\bnjit\(", line):
                offenders.append(f"{path.relative_to(PACKAGE)}:{n}: {line.strip()}")
    assert not offenders, offenders


def test_every_dispatcher_states_its_refcount_mode():
    modules = [importlib.import_module(m.name)
               for pkg in (paddock_ma.sim, paddock_ma.env)
               for m in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + ".")]
    modules.append(importlib.import_module("paddock_ma.bench.core"))
    found = 0
    for mod in modules:
        for name, obj in vars(mod).items():
            if isinstance(obj, CPUDispatcher) and obj.py_func.__module__ == mod.__name__:
                assert "_nrt" in obj.targetoptions, f"{mod.__name__}.{name}"
                assert type(obj._cache).__name__ == "FunctionCache", f"{mod.__name__}.{name} is not cached"
                found += 1
    assert found > 100


def test_a_kernel_cannot_allocate_and_an_allocating_kernel_can():
    def make(n):
        return np.zeros(n)

    # not cached: numba's cache index does not tell the two compilations of one function apart, so a
    # second run would load the allocating one for the kernel
    with pytest.raises(TypingError):
        kernel(make, cache=False)(3)
    assert allocating_kernel(make, cache=False)(3).tolist() == [0.0, 0.0, 0.0]
