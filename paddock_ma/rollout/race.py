"""A race of built-in drivers on the simulation core, no environment: what ``paddock-ma race`` shows.

``race_builtin_drivers`` starts W worlds of N built-in cars on one track (rolling start, each world's
cars scattered at its own random track positions so the worlds do not drive in lockstep), steps the
core for a number of simulated seconds and sums up the race: laps, best lap, contacts, destroyed cars,
the state's checksum, and the car-ticks per wall-clock second it ran at.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

TICKS_PER_SECOND = 60
TICKS_PER_CALL = 4


@dataclass(frozen=True)
class RaceSummary:
    """One track's race: ``worlds`` x ``cars`` built-in cars for ``ticks`` timed ticks (1/60 s each; after
    one untimed first tick)."""

    track: str
    lap_meters: float
    worlds: int
    cars: int
    ticks: int
    car_ticks_per_s: float           # wall clock: the core's speed on this machine
    laps_completed: int              # summed over every car of every world
    best_lap_seconds: float | None   # the best completed lap of any car; None when no lap was completed
    contacts: int                    # car-to-car contacts (each counted once, not per car)
    destroyed: int
    checksum: int                    # of the final state (every world): equal for equal arguments


def race_builtin_drivers(track_name: str, worlds: int = 8, cars: int = 20, seconds: float = 90.0,
                         seed: int = 0) -> RaceSummary:
    """Race ``cars`` built-in drivers in each of ``worlds`` worlds on ``track_name`` for ``seconds``
    simulated seconds (50-lap race, rolling start), ``seed`` drawing the start positions."""
    from ..sim.core import layout as L
    from ..sim.race.start import new_race, scatter_cars
    from ..sim.step import step_state
    from ..sim.track.load import load_track

    track = load_track(track_name)
    state = new_race(track, worlds, cars, seed=seed, standing_start=0, total_laps=50)
    scatter_cars(track, state)      # each world's own draws: the worlds do not drive in lockstep
    step_state(state, n_ticks=1)    # compile (or load the kernels) outside the timing
    ticks = int(seconds * TICKS_PER_SECOND) // TICKS_PER_CALL * TICKS_PER_CALL
    contacts = 0
    t0 = time.perf_counter()
    for _ in range(ticks // TICKS_PER_CALL):
        step_state(state, n_ticks=TICKS_PER_CALL)
        contacts += int(state.cars_i[:, :, L.I_CNT_CONTACTS].sum())
    dt = time.perf_counter() - t0
    best = state.cars_f[:, :, L.F_BEST_LAP_TIME]
    best = best[best > 0]
    return RaceSummary(track=track_name, lap_meters=float(track.length), worlds=worlds, cars=cars, ticks=ticks,
                       car_ticks_per_s=ticks * worlds * cars / dt,
                       laps_completed=int(state.cars_i[:, :, L.I_COMPLETED_LAPS].sum()),
                       best_lap_seconds=float(best.min()) if best.size else None, contacts=contacts // 2,
                       destroyed=int(state.cars_i[:, :, L.I_DESTROYED].sum()), checksum=state.checksum())


def race_every_track(worlds: int = 8, cars: int = 20, seconds: float = 90.0, seed: int = 0) -> list[RaceSummary]:
    """``race_builtin_drivers`` on every shipped track, in ``list_tracks`` order."""
    from ..sim.track.load import list_tracks

    return [race_builtin_drivers(name, worlds, cars, seconds, seed) for name in list_tracks()]
