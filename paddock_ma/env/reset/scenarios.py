"""Scenarios: where cars start at reset (grid, presets, explicit placements, relative traffic); the
placement policies of ``reset_drivers`` and auto-reset live with their code in ``reset.placements``.

Every placement goes through the one sim reset path (``sim.race.placement.place_car`` via
``sim.race.start.place_and_classify``), so a scenario start, a ``reset_drivers`` placement and an
auto-reset are the same operation.
A placement is ``(race_distance_m, offset_m, speed_m_s or None, heading_error_rad)``.
"""

from __future__ import annotations

import numpy as np

from ...sim.core import layout as L
from ...sim.core.params import car_params_from_ratings
from ...sim.race.start import grid_placement
from ..config.root import EnvConfig, Placement
from ...errors import INVALID_REQUEST, ConfigError, PaddockError, suggest
from .interactions import driver_flags

PRESET_SPEEDS_KPH = {"cornering": 135.0, "off-track-recovery": 52.0, "pit-entry": 120.0}


def placement_tuple(p: Placement):
    speed = None if p.speed_kph is None else p.speed_kph * L.MPS_PER_KPH
    return (max(0.0, p.distance_meters), p.offset_meters, speed, p.heading_error_radians)


def grid_placements(participants, standing: bool, paces=None) -> dict:
    """Each participant on its grid slot (slot order = participant order), at rest or rolling (at a
    speed that grows with the driver's pace, ``paces[i]``, 1 when not given)."""
    return {driver: grid_placement(i, standing, 1.0 if paces is None else paces[i])
            for i, driver in enumerate(participants)}


def driver_paces(config: EnvConfig, participants) -> list:
    """Each participant's pace (``P_PACE`` of its ratings: PaddockJS's driver pace, 1 neutral)."""
    return [float(car_params_from_ratings(config.driver_ratings(d))[L.P_PACE]) for d in participants]


def start_race_order(config: EnvConfig, participants) -> list:
    """The participants in race order at the start, as PaddockJS lists the cars of a snapshot: the
    ranked (classified) cars in grid order (the grid is slot order), then the unranked ones (profiles
    out of race order, e.g. batch-training) in slot order."""
    ranked = [d for d in participants if driver_flags(config, d) & L.FLAG_CLASSIFIED]
    return ranked + [d for d in participants if d not in ranked]


def preset_placements(preset: str, track, config: EnvConfig, participants) -> dict:
    """Placements of a preset (PaddockJS semantics; only the first controlled driver moves, except
    ``overtaking-pack`` which places the first four cars in race order at the start: the i-th
    (from 0) at 0.35 L + (i - 1) * 18 m, offset -2.2 m for even i and +2.2 m for odd i, 135 - 3 i km/h)."""
    lead = config.controlled_drivers[0]
    length = track.length
    if preset == "cornering":
        s = track.cs[:-1]
        curv = np.abs(track.ccurv[:-1])
        eligible = s >= 350.0
        idx = int(np.argmax(np.where(eligible, curv, -1.0)))
        return {lead: ((s[idx] - 70.0) % length, 0.0, 135.0 * L.MPS_PER_KPH, 0.0)}
    if preset == "off-track-recovery":
        return {lead: (0.42 * length, track.half_width + 7.0, 52.0 * L.MPS_PER_KPH, -0.45)}
    if preset == "pit-entry":      # without a pit lane, PaddockJS's fallback entry at 0.92 of the lap
        entry = track.pit_entry_s if len(track.px) > 0 else 0.92 * length
        return {lead: ((entry - 170.0) % length, 0.0, 120.0 * L.MPS_PER_KPH, 0.0)}
    if preset == "overtaking-pack":
        out = {}
        for i, driver in enumerate(start_race_order(config, participants)[:4]):
            out[driver] = (0.35 * length + (i - 1) * 18.0, -2.2 if i % 2 == 0 else 2.2,
                           (135.0 - 3.0 * i) * L.MPS_PER_KPH, 0.0)
        return out
    raise PaddockError("invalid_config", f"scenario.preset: unknown preset {preset!r}", "scenario.preset")


def scenario_placements(config: EnvConfig, track, participants) -> dict:
    """Every participant's start: grid, then the preset, then explicit placements, then traffic."""
    standing = config.rules.standing_start
    out = grid_placements(participants, standing, driver_paces(config, participants))
    if config.scenario.preset:
        out.update(preset_placements(config.scenario.preset, track, config, participants))
    for driver, p in config.scenario.placements.items():
        out[driver] = placement_tuple(p)
    for entry in config.scenario.traffic:
        ref = out[entry.relative_to]
        speed = ref[2] if entry.speed_kph is None else entry.speed_kph * L.MPS_PER_KPH
        out[entry.driver_id] = (max(0.0, ref[0] + entry.delta_distance_meters), entry.offset_meters, speed,
                                entry.heading_error_radians)
    return out


def parse_placements(placements, controlled) -> dict:
    """``{driver: Placement dict}`` from a reset_drivers call -> ``{driver: placement tuple}``.

    A value of ``None`` or ``{}`` means "the driver's default placement" (returned as None).
    """
    if not isinstance(placements, dict) or not placements:
        raise PaddockError(INVALID_REQUEST, "placements: expected a non-empty object mapping controlled "
                           "driver ids to placements", "placements")
    out = {}
    for driver, value in placements.items():
        if driver not in controlled:
            raise PaddockError("unknown_driver", f"placements.{driver}: {driver!r} is not a controlled driver"
                               f"{suggest(driver, list(controlled))}", f"placements.{driver}")
        if value is None or value == {}:
            out[driver] = None
            continue
        if isinstance(value, Placement):
            out[driver] = placement_tuple(value)
            continue
        try:
            out[driver] = placement_tuple(Placement.from_dict(value, f"placements.{driver}"))
        except ConfigError as exc:          # a placement is part of the request, not of the config
            raise PaddockError(INVALID_REQUEST, exc.message, exc.field) from None
    return out
