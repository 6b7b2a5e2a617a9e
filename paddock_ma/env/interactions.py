"""Participant interaction profiles -> per-car interaction flag bitmasks (``layout.FLAG_*``).

* ``normal``: collides, visible to other cars' rays and radar, classified, occupies pit service.
* ``batch-training``: a full physical car that never collides, is hidden from other cars' rays and
  radar, stays out of race order and classification and does not occupy pit service.
* ``phantom-race``: never collides but stays visible to sensors and classified.

Per-driver ``detectable_by_rays`` / ``detectable_as_nearby`` override the profile's visibility. Hiding
is a property of the target car: it decides whether *other* cars can sense it.
"""

from __future__ import annotations

import numpy as np

from ..sim import layout as L
from .config import EnvConfig

PROFILE_FLAGS = {
    "normal": L.FLAG_COLLIDES | L.FLAG_RAY_VISIBLE | L.FLAG_RADAR_VISIBLE | L.FLAG_CLASSIFIED
    | L.FLAG_PIT_OCCUPIES,
    "batch-training": 0,
    "phantom-race": L.FLAG_RAY_VISIBLE | L.FLAG_RADAR_VISIBLE | L.FLAG_CLASSIFIED | L.FLAG_PIT_OCCUPIES,
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
        for value, bit in ((override.detectable_by_rays, L.FLAG_RAY_VISIBLE),
                           (override.detectable_as_nearby, L.FLAG_RADAR_VISIBLE)):
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
