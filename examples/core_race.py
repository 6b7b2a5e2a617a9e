"""Race built-in drivers on a shipped track with the numba core directly, and print the classification.

    python examples/core_race.py --track technical --cars 12 --laps 2
"""

import argparse

import numpy as np

from paddock_ma.sim.core import layout as L
from paddock_ma.sim.race.start import new_race
from paddock_ma.sim.step import step_state
from paddock_ma.sim.track.load import load_track


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--track", default="oval")
    parser.add_argument("--cars", type=int, default=10)
    parser.add_argument("--laps", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    state = new_race(load_track(args.track), 1, args.cars, seed=args.seed, total_laps=args.laps)
    max_ticks = int(args.laps * 240 * 60)                  # generous: 4 simulated minutes per lap
    for _ in range(max_ticks // 30):
        step_state(state, n_ticks=30)                       # 30 ticks (0.5 s) per numba call
        if state.world_i[0, L.WI_RACE_FINISHED]:
            break
    order = np.argsort(state.cars_i[0, :, L.I_RANK])
    print(f"{args.track}: finished={bool(state.world_i[0, L.WI_RACE_FINISHED])} "
          f"after {state.world_f[0, L.WF_TIME]:.1f} s")
    for c in order:
        print(f"  P{state.cars_i[0, c, L.I_RANK]:<3d} car-{c:02d}  finish {state.cars_f[0, c, L.F_FINISH_TIME]:7.2f} s"
              f"  best lap {state.cars_f[0, c, L.F_BEST_LAP_TIME]:6.2f} s")
    return state


if __name__ == "__main__":
    main()
