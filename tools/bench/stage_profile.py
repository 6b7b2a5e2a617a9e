"""Where a tick's time goes: the core's stages timed one by one, for two source trees in lockstep.

Each tree runs in its own process (``PYTHONPATH=<tree>``) on ``paddock-ma bench core``'s workload (W
worlds of 20 built-in drivers, grand prix, scattered, pit stops and tyre wear on; ``--physics``), after
300 steps of 4 ticks. Every stage of ``step.tick_world`` is then timed on its own, over all worlds, from
the same saved state each repetition (the state is restored before each; the restore alone is timed
too and subtracted):

    control   race control and the per-car set-up of a tick (previous pose, who drives, cos/sin, tyre)
    pit       our pit service's route for the cars in a stop
    driver    the built-in drivers' controls (``ai_world``)
    dynamics  the vehicle model (``integrate_car_pre``), every driven car
    classify  wheel surfaces and track position (``classify_world``)
    contacts  car-car contacts (``resolve_contacts``)
    rules     progress, laps, timing, pits (``update_rules_world``)
    order     race order, and DRS where the tree has it
    tick      the whole ``tick_world``, for reference

Processes take turns per round (order alternating), as ``lockstep_env_ab.py`` does, so a drift of the
machine's speed falls on both. Printed: per stage the median microseconds per world-tick of each tree
and the median ratio B / A.

    python tools/bench/stage_profile.py OLD_TREE NEW_TREE --physics simulator --rounds 12
"""

import argparse
import inspect
import os
import subprocess
import sys
import time

STAGES = ("control", "pit", "driver", "dynamics", "classify", "contacts", "rules", "order", "tick")


