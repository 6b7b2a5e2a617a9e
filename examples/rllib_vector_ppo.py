"""Shared-policy PPO (RLlib new API stack, single-agent) over the car vector env.

Every controlled car of every world is one sub-environment of ``paddock_ma.CarVectorEnv``; RLlib's
``SingleAgentEnvRunner`` gets the whole vector env from the env creator (``gym_env_vectorize_mode=
"vector_entry_point"``), so one numba call steps every world of a runner. The creator receives
``num_envs`` in its config and returns exactly that many sub-environments (a multiple of the env's
controlled cars a world), with next-step autoreset, what ``SingleAgentEnvRunner`` assumes.
Actions go to the env unnormalised (``normalize_actions=False``): the contract clamps out-of-range
steering, throttle and brake, so the policy's raw outputs are valid actions.

    python examples/rllib_vector_ppo.py --iterations 20 --num-worlds 8 --num-env-runners 1 --out v.json

The env, its 400-step lives and the reward are ``oval_reward``'s, shared with ``rllib_ppo.py`` and
``ppo_vector.py``. ``--out`` writes per-iteration figures over the car lives that ended (from
``CarVectorEnv.episode_totals()``): legal progress per life and per car-step (m), crash rate per life,
lives finished; env steps sampled, mean episode return, seconds since the start (``--seconds`` stops on
a wall-clock budget).

``--actor paddockjs`` trains PaddockJS's checkpoint actor (``paddock_ma.paddockjs``): the module's actor
path is three Linear+ReLU layers and a linear pi head; the env (``PaddockActorVectorEnv(squash=True)``)
adds PaddockJS's four history features to each observation and applies the actor's tanh to the actions,
so the deterministic policy is exactly the exported network. ``--export FILE.json`` writes it as
``paddockjs-distilled-actor-v1``, ``--save FILE.pt`` as a torch checkpoint.
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

import oval_reward  # noqa: E402
from oval_reward import ENV_ID, LIFE_STEPS, life_rates, sum_totals, user_reward  # noqa: E402


def car_vector_env(config: dict):
    """RLlib's env creator: a CarVectorEnv of ``config["num_envs"]`` cars (``num_worlds`` = that / K);
    the other keys go to CarVectorEnv (placements, config overrides). ``paddockjs_actor``: wrapped in
    ``PaddockActorVectorEnv(squash=True)`` (PaddockJS's actor input; actions before its tanh)."""
    from paddock_ma.distributed.vector import make_vector_env
    cfg = dict(config)
    paddockjs = cfg.pop("paddockjs_actor", False)
    env = make_vector_env(cfg.pop("env_id", ENV_ID), num_envs=cfg.pop("num_envs"), autoreset_mode="next_step",
                          reward=user_reward, **cfg)
    if paddockjs:
        from paddock_ma.adapters.paddockjs_actor import PaddockActorVectorEnv
        env = PaddockActorVectorEnv(env, squash=True)
    return env


def paddockjs_actor(module):
    """The PaddockJS actor inside the module (``paddock_ma.paddockjs.checkpoint.actor_from_rllib_module``)."""
    from paddock_ma.paddockjs.checkpoint import actor_from_rllib_module
    return actor_from_rllib_module(module)


def env_totals(algo) -> dict:
    """Sum of ``CarVectorEnv.episode_totals()`` over the remote env runners (``oval_reward``'s form)."""
    return sum_totals(algo.env_runner_group.foreach_env_runner(lambda runner: runner.env.unwrapped.episode_totals(),
                                                               local_env_runner=False))


def build_config(args, cars_per_world: int):
    import torch
    from ray import cloudpickle
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.tune.registry import register_env

    torch.set_num_threads(1)
    cloudpickle.register_pickle_by_value(oval_reward)   # the env runners get the reward without the examples dir
    register_env("paddock_cars", car_vector_env)
    env_config = {"env_id": ENV_ID, "reset_placement": args.reset_placement,
                  "start_placement": args.reset_placement, "episode": {"max_steps": args.life_steps}}
    model = {"fcnet_hiddens": [64, 64]}
    if args.actor == "paddockjs":       # PaddockJS's network: 3 hidden Linear+ReLU, a linear head (means)
        env_config["paddockjs_actor"] = True
        model = {"fcnet_hiddens": [args.hidden] * 3, "fcnet_activation": "relu", "head_fcnet_hiddens": []}
    return (
        PPOConfig()
        .environment("paddock_cars", env_config=env_config, normalize_actions=False)
        .env_runners(num_env_runners=args.num_env_runners, num_envs_per_env_runner=args.num_worlds * cars_per_world,
                     gym_env_vectorize_mode="vector_entry_point", rollout_fragment_length=args.rollout,
                     sample_timeout_s=600)
        .learners(num_learners=0)
        .training(train_batch_size_per_learner=args.train_batch, minibatch_size=args.minibatch,
                  num_epochs=args.epochs, lr=3e-4, gamma=0.99)
        .rl_module(rl_module_spec=RLModuleSpec(model_config=model))
        .debugging(seed=args.seed)
    )


def run(args) -> list[dict]:
    import ray

    from paddock_ma.catalog import env_config

    start, load = time.perf_counter(), os.getloadavg()
    if not ray.is_initialized():
        ray.init(address=args.address, **({} if args.address == "auto" else {
            "num_cpus": args.num_cpus, "object_store_memory": 150 * 1024**2, "include_dashboard": False,
            "log_to_driver": False}),
                 runtime_env={"env_vars": {"OMP_NUM_THREADS": "1", "NUMBA_NUM_THREADS": "1"}})
    k = len(env_config(ENV_ID).controlled_drivers)
    algo = build_config(args, k).build_algo()
    rows = []
    before = env_totals(algo)
    try:
        for i in range(1, args.iterations + 1):
            t = time.perf_counter()
            result = algo.train()
            runners = result.get("env_runners", {})
            now = env_totals(algo)
            row = {"iteration": i, "elapsed_s": round(time.perf_counter() - start, 1),
                   "iteration_s": round(time.perf_counter() - t, 2), **life_rates(now, before),
                   "env_steps": int(runners.get("num_env_steps_sampled_lifetime", 0)),
                   "episode_return_mean": _num(runners.get("episode_return_mean"))}
            before = now
            rows.append(row)
            print(json.dumps(row), flush=True)
            if args.seconds and time.perf_counter() - start >= args.seconds:
                break
        if args.actor == "paddockjs" and (args.export or args.save):
            from paddock_ma.paddockjs.checkpoint import export_actor, save_torch_actor
            actor = paddockjs_actor(algo.get_module())
            meta = {"trained_by": "examples/rllib_vector_ppo.py", "env_id": ENV_ID,
                    "env_steps": rows[-1]["env_steps"] if rows else 0}
            if args.export:
                export_actor(actor, args.export, metadata=meta)
            if args.save:
                save_torch_actor(actor, args.save, metadata=meta)
        if args.checkpoint_dir:
            algo.save_to_path(str(Path(args.checkpoint_dir).resolve()))
    finally:
        algo.stop()
    if args.out:
        Path(args.out).write_text(json.dumps({"env_id": ENV_ID, "args": vars(args), "load_at_start": load,
                                              "history": rows}, indent=1))
    return rows


def _num(value):
    return round(float(value), 4) if isinstance(value, (int, float)) else None


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--iterations", type=int, default=20)
    p.add_argument("--seconds", type=float, default=0.0,
                   help="wall-clock budget: stop after the iteration in which this many seconds since the start "
                        "(Ray's start-up included) have passed (0: --iterations only)")
    p.add_argument("--life-steps", type=int, default=LIFE_STEPS, help="episode.max_steps of one car's life")
    p.add_argument("--reset-placement", default="random", choices=("random", "random-moving", "grid"),
                   help="where every life starts: a random track position at rest, the same at a random speed "
                        "(0-250 km/h), or its grid slot")
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
    p.add_argument("--actor", default="default", choices=("default", "paddockjs"),
                   help="the policy network: RLlib's default MLP, or PaddockJS's checkpoint actor (four linear "
                        "layers, ReLU, tanh on steering/accel, over the observation plus PaddockJS's history features)")
    p.add_argument("--hidden", type=int, default=64, help="--actor paddockjs: width of its three hidden layers")
    p.add_argument("--export", default="", help="--actor paddockjs: write the trained actor as PaddockJS JSON here")
    p.add_argument("--save", default="", help="--actor paddockjs: write the trained actor as a torch checkpoint here")
    p.add_argument("--checkpoint-dir", default="", help="save the algorithm (an RLlib checkpoint) here at the end "
                   "(with --actor paddockjs: paddock-ma policy-server and export-paddockjs load it)")
    run(p.parse_args(argv))


if __name__ == "__main__":
    main()
