"""How worlds are seeded: the seed rule, world generator keys, and the hash counter-based draws use.

* A seed is an integer in ``[0, 2**63)`` (``check_seed``): it fits numpy's ``SeedSequence``, a signed
  64-bit state cell and a JSON number, so every layer (engine, adapters, protocol, shards, datasets)
  takes the same seeds. ``fresh_seed()`` draws one from OS entropy for a reset given none.
* World ``g``'s generator key is ``SeedSequence(seed).spawn(n)[g]``'s (``world_keys``): it depends on the
  world's global index only, whichever engine or shard holds the world.
* ``mix64`` is the simulator's SplitMix64 finaliser in plain numpy, and ``GOLDEN_GAMMA`` its increment:
  code above the engine that needs counter-based random numbers (``distributed.policies``) hashes with
  the same function as the worlds' own generators.

The generator itself lives in the simulation core (``sim.core.rng``); this module is its public face
for the layers above the engine.
"""

from __future__ import annotations

import numpy as np

from ..sim.core.rng import GOLDEN_GAMMA, mix64, world_keys  # noqa: F401 - the public names of this module
from ..value_rules import check_integer

SEED_LIMIT = 2**63          # seeds are integers in [0, SEED_LIMIT)


def check_seed(value, field: str = "seed", error=None) -> int:
    """``int(value)`` when it is a seed (an integer in ``[0, 2**63)``), else raises as
    ``validation.check_integer`` does (ConfigError naming ``field``, or ``error(message)``)."""
    return check_integer(value, field, 0, SEED_LIMIT, error)


def fresh_seed() -> int:
    """A seed from fresh OS entropy, for a reset that was given none."""
    return int(np.random.SeedSequence().entropy % SEED_LIMIT)
