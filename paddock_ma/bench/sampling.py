"""``paddock-ma bench sampling``: sampling throughput side by side: RLlib's vector path, RLlib's packed
multi-agent path, a plain-torch sampler and the bare batched engine, on one workload, in one process.

    paddock-ma bench sampling [--env paddock/gp-batch-v0] [--worlds 32] [--seconds 5] [--rollout 64]
        [--paths rllib_vector,rllib_packed,torch,engine] [--json]

Every column runs W worlds of the same catalogue env (default ``paddock/gp-batch-v0``: 8 batch-training
cars a world on the grand prix, physical-driver senses with 16 front-heavy rays, frame skip 4; N = W x 8
cars) on one core (torch and numba on one thread), after a warm-up, for ``seconds`` each:

* ``rllib_vector``: RLlib 2.60's ``SingleAgentEnvRunner`` over ``CarVectorEnv`` through
  ``gym_env_vectorize_mode="vector_entry_point"`` (as ``examples/rllib_vector_ppo.py``), one runner of N
  sub-environments, ``normalize_actions=False`` and ``clip_actions=False`` (the contract clamps).
* ``rllib_packed``: RLlib's ``MultiAgentEnvRunner`` over one ``PaddockMultiAgentEnv`` of W worlds with
  per-car lives (as ``examples/rllib_ppo.py``, its endings callback included), the same action settings.
* ``torch``: a plain-torch loop over ``CarVectorEnv``: each step the policy's forward on the [N, D] batch
  of observations, a Gaussian sample, the env step, and the rollout buffers a PPO needs (obs, actions,
  log-probabilities, rewards, dones) written in place.
* ``engine``: ``BatchEnv.step`` of the same N cars with the engine's auto-reset and reward, no policy:
  the actions cycle through 64 pre-drawn arrays of the untrained policy's distribution (N(0, 1), as
  RLlib's default Gaussian head outputs at initialisation; the contract clamps them).

The three policies are the same network: RLlib's default PPO actor for ``fcnet_hiddens=[64, 64]``
(D -> 64 -> tanh -> 64 -> tanh -> 6: three means and three log standard deviations); the report gives
its parameter count as built by RLlib and by the torch sampler. Figures are agent-steps per second: a
transition handed to the learner (one car, one env step); the engine's are car-steps. With next-step
autoreset a car's reset step is not a transition (RLlib drops it; the torch sampler masks it).
"""

from __future__ import annotations

import os

import numpy as np

from .report import table
from .timing import time_for

WORKLOAD = "paddock/gp-batch-v0"
HIDDEN = (64, 64)
PATHS = ("rllib_vector", "rllib_packed", "torch", "engine")
LABELS = {"rllib_vector": "RLlib SingleAgentEnvRunner over CarVectorEnv (vector entry point)",
          "rllib_packed": "RLlib MultiAgentEnvRunner over PaddockMultiAgentEnv (packed worlds)",
          "torch": "plain torch sampler over CarVectorEnv",
          "engine": "bare BatchEnv.step (auto-reset, no policy)"}
GOALS = (("rllib_vector", "rllib_packed", 2.0), ("torch", "rllib_packed", 5.0), ("torch", "engine", 0.7))


def _module_spec():
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    return RLModuleSpec(model_config={"fcnet_hiddens": list(HIDDEN)})


def _policy_params(module) -> int:
    return sum(p.numel() for p in module.parameters())


