"""Starting races: the rules vector and its defaults, the grid, and the start of every world at once.

``start_worlds`` is the one start of a race that everything shares (``BatchEnv.reset`` through
``env.reset.start``, ``new_race`` for the sim tests, the core benchmark and the demo): it allocates a
``WorldState``, fills rules, car parameters and flags, seeds each world's RNG from
``SeedSequence(seed).spawn(W)``, starts race control, sets each car's tyres, pit box, manual flag and
tyre energy, and places the cars with ``place_and_classify`` (``race.placement.place_car``, then surfaces and
race order), every world in one call. ``grid_placement`` is the grid (slot positions and the rolling
start's speeds); ``default_compound`` and ``default_pit_box`` are the per-slot defaults.
"""

from __future__ import annotations

import numpy as np

from ..core import layout as L
from ..core.jit import allocating_kernel, kernel
from ..core.params import neutral_car_params
from ..vehicle.dynamics import hold_car
from ..core.rng import rng_uniform, world_keys
from .placement import grid_slot, place_car
from .control import init_world, update_ranks
from ..core.state import WorldState
from ..vehicle.wheels import classify_car

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
    "drs_detection": (L.R_DRS_DETECTION, 1.0),
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


ROLLING_START_KPH = 84.0             # km/h of grid slot 0 at a rolling start, ...
ROLLING_START_KPH_PER_SLOT = 0.55    # ... less this per slot behind it, ...
ROLLING_START_KPH_PER_PACE = 4.0     # ... plus this times the driver's pace (1 neutral; PaddockJS's createCar), ...
ROLLING_START_PACE_RANGE = (0.88, 1.12)  # ... its pace clamped to this, ...
ROLLING_START_MIN_KPH = 70.0         # ... but never below this
DEFAULT_COMPOUNDS = (L.COMPOUND_M, L.COMPOUND_H, L.COMPOUND_S)   # by slot, when a driver names none


def grid_placement(i: int, standing: bool, pace: float = 1.0) -> tuple:
    """(race distance m, offset m, speed m/s, heading error rad) of grid slot ``i``: at rest for a
    standing start, at the rolling start's speed otherwise (PaddockJS: max(70, 84 - 0.55 i + 4 pace) km/h,
    ``pace`` the driver's ``P_PACE``)."""
    dist, off = grid_slot(int(i), standing)
    pace = min(max(float(pace), ROLLING_START_PACE_RANGE[0]), ROLLING_START_PACE_RANGE[1])
    kph = max(ROLLING_START_MIN_KPH,
              ROLLING_START_KPH - ROLLING_START_KPH_PER_SLOT * i + ROLLING_START_KPH_PER_PACE * pace)
    return dist, off, 0.0 if standing else kph * L.MPS_PER_KPH, 0.0


def default_compound(slot: int) -> int:
    """The starting compound code of car slot ``slot`` when its driver names none: M, H, S, M, ..."""
    return DEFAULT_COMPOUNDS[slot % 3]


def default_pit_box(slot: int, n_boxes: int) -> int:
    """The pit box of car slot ``slot`` when its driver has no team: two cars a box, in slot order;
    -1 (no box) on a track without a pit lane (``n_boxes`` 0)."""
    return slot // 2 % n_boxes if n_boxes > 0 else -1


@kernel
def init_worlds(world_f, world_i, rules):
    """``race.control.init_world`` (race control at its start) of every world."""
    for w in range(world_i.shape[0]):
        init_world(world_f, world_i, rules, w)


def start_worlds(track, num_worlds: int, seed: int, *, rules, car_params, car_flags, active, compounds,
                 pit_boxes, placements, grid_locked, first_world: int = 0) -> WorldState:
    """A WorldState of ``num_worlds`` identical worlds at their start, seeded from ``seed``: world ``w``
    draws from the generator of global world ``first_world + w`` (``rng.world_keys``).

    Per car slot (arrays of length C, the same in every world): rules float64[NR]; car_params
    float64[C, NP]; car_flags int32[C]; active bool[C] (the slots that race; the others stay empty);
    compounds int[C] (compound codes); pit_boxes int[C]; placements float64[C, 4] (race distance m,
    offset m, speed m/s, heading error rad); grid_locked bool[C] (held on the grid until the lights go
    out). Controlled cars (FLAG_CONTROLLED) start with manual controls.
    """
    w = num_worlds
    state = WorldState.allocate(w, len(car_flags), track)
    state.rules[:] = rules
    state.car_params[:] = car_params
    state.car_flags[:] = car_flags
    state.world_i[:, L.WI_RNG_KEY] = world_keys(seed, w, first_world)
    state.world_i[:, L.WI_SEED] = int(seed)
    init_worlds(state.world_f, state.world_i, state.rules)
    cs = np.nonzero(np.asarray(active, bool))[0].astype(np.int64)
    compounds = np.asarray(compounds, np.int32)[cs]
    ci = state.cars_i
    ci[:, cs, L.I_ACTIVE] = 1
    ci[:, cs, L.I_COMPOUND] = compounds
    ci[:, cs, L.I_PIT_TARGET] = compounds
    ci[:, cs, L.I_USED_COMPOUNDS] = 1 << compounds
    ci[:, cs, L.I_PIT_BOX] = np.asarray(pit_boxes, np.int32)[cs]
    ci[:, cs, L.I_MANUAL] = (np.asarray(car_flags)[cs] & L.FLAG_CONTROLLED) != 0
    state.cars_f[:, cs, L.F_TIRE_ENERGY] = 100.0
    p = np.asarray(placements, np.float64)[cs]
    place_and_classify(track, state, np.repeat(np.arange(w, dtype=np.int64), cs.size), np.tile(cs, w),
                       np.tile(p[:, 0], w), np.tile(p[:, 1], w), np.tile(p[:, 2], w), np.tile(p[:, 3], w))
    ci[:, cs[np.asarray(grid_locked, bool)[cs]], L.I_GRID_LOCKED] = 1
    return state


