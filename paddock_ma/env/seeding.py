"""How worlds are seeded: the seed rule, world generator keys, and the hash counter-based draws use.

* A seed is an integer in ``[0, 2**63)`` (``check_seed``): it fits numpy's ``SeedSequence``, a signed
  64-bit state cell and a JSON number, so every layer (engine, adapters, protocol, shards, datasets)
  takes the same seeds. ``fresh_seed()`` draws one from OS entropy for a reset given none.
* World ``g``'s generator key is ``SeedSequence(seed).spawn(n)[g]``'s (``world_keys``): it depends on the
  world's global index only, whichever engine or shard holds the world.
* ``counter_bits(seed, worlds, counters)``: counter-based random bits for code above the engine (the
  random policy of ``distributed.policies``), hashed with the worlds' own SplitMix64 finaliser: a pure
  function of (seed, global world, counter), whichever shard holds the world and whatever was drawn before.

The worlds' generator itself lives in the simulation core (``sim.core.rng``); this module is its public
face for the layers above the engine.
"""

from __future__ import annotations

import numpy as np

from ..sim.core.rng import GOLDEN_GAMMA, mix64
from ..value_rules import check_integer

SEED_LIMIT = 2**63          # seeds are integers in [0, SEED_LIMIT)
WORLD_STRIDE = np.uint64(0xD1B54A32D192ED03)    # an odd 64-bit constant spreading world indices apart


def check_seed(value, field: str = "seed", error=None) -> int:
    """``int(value)`` when it is a seed (an integer in ``[0, 2**63)``), else raises as
    ``validation.check_integer`` does (ConfigError naming ``field``, or ``error(message)``)."""
    return check_integer(value, field, 0, SEED_LIMIT, error)


def fresh_seed() -> int:
    """A seed from fresh OS entropy, for a reset that was given none."""
    return int(np.random.SeedSequence().entropy % SEED_LIMIT)


def counter_bits(seed: int, worlds, counters: np.ndarray) -> np.ndarray:
    """uint64[n, *counters.shape]: random bits of global worlds ``worlds`` (int[n]) at ``counters`` (a uint64
    array, e.g. [K, 3]: one counter per car and action component of a step), from the root ``seed``.

    World ``g``'s stream is ``mix64(seed * GOLDEN_GAMMA + g * WORLD_STRIDE)``; its bits at counter ``c`` are
    ``mix64(stream + (c + 1) * GOLDEN_GAMMA)`` (SplitMix64, ``sim.core.rng.mix64``; arithmetic modulo 2**64).
    """
    with np.errstate(over="ignore"):
        stream = mix64(np.uint64(seed) * GOLDEN_GAMMA + np.asarray(worlds, np.uint64) * WORLD_STRIDE)
        return mix64(stream.reshape((-1,) + (1,) * counters.ndim) + (counters + np.uint64(1)) * GOLDEN_GAMMA)
