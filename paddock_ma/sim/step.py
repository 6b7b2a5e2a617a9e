"""step_worlds(): the transition order, written once, for every world in one call.

One physics tick of one world (``DT`` = 1/60 s), in this order:

1. race control: time, start lights, grid lock, red flag (``race.control.race_control_tick``)
2. controls and dynamics per car: a pit-route car is moved by its route (a policy car's by PaddockJS's,
   ``race.pit_route``, a built-in driver's by ours, ``race.pit_service``); a held car (grid, red
   flag, terminal) is frozen; otherwise controls come from the policy (``I_MANUAL``) or the built-in
   driver, and the vehicle integrates one tick
3. wheel surfaces, track position; barrier contact destroys the car
4. car-car contacts among cars whose interaction flags both collide
5. progress, laps, timing, pit entry, stalled retirement; then race order; then DRS (``race.drs``)
6. event counters accumulate in ``cars_i[..., I_CNT_*]`` along the way

An env step is ``n_ticks`` (frame skip) ticks. Before the first tick the step's event counters are
cleared and the actions are latched; after the last tick the per-driver episode bookkeeping runs
(``episode_step``, termination on destruction or retirement, truncation at ``max_episode_steps``).

Worlds are independent: ``step_worlds_parallel`` splits them over threads with ``prange`` and gives
bit-identical results to ``step_worlds`` for any thread count (no reduction crosses worlds).
"""

import numpy as np
from numba import prange

from .race.collisions import resolve_contacts
from .driver.builtin import ai_world
from .core.jit import allocating_kernel, kernel
from .core.layout import (
    CONTROL_BUILTIN, CONTROL_NONE, CONTROL_POLICY, DT, END_DESTROYED, END_MAX_STEPS, END_RACE_FINISH,
    END_STALLED, F_BRAKE_CMD, F_HEADING, F_PREV_HEADING, F_PREV_X, F_PREV_Y, F_PROGRESS,
    F_PJS_PREV_PROGRESS, F_PJS_PROGRESS, F_STEER_ANGLE, F_STEER_CMD, F_STEP_LEGAL_PROGRESS, F_STEP_PROGRESS, F_THROTTLE_CMD,
    F_X, F_Y, FIRST_COUNTER,
    FLAG_CONTROLLED, I_ACTIVE, I_CNT_DESTROYED, I_DESTROYED, I_END_REASON, I_EPISODE_STEP, I_MANUAL,
    I_PIT_INTENT, I_PIT_ROUTE, I_RETIRED, I_TERMINATED, I_TRACTION_LIMITED, I_TRUNCATED, LAST_COUNTER, N_PRE, ROUTE_NONE, PRE_COS,
    PRE_ENGINE, PRE_HEADING, PRE_LOG_RATIO, PRE_SIN, PRE_SLIP, PRE_STEER_GAIN, PRE_TYRE, WI_ENV_STEP,
    WI_RACE_FINISHED,
)
from .vehicle.dynamics import hold_car, integrate_car_pre, prepare_car
from .race.pit_route import pit_route_car_tick, start_pit_route
from .race.pit_route_path import N_COLS, ROUTE_MAX
from .race.pit_service import pit_route_active, pit_route_tick
from .race.control import car_is_held, race_control_tick, update_ranks
from .race.drs import update_drs_world
from .race.rules import update_rules_world
from .vehicle.wheels import classify_car, classify_world, pit_zone


@kernel
def begin_env_step(cars_f, cars_i, actions, apply_actions, w):
    """Clear world ``w``'s per-step counters and latch the actions of the cars in ``apply_actions``.

    actions: float32[W, C, 3] normalised (steering [-1, 1], throttle [0, 1], brake [0, 1]), already
    validated and clamped by the environment; apply_actions: int8[W, C], 1 = set these controls as the
    car's manual controls, 0 = leave the car's control state as it is.
    """
    n_cars = cars_f.shape[1]
    for c in range(n_cars):
        for k in range(FIRST_COUNTER, LAST_COUNTER + 1):
            cars_i[w, c, k] = 0
        cars_f[w, c, F_STEP_PROGRESS] = 0.0
        cars_f[w, c, F_STEP_LEGAL_PROGRESS] = 0.0
        if apply_actions[w, c] != 0:
            cars_f[w, c, F_STEER_CMD] = actions[w, c, 0]
            cars_f[w, c, F_THROTTLE_CMD] = actions[w, c, 1]
            cars_f[w, c, F_BRAKE_CMD] = actions[w, c, 2]
            cars_i[w, c, I_MANUAL] = 1


