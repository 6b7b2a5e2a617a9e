"""Shared-policy PPO (RLlib new API stack) on packed paddock_ma worlds with per-car lives.

Every controlled car of every world is an agent life ``w{world}/{driver}@{life}`` mapped to one shared
policy; a crashed car comes back at a random legal track position under its next life id. The reward
(``oval_reward.user_reward``) is written by the user from the env's neutral metrics: an example
objective, not the project's canonical one.

    python examples/rllib_ppo.py --iterations 20 --num-env-runners 1 --num-worlds 4 \\
        --out ppo.json --plot ppo.png

``--out`` writes per-iteration metrics: mean legal progress per life (m) and per car-step, crash rate per
life (share of finished lives that ended at the barrier), lives finished, env steps sampled, mean episode
return, seconds since the start. The reward and the env are ``oval_reward``'s, shared with the vector
examples (``rllib_vector_ppo.py``, ``ppo_vector.py``); ``--seconds`` stops on a wall-clock budget.

``--actor paddockjs`` trains PaddockJS's checkpoint actor (``paddock_ma.adapters.paddockjs_actor_rllib``: each life
observes its vector plus PaddockJS's four history features and acts with steering and accel before the
actor's tanh); ``--export FILE.json`` writes it as ``paddockjs-distilled-actor-v1``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("RAY_AUTH_MODE", "disabled")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))   # oval_reward, shared by the oval examples

import functools  # noqa: E402

import numpy as np  # noqa: E402

import oval_reward  # noqa: E402
from paddock_ma.env.episodes import M_LEGAL_PROGRESS  # noqa: E402
from oval_reward import CRASH_PENALTY, ENV_ID, LIFE_STEPS, life_rates, sum_totals, user_reward  # noqa: E402, F401


def env_life_totals(algo) -> dict:
    """Sum of ``PaddockMultiAgentEnv.life_totals()`` over the remote env runners' envs (``oval_reward``'s
    form: lives, crashed, meters, steps).

    Exact counts of the lives that ended, read from the envs themselves: RLlib's metrics logger
    averages per-sample means, which over-weights sample chunks in which only a crash ended a life.
    """
    def fetch(runner):
        return [e.unwrapped.life_totals() for e in runner.env.envs]

    return sum_totals(t for per_runner in algo.env_runner_group.foreach_env_runner(fetch, local_env_runner=False)
                      for t in per_runner)


def env_overrides(args) -> dict:
    """Config overrides of ENV_ID shared by training and the speed-start evaluation."""
    overrides = {"episode": {"max_steps": args.life_steps}}
    if args.few_rays:
        overrides["sensors"] = {"rays": {"rays": [
            {"id": f"r{i}", "angle_degrees": a, "length_meters": 80.0}
            for i, a in enumerate((-60, -25, 0, 25, 60))]}, "nearby_cars": {"max_cars": 2}}
    if args.lookahead:
        # Curvature and heading change of the track ahead: lets the policy brake for a corner its rays
        # cannot reach yet (physical-driver senses have no lookahead unless asked).
        overrides["observation"] = {"lookahead_meters": [float(d) for d in args.lookahead.split(",")]}
    if args.start_speed:
        # Every world reset starts the controlled cars spread evenly round the lap at this speed, so
        # that training sees speed from its first step (with --reset-placement random-moving, later
        # lives start at random positions and speeds too).
        from paddock_ma.catalog import env_config
        from paddock_ma.sim.track.load import load_track

        base = env_config(ENV_ID)
        drivers = base.controlled_drivers
        spacing = load_track(base.track).length / len(drivers)
        overrides["scenario"] = {"placements": {
            d: {"distance_meters": 50.0 + i * spacing, "speed_kph": args.start_speed}
            for i, d in enumerate(drivers)}}
    return overrides


def speed_start_eval(module, args, worlds: int = 8, steps: int = 150, seed: int = 2024) -> dict:
    """Crash rate of a policy over lives that start at speed (``--eval-speed`` km/h) at random lap
    distances on the racing line: the share of cars destroyed within ``steps`` env steps (10 s at
    frame skip 4, 150 steps), and their mean legal progress (m). The policy acts deterministically
    (its action distribution's mean, clipped to the action space). The same seed gives the same
    starts at every evaluation, so the figures of two iterations compare the policies alone.

    Training starts slow (an untrained policy barely moves, so it rarely crashes): this measures
    what a policy does with speed it did not build up itself, from the first iteration on.
    """
    import torch

    from paddock_ma.catalog import resolve_config
    from paddock_ma.env.batch_env import BatchEnv
    from paddock_ma.sim.core.layout import END_DESTROYED

    env = BatchEnv(resolve_config(ENV_ID, env_overrides(args)), worlds)
    env.reset(seed=seed)
    w, k = env.num_worlds, len(env.controlled)
    rng = np.random.default_rng(seed)
    placements = {"distance_meters": rng.uniform(0.0, env.track.length, (w, k)),
                  "offset_meters": np.zeros((w, k)), "speed_kph": np.full((w, k), args.eval_speed),
                  "heading_error_radians": np.zeros((w, k))}
    obs = env.reset_drivers(np.ones((w, k), bool), placements).obs
    low, high = np.array([-1.0, 0.0, 0.0], np.float32), np.array([1.0, 1.0, 1.0], np.float32)
    crashed = np.zeros((w, k), bool)
    progress = np.zeros((w, k))
    running = np.ones((w, k), bool)
    with torch.no_grad():
        for _ in range(steps):
            out = module.forward_inference({"obs": torch.from_numpy(obs.reshape(w * k, -1).copy())})
            mean = out["action_dist_inputs"][:, :3].numpy().reshape(w, k, 3)
            result = env.step(np.clip(mean, low, high).astype(np.float32))
            progress += np.where(running, result.metrics[..., M_LEGAL_PROGRESS], 0.0)
            crashed |= running & (result.end_reason == END_DESTROYED)
            running &= ~result.done
            obs = result.obs
            if not running.any():
                break
    env.close()
    return {"speed_start_crash_rate": round(float(crashed.mean()), 4),
            "speed_start_progress_m": round(float(progress.mean()), 2)}


def build_config(args):
    import torch
    from ray import cloudpickle
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    from paddock_ma.adapters.rllib_env import register, with_env_endings

    torch.set_num_threads(1)
    cloudpickle.register_pickle_by_value(oval_reward)   # the env runners get the reward without the examples dir
    name = register()
    model = {"fcnet_hiddens": [64, 64]}
    if args.actor == "paddockjs":       # PaddockJS's network over its input (paddock_ma.adapters.paddockjs_actor_rllib)
        from paddock_ma.adapters.paddockjs_actor_rllib import register_actor_env
        name = register_actor_env()
        model = {"fcnet_hiddens": [args.hidden] * 3, "fcnet_activation": "relu", "head_fcnet_hiddens": []}
    env_config = {"env_id": ENV_ID, "num_worlds": args.num_worlds, "auto_reset": True,
                  "reset_placement": args.reset_placement, "max_lives": args.max_lives,
                  "max_world_steps": args.max_world_steps, "seed": args.seed,
                  "reward": functools.partial(user_reward, crash_penalty=args.crash_penalty),
                  "overrides": env_overrides(args)}
    fragment = args.rollout_fragment_length
    # with_env_endings: RLlib records truncated lives as truncated (PPO bootstraps them), see rllib_env
    return with_env_endings(
        PPOConfig()
        # actions unnormalised, as in the vector examples: the contract clamps the policy's raw outputs
        .environment(name, env_config=env_config, normalize_actions=False)
        .env_runners(num_env_runners=args.num_env_runners, num_envs_per_env_runner=1,
                     rollout_fragment_length=fragment, sample_timeout_s=600)
        .fault_tolerance(restart_failed_env_runners=True)
        .learners(num_learners=0)
        .training(train_batch_size_per_learner=args.train_batch, minibatch_size=args.minibatch,
                  num_epochs=args.epochs, lr=3e-4, gamma=0.99)
        .multi_agent(policies={"shared"}, policy_mapping_fn=lambda agent_id, *a, **k: "shared")
        # one RLModuleSpec (not a MultiRLModuleSpec of it): RLlib then builds the env runners' copy of the
        # "shared" module inference-only (no value network run at every sampled step)
        .rl_module(rl_module_spec=RLModuleSpec(model_config=model))
        .debugging(seed=args.seed)
    )


def _get(d, *keys, default=float("nan")):
    for k in keys:
        if not isinstance(d, dict) or k not in d:
            return default
        d = d[k]
    return float(d) if isinstance(d, (int, float, np.floating, np.integer)) else default


def run(args) -> list[dict]:
    import ray

    if args.eval_every and args.actor == "paddockjs":
        raise SystemExit("--eval-every: the speed-start evaluation runs the default network; not with --actor paddockjs")
    start, load = time.perf_counter(), os.getloadavg()
    if not ray.is_initialized():
        single_thread = {"env_vars": {"OMP_NUM_THREADS": "1", "NUMBA_NUM_THREADS": "1"}}
        if args.address == "local":     # a new local cluster, sized for this machine
            ray.init(address="local", num_cpus=args.num_cpus, object_store_memory=150 * 1024**2,
                     include_dashboard=False, log_to_driver=False, runtime_env=single_thread)
        else:                           # a running cluster ("auto" or host:port): its nodes' own resources
            ray.init(address=args.address, log_to_driver=False, runtime_env=single_thread)
    algo = build_config(args).build_algo()
    runner_nodes = sorted(algo.env_runner_group.foreach_env_runner(
        lambda runner: __import__("ray").get_runtime_context().get_node_id(), local_env_runner=False))
    rows = []
    before = env_life_totals(algo)
    initial = speed_start_eval(algo.get_module("shared"), args) if args.eval_every else {}
    if initial:
        print(json.dumps({"iteration": 0, **initial}), flush=True)
    try:
        for it in range(args.iterations):
            t0 = time.time()
            res = algo.train()
            er = res.get("env_runners", {})
            now = env_life_totals(algo)
            row = {"iteration": it + 1, "seconds": round(time.time() - t0, 2),
                   "elapsed_s": round(time.perf_counter() - start, 1), **life_rates(now, before),
                   "env_steps_sampled": _get(er, "num_env_steps_sampled"),
                   "agent_steps_sampled": _get(er, "num_module_steps_sampled", "shared"),
                   "episode_return_mean": _get(er, "episode_return_mean")}
            before = now
            if args.eval_every and ((it + 1) % args.eval_every == 0 or it + 1 == args.iterations):
                row.update(speed_start_eval(algo.get_module("shared"), args))
            rows.append(row)
            print(json.dumps(row), flush=True)
            if args.seconds and time.perf_counter() - start >= args.seconds:
                break
        if args.actor == "paddockjs" and args.export:
            from paddock_ma.paddockjs.checkpoint import actor_from_rllib_module, export_actor
            export_actor(actor_from_rllib_module(algo.get_module("shared")), args.export,
                         metadata={"trained_by": "examples/rllib_ppo.py", "env_id": ENV_ID,
                                   "iterations": len(rows)})
    finally:
        algo.stop()
    if args.out:
        Path(args.out).write_text(json.dumps({"env_id": ENV_ID, "args": vars(args), "load_at_start": load,
                                              "initial_eval": initial,
                                              "env_runner_nodes": runner_nodes, "iterations": rows},
                                             indent=1, default=str))
    if args.plot:
        plot(rows, args.plot, initial)
    return rows


def plot(rows, path, initial=None):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    it = [r["iteration"] for r in rows]
    evals = [(0, initial)] if initial else []
    evals += [(r["iteration"], r) for r in rows if "speed_start_crash_rate" in r]
    fig, ax = plt.subplots(1, 3 if evals else 2, figsize=(13 if evals else 9, 3.5))
    ax[0].plot(it, [r["life_legal_progress_m"] for r in rows], marker="o")
    ax[0].set_xlabel("iteration")
    ax[0].set_ylabel("legal progress per life (m)")
    ax[1].plot(it, [r["life_crash_rate"] for r in rows], marker="o", color="tab:red")
    ax[1].set_xlabel("iteration")
    ax[1].set_ylabel("crash rate per life (training)")
    if evals:
        ax[2].plot([i for i, _ in evals], [e["speed_start_crash_rate"] for _, e in evals], marker="s",
                   color="tab:purple")
        ax[2].set_xlabel("iteration")
        ax[2].set_ylabel("crash rate, lives starting at speed")
        ax[2].set_ylim(bottom=0.0)
    fig.suptitle(f"PPO shared policy on {ENV_ID}")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def bench_sampling(args) -> dict:
    """Agent steps/s of one in-process env runner: packed worlds vs RLlib's stock ParallelPettingZooEnv.

    Same workload both ways: ``--num-worlds`` worlds of the oval's 8 controlled cars, the shared PPO
    module computing actions. Packed: one PaddockMultiAgentEnv of W worlds. Stock: W single-world
    PettingZoo envs wrapped in ``ParallelPettingZooEnv`` with ``num_envs_per_env_runner=W``.
    """
    from ray.rllib.env.multi_agent_env_runner import MultiAgentEnvRunner
    from ray.rllib.env.wrappers.pettingzoo_env import ParallelPettingZooEnv
    from ray.tune.registry import register_env

    from paddock_ma.adapters.pettingzoo_env import parallel_env

    overrides = {"episode": {"max_steps": 100000}}
    if args.few_rays:
        overrides["sensors"] = {"rays": {"rays": [{"id": f"r{i}", "angle_degrees": a, "length_meters": 80.0}
                                                  for i, a in enumerate((-60, -25, 0, 25, 60))]},
                                "nearby_cars": {"max_cars": 2}}
    register_env("paddock_ma_stock", lambda cfg: ParallelPettingZooEnv(parallel_env(ENV_ID, **overrides)))
    out = {}
    for name in ("packed", "stock"):
        cfg = build_config(args)
        if name == "packed":
            cfg.env_config.update(num_worlds=args.num_worlds, max_world_steps=None, max_lives=1,
                                  overrides=overrides)
            cfg.env_runners(num_env_runners=0, num_envs_per_env_runner=1)
        else:
            cfg.environment("paddock_ma_stock", env_config={})
            cfg.env_runners(num_env_runners=0, num_envs_per_env_runner=args.num_worlds)
        runner = MultiAgentEnvRunner(config=cfg)
        # RLlib counts an env step per sub-env: W per vector step for the stock envs, 1 for the packed env
        per_step = 1 if name == "packed" else args.num_worlds
        runner.sample(num_timesteps=20 * per_step, random_actions=False)   # warm-up (compile, module)
        t0 = time.perf_counter()
        eps = runner.sample(num_timesteps=args.bench_steps * per_step, random_actions=False)
        dt = time.perf_counter() - t0
        agent_steps = sum(len(sa) for ep in eps for sa in ep.agent_episodes.values())
        out[name] = {"agent_steps": agent_steps, "seconds": round(dt, 3),
                     "agent_steps_per_s": round(agent_steps / dt, 1)}
        print(name, json.dumps(out[name]), flush=True)
        runner.stop()
    return out


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--iterations", type=int, default=10)
    p.add_argument("--seconds", type=float, default=0.0,
                   help="wall-clock budget: stop after the iteration in which this many seconds since the start "
                        "(Ray's start-up included) have passed (0: --iterations only)")
    p.add_argument("--num-env-runners", type=int, default=1)
    p.add_argument("--num-worlds", type=int, default=4)
    p.add_argument("--out", default=None, help="JSON file of per-iteration metrics")
    p.add_argument("--plot", default=None, help="PNG learning curve")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--crash-penalty", type=float, default=CRASH_PENALTY, help="reward on the step a car crashes")
    p.add_argument("--max-lives", type=int, default=8)
    p.add_argument("--life-steps", type=int, default=LIFE_STEPS, help="episode.max_steps of one life")
    p.add_argument("--max-world-steps", type=int, default=1000)
    p.add_argument("--rollout-fragment-length", type=int, default=50)
    p.add_argument("--train-batch", type=int, default=4000,
                   help="packed env steps per update (each steps every car of every world: x 8 x --num-worlds "
                        "agent steps)")
    p.add_argument("--minibatch", type=int, default=500,
                   help="agent steps per minibatch (RLlib 2.60 requires it <= --train-batch all the same)")
    p.add_argument("--epochs", type=int, default=4)
    p.add_argument("--num-cpus", type=int, default=2, help="CPUs of the local cluster (--address local)")
    p.add_argument("--address", default="local",
                   help="'local' starts a local Ray cluster; 'auto' or host:port joins a running one (its env "
                        "runners spread over the cluster's nodes)")
    p.add_argument("--few-rays", action="store_true", help="5 rays instead of the catalogue's 16-ray layout (faster)")
    p.add_argument("--start-speed", type=float, default=0.0,
                   help="km/h: start every world reset with the cars spread round the lap at this speed "
                        "(0: the catalogue's rolling grid)")
    p.add_argument("--reset-placement", default="random", choices=("random", "random-moving", "grid"),
                   help="where a crashed car's next life starts: a random track position at rest, the same "
                        "at a random speed (0-250 km/h), or its grid slot")
    p.add_argument("--eval-every", type=int, default=0,
                   help="every N iterations (and before the first) evaluate the crash rate of lives that start "
                        "at --eval-speed")
    p.add_argument("--eval-speed", type=float, default=200.0, help="start speed (km/h) of the speed-start evaluation")
    p.add_argument("--lookahead", default="",
                   help="comma-separated track lookahead distances in m added to the observation, e.g. 30,60,120")
    p.add_argument("--actor", default="default", choices=("default", "paddockjs"),
                   help="the policy network: RLlib's default MLP, or PaddockJS's checkpoint actor over its input "
                        "(the observation plus PaddockJS's history features; paddock_ma.adapters.paddockjs_actor_rllib)")
    p.add_argument("--hidden", type=int, default=64, help="--actor paddockjs: width of its three hidden layers")
    p.add_argument("--export", default="", help="--actor paddockjs: write the trained actor as PaddockJS JSON here")
    p.add_argument("--bench-sampling", action="store_true",
                   help="measure env-runner sampling throughput (packed worlds vs stock PettingZoo wrapper)")
    p.add_argument("--bench-steps", type=int, default=200, help="env steps per world to time in --bench-sampling")
    return p.parse_args(argv)


if __name__ == "__main__":
    _args = parse_args()
    if _args.bench_sampling:
        bench_sampling(_args)
    else:
        run(_args)