def worker(worlds: int, physics: str, reps: int) -> None:
    import math

    import numpy as np
    from numba import njit

    from paddock_ma.sim import step as S
    from paddock_ma.sim.core import layout as L
    from paddock_ma.sim.race.start import new_race, scatter_cars
    from paddock_ma.sim.track.load import load_track
    from paddock_ma.sim.vehicle.tyres import tyre_factor

    track = load_track("grand-prix")
    mode = L.PHYSICS_SIMULATOR if physics == "simulator" else L.PHYSICS_ARCADE
    state = new_race(track, worlds, 20, seed=1, standing_start=0, pit_stops=1, tire_degradation=1,
                     stalled_dnf=1, total_laps=50, physics_mode=mode)
    scatter_cars(track, state)
    for _ in range(300):
        S.step_state(state, n_ticks=4)
    tr = state.track
    cars_f, cars_i, world_f, world_i = state.cars_f, state.cars_i, state.world_f, state.world_i
    car_params, car_flags, rules = state.car_params, state.car_flags, state.rules
    saved = tuple(a.copy() for a in (cars_f, cars_i, world_f, world_i))
    n_cars = cars_f.shape[1]
    params = list(inspect.signature(S.tick_world.py_func).parameters)
    if "zone" in params:
        from paddock_ma.sim.vehicle.wheels import pit_zone
        zone = pit_zone(tr)
    else:                                   # older trees: the pit box's bounds
        from paddock_ma.sim.track.surface import pit_bbox
        zone = pit_bbox(tr.px, tr.py, tr.box_x, tr.box_y, tr.pit_width)
    has_scratch = "scratch" in params       # newer trees: the tick's scratch as one ``step.TickScratch``
    has_route = "route" in params or has_scratch
    if has_route:
        from paddock_ma.sim.race.pit_route_path import N_COLS, ROUTE_MAX
        route = np.empty((ROUTE_MAX, N_COLS), np.float64)
    has_drs = hasattr(S, "update_drs_world")
    update_drs_world = S.update_drs_world if has_drs else None

    source = np.zeros((worlds, n_cars), np.int8)
    controls = np.zeros((worlds, n_cars, 3), np.float64)
    # newer trees share the simulator's start state between the driver and the model (``prepare_car``)
    shares_start_state = hasattr(S, "prepare_car")
    prepare_car = S.prepare_car if shares_start_state else None
    # and newer still also the log of the speed ratio (``layout.PRE_LOG_RATIO``), passed as one tuple later
    shares_log_ratio = hasattr(L, "PRE_LOG_RATIO")
    start_tuple = "start" in inspect.signature(S.integrate_car_pre.py_func).parameters
    pre = np.full((worlds, n_cars, getattr(L, "N_PRE", 4)), np.nan, np.float64)
    touch = np.zeros((worlds, n_cars), np.int8)
    tidx = np.zeros((worlds, n_cars), np.int64)
    tbuf = np.zeros((worlds, 3, n_cars), np.float64)
    old_progress = np.zeros((worlds, n_cars), np.float64)
    race_control_tick, ai_world, integrate_car_pre = S.race_control_tick, S.ai_world, S.integrate_car_pre
    classify_world, resolve_contacts, update_rules_world = S.classify_world, S.resolve_contacts, S.update_rules_world
    update_ranks, pit_route_tick, pit_route_active = S.update_ranks, S.pit_route_tick, S.pit_route_active
    car_is_held, tick_world = S.car_is_held, S.tick_world
    DT, F_X, F_HEADING, F_PROGRESS, F_TIRE_ENERGY = L.DT, L.F_X, L.F_HEADING, L.F_PROGRESS, L.F_TIRE_ENERGY
    I_ACTIVE, I_MANUAL = L.I_ACTIVE, L.I_MANUAL
    CONTROL_BUILTIN, CONTROL_POLICY = L.CONTROL_BUILTIN, L.CONTROL_POLICY

    # numba freezes arrays a jitted closure captures (read-only constants): every array is an argument
    @njit
    def restore(a, sf, si, swf, swi):
        a[0][:] = sf
        a[1][:] = si
        a[2][:] = swf
        a[3][:] = swi

    @njit
    def stage(kind, reps, a, sf, si, swf, swi, tr, car_params, car_flags, rules, source, controls, pre, touch, tidx,
              tbuf, old_progress, zone):
        cars_f, cars_i, world_f, world_i = a
        n_cars = cars_f.shape[1]
        for _ in range(reps):
            restore(a, sf, si, swf, swi)
            for w in range(cars_f.shape[0]):
                if kind == 0:
                    race_control_tick(cars_f, cars_i, world_f, world_i, rules, w, n_cars, DT)
                    for c in range(n_cars):
                        source[w, c] = 0
                        if cars_i[w, c, I_ACTIVE] == 0 or pit_route_active(cars_i, w, c):
                            continue
                        if car_is_held(cars_i, world_i, w, c):
                            continue
                        source[w, c] = CONTROL_BUILTIN if cars_i[w, c, I_MANUAL] == 0 else CONTROL_POLICY
                        if shares_start_state:
                            prepare_car(cars_f, rules, w, c, pre[w])
                        else:
                            h = cars_f[w, c, F_HEADING]
                            pre[w, c, 0] = h
                            pre[w, c, 1] = math.cos(h)
                            pre[w, c, 2] = math.sin(h)
                            pre[w, c, 3] = tyre_factor(cars_f[w, c, F_TIRE_ENERGY])
                elif kind == 1:
                    for c in range(n_cars):
                        if cars_i[w, c, I_ACTIVE] != 0 and pit_route_active(cars_i, w, c):
                            pit_route_tick(tr, cars_f, cars_i, car_params, car_flags, world_f, world_i, rules,
                                           w, c, n_cars, DT)
                elif kind == 2:
                    ai_world(tr, cars_f, cars_i, car_params, car_flags, rules, w, n_cars, source[w], controls[w],
                             pre[w], tidx[w], tbuf[w])
                elif kind == 3:
                    for c in range(n_cars):
                        if source[w, c] != 0:
                            if start_tuple:
                                integrate_car_pre(cars_f, cars_i, car_params, rules, w, c, controls[w, c, 0],
                                                  controls[w, c, 1], controls[w, c, 2], DT, pre[w, c, 3],
                                                  pre[w, c, 1], pre[w, c, 2],
                                                  (pre[w, c, 4], pre[w, c, 5], pre[w, c, 6], pre[w, c, 7]))
                            elif shares_log_ratio:
                                integrate_car_pre(cars_f, cars_i, car_params, rules, w, c, controls[w, c, 0],
                                                  controls[w, c, 1], controls[w, c, 2], DT, pre[w, c, 3],
                                                  pre[w, c, 1], pre[w, c, 2], pre[w, c, 4], pre[w, c, 5],
                                                  pre[w, c, 6], pre[w, c, 7])
                            elif shares_start_state:
                                integrate_car_pre(cars_f, cars_i, car_params, rules, w, c, controls[w, c, 0],
                                                  controls[w, c, 1], controls[w, c, 2], DT, pre[w, c, 3],
                                                  pre[w, c, 1], pre[w, c, 2], pre[w, c, 4], pre[w, c, 5],
                                                  pre[w, c, 6])
                            else:
                                integrate_car_pre(cars_f, cars_i, car_params, rules, w, c, controls[w, c, 0],
                                                  controls[w, c, 1], controls[w, c, 2], DT, pre[w, c, 3],
                                                  pre[w, c, 1], pre[w, c, 2])
                elif kind == 4:
                    classify_world(tr, cars_f, cars_i, w, n_cars, touch[w], pre[w], zone)
                elif kind == 5:
                    resolve_contacts(cars_f, cars_i, car_flags, rules, w, n_cars, DT)
                elif kind == 6:
                    for c in range(n_cars):
                        old_progress[w, c] = cars_f[w, c, F_PROGRESS] - 1.0
                    update_rules_world(tr, cars_f, cars_i, car_params, car_flags, world_f, world_i, rules, w,
                                       n_cars, old_progress[w], DT)
                elif kind == 7:
                    update_ranks(cars_f, cars_i, car_flags, world_i, w, n_cars, tidx[w])

    @njit
    def drs_stage(reps, a, sf, si, swf, swi, tr, car_flags, rules, source, tidx):
        cars_f, cars_i, world_f, world_i = a
        n_cars = cars_f.shape[1]
        for _ in range(reps):
            restore(a, sf, si, swf, swi)
            for w in range(cars_f.shape[0]):
                update_ranks(cars_f, cars_i, car_flags, world_i, w, n_cars, tidx[w])
                update_drs_world(tr.drs_start, tr.drs_end, tr.length, cars_f, cars_i, car_flags, world_f,
                                 world_i, rules, w, n_cars, source[w], tidx[w])

    @njit
    def tick_stage(reps, a, sf, si, swf, swi, tr, car_params, car_flags, rules, source, controls, pre, touch, tidx,
                   tbuf, old_progress, zone):
        cars_f, cars_i, world_f, world_i = a
        for _ in range(reps):
            restore(a, sf, si, swf, swi)
            for w in range(cars_f.shape[0]):
                tick_world(tr, cars_f, cars_i, world_f, world_i, car_params, car_flags, rules, w, old_progress[w],
                           source[w], controls[w], touch[w], pre[w], tidx[w], tbuf[w], zone)

    @njit
    def tick_stage_route(reps, a, sf, si, swf, swi, tr, car_params, car_flags, rules, source, controls, pre, touch,
                         tidx, tbuf, old_progress, zone, route):
        cars_f, cars_i, world_f, world_i = a
        for _ in range(reps):
            restore(a, sf, si, swf, swi)
            for w in range(cars_f.shape[0]):
                tick_world(tr, cars_f, cars_i, world_f, world_i, car_params, car_flags, rules, w, old_progress[w],
                           source[w], controls[w], touch[w], pre[w], tidx[w], tbuf[w], zone, route)

    TickScratch = getattr(S, "TickScratch", None)

    @njit
    def tick_stage_scratch(reps, a, sf, si, swf, swi, tr, car_params, car_flags, rules, source, controls, pre, touch,
                           tidx, tbuf, old_progress, zone, route):
        cars_f, cars_i, world_f, world_i = a
        for _ in range(reps):
            restore(a, sf, si, swf, swi)
            for w in range(cars_f.shape[0]):
                tick_world(tr, cars_f, cars_i, world_f, world_i, car_params, car_flags, rules, w,
                           TickScratch(old_progress[w], source[w], controls[w], touch[w], pre[w], tidx[w], tbuf[w],
                                       route), zone)

    @njit
    def restore_only(reps, a, sf, si, swf, swi):
        for _ in range(reps):
            restore(a, sf, si, swf, swi)

    a = (cars_f, cars_i, world_f, world_i)
    scratch = (source, controls, pre, touch, tidx, tbuf, old_progress, zone)

    def run(name: str, n: int) -> None:
        if name == "restore":
            restore_only(n, a, *saved)
        elif name == "tick":
            if has_scratch:
                tick_stage_scratch(n, a, *saved, tr, car_params, car_flags, rules, *scratch, route)
            elif has_route:
                tick_stage_route(n, a, *saved, tr, car_params, car_flags, rules, *scratch, route)
            else:
                tick_stage(n, a, *saved, tr, car_params, car_flags, rules, *scratch)
        elif name == "order" and has_drs:
            drs_stage(n, a, *saved, tr, car_flags, rules, source, tidx)
        else:
            stage(STAGES.index(name), n, a, *saved, tr, car_params, car_flags, rules, *scratch)
        if name == "control":           # the later stages read what the set-up and the driver wrote
            stage(2, 1, a, *saved, tr, car_params, car_flags, rules, *scratch)

    for name in ("restore", "control") + STAGES:  # compile, and fill source, pre and controls
        run(name, 1)
    print("ready", flush=True)
    for line in sys.stdin:
        times = []
        for name in ("restore",) + STAGES:
            t = time.perf_counter()
            run(name, reps)
            times.append((time.perf_counter() - t) / reps)
        print(" ".join(f"{x:.9f}" for x in times), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tree_a")
    parser.add_argument("tree_b")
    parser.add_argument("--worlds", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=12)
    parser.add_argument("--reps", type=int, default=20, help="repetitions of each stage per round")
    parser.add_argument("--physics", choices=("simulator", "arcade"), default="simulator")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worlds, args.physics, args.reps)
        return
    import numpy as np

    procs = []
    for tree in (args.tree_a, args.tree_b):
        env = dict(os.environ, PYTHONPATH=os.path.abspath(tree), OMP_NUM_THREADS="1")
        command = [sys.executable, __file__, tree, tree, "--worker", "--worlds", str(args.worlds),
                   "--physics", args.physics, "--reps", str(args.reps)]
        procs.append(subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env))
    for p in procs:
        if p.stdout.readline().strip() != "ready":
            sys.exit("a worker failed to start (its error is above)")
    rows = ([], [])
    for r in range(args.rounds):
        for k in ((0, 1) if r % 2 == 0 else (1, 0)):
            procs[k].stdin.write("go\n")
            procs[k].stdin.flush()
            rows[k].append([float(x) for x in procs[k].stdout.readline().split()])
    for p in procs:
        p.stdin.close()
        p.wait()
    a = np.array(rows[0])
    b = np.array(rows[1])
    a = a[:, 1:] - a[:, :1]             # minus the restore
    b = b[:, 1:] - b[:, :1]
    per = 1e6 / args.worlds              # seconds over all worlds -> microseconds per world-tick
    print(f"{args.physics}, W = {args.worlds}, 20 built-in drivers a world: us per world-tick")
    print(f"{'stage':10s} {'A':>9s} {'B':>9s} {'B/A':>7s}")
    for i, name in enumerate(STAGES):
        ratio = np.median(b[:, i] / a[:, i]) if np.all(a[:, i] > 0) else float("nan")
        print(f"{name:10s} {per * np.median(a[:, i]):9.2f} {per * np.median(b[:, i]):9.2f} {ratio:7.3f}")
    parts_a = per * np.median(a[:, :-1], axis=0).sum()
    parts_b = per * np.median(b[:, :-1], axis=0).sum()
    print(f"{'sum':10s} {parts_a:9.2f} {parts_b:9.2f} {parts_b / parts_a:7.3f}")


if __name__ == "__main__":
    main()
