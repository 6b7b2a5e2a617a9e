"""``paddock-ma bench env``: the environment contract's throughput, BatchEnv and PaddockEnv, on one workload.

ENV_WORKLOAD (``env_bench_config``) is the environment benchmark's cars, also driven by the worker
protocol's and the threads' benchmarks. Each BatchEnv row splits a step's milliseconds between the
core kernel, sensing with the observation vectors, and the rest (Python). ``--ray-floor`` adds the
diagnostic ray layouts of RAY_VARIANTS. The simulation is imported inside the functions: the command
line reads this module's names before numba's thread count is set.
"""

from __future__ import annotations

import numpy as np

from .core import PHYSICS_MODES
from .report import table
from .timing import accumulating, time_for

ACTIONS = ("constant", "driver")

ENV_WORKLOAD = ("20 controlled batch-training cars per world, simulator physics (unless a row names arcade), "
                "physical-driver profile, "
                "driver-front-heavy rays (PaddockJS 2.0.0's 16: 240 m within 70 degrees of ahead, 90 m to 100, 60 m "
                "behind) with all four channels, radar (6), frame skip 4, vector output, "
                "state_output none, cars starting and auto-reset at random track positions (each world's own draws); actions: constant (steer 0, throttle 0.6; "
                "PaddockEnv too) or the built-in driver's controls (driver: the cars drive laps)")


# Ray variants of the environment workload. "driver-front-heavy" is the workload itself; the other two
# are diagnostic (``paddock-ma bench env --ray-floor``): as many rays (16) and channels, 120 m, all at +-90
# degrees to the car (a ray across the track ends after the fewest march samples: one past the white
# line, one past the kerb), and no rays at all (everything else of the step).
RAY_VARIANTS = ("driver-front-heavy", "perpendicular", "none")


def env_bench_config(num_cars: int = 20, rays: str = "driver-front-heavy", physics: str = "simulator") -> dict:
    """The issue's environment workload as an EnvConfig dict; ``rays`` one of RAY_VARIANTS, ``physics``
    the physics mode (``simulator`` or ``arcade``)."""
    from ..sim.sensing.sensors import FRONT_HEAVY_ANGLES_DEG

    if rays not in RAY_VARIANTS:
        raise ValueError(f"rays: got {rays!r}; expected one of {RAY_VARIANTS}")
    ids = [f"car-{i:02d}" for i in range(num_cars)]
    ray_config = {"layout": "driver-front-heavy", "channels": ["road_edge", "kerb", "illegal_surface", "car"]}
    if rays == "perpendicular":
        ray_config = {"channels": ray_config["channels"],
                      "rays": [{"id": f"r{i}", "angle_degrees": 90.0 if i % 2 else -90.0, "length_meters": 120.0}
                               for i in range(len(FRONT_HEAVY_ANGLES_DEG))]}
    elif rays == "none":
        ray_config = {"enabled": False}
    return {
        "drivers": num_cars, "controlled_drivers": ids, "track": "grand-prix", "frame_skip": 4,
        "physics_mode": physics, "total_laps": 1000,
        "rules": {"standing_start": False},
        "participant_interactions": {"default_profile": "batch-training"},
        "observation": {"profile": "physical-driver", "output": "vector", "include_schema": False},
        "sensors": {"rays": ray_config},
        "result": {"state_output": "none"},
    }


def bench_batch_env(num_worlds: int, seconds: float = 3.0, actions_from: str = "constant",
                    warmup_steps: int = 300, rays: str = "driver-front-heavy", threads: int | None = None,
                    physics: str = "simulator") -> dict:
    """BatchEnv car-steps/s on ENV_WORKLOAD, with the split between core, sensors+vectors and Python.

    actions_from: ``constant`` (steer 0, throttle 0.6: cars leave the track at the first corner, crash,
    and come back at random positions) or ``driver`` (each step's actions are the built-in driver's
    controls for the controlled cars, computed in one numba call that the timing includes: the cars
    drive laps, as a trained policy would). ``warmup_steps`` untimed steps first (300: 80 s of racing,
    about a lap of the grand prix). ``rays``: one of RAY_VARIANTS (the workload's, or a diagnostic one).
    ``threads``: None for the serial engine; n for ``BatchEnv(parallel=True)`` on n numba threads (the
    process's thread count is restored afterwards). ``physics``: ``simulator`` or ``arcade``."""
    import numba

    if threads is None:
        return _bench_batch_env(num_worlds, seconds, actions_from, warmup_steps, rays, False, physics)
    before = numba.get_num_threads()
    numba.set_num_threads(threads)
    try:
        row = _bench_batch_env(num_worlds, seconds, actions_from, warmup_steps, rays, True, physics)
    finally:
        numba.set_num_threads(before)
    row["threads"] = threads
    return row


