"""Per-world counter-based random generator stored inside the world state.

Each world owns a 64-bit key and a 64-bit counter in ``world_i`` (``WI_RNG_KEY``, ``WI_RNG_COUNTER``).
A draw hashes ``key + counter * golden`` with the SplitMix64 finaliser and bumps the counter. The
generator's whole state is two integers in the state arrays, so a snapshot captures it and a
restored world draws the same numbers. Keys come from ``numpy.random.SeedSequence(seed).spawn(W)``,
so worlds of one batch are independent and a world's stream does not depend on the batch size.
"""

import numpy as np

from .jit import kernel
from .layout import WI_RNG_COUNTER, WI_RNG_KEY

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_TO_UNIT = 1.0 / 9007199254740992.0  # 2**-53


@kernel
def splitmix64(z):
    """SplitMix64 finaliser of a uint64 (a bijective 64-bit mix)."""
    z = (z ^ (z >> np.uint64(30))) * _MIX1
    z = (z ^ (z >> np.uint64(27))) * _MIX2
    return z ^ (z >> np.uint64(31))


@kernel
def rng_next_u64(world_i, w):
    """Next raw uint64 of world ``w``'s stream; advances ``world_i[w, WI_RNG_COUNTER]`` by one.

    world_i: int64[W, NWI]. Returns a uint64.
    """
    key = np.uint64(world_i[w, WI_RNG_KEY])
    counter = np.uint64(world_i[w, WI_RNG_COUNTER])
    world_i[w, WI_RNG_COUNTER] = np.int64(counter + np.uint64(1))
    return splitmix64(key + counter * _GOLDEN)


@kernel
def rng_uniform(world_i, w):
    """A float64 uniform in [0, 1) from world ``w``'s stream (53 random bits)."""
    return float(rng_next_u64(world_i, w) >> np.uint64(11)) * _TO_UNIT


def world_keys(seed, num_worlds):
    """int64[num_worlds] generator keys spawned from ``SeedSequence(seed)``: one per world.

    World ``k`` gets the same key whatever ``num_worlds`` is, so a world's stream does not depend on
    the size of the batch it runs in.
    """
    children = np.random.SeedSequence(int(seed)).spawn(int(num_worlds))
    keys = [int(child.generate_state(1, dtype=np.uint64)[0]) for child in children]
    return np.array(keys, dtype=np.uint64).view(np.int64)
