"""Shared-policy PPO (RLlib new API stack, single-agent) over the car vector env.

Every controlled car of every world is one sub-environment of ``paddock_ma.CarVectorEnv``; RLlib's
``SingleAgentEnvRunner`` gets the whole vector env from the env creator (``gym_env_vectorize_mode=
"vector_entry_point"``), so one numba call steps every world of a runner. The creator receives
``num_envs`` in its config and returns exactly that many sub-environments (a multiple of the env's
controlled cars a world). The vector env's next-step autoreset is what ``SingleAgentEnvRunner`` assumes.
Actions go to the env unnormalised (``normalize_actions=False``): the contract clamps out-of-range
steering, throttle and brake, so the policy's raw outputs are valid actions.

    python examples/rllib_vector_ppo.py --iterations 20 --num-worlds 8 --num-env-runners 1 --out v.json

``--out`` writes per-iteration figures: mean legal progress per car-step (m), episodes ended,
env steps sampled, sampled agent-steps/s, seconds.
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

ENV_ID = "paddock/oval-batch-v0"   # 8 batch-training cars per world (no car-car contact)
CRASH_PENALTY = 200.0              # once, on the step a car hits the barrier (as examples/rllib_ppo.py)
OFF_TRACK_PENALTY = 0.05           # per step with a wheel off the legal surface


def user_reward(metrics):
    """The user's reward over metrics [W, K, M]: metres of legal progress minus penalties (an example)."""
    from paddock_ma.env.episodes import M_DESTROYED, M_LEGAL_PROGRESS, M_OFF_TRACK
    return (metrics[..., M_LEGAL_PROGRESS] - CRASH_PENALTY * metrics[..., M_DESTROYED]
            - OFF_TRACK_PENALTY * metrics[..., M_OFF_TRACK])


def car_vector_env(config: dict):
    """RLlib's env creator: a CarVectorEnv of ``config["num_envs"]`` cars (``num_worlds`` = that / K)."""
    from paddock_ma.adapters.vector_env import make_car_vector_env
    cfg = dict(config)
    return make_car_vector_env(cfg.pop("env_id", ENV_ID), num_envs=cfg.pop("num_envs"), reward=user_reward, **cfg)


def build_config(args, cars_per_world: int):
    import torch
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.tune.registry import register_env

    torch.set_num_threads(1)
    register_env("paddock_cars", car_vector_env)
    return (
        PPOConfig()
        .environment("paddock_cars", env_config={"env_id": ENV_ID, "reset_placement": "random"},
                     normalize_actions=False)
        .env_runners(num_env_runners=args.num_env_runners, num_envs_per_env_runner=args.num_worlds * cars_per_world,
                     gym_env_vectorize_mode="vector_entry_point", rollout_fragment_length=args.rollout,
                     sample_timeout_s=600)
        .learners(num_learners=0)
        .training(train_batch_size_per_learner=args.train_batch, minibatch_size=args.minibatch,
                  num_epochs=args.epochs, lr=3e-4, gamma=0.99)
        .rl_module(rl_module_spec=RLModuleSpec(model_config={"fcnet_hiddens": [64, 64]}))
        .debugging(seed=args.seed)
    )


def run(args) -> list[dict]:
    import ray

    from paddock_ma.catalog import env_config

    if not ray.is_initialized():
        ray.init(address=args.address, **({} if args.address == "auto" else {
            "num_cpus": args.num_cpus, "object_store_memory": 150 * 1024**2, "include_dashboard": False,
            "log_to_driver": False}),
                 runtime_env={"env_vars": {"OMP_NUM_THREADS": "1", "NUMBA_NUM_THREADS": "1"}})
    k = len(env_config(ENV_ID).controlled_drivers)
    algo = build_config(args, k).build_algo()
    rows = []
    start = time.perf_counter()
    try:
        for i in range(1, args.iterations + 1):
            t = time.perf_counter()
            result = algo.train()
            runners = result.get("env_runners", {})
            row = {"iteration": i, "seconds": round(time.perf_counter() - start, 1),
                   "iteration_s": round(time.perf_counter() - t, 2),
                   "env_steps": int(runners.get("num_env_steps_sampled_lifetime", 0)),
                   "episodes": int(runners.get("num_episodes_lifetime", 0)),
                   "episode_return_mean": _num(runners.get("episode_return_mean")),
                   "sample_s": _num(runners.get("sample", {}).get("mean")) if isinstance(runners.get("sample"), dict)
                   else _num(runners.get("sample"))}
            rows.append(row)
            print(json.dumps(row), flush=True)
            if args.budget_s and time.perf_counter() - start > args.budget_s:
                break
    finally:
        algo.stop()
    if args.out:
        Path(args.out).write_text(json.dumps({"args": vars(args), "history": rows}, indent=1))
    return rows


def _num(value):
    return round(float(value), 4) if isinstance(value, (int, float)) else None


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--iterations", type=int, default=20)
    p.add_argument("--budget-s", type=float, default=0.0, help="stop after this many seconds (0: no limit)")
    p.add_argument("--num-worlds", type=int, default=8, help="worlds per env runner")
    p.add_argument("--num-env-runners", type=int, default=1)
    p.add_argument("--num-cpus", type=int, default=2)
    p.add_argument("--address", default="local", help="'local' (a new local cluster) or 'auto' (a running one)")
    p.add_argument("--rollout", type=int, default=64, help="rollout fragment length per sub-env")
    p.add_argument("--train-batch", type=int, default=8192)
    p.add_argument("--minibatch", type=int, default=1024)
    p.add_argument("--epochs", type=int, default=4)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--out", default="")
    run(p.parse_args(argv))


if __name__ == "__main__":
    main()
