"""Setting up races: the rules vector, car parameters, and the start grid for every world at once.

This is the sim-level reset path that the environment layer, the tests and the benchmarks share:
``new_race`` allocates a ``WorldState``, fills ``rules`` and ``car_params``, seeds each world's RNG from
``SeedSequence(seed).spawn(W)`` and places every active car on its grid slot with ``rules.place_car``.
"""

from __future__ import annotations

import numpy as np

from . import layout as L
from .jit import allocating_kernel, kernel
from .params import neutral_car_params
from .physics import hold_car
from .rng import rng_uniform, world_keys
from .rules import grid_slot, init_world, place_car, update_ranks
from .state import WorldState
from .surfaces import classify_car

# Rule name -> (index in the rules vector, default). Units: seconds, metres, m/s, or 0/1 switches.
RULE_DEFAULTS = {
    "physics_mode": (L.R_PHYSICS_MODE, float(L.PHYSICS_SIMULATOR)),
    "total_laps": (L.R_TOTAL_LAPS, 10.0),
    "standing_start": (L.R_STANDING_START, 1.0),
    "tire_degradation": (L.R_TIRE_DEGRADATION, 1.0),
    "pit_stops": (L.R_PIT_STOPS, 0.0),
    "pit_speed_limit": (L.R_PIT_SPEED_LIMIT, 80.0 * L.MPS_PER_KPH),
    "pit_stop_seconds": (L.R_PIT_STOP_SECONDS, 2.8),
    "pit_variability": (L.R_PIT_VARIABILITY, 0.0),
    "pit_perfect": (L.R_PIT_PERFECT, 0.0),
    "pit_max_concurrent": (L.R_PIT_MAX_CONCURRENT, 3.0),
    "stalled_dnf": (L.R_STALLED_DNF, 0.0),
    "stall_seconds": (L.R_STALL_SECONDS, 10.0),
    "restitution": (L.R_RESTITUTION, 0.18),
    "light_count": (L.R_LIGHT_COUNT, 5.0),
    "light_interval": (L.R_LIGHT_INTERVAL, 0.72),
    "lights_out_hold": (L.R_LIGHTS_OUT_HOLD, 0.78),
    "tire_request_pct": (L.R_TIRE_REQUEST_PCT, 50.0),
    "tire_commit_pct": (L.R_TIRE_COMMIT_PCT, 30.0),
    "pit_issue_chance": (L.R_PIT_ISSUE_CHANCE, 0.12),
    "pit_issue_max_delay": (L.R_PIT_ISSUE_MAX_DELAY, 4.0),
    "pit_min_gap": (L.R_PIT_MIN_GAP, 20.0),
}
assert sorted(i for i, _ in RULE_DEFAULTS.values()) == list(range(L.NR)), "every rule needs a default"

# Interaction flags of an ordinary racing car.
NORMAL_FLAGS = (L.FLAG_COLLIDES | L.FLAG_RAY_VISIBLE | L.FLAG_RADAR_VISIBLE | L.FLAG_CLASSIFIED
                | L.FLAG_PIT_OCCUPIES)


def rules_vector(**overrides) -> np.ndarray:
    """float64[NR] rules with ``overrides`` (names of RULE_DEFAULTS) applied; unknown names raise."""
    vec = np.zeros(L.NR, np.float64)
    for name, (index, default) in RULE_DEFAULTS.items():
        vec[index] = default
    for name, value in overrides.items():
        if name not in RULE_DEFAULTS:
            raise KeyError(f"unknown rule {name!r}; known rules: {', '.join(sorted(RULE_DEFAULTS))}")
        vec[RULE_DEFAULTS[name][0]] = float(value)
    return vec


@kernel
def place_cars(tr, cars_f, cars_i, world_f, worlds, slots, race_distance, offset, speed, heading_error):
    """Place many cars through ``rules.place_car`` in one call (all arrays of length n); lap clocks
    start at each world's current time."""
    for k in range(worlds.shape[0]):
        place_car(tr, cars_f, cars_i, worlds[k], slots[k], race_distance[k], offset[k], speed[k],
                  heading_error[k], world_f[worlds[k], L.WF_TIME])


