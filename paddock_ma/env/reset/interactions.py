"""Participant interaction profiles -> per-car interaction flag bitmasks (``layout.FLAG_*``).

PaddockJS 2.0.0's five profiles, each a setting of five flags (``FLAG_BY_NAME``): ``collidable``
(car-car contact), ``detectable_by_rays`` and ``detectable_as_nearby`` (other cars' rays and radar see
it), ``blocks_pit_lane`` (it holds pit service capacity) and ``affects_race_order`` (ranked and
classified).

* ``normal``: all five.
* ``isolated-training``: races for position, nothing else (no contact, unseen, no pit capacity).
* ``batch-training``: none: a full physical car that never collides, is hidden from other cars'
  sensors, stays out of race order and does not occupy pit service. Its own road-edge rays measure
  the main track only, as PaddockJS's batch-training rays (``layout.FLAG_MAIN_TRACK_RAYS``).
* ``phantom-race``: seen and classified, but never collides and does not occupy pit service.
* ``time-trial-overlay``: none (as batch-training).

``participant_interactions.drivers[id]`` picks a profile (else the default profile) and may override
any of the five flags. Every flag is a property of the car that has it: hiding decides whether
*other* cars can sense it. The flags are one int32 per car slot, set at reset, so profiles cost the
batched step nothing.
"""

from __future__ import annotations

import numpy as np

from ...sim.core import layout as L
from ..config.root import EnvConfig

# the override field of each flag, and its bit
FLAG_BY_NAME = {
    "collidable": L.FLAG_COLLIDES,
    "detectable_by_rays": L.FLAG_RAY_VISIBLE,
    "detectable_as_nearby": L.FLAG_RADAR_VISIBLE,
    "blocks_pit_lane": L.FLAG_PIT_OCCUPIES,
    "affects_race_order": L.FLAG_CLASSIFIED,
}
_ALL = L.FLAG_COLLIDES | L.FLAG_RAY_VISIBLE | L.FLAG_RADAR_VISIBLE | L.FLAG_PIT_OCCUPIES | L.FLAG_CLASSIFIED
PROFILE_FLAGS = {
    "normal": _ALL,
    "isolated-training": L.FLAG_CLASSIFIED,
    "batch-training": L.FLAG_MAIN_TRACK_RAYS,      # none of the five; its rays as PaddockJS's batch-training
    "phantom-race": L.FLAG_RAY_VISIBLE | L.FLAG_RADAR_VISIBLE | L.FLAG_CLASSIFIED,
    "time-trial-overlay": 0,
}


def driver_profile(config: EnvConfig, driver_id: str) -> str:
    """The profile name in force for ``driver_id``."""
    override = config.participant_interactions.drivers.get(driver_id)
    if override is not None and override.profile is not None:
        return override.profile
    return config.participant_interactions.default_profile


def driver_flags(config: EnvConfig, driver_id: str) -> int:
    """The interaction bitmask of one driver (FLAG_CONTROLLED included when it is controlled)."""
    flags = PROFILE_FLAGS[driver_profile(config, driver_id)]
    override = config.participant_interactions.drivers.get(driver_id)
    if override is not None:
        for name, bit in FLAG_BY_NAME.items():
            value = getattr(override, name)
            if value is True:
                flags |= bit
            elif value is False:
                flags &= ~bit
    if driver_id in config.controlled_drivers:
        flags |= L.FLAG_CONTROLLED
    return flags


def flags_for_slots(config: EnvConfig, slot_ids) -> np.ndarray:
    """int32[C] interaction flags for the drivers occupying the car slots ``slot_ids`` (in order)."""
    return np.array([driver_flags(config, d) for d in slot_ids], np.int32)