def bench_rllib_vector(env_id: str, worlds: int, seconds: float, rollout: int = 64) -> dict:
    """SingleAgentEnvRunner, N sub-envs of one CarVectorEnv; ``rollout`` steps per sub-env per sample."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.env.single_agent_env_runner import SingleAgentEnvRunner
    from ray.tune.registry import register_env

    from ..catalog import env_config
    from ..distributed.vector import make_vector_env

    n = worlds * len(env_config(env_id).controlled_drivers)
    register_env("paddock_bench_cars", lambda cfg: make_vector_env(env_id, num_envs=cfg["num_envs"],
                                                                   autoreset_mode="next_step"))
    config = (PPOConfig().environment("paddock_bench_cars", normalize_actions=False, clip_actions=False)
              .env_runners(num_env_runners=0, num_envs_per_env_runner=n, rollout_fragment_length=rollout,
                           gym_env_vectorize_mode="vector_entry_point")
              .rl_module(rl_module_spec=_module_spec()))
    runner = SingleAgentEnvRunner(config=config)
    try:
        t = time_for(lambda: sum(len(e) for e in runner.sample(num_timesteps=n * rollout)), seconds, warmup=2)
        params = _policy_params(runner.module)
    finally:
        runner.stop()
    return {"agent_steps": t.units, "seconds": t.seconds, "cpu_seconds": t.cpu_seconds, "policy_params": params}


def bench_rllib_packed(env_id: str, worlds: int, seconds: float, rollout: int = 64, max_lives: int = 16) -> dict:
    """MultiAgentEnvRunner over one PaddockMultiAgentEnv of ``worlds`` worlds (per-car lives: every car
    has ``max_lives`` ids; a world whose cars are all out ends the env episode and RLlib resets it)."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.env.multi_agent_env_runner import MultiAgentEnvRunner

    from ..adapters.rllib_env import register, with_env_endings

    env_cfg = {"env_id": env_id, "num_worlds": worlds, "max_lives": max_lives, "auto_reset": True,
               "reset_placement": "random", "seed": 1}
    config = with_env_endings(
        PPOConfig().environment(register(), env_config=env_cfg, normalize_actions=False, clip_actions=False)
        .env_runners(num_env_runners=0, num_envs_per_env_runner=1, rollout_fragment_length=rollout)
        .multi_agent(policies={"shared"}, policy_mapping_fn=lambda agent_id, *a, **k: "shared")
        .rl_module(rl_module_spec=_module_spec()))
    runner = MultiAgentEnvRunner(config=config)

    def sample():   # RLlib counts one env step per packed step (all worlds)
        episodes = runner.sample(num_timesteps=rollout)
        return sum(len(sa) for ep in episodes for sa in ep.agent_episodes.values())
    try:
        t = time_for(sample, seconds, warmup=2)
        params = _policy_params(runner.module["shared"])
    finally:
        runner.stop()
    return {"agent_steps": t.units, "seconds": t.seconds, "cpu_seconds": t.cpu_seconds, "policy_params": params}


def torch_policy(obs_size: int, hidden=HIDDEN):
    """RLlib's default PPO actor for ``fcnet_hiddens=hidden`` in plain torch: obs[N, D] -> [N, 6]."""
    from torch import nn
    layers, width = [], obs_size
    for h in hidden:
        layers += [nn.Linear(width, h), nn.Tanh()]
        width = h
    return nn.Sequential(*layers, nn.Linear(width, 6))


def bench_torch(env_id: str, worlds: int, seconds: float, rollout: int = 64) -> dict:
    """The plain-torch sampler: per step one forward on obs[N, D], a Gaussian sample, the env step, the
    rollout buffers [T, N, ...] (obs, noise, actions, rewards, dones) written in place; after each
    rollout the log-probabilities [T, N] and the valid-transition mask in one batched pass."""
    import torch

    from ..adapters.vector_env import CarVectorEnv

    torch.manual_seed(1)
    env = CarVectorEnv(env_id, worlds, autoreset_mode="next_step")
    n, d = env.num_envs, env.single_observation_space.shape[0]
    policy = torch_policy(d)
    buf_obs, buf_noise, buf_act = torch.zeros(rollout, n, d), torch.zeros(rollout, n, 3), torch.zeros(rollout, n, 3)
    buf_log_std, buf_rew, buf_done = torch.zeros(rollout, n, 3), torch.zeros(rollout, n), torch.zeros(rollout + 1, n)
    obs, _ = env.reset(seed=1)
    state = {"obs": obs}
    half_log_2pi = 0.5 * float(np.log(2 * np.pi))

    def sample() -> int:   # one rollout of ``rollout`` steps; returns the valid transitions
        with torch.inference_mode():
            buf_done[0] = buf_done[rollout]
            for t in range(rollout):
                x = buf_obs[t]
                x.copy_(torch.from_numpy(state["obs"]))
                mean, log_std = policy(x).chunk(2, dim=-1)
                buf_log_std[t] = log_std
                torch.randn(n, 3, out=buf_noise[t])
                torch.addcmul(mean, log_std.exp(), buf_noise[t], out=buf_act[t])
                state["obs"], rew, term, trunc, _ = env.step(buf_act[t].numpy())
                buf_rew[t] = torch.from_numpy(rew)
                buf_done[t + 1] = torch.from_numpy(term | trunc)
            state["log_prob"] = -(0.5 * buf_noise.square() + buf_log_std + half_log_2pi).sum(-1)   # [T, N]
            valid = 1.0 - buf_done[:rollout]       # a car's step after its episode ended is its reset
        return int(valid.sum())
    try:
        t = time_for(sample, seconds, warmup=2)
    finally:
        env.close()
    return {"agent_steps": t.units, "seconds": t.seconds, "cpu_seconds": t.cpu_seconds,
            "policy_params": _policy_params(policy)}


