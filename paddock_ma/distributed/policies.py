"""Policies a fleet or a collection drives its shards with: ``builtin``, ``random`` or ``MODULE:FN``.

A policy maps one shard's observations to its actions: ``fn(obs, *, worlds, seq, seed) -> actions`` with
``obs`` float32[W, K, D] (the observation each car acts on), ``worlds`` int64[W] (the worlds' global
indices), ``seq`` (the step being taken, 1 for the first step after reset) and ``seed`` (the run's root
seed); it returns float32[W, K, 3] (steering [-1, 1], throttle [0, 1], brake [0, 1]).

A policy must be a pure function of its arguments: a shard restored after a failure replays its steps
with the actions recorded at the time, but a resumed collection recomputes them, and the dataset is only
reproducible when the same inputs give the same actions. ``random`` is therefore counter-based: world
``g``'s action at step ``seq`` hashes ``(seed, g, seq, car, component)`` with SplitMix64, so it does not
depend on which shard holds the world or on what was drawn before. ``builtin`` is the simulator's
built-in driver, computed inside the shard (its actions are returned with the step).
"""

from __future__ import annotations

import importlib

import numpy as np

from ..env.seeding import counter_bits

BUILTIN = "builtin"


class PolicyError(ValueError):
    """A policy name that cannot be resolved; the message names the value and the fix."""


def random_policy(obs, *, worlds, seq, seed):
    """Uniform steering in [-1, 1], throttle in [0, 1], brake in [0, 0.25): counter-based (see above)."""
    w, k = obs.shape[0], obs.shape[1]
    with np.errstate(over="ignore"):
        counter = (np.uint64(seq) * np.uint64(k * 3) + np.arange(k * 3, dtype=np.uint64)).reshape(k, 3)
    bits = counter_bits(seed, worlds, counter)            # [W, K, 3]
    u = (bits >> np.uint64(40)).astype(np.float32) * np.float32(1.0 / (1 << 24))
    out = np.empty((w, k, 3), np.float32)
    out[..., 0] = 2.0 * u[..., 0] - 1.0
    out[..., 1] = u[..., 1]
    out[..., 2] = 0.25 * u[..., 2]
    return out


def resolve_policy(name: str):
    """``None`` for ``builtin`` (the shard drives), else the policy callable. Raises PolicyError."""
    if not isinstance(name, str) or not name:
        raise PolicyError(f"policy: got {name!r}; expected builtin, random or MODULE:FN")
    if name == BUILTIN:
        return None
    if name == "random":
        return random_policy
    if ":" not in name:
        raise PolicyError(f"policy: got {name!r}; expected builtin, random or MODULE:FN (e.g. mypkg.pol:act)")
    module, _, attr = name.partition(":")
    try:
        fn = getattr(importlib.import_module(module), attr)
    except (ImportError, AttributeError) as exc:
        raise PolicyError(f"policy: cannot load {name!r} ({exc}); check the module is importable here and on "
                          "every node, and that it defines that function") from None
    if not callable(fn):
        raise PolicyError(f"policy: {name!r} is not callable")
    return fn