def place_and_classify(track, state: WorldState, worlds, slots, race_distance, offset, speed, heading_error):
    """Place cars (worlds[n], slots[n], int64) through ``place_cars``, classify them at once
    (``reclassify_cars``: a car touching the barrier is destroyed) and recompute their worlds' race
    order. The one way cars are put on track, at a start and at a reset of drivers."""
    place_cars(track, state.cars_f, state.cars_i, state.world_f, worlds, slots, race_distance, offset, speed,
               heading_error)
    reclassify_cars(track, state.cars_f, state.cars_i, state.car_flags, worlds, slots)
    rank_worlds(state.cars_f, state.cars_i, state.car_flags, state.world_i, np.unique(worlds))


@kernel
def place_cars(tr, cars_f, cars_i, world_f, worlds, slots, race_distance, offset, speed, heading_error):
    """Place many cars through ``race.placement.place_car`` in one call (all arrays of length n); lap clocks
    start at each world's current time."""
    for k in range(worlds.shape[0]):
        place_car(tr, cars_f, cars_i, worlds[k], slots[k], race_distance[k], offset[k], speed[k],
                  heading_error[k], world_f[worlds[k], L.WF_TIME])


def new_race(track, num_worlds: int, num_cars: int, seed: int, *, num_active: int | None = None,
             controlled=(), flags: int = NORMAL_FLAGS, params: np.ndarray | None = None,
             **rule_overrides) -> WorldState:
    """A race of ``num_active`` cars (default all slots) on the grid of every world (``start_worlds``).

    controlled: slot indices driven by actions (FLAG_CONTROLLED, manual controls), the rest by the
    built-in driver. flags: interaction flags for every car. params: float64[NP] or [C, NP] car
    parameters (default neutral). Tyres start at 100% on compounds M, H, S by slot.
    """
    n_active = num_cars if num_active is None else int(num_active)
    rules = rules_vector(**rule_overrides)
    standing = rules[L.R_STANDING_START] > 0.5
    car_flags = np.zeros(num_cars, np.int32)
    car_flags[:n_active] = flags
    for c in controlled:
        car_flags[c] |= L.FLAG_CONTROLLED
    slots = range(num_cars)
    p = neutral_car_params() if params is None else np.asarray(params, np.float64)
    paces = np.broadcast_to(p, (num_cars, L.NP))[:, L.P_PACE]
    return start_worlds(track, num_worlds, seed, rules=rules,
                        car_params=p, car_flags=car_flags,
                        active=np.arange(num_cars) < n_active, compounds=[default_compound(c) for c in slots],
                        pit_boxes=[default_pit_box(c, len(track.box_x)) for c in slots],
                        placements=[grid_placement(c, standing, paces[c]) for c in slots],
                        grid_locked=np.full(num_cars, standing))


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


SCATTER_MARGIN = 1.5        # m kept between a scattered car and the track's edge
SCATTER_MAX_SPEED = 60.0    # m/s: scattered cars roll at a speed drawn below this


def scatter_cars(track, state: WorldState, margin: float = SCATTER_MARGIN,
                 max_speed: float = SCATTER_MAX_SPEED) -> None:
    """Move every active car of every world to a legal track position drawn from its own world's
    generator (``random_track_placements``: ``margin`` m from the edge, speed below ``max_speed`` m/s),
    heading along the track. Worlds started by ``new_race`` are identical copies; scattered, they no
    longer drive the same stretch of track in lockstep (which flatters a throughput figure)."""
    worlds, slots = np.nonzero(state.cars_i[:, :, L.I_ACTIVE])
    worlds, slots = worlds.astype(np.int64), slots.astype(np.int64)
    dist, off, speed = np.empty(worlds.size), np.empty(worlds.size), np.empty(worlds.size)
    random_track_placements(track, state.world_i, worlds, margin, max_speed, dist, off, speed)
    state.cars_i[worlds, slots, L.I_GRID_LOCKED] = 0
    place_and_classify(track, state, worlds, slots, dist, off, speed, np.zeros(worlds.size))


@allocating_kernel
def rank_worlds(cars_f, cars_i, car_flags, world_i, worlds):
    """Recompute race order in ``worlds`` (int64[n]) after placements, so results at reset carry ranks."""
    order = np.empty(cars_f.shape[1], np.int64)
    for k in range(worlds.shape[0]):
        update_ranks(cars_f, cars_i, car_flags, world_i, worlds[k], cars_f.shape[1], order)