@kernel
def tick_world(tr, cars_f, cars_i, world_f, world_i, car_params, car_flags, rules, w, old_progress,
               source, controls, touch, pre, tidx, tbuf, zone, route):
    """Advance world ``w`` by one physics tick (DT seconds) in the transition order of this module.

    Scratch buffers: old_progress float64[C] (progress before the tick), source int8[C] (who moves
    the car: layout.CONTROL_*), controls float64[C, 3], touch int8[C], pre float64[C, N_PRE] (columns
    layout.PRE_*: heading, cos, sin, tyre factor; rows keyed by the heading, so cos and sin of an
    unchanged heading are computed once, not per kernel; in simulator mode also layout.PRE_SLIP..PRE_LOG_RATIO),
    tidx
    int64[C] and tbuf float64[3, C] (the drivers' traffic, then the poses before the contacts);
    zone: ``vehicle.wheels.pit_zone`` of the track; route float64[ROUTE_MAX, N_COLS]: a policy car's pit
    route (``race.pit_route_path``). Each stage runs all cars of the world in one call of its module (``ai_world``,
    ``classify_world``, ``update_rules_world``): one call per world and stage, whose per-car bodies are
    inlined, so the track's arrays are unpacked once per world and stage. The built-in drivers all
    decide from the state at the start of the tick, before any car moves.
    """
    n_cars = cars_f.shape[1]
    race_control_tick(cars_f, cars_i, world_f, world_i, rules, w, n_cars, DT)

    # 1-2. controls and vehicle dynamics
    n_ai = 0
    for c in range(n_cars):
        source[c] = CONTROL_NONE
        if cars_i[w, c, I_ACTIVE] == 0:
            continue
        cars_f[w, c, F_PREV_X] = cars_f[w, c, F_X]
        cars_f[w, c, F_PREV_Y] = cars_f[w, c, F_Y]
        cars_f[w, c, F_PREV_HEADING] = cars_f[w, c, F_HEADING]
        cars_f[w, c, F_PJS_PREV_PROGRESS] = cars_f[w, c, F_PJS_PROGRESS]
        if cars_i[w, c, I_MANUAL] != 0 and cars_i[w, c, I_PIT_INTENT] > 0 and not pit_route_active(cars_i, w, c):
            # a policy car's stop starts here, from the state the last tick left (PaddockJS's
            # advancePitStopCar, at the beginning of the car's tick)
            start_pit_route(tr, cars_f, cars_i, car_flags, world_i, rules, w, c, n_cars)
        if pit_route_active(cars_i, w, c):
            if cars_i[w, c, I_PIT_ROUTE] != ROUTE_NONE:       # a policy car: PaddockJS's route
                pit_route_car_tick(tr, cars_f, cars_i, car_params, car_flags, world_i, rules, w, c, n_cars,
                                   route, DT)
            else:
                pit_route_tick(tr, cars_f, cars_i, car_params, car_flags, world_f, world_i, rules, w, c,
                               n_cars, DT)
            continue
        if car_is_held(cars_i, world_i, w, c):
            hold_car(cars_f, w, c)
            continue
        if cars_i[w, c, I_MANUAL] != 0:
            source[c] = CONTROL_POLICY
            controls[c, 0] = cars_f[w, c, F_STEER_CMD]
            controls[c, 1] = cars_f[w, c, F_THROTTLE_CMD]
            controls[c, 2] = cars_f[w, c, F_BRAKE_CMD]
        else:
            source[c] = CONTROL_BUILTIN
            n_ai += 1
        prepare_car(cars_f, rules, w, c, pre)
    if n_ai > 0:
        ai_world(tr, cars_f, cars_i, car_params, car_flags, rules, w, n_cars, source, controls, pre,
                 tidx, tbuf)
    for c in range(n_cars):
        if source[c] != CONTROL_NONE:
            h2, c2, s2 = integrate_car_pre(cars_f, cars_i, car_params, rules, w, c, controls[c, 0],
                                           controls[c, 1], controls[c, 2], DT, pre[c, PRE_TYRE],
                                           pre[c, PRE_COS], pre[c, PRE_SIN], pre[c, PRE_SLIP],
                                           pre[c, PRE_STEER_GAIN], pre[c, PRE_ENGINE], pre[c, PRE_LOG_RATIO])
            pre[c, PRE_HEADING] = h2
            pre[c, PRE_COS] = c2
            pre[c, PRE_SIN] = s2

    # 3. surfaces and track position; the barrier destroys
    for c in range(n_cars):
        old_progress[c] = cars_f[w, c, F_PROGRESS]
    classify_world(tr, cars_f, cars_i, w, n_cars, touch, pre, zone)
    for c in range(n_cars):
        if touch[c] != 0 and cars_i[w, c, I_DESTROYED] == 0:
            cars_i[w, c, I_DESTROYED] = 1
            cars_i[w, c, I_CNT_DESTROYED] = 1
            hold_car(cars_f, w, c)
            # PaddockJS's destroyCarOnBarrier also straightens the wheels and clears the traction flag
            cars_f[w, c, F_STEER_ANGLE] = 0.0
            cars_i[w, c, I_TRACTION_LIMITED] = 0

    # 4. car-car contacts; a car the contact moved is classified again where it now is (PaddockJS
    # reclassifies every car after its collisions: the next tick's dynamics read those surfaces)
    for c in range(n_cars):
        tbuf[0, c] = cars_f[w, c, F_X]
        tbuf[1, c] = cars_f[w, c, F_Y]
        tbuf[2, c] = cars_f[w, c, F_HEADING]
    resolve_contacts(cars_f, cars_i, car_flags, rules, w, n_cars, DT)
    for c in range(n_cars):
        if cars_i[w, c, I_ACTIVE] != 0 and (cars_f[w, c, F_X] != tbuf[0, c] or cars_f[w, c, F_Y] != tbuf[1, c]
                                            or cars_f[w, c, F_HEADING] != tbuf[2, c]):
            classify_car(tr, cars_f, cars_i, w, c)

    # 5. race rules, then order; then DRS (PaddockJS's latch, in its race order)
    update_rules_world(tr, cars_f, cars_i, car_params, car_flags, world_f, world_i, rules, w, n_cars,
                       old_progress, DT)
    update_ranks(cars_f, cars_i, car_flags, world_i, w, n_cars, tidx)   # tidx: free again
    update_drs_world(tr.drs_start, tr.drs_end, tr.length, cars_f, cars_i, car_flags, world_f, world_i, rules, w,
                     n_cars, source, tidx)                          # source, tidx: free again


