"""A config's start: its rules vector, its car parameters (ratings, and each box's pit crew), and the
per-slot choices (tyres by driver or slot, pit boxes by team or slot, the scenario's placements, grid
locks) that ``sim.race.start.start_worlds`` turns into the state of every world at reset in one call.
"""

from __future__ import annotations

import numpy as np

from ...sim.core import layout as L
from ...sim.core.params import car_params_from_ratings
from ...sim.race.start import default_compound, default_pit_box, rules_vector, start_worlds
from ...sim.track.pit_lane import track_has_pit_lane
from ..config.grid import resolved_entry
from ..config.root import EnvConfig
from ...errors import ConfigError
from .placements import release_unlocked_starts
from .scenarios import preset_placements, scenario_placements

COMPOUND_INDEX = {"S": L.COMPOUND_S, "M": L.COMPOUND_M, "H": L.COMPOUND_H}


def rules_from_config(config: EnvConfig, track=None) -> np.ndarray:
    """float64[NR] rules vector of a config (the sim's rule names and SI units) on ``track``: pit stops
    are off on a track without a pit lane (PaddockJS: its pit-lane status reads "unavailable")."""
    r, m = config.rules, config.rules.modules
    pit = m.pit_stops
    pit_stops = pit.enabled and (track is None or track_has_pit_lane(track))
    return rules_vector(
        physics_mode=L.PHYSICS_SIMULATOR if config.physics_mode == "simulator" else L.PHYSICS_ARCADE,
        total_laps=config.total_laps, standing_start=float(r.standing_start),
        tire_degradation=float(m.tire_degradation.enabled), pit_stops=float(pit_stops),
        pit_speed_limit=pit.pit_lane_speed_limit_kph * L.MPS_PER_KPH, pit_stop_seconds=pit.default_stop_seconds,
        pit_variability=float(pit.variability.enabled), pit_perfect=float(pit.variability.perfect),
        pit_max_concurrent=pit.max_concurrent_pit_lane_cars, stalled_dnf=float(m.stalled_dnf.enabled),
        stall_seconds=m.stalled_dnf.seconds, restitution=r.collision_restitution,
        light_count=r.start_light_count, light_interval=r.start_light_interval,
        lights_out_hold=r.start_lights_out_hold, tire_request_pct=pit.tire_pit_request_threshold_percent,
        tire_commit_pct=pit.tire_pit_commit_threshold_percent, pit_issue_chance=pit.variability.issue_chance,
        pit_issue_max_delay=pit.variability.issue_max_delay_seconds, pit_min_gap=pit.minimum_pit_lane_gap_meters,
        drs_detection=r.drs_detection_seconds,
    )


def pit_boxes(config: EnvConfig, track, driver_ids) -> list:
    """The pit box (service area) of each slot's driver: its ``team`` (modulo the track's boxes),
    else two cars a box in slot order (``race.default_pit_box``); -1 for every car on a track without
    a pit lane (no boxes to assign)."""
    drivers = {d.id: d for d in config.drivers}
    n = len(track.box_x)
    if n == 0:
        return [-1] * len(driver_ids)
    return [drivers[d].team % n if drivers[d].team is not None else default_pit_box(slot, n)
            for slot, d in enumerate(driver_ids)]


def car_params(config: EnvConfig, track, driver_ids) -> np.ndarray:
    """float64[C, NP] car parameters of each slot's driver: its ratings (``sim.core.params``) and the pit
    crew of its box. The drivers sharing a box share its crew: the one any of them names (its own
    ``pit_crew``, else its entry team's ``pitCrew``; naming
    different ones is a ConfigError), else the neutral crew (0.5 each). Without a pit lane there
    are no boxes and no crews: every car keeps the neutral crew."""
    drivers = {d.id: d for d in config.drivers}
    params = np.stack([car_params_from_ratings(config.driver_ratings(d)) for d in driver_ids])
    if not track_has_pit_lane(track):
        return params
    boxes = pit_boxes(config, track, driver_ids)
    crews = {}
    for d, box in zip(driver_ids, boxes):
        crew = drivers[d].pit_crew
        if crew is None:            # else its entry team's crew (PaddockJS's team.pitCrew)
            entry = resolved_entry(config, d)
            crew = entry.team.pit_crew if entry is not None and entry.team is not None else None
        if crew is None:
            continue
        named = crews.setdefault(box, (d, crew))
        if named[1] != crew:
            raise ConfigError(f"drivers.{d}.pit_crew", f"got {crew.to_dict()!r}, but {named[0]!r} shares its pit box "
                              f"{box} and names {named[1].to_dict()!r}; a box has one crew: give team-mates "
                              "the same pit_crew (or name it once)")
    for slot, box in enumerate(boxes):
        if box in crews:
            crew = crews[box][1]
            params[slot, L.P_PIT_CREW_SPEED] = crew.speed
            params[slot, L.P_PIT_CREW_CONSISTENCY] = crew.consistency
            params[slot, L.P_PIT_CREW_RELIABILITY] = crew.reliability
    return params


def start_state(config: EnvConfig, track, driver_ids, num_worlds: int, seed: int, *, rules, car_params,
                car_flags, first_world: int = 0) -> tuple:
    """(WorldState of ``num_worlds`` worlds at their start seeded from ``seed`` (``race.start_worlds``;
    world ``w`` is global world ``first_world + w``),
    the scenario's placements {driver: placement}). rules float64[NR], car_params [C, NP], car_flags
    int32[C]. A driver's tyre and team choose its compound and pit box, else the slot defaults; cars
    the grid places are locked on it at a standing start."""
    drivers = {d.id: d for d in config.drivers}
    scenario = scenario_placements(config, track, driver_ids)
    compounds = [COMPOUND_INDEX[drivers[d].tire] if drivers[d].tire else default_compound(slot)
                 for slot, d in enumerate(driver_ids)]
    boxes = pit_boxes(config, track, driver_ids)
    placements = [(p[0], p[1], 0.0 if p[2] is None else p[2], p[3]) for p in (scenario[d] for d in driver_ids)]
    grid_locked = np.zeros(len(driver_ids), bool)
    if config.rules.standing_start:
        preset = preset_placements(config.scenario.preset, track, config, driver_ids) if config.scenario.preset else {}
        traffic = {t.driver_id for t in config.scenario.traffic}
        grid_locked[:] = [d not in config.scenario.placements and d not in preset and d not in traffic
                          for d in driver_ids]
    state = start_worlds(track, num_worlds, seed, rules=rules, car_params=car_params, car_flags=car_flags,
                         active=np.ones(len(driver_ids), bool), compounds=compounds, pit_boxes=boxes,
                         placements=placements, grid_locked=grid_locked, first_world=first_world)
    release_unlocked_starts(state, np.arange(num_worlds))
    return state, scenario