def bench_engine(env_id: str, worlds: int, seconds: float, rollout: int = 64) -> dict:
    """BatchEnv.step of the same cars (auto-reset at random positions, the legal_progress reward)."""
    from ..catalog import resolve_config
    from ..env.batch_env import BatchEnv

    env = BatchEnv(resolve_config(env_id, {}), worlds, auto_reset=True, reset_placement="random",
                   reward_fn="legal_progress")
    env.reset(seed=1)
    k = len(env.controlled)
    env.reset_drivers(np.ones((worlds, k), bool), "random")
    pool = np.random.default_rng(1).standard_normal((64, worlds, k, 3)).astype(np.float32)
    count = {"i": 0}

    def sample() -> int:
        for _ in range(rollout):
            env.step(pool[count["i"] % 64])
            count["i"] += 1
        return rollout * worlds * k
    try:
        t = time_for(sample, seconds, warmup=2)
    finally:
        env.close()
    return {"agent_steps": t.units, "seconds": t.seconds, "cpu_seconds": t.cpu_seconds, "policy_params": 0}


BENCHES = {"rllib_vector": bench_rllib_vector, "rllib_packed": bench_rllib_packed, "torch": bench_torch,
           "engine": bench_engine}


def run(env_id: str = WORKLOAD, worlds: int = 32, seconds: float = 5.0, rollout: int = 64,
        paths=PATHS) -> dict:
    """Every path of ``paths`` (PATHS order) on ``worlds`` worlds of ``env_id``; -> the report dict:
    workload facts, one row per path (agent_steps, seconds, agent_steps_per_s, policy_params), the
    ratios of the issue's goals and whether each holds (goals whose two paths both ran)."""
    unknown = [p for p in paths if p not in PATHS]
    if unknown or not paths:
        raise ValueError(f"paths: got {list(paths)!r}; expected one or more of {', '.join(PATHS)}")
    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    import torch

    from ..catalog import env_config

    torch.set_num_threads(1)
    cfg = env_config(env_id)
    rows = {}
    for path in PATHS:
        if path in paths:
            r = BENCHES[path](env_id, worlds, seconds, rollout)
            rows[path] = {"path": path, "what": LABELS[path], "agent_steps": r["agent_steps"],
                          "seconds": round(r["seconds"], 3), "cpu_seconds": round(r["cpu_seconds"], 3),
                          "agent_steps_per_s": round(r["agent_steps"] / r["seconds"], 1),
                          "agent_steps_per_cpu_s": round(r["agent_steps"] / max(r["cpu_seconds"], 1e-9), 1),
                          "policy_params": r["policy_params"]}
    goals = []
    for a, b, target in GOALS:
        if a in rows and b in rows:
            ratio = rows[a]["agent_steps_per_s"] / rows[b]["agent_steps_per_s"]
            goals.append({"path": a, "versus": b, "ratio": round(ratio, 3), "target": target, "met": ratio >= target})
    return {"env_id": env_id, "worlds": worlds, "cars_per_world": len(cfg.controlled_drivers),
            "cars": worlds * len(cfg.controlled_drivers), "rollout": rollout, "seconds_per_path": seconds,
            "policy": f"D -> {' -> '.join(str(h) for h in HIDDEN)} (tanh) -> 6, RLlib's default PPO actor",
            "torch_threads": torch.get_num_threads(), "rows": list(rows.values()), "goals": goals}


def format_report(report: dict) -> str:
    """The report as a Markdown table of the paths and a list of the goals."""
    head = (f"{report['env_id']}: {report['worlds']} worlds x {report['cars_per_world']} cars = "
            f"{report['cars']} cars, {report['seconds_per_path']} s per path, rollouts of {report['rollout']} "
            f"steps; policy {report['policy']}")
    lines = [head, ""] + table(
        ("path", "agent-steps/s", "per CPU-second", "agent-steps", "seconds", "policy parameters"),
        [(r["what"], f"{r['agent_steps_per_s']:,.0f}", f"{r['agent_steps_per_cpu_s']:,.0f}", f"{r['agent_steps']:,}",
          r["seconds"], r["policy_params"] or "-") for r in report["rows"]], left=1)
    lines.append("")
    for g in report["goals"]:
        lines.append(f"- {g['path']} / {g['versus']} = {g['ratio']:.2f} (goal >= {g['target']}): "
                     f"{'met' if g['met'] else 'NOT met'}")
    return "\n".join(lines)
