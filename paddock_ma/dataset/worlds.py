"""How a collection's worlds are built and started, defined once: a shard (``distributed.shard.ShardCore``)
runs them and a dataset replay (``replay``) re-runs one, both from here, so a replay starts a world
exactly as its shard did.

World ``g`` of a collection is world ``g - world_offset`` of an engine built with that ``world_offset``:
its generator key is ``SeedSequence(seed).spawn(n)[g]``'s whatever the engine's size and offset
(``BatchEnv``'s ``world_offset``), so a world's trajectory does not depend on how the collection is cut
into shards. The engine auto-resets: a car whose episode ends starts a new one at once, inside its
running world, placed with ``reset_placement``.
"""

from __future__ import annotations

import numpy as np


def collection_engine(config: dict, world_offset: int, num_worlds: int, reset_placement: str = "random"):
    """The ``BatchEnv`` of global worlds ``world_offset .. world_offset + num_worlds - 1`` of a collection
    of ``config`` (an EnvConfig dict), auto-resetting with ``reset_placement``."""
    from ..env.batch_env import BatchEnv
    return BatchEnv(config, num_worlds, auto_reset=True, reset_placement=reset_placement, world_offset=world_offset)


def start_worlds(engine, seed: int, start_placement: str | None):
    """Reset every world of ``engine`` from the root ``seed``; with a ``start_placement``, then place every
    controlled car once with it from its world's own draws (worlds are not copies of one another, and
    episode ids start at 1); None keeps the scenario's grid. Returns the engine's ``BatchResult``."""
    result = engine.reset(seed=seed)
    if start_placement is not None:
        result = engine.reset_drivers(np.ones((engine.num_worlds, len(engine.controlled)), bool), start_placement)
    return result