def _bench_batch_env(num_worlds, seconds, actions_from, warmup_steps, rays, parallel, physics):
    from ..env.batch_env import BatchEnv
    from ..sim.driver.builtin import ai_actions

    env = BatchEnv(env_bench_config(rays=rays, physics=physics), num_worlds, auto_reset=True, reset_placement="random",
                   parallel=parallel)
    env.reset(seed=1)
    # every car starts at a random track position of its world's own draws: the worlds are not copies
    # of one another (64 identical worlds would drive the same stretch of track in lockstep)
    env.reset_drivers(np.ones((num_worlds, len(env.controlled)), bool), "random")
    k = len(env.controlled)
    actions = np.zeros((num_worlds, k, 3), np.float32)
    actions[..., 1] = 0.6
    slots = np.asarray(env.slots, np.int64)
    st = env.state

    def step():
        if actions_from == "driver":
            ai_actions(env.track, st.cars_f, st.cars_i, st.car_params, st.car_flags, st.rules, slots, actions)
        env.step(actions)

    for _ in range(warmup_steps):   # off the grid: a lap's mix of places, not the start straight
        step()
    # The split is timed inside the timed steps themselves: the env's core kernel and its sensing call
    # are wrapped (on this instance only) to add up their own time.
    spent = {}
    env.step_kernel = accumulating(env.step_kernel, spent, "core")
    env.sensors.sense = accumulating(env.sensors.sense, spent, "sense")
    timing = time_for(step, seconds)
    calls, elapsed = timing.calls, timing.seconds
    per_step = elapsed / calls
    core_ms = 1e3 * spent["core"] / calls
    sense_ms = 1e3 * spent["sense"] / calls
    return {"physics": physics, "worlds": num_worlds, "cars_per_world": k, "actions": actions_from, "rays": rays,
            "steps": calls,
            "seconds": round(elapsed, 3), "car_steps_per_s": round(calls * num_worlds * k / elapsed),
            "ms_per_step": round(1e3 * per_step, 3), "core_ms": round(core_ms, 3), "sensors_obs_ms": round(sense_ms, 3),
            "python_ms": round(max(0.0, 1e3 * per_step - core_ms - sense_ms), 3)}


def bench_paddock_env(seconds: float = 3.0, actions_from: str = "constant", physics: str = "simulator") -> dict:
    """PaddockEnv (one world, dict API) car-steps/s on ENV_WORKLOAD without auto-reset: a crashed
    car is reset through reset_drivers by the loop, as a user's loop would. actions_from: as
    ``bench_batch_env``; with ``driver`` the timing includes the numba call computing the built-in
    driver's controls and turning them into the action dicts (a policy's output would be turned so)."""
    from ..env.environment import PaddockEnv
    from ..sim.driver.builtin import ai_actions

    env = PaddockEnv(env_bench_config(physics=physics))
    env.reset(seed=1)
    env.engine.reset_drivers(np.ones((1, len(env.controlled)), bool), "random")    # as bench_batch_env
    constant = {d: {"steering": 0.0, "throttle": 0.6, "brake": 0.0} for d in env.controlled}
    batch = env.engine
    st = batch.state
    slots = np.asarray(batch.slots, np.int64)
    controls = np.zeros((1, len(slots), 3), np.float32)

    def actions():
        if actions_from != "driver":
            return constant
        ai_actions(batch.track, st.cars_f, st.cars_i, st.car_params, st.car_flags, st.rules, slots, controls)
        running = batch.running_mask()[0].tolist()
        return {d: {"steering": s, "throttle": t, "brake": b}
                for d, live, (s, t, b) in zip(env.controlled, running, controls[0].tolist()) if live}

    def one_step():
        result = env.step(actions())
        ended = [d for d, info in result["info"]["drivers"].items() if info["terminated"] or info["truncated"]]
        if ended:
            env.reset_drivers({d: None for d in ended}, observation_scope="reset", state_output="none")

    for _ in range(300):     # as bench_batch_env: off the grid first
        one_step()
    timing = time_for(one_step, seconds)
    calls, elapsed = timing.calls, timing.seconds
    k = len(env.controlled)
    return {"physics": physics, "worlds": 1, "cars_per_world": k, "actions": actions_from, "steps": calls,
            "seconds": round(elapsed, 3),
            "car_steps_per_s": round(calls * k / elapsed), "ms_per_step": round(1e3 * elapsed / calls, 3)}


def run(worlds=(64,), seconds: float = 3.0, actions=ACTIONS, ray_floor: bool = False, warmup_steps: int = 300,
        paddock_env: bool = True, physics: tuple = PHYSICS_MODES[:1]) -> dict:
    """The environment benchmark; returns its report: ``batch_env`` (BatchEnv at each world count of
    ``worlds`` for each kind of ``actions``; ``ray_floor`` adds the diagnostic ray variants after the
    workload's) and, with ``paddock_env``, ``paddock_env`` (one world through the dict API); each for every
    physics mode of ``physics`` (``simulator``, ``arcade``)."""
    for a in actions:
        if a not in ACTIONS:
            raise ValueError(f"actions: got {a!r}; expected some of {ACTIONS}")
    rays = RAY_VARIANTS if ray_floor else RAY_VARIANTS[:1]
    report = {"env_workload": ENV_WORKLOAD,
              "batch_env": [bench_batch_env(w, seconds=seconds, actions_from=a, warmup_steps=warmup_steps, rays=r,
                                            physics=m) for m in physics for r in rays for w in worlds for a in actions]}
    if paddock_env:
        report["paddock_env"] = [bench_paddock_env(seconds=seconds, actions_from=a, physics=m)
                                 for m in physics for a in actions]
    return report


def format_report(report: dict) -> str:
    """The report as a Markdown table (what BENCHMARKS.md keeps)."""
    rows = []
    for row in report["batch_env"]:
        rays = "" if row["rays"] == RAY_VARIANTS[0] else f", rays: {row['rays']}"
        rows.append((f"BatchEnv, {row['physics']}, {row['actions']} actions{rays}", row["worlds"], f"{row['car_steps_per_s']:,}",
                     row["ms_per_step"], row["core_ms"], row["sensors_obs_ms"], row["python_ms"]))
    for row in report.get("paddock_env", ()):
        rows.append((f"PaddockEnv (dict), {row['physics']}, {row['actions']} actions", 1, f"{row['car_steps_per_s']:,}",
                     row["ms_per_step"], "", "", ""))
    columns = ("API", "worlds", "car-steps/s (1 core)", "ms/step", "core ms", "sensors+vectors ms", "other ms")
    return "\n".join([f"Environment workload: {report['env_workload']}.", ""] + table(columns, rows, left=1))
