"""Two source trees step the environment benchmark's workload in lockstep, to compare their speed on a
machine whose speed drifts (this one's halves for seconds at a time).

Each tree runs in its own process (``PYTHONPATH=<tree>``): ``BatchEnv`` on the workload of ``paddock-ma
bench env`` (W worlds of 20 batch-training cars, grand prix, 16 rays of four channels; ``--physics``
simulator or arcade), the same seed, 300 untimed steps, then rounds: each process steps the same 8 steps of the
same deterministic run in turn (order alternating per round), timing the whole step and the sensing
call (``SensorLayout.sense``: rays, radar, lookahead and the vectors). Printed: per tree the median
milliseconds, and the median over rounds of the ratio B / A, which a drift common to both sides
cancels.

    python tools/bench/lockstep_env_ab.py OLD_TREE NEW_TREE --actions constant --rounds 12

``--workload core`` compares ``paddock-ma bench core``'s workload instead (``step_state``, 4 ticks a call, no
sensing), in the same lockstep.

For trees older than the ``physics`` option of ``env_bench_config`` the mode is set in the config.
"""

import argparse
import inspect
import os
import subprocess
import sys
import time


def core_worker(worlds: int, physics: str) -> None:
    """``paddock-ma bench core``'s workload (``bench_core``: W worlds of 20 built-in drivers, grand prix,
    scattered, pit stops and tyre wear on), 4 ticks a call; prints sensing time 0."""
    from paddock_ma.sim.core import layout as L
    from paddock_ma.sim.race.start import new_race, scatter_cars
    from paddock_ma.sim.step import step_state
    from paddock_ma.sim.track.load import load_track

    track = load_track("grand-prix")
    mode = L.PHYSICS_SIMULATOR if physics == "simulator" else L.PHYSICS_ARCADE
    state = new_race(track, worlds, 20, seed=1, standing_start=0, pit_stops=1, tire_degradation=1,
                     stalled_dnf=1, total_laps=50, physics_mode=mode)   # a rule override on older trees
    scatter_cars(track, state)
    for _ in range(300):
        step_state(state, n_ticks=4)
    print("ready", flush=True)
    for line in sys.stdin:
        n = int(line)
        t = time.perf_counter()
        for _ in range(n):
            step_state(state, n_ticks=4)
        print(0.0, (time.perf_counter() - t) / n, flush=True)


def worker(actions: str, worlds: int, physics: str) -> None:
    import numpy as np

    from paddock_ma.bench.env import env_bench_config
    from paddock_ma.env.batch_env import BatchEnv
    from paddock_ma.sim.driver.builtin import ai_actions

    options = {"physics": physics} if "physics" in inspect.signature(env_bench_config).parameters else {}
    config = env_bench_config(**options)
    config["physics_mode"] = physics          # trees older than the option: set in the config itself
    env = BatchEnv(config, worlds, auto_reset=True, reset_placement="random")
    env.reset(seed=1)
    env.reset_drivers(np.ones((worlds, len(env.controlled)), bool), "random")
    act = np.zeros((worlds, len(env.controlled), 3), np.float32)
    act[..., 1] = 0.6
    slots = np.asarray(env.slots, np.int64)
    st = env.state

    def step():
        if actions == "driver":
            ai_actions(env.track, st.cars_f, st.cars_i, st.car_params, st.car_flags, st.rules, slots, act)
        env.step(act)

    for _ in range(300):
        step()
    spent = [0.0]
    sense = env.sensors.sense

    def timed_sense(*args):
        t = time.perf_counter()
        sense(*args)
        spent[0] += time.perf_counter() - t

    env.sensors.sense = timed_sense
    print("ready", flush=True)
    for line in sys.stdin:
        n = int(line)
        spent[0] = 0.0
        t = time.perf_counter()
        for _ in range(n):
            step()
        print(spent[0] / n, (time.perf_counter() - t) / n, flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tree_a")
    parser.add_argument("tree_b")
    parser.add_argument("--actions", choices=("constant", "driver"), default="constant")
    parser.add_argument("--worlds", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=12)
    parser.add_argument("--physics", choices=("simulator", "arcade"), default="simulator")
    parser.add_argument("--workload", choices=("env", "core"), default="env",
                        help="env: BatchEnv steps (sensing timed apart); core: step_state, 4 ticks a call")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        if args.workload == "core":
            core_worker(args.worlds, args.physics)
        else:
            worker(args.actions, args.worlds, args.physics)
        return
    import numpy as np

    procs = []
    for tree in (args.tree_a, args.tree_b):
        env = dict(os.environ, PYTHONPATH=os.path.abspath(tree), OMP_NUM_THREADS="1")
        command = [sys.executable, __file__, tree, tree, "--worker", "--actions", args.actions,
                   "--worlds", str(args.worlds), "--physics", args.physics, "--workload", args.workload]
        procs.append(subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env))
    for p in procs:
        if p.stdout.readline().strip() != "ready":
            sys.exit("a worker failed to start (its error is above)")
    sense = ([], [])
    step = ([], [])
    for r in range(args.rounds):
        for k in ((0, 1) if r % 2 == 0 else (1, 0)):
            procs[k].stdin.write("8\n")
            procs[k].stdin.flush()
            s, w = map(float, procs[k].stdout.readline().split())
            sense[k].append(s)
            step[k].append(w)
    for p in procs:
        p.stdin.close()
        p.wait()
    a, b = np.array(sense[0]), np.array(sense[1])
    aw, bw = np.array(step[0]), np.array(step[1])
    cars = args.worlds * 20
    if args.workload == "core":
        print(f"core, {args.physics}, W = {args.worlds}: ms per 4 ticks A {1e3 * np.median(aw):.2f}, "
              f"B {1e3 * np.median(bw):.2f}, B/A {np.median(bw / aw):.3f} [{np.quantile(bw / aw, 0.25):.3f}, "
              f"{np.quantile(bw / aw, 0.75):.3f}]; car-ticks/s A {4 * cars / np.median(aw):,.0f}, "
              f"B {4 * cars / np.median(bw):,.0f}")
        return
    print(f"{args.physics}, {args.actions}, W = {args.worlds}: sensing ms A {1e3 * np.median(a):.1f}, "
          f"B {1e3 * np.median(b):.1f}, B/A {np.median(b / a):.3f} [{np.quantile(b / a, 0.25):.3f}, {np.quantile(b / a, 0.75):.3f}]; step ms "
          f"A {1e3 * np.median(aw):.1f}, B {1e3 * np.median(bw):.1f}, B/A {np.median(bw / aw):.3f}; car-steps/s "
          f"A {cars / np.median(aw):,.0f}, B {cars / np.median(bw):,.0f}")


if __name__ == "__main__":
    main()