def new_race(track, num_worlds: int, num_cars: int, seed: int, *, num_active: int | None = None,
             controlled=(), flags: int = NORMAL_FLAGS, params: np.ndarray | None = None,
             **rule_overrides) -> WorldState:
    """A WorldState with ``num_active`` cars (default all slots) on the grid of every world.

    controlled: slot indices driven by actions (FLAG_CONTROLLED, manual controls), the rest by the
    built-in driver. flags: interaction flags for every car. params: float64[NP] or [C, NP] car
    parameters (default neutral). Tyres start at 100% on compounds M, H, S by slot.
    """
    state = WorldState.allocate(num_worlds, num_cars, track)
    n_active = num_cars if num_active is None else int(num_active)
    state.rules[:] = rules_vector(**rule_overrides)
    state.car_params[:] = neutral_car_params() if params is None else params
    state.car_flags[:, :n_active] = flags
    for c in controlled:
        state.car_flags[:, c] |= L.FLAG_CONTROLLED
    state.world_i[:, L.WI_RNG_KEY] = world_keys(seed, num_worlds)
    state.world_i[:, L.WI_SEED] = int(seed)
    for w in range(num_worlds):
        init_world(state.world_f, state.world_i, state.rules, w)
    reset_grid(state, np.arange(num_worlds), n_active)
    return state


def reset_grid(state: WorldState, worlds: np.ndarray, n_active: int) -> None:
    """Put the first ``n_active`` slots of ``worlds`` on their grid slots (one numba call)."""
    standing = state.rules[0, L.R_STANDING_START] > 0.5
    slots = np.arange(n_active)
    grid = np.array([grid_slot(int(i), standing) for i in slots], np.float64).reshape(-1, 2)
    speed = np.zeros(n_active) if standing else np.maximum(70.0, 84.0 - 0.55 * slots) * L.MPS_PER_KPH
    ws = np.repeat(np.asarray(worlds, np.int64), n_active)
    cs = np.tile(slots.astype(np.int64), len(worlds))
    ci = state.cars_i
    ci[ws, cs, L.I_ACTIVE] = 1
    ci[ws, cs, L.I_COMPOUND] = np.tile(np.array([L.COMPOUND_M, L.COMPOUND_H, L.COMPOUND_S])[slots % 3],
                                       len(worlds))
    ci[ws, cs, L.I_PIT_TARGET] = ci[ws, cs, L.I_COMPOUND]
    ci[ws, cs, L.I_USED_COMPOUNDS] = 1 << ci[ws, cs, L.I_COMPOUND]
    ci[ws, cs, L.I_PIT_BOX] = cs // 2 % max(1, len(state.track.box_x))
    ci[ws, cs, L.I_MANUAL] = (state.car_flags[ws, cs] & L.FLAG_CONTROLLED) != 0
    state.cars_f[ws, cs, L.F_TIRE_ENERGY] = 100.0
    place_cars(state.track, state.cars_f, state.cars_i, state.world_f, ws, cs, np.tile(grid[:, 0], len(worlds)),
               np.tile(grid[:, 1], len(worlds)), np.tile(speed, len(worlds)), np.zeros(len(ws)))
    if standing:
        ci[ws, cs, L.I_GRID_LOCKED] = 1


@kernel
def reclassify_cars(tr, cars_f, cars_i, car_flags, worlds, slots):
    """Classify freshly placed cars at once (surfaces, track position); a car placed touching the
    barrier is destroyed on the spot and, when controlled, its episode terminates (``END_DESTROYED``)."""
    for k in range(worlds.shape[0]):
        w, c = worlds[k], slots[k]
        if classify_car(tr, cars_f, cars_i, w, c):
            cars_i[w, c, L.I_DESTROYED] = 1
            cars_i[w, c, L.I_CNT_DESTROYED] = 1
            hold_car(cars_f, w, c)
            if car_flags[w, c] & L.FLAG_CONTROLLED:
                cars_i[w, c, L.I_TERMINATED] = 1
                cars_i[w, c, L.I_END_REASON] = L.END_DESTROYED


@kernel
def random_track_placements(tr, world_i, worlds, margin, max_speed, out_distance, out_offset, out_speed):
    """Draw a legal track position per entry of ``worlds`` from that world's RNG.

    Distance uniform over the lap, offset uniform within ``half_width - margin`` of the centreline;
    with ``max_speed`` > 0 (m/s) also a speed uniform in [0, max_speed) (drawn after the position, so
    a zero ``max_speed`` leaves the RNG stream as position-only draws). out_distance / out_offset /
    out_speed: float64[n] written in place (speed 0 when not drawn).
    """
    half = tr.half_width - margin
    for k in range(worlds.shape[0]):
        w = worlds[k]
        out_distance[k] = rng_uniform(world_i, w) * tr.length
        out_offset[k] = (2.0 * rng_uniform(world_i, w) - 1.0) * half
        out_speed[k] = rng_uniform(world_i, w) * max_speed if max_speed > 0.0 else 0.0


@allocating_kernel
def rank_worlds(cars_f, cars_i, car_flags, world_i, worlds):
    """Recompute race order in ``worlds`` (int64[n]) after placements, so results at reset carry ranks."""
    order = np.empty(cars_f.shape[1], np.int64)
    for k in range(worlds.shape[0]):
        update_ranks(cars_f, cars_i, car_flags, world_i, worlds[k], cars_f.shape[1], order)