@kernel
def episode_running(cars_i, car_flags, w, out):
    """out int8[C]: 1 for active controlled cars of world ``w`` whose episode is running."""
    for c in range(cars_i.shape[1]):
        out[c] = (cars_i[w, c, I_ACTIVE] != 0 and (car_flags[w, c] & FLAG_CONTROLLED) != 0
                  and cars_i[w, c, I_TERMINATED] == 0 and cars_i[w, c, I_TRUNCATED] == 0)


@kernel
def end_env_step(cars_i, world_i, w, was_running, max_episode_steps, end_on_race_finish):
    """Per-driver episode bookkeeping of world ``w`` after the last tick of an env step: the one place
    an episode ends, in this order of precedence.

    Controlled cars whose episode was running when the step began (``was_running`` int8[C]) count one
    more ``episode_step``; destruction or a stalled retirement terminates the episode; reaching
    ``max_episode_steps`` (> 0) truncates it; otherwise, with ``end_on_race_finish`` (0/1), a finished
    race (WI_RACE_FINISHED) terminates it (END_RACE_FINISH).
    """
    world_i[w, WI_ENV_STEP] += 1
    for c in range(cars_i.shape[1]):
        if was_running[c] == 0:
            continue
        cars_i[w, c, I_EPISODE_STEP] += 1
        if cars_i[w, c, I_DESTROYED] != 0:
            cars_i[w, c, I_TERMINATED] = 1
            cars_i[w, c, I_END_REASON] = END_DESTROYED
        elif cars_i[w, c, I_RETIRED] != 0:
            cars_i[w, c, I_TERMINATED] = 1
            cars_i[w, c, I_END_REASON] = END_STALLED
        elif max_episode_steps > 0 and cars_i[w, c, I_EPISODE_STEP] >= max_episode_steps:
            cars_i[w, c, I_TRUNCATED] = 1
            cars_i[w, c, I_END_REASON] = END_MAX_STEPS
        elif end_on_race_finish != 0 and world_i[w, WI_RACE_FINISHED] != 0:
            cars_i[w, c, I_TERMINATED] = 1
            cars_i[w, c, I_END_REASON] = END_RACE_FINISH


