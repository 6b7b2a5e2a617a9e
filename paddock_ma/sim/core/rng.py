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

GOLDEN_GAMMA = np.uint64(0x9E3779B97F4A7C15)   # SplitMix64's increment (2**64 / golden ratio, odd)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_TO_UNIT = 1.0 / 9007199254740992.0  # 2**-53


def mix64(z):
    """SplitMix64 finaliser (a bijective 64-bit mix) of a uint64 or a uint64 array, in plain numpy: code
    outside the kernels (the counter-based random policy of ``distributed.policies``) hashes with this
    same function; ``splitmix64`` is its kernel. Wraps modulo 2**64 (numpy arrays wrap silently; wrap
    numpy scalars in ``np.errstate(over="ignore")``)."""
    z = (z ^ (z >> np.uint64(30))) * _MIX1
    z = (z ^ (z >> np.uint64(27))) * _MIX2
    return z ^ (z >> np.uint64(31))


splitmix64 = kernel(mix64)


@kernel
def rng_next_u64(world_i, w):
    """Next raw uint64 of world ``w``'s stream; advances ``world_i[w, WI_RNG_COUNTER]`` by one.

    world_i: int64[W, NWI]. Returns a uint64.
    """
    key = np.uint64(world_i[w, WI_RNG_KEY])
    counter = np.uint64(world_i[w, WI_RNG_COUNTER])
    world_i[w, WI_RNG_COUNTER] = np.int64(counter + np.uint64(1))
    return splitmix64(key + counter * GOLDEN_GAMMA)


@kernel
def rng_uniform(world_i, w):
    """A float64 uniform in [0, 1) from world ``w``'s stream (53 random bits)."""
    return float(rng_next_u64(world_i, w) >> np.uint64(11)) * _TO_UNIT


def world_keys(seed, num_worlds, first_world=0):
    """int64[num_worlds] generator keys of worlds ``first_world .. first_world + num_worlds - 1``: world
    ``g``'s key is ``SeedSequence(seed).spawn(n)[g]``'s for any ``n > g`` (a spawned child is
    ``SeedSequence(seed, spawn_key=(g,))``).

    A world's key depends on its global index only, not on the size of the batch it runs in nor on which
    batch holds it: ``first_world`` lets an engine hold a slice of a larger set of worlds (a Ray shard).
    """
    keys = [int(np.random.SeedSequence(int(seed), spawn_key=(g,)).generate_state(1, dtype=np.uint64)[0])
            for g in range(int(first_world), int(first_world) + int(num_worlds))]
    return np.array(keys, dtype=np.uint64).view(np.int64)