@allocating_kernel
def step_world(tr, cars_f, cars_i, world_f, world_i, car_params, car_flags, rules, actions,
               apply_actions, n_ticks, max_episode_steps, end_on_race_finish, w):
    """One env step of world ``w``: latch actions, ``n_ticks`` physics ticks, episode bookkeeping."""
    n_cars = cars_f.shape[1]
    old_progress = np.empty(n_cars, np.float64)
    source = np.empty(n_cars, np.int8)
    controls = np.zeros((n_cars, 3), np.float64)
    touch = np.empty(n_cars, np.int8)
    pre = np.full((n_cars, N_PRE), np.nan, np.float64)
    tidx = np.empty(n_cars, np.int64)
    tbuf = np.empty((3, n_cars), np.float64)
    zone = pit_zone(tr)
    route = np.empty((ROUTE_MAX, N_COLS), np.float64)
    was_running = np.empty(n_cars, np.int8)
    episode_running(cars_i, car_flags, w, was_running)
    begin_env_step(cars_f, cars_i, actions, apply_actions, w)
    for _ in range(n_ticks):
        tick_world(tr, cars_f, cars_i, world_f, world_i, car_params, car_flags, rules, w, old_progress,
                   source, controls, touch, pre, tidx, tbuf, zone, route)
    end_env_step(cars_i, world_i, w, was_running, max_episode_steps, end_on_race_finish)


@kernel
def step_worlds(tr, cars_f, cars_i, world_f, world_i, car_params, car_flags, rules, actions,
                apply_actions, n_ticks, max_episode_steps, end_on_race_finish, world_mask):
    """Advance the worlds of ``world_mask`` by one env step of ``n_ticks`` ticks, serially.

    tr: TrackArrays; cars_f float64[W, C, NF]; cars_i int32[W, C, NI]; world_f float64[W, NWF];
    world_i int64[W, NWI]; car_params float64[W, C, NP]; car_flags int32[W, C]; rules float64[W, NR];
    actions float32[W, C, 3]; apply_actions int8[W, C]; n_ticks >= 1 (frame skip);
    max_episode_steps: per-driver step cap, 0 = none; end_on_race_finish: 0/1, a finished race ends
    the controlled cars' episodes (``end_env_step``); world_mask int8[W]: 1 = step this world, 0 =
    leave it exactly as it is. Everything is updated in place.
    """
    for w in range(cars_f.shape[0]):
        if world_mask[w] != 0:
            step_world(tr, cars_f, cars_i, world_f, world_i, car_params, car_flags, rules, actions,
                       apply_actions, n_ticks, max_episode_steps, end_on_race_finish, w)


@kernel(parallel=True)
def step_worlds_parallel(tr, cars_f, cars_i, world_f, world_i, car_params, car_flags, rules, actions,
                         apply_actions, n_ticks, max_episode_steps, end_on_race_finish, world_mask):
    """``step_worlds`` with worlds split over numba threads; bit-identical to the serial kernel."""
    for w in prange(cars_f.shape[0]):
        if world_mask[w] != 0:
            step_world(tr, cars_f, cars_i, world_f, world_i, car_params, car_flags, rules, actions,
                       apply_actions, n_ticks, max_episode_steps, end_on_race_finish, w)


def step_state(state, actions=None, apply_actions=None, n_ticks=1, max_episode_steps=0, parallel=False,
               end_on_race_finish=False):
    """Python convenience: step a ``WorldState`` once (one numba call).

    With ``actions`` None no car's controls change (built-in drivers drive the non-manual cars).
    """
    w, c = state.num_worlds, state.num_cars
    if actions is None:
        actions = np.zeros((w, c, 3), np.float32)
        apply_actions = np.zeros((w, c), np.int8)
    elif apply_actions is None:
        apply_actions = np.ones((w, c), np.int8)
    kernel = step_worlds_parallel if parallel else step_worlds
    kernel(state.track, state.cars_f, state.cars_i, state.world_f, state.world_i, state.car_params,
           state.car_flags, state.rules, actions, apply_actions, int(n_ticks), int(max_episode_steps),
           int(end_on_race_finish), np.ones(w, np.int8))

