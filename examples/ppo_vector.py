"""PPO in one file, plain torch, over the car vector env: nothing but the policy between simulator and learner.

Every controlled car of every world is one sub-environment of ``paddock_ma.CarVectorEnv`` and shares one
Gaussian policy. The env uses gymnasium's next-step autoreset: when a car's episode ends at step t, its
step t+1 is the reset (action ignored, reward 0), so that transition is masked out of the loss, and the
observation stored at t+1 is the episode's final one, which bootstraps a truncated episode.

    python examples/ppo_vector.py --total-steps 400000 --num-worlds 16 --out ppo_vector.json

``--out`` writes per-iteration figures: mean reward per car-step (metres of legal progress), episodes
ended, sampling and training seconds, sampled agent-steps/s, the last minibatch's loss.
"""

from __future__ import annotations

import json
import os
import sys
import time
from dataclasses import dataclass, fields
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402
import torch  # noqa: E402
from torch import nn  # noqa: E402

from paddock_ma.adapters.vector_env import CarVectorEnv  # noqa: E402
from paddock_ma.env.episodes import M_LEGAL_PROGRESS  # noqa: E402


@dataclass
class Args:
    env_id: str = "paddock/oval-batch-v0"     # catalogued environment (its controlled cars are the sub-envs)
    num_worlds: int = 16                      # worlds stepped together; sub-envs = worlds x controlled cars
    total_steps: int = 400_000                # agent-steps (car-steps) to train for
    rollout: int = 64                         # steps per sub-env between updates
    epochs: int = 4                           # passes over each rollout
    minibatches: int = 8                      # minibatches per pass
    lr: float = 3e-4                          # Adam learning rate
    gamma: float = 0.99                       # discount
    gae_lambda: float = 0.95                  # GAE lambda
    clip: float = 0.2                         # PPO ratio clip
    entropy: float = 0.0                      # entropy bonus coefficient
    value_coef: float = 0.5                   # value loss coefficient
    max_grad_norm: float = 0.5                # gradient clipping
    hidden: int = 128                         # width of the two hidden layers
    seed: int = 1                             # seeds the env, torch and the action noise
    out: str = ""                             # JSON file for the per-iteration figures ("" = none)


def reward_fn(metrics: np.ndarray) -> np.ndarray:
    """The user's reward over metrics [W, K, M]: metres of legal progress (an example, not canonical)."""
    return metrics[..., M_LEGAL_PROGRESS]


class Agent(nn.Module):
    """Gaussian policy (tanh-squashed mean, state-independent log std) and a value head."""

    def __init__(self, obs_size: int, hidden: int):
        super().__init__()
        def body():
            return nn.Sequential(nn.Linear(obs_size, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh())
        self.actor, self.critic = body(), body()
        self.mean = nn.Linear(hidden, 3)
        self.value = nn.Linear(hidden, 1)
        self.log_std = nn.Parameter(torch.full((3,), -0.5))

    def dist(self, obs):
        return torch.distributions.Normal(self.mean(self.actor(obs)), self.log_std.exp())

    def v(self, obs):
        return self.value(self.critic(obs)).squeeze(-1)


def parse(argv) -> Args:
    args = Args()
    for i in range(0, len(argv), 2):
        name = argv[i].lstrip("-").replace("-", "_")
        kind = {f.name: f.type for f in fields(Args)}.get(name)
        if kind is None or i + 1 >= len(argv):
            raise SystemExit(f"unknown or incomplete argument {argv[i]!r}; arguments: "
                             + ", ".join(f"--{f.name.replace('_', '-')}" for f in fields(Args)))
        setattr(args, name, {"int": int, "float": float, "str": str}[kind](argv[i + 1]))
    return args


def train(args: Args) -> list[dict]:
    torch.manual_seed(args.seed)
    torch.set_num_threads(1)
    env = CarVectorEnv(args.env_id, args.num_worlds, reward=reward_fn)
    n, d = env.num_envs, env.single_observation_space.shape[0]
    agent = Agent(d, args.hidden)
    opt = torch.optim.Adam(agent.parameters(), lr=args.lr, eps=1e-5)
    low, high = torch.tensor(env.single_action_space.low), torch.tensor(env.single_action_space.high)

    t_obs = torch.zeros(args.rollout + 1, n, d)      # obs[t] at which a[t] was chosen; obs[T] for bootstrap
    t_act = torch.zeros(args.rollout, n, 3)
    t_logp = torch.zeros(args.rollout, n)
    t_rew = torch.zeros(args.rollout, n)
    t_term = torch.zeros(args.rollout, n)
    t_done = torch.zeros(args.rollout, n)
    t_valid = torch.zeros(args.rollout, n)           # 0 for the reset step after an episode ended

    obs, _ = env.reset(seed=args.seed)
    prev_done = np.zeros(n, bool)
    history, steps, iteration = [], 0, 0
    while steps < args.total_steps:
        iteration += 1
        t0 = time.perf_counter()
        ended = 0
        with torch.no_grad():
            for t in range(args.rollout):
                t_obs[t] = torch.from_numpy(obs)
                dist = agent.dist(t_obs[t])
                action = dist.sample()
                t_act[t], t_logp[t] = action, dist.log_prob(action).sum(-1)
                clipped = torch.clamp(action, low, high).numpy()
                obs, rew, term, trunc, _ = env.step(clipped)
                t_valid[t] = torch.from_numpy(~prev_done)
                t_rew[t], t_term[t] = torch.from_numpy(rew), torch.from_numpy(term.astype(np.float32))
                prev_done = term | trunc
                t_done[t] = torch.from_numpy(prev_done.astype(np.float32))
                ended += int(prev_done.sum())
            t_obs[args.rollout] = torch.from_numpy(obs)
            values = agent.v(t_obs.reshape(-1, d)).reshape(args.rollout + 1, n)
            adv = torch.zeros(args.rollout, n)
            last = torch.zeros(n)
            for t in reversed(range(args.rollout)):
                delta = t_rew[t] + args.gamma * values[t + 1] * (1 - t_term[t]) - values[t]
                last = (delta + args.gamma * args.gae_lambda * (1 - t_done[t]) * last) * t_valid[t]
                adv[t] = last
            returns = adv + values[:-1]
        sample_s = time.perf_counter() - t0
        steps += args.rollout * n

        t1 = time.perf_counter()
        b_obs, b_act, b_logp = t_obs[:-1].reshape(-1, d), t_act.reshape(-1, 3), t_logp.reshape(-1)
        b_adv, b_ret, b_valid = adv.reshape(-1), returns.reshape(-1), t_valid.reshape(-1)
        keep = b_valid.nonzero().squeeze(-1)
        size = max(1, keep.numel() // args.minibatches)
        for _ in range(args.epochs):
            for idx in keep[torch.randperm(keep.numel())].split(size):
                dist = agent.dist(b_obs[idx])
                logp = dist.log_prob(b_act[idx]).sum(-1)
                ratio = (logp - b_logp[idx]).exp()
                a = b_adv[idx]
                a = (a - a.mean()) / (a.std() + 1e-8)
                pg = -torch.min(ratio * a, ratio.clamp(1 - args.clip, 1 + args.clip) * a).mean()
                vloss = 0.5 * (agent.v(b_obs[idx]) - b_ret[idx]).pow(2).mean()
                loss = pg + args.value_coef * vloss - args.entropy * dist.entropy().sum(-1).mean()
                opt.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(agent.parameters(), args.max_grad_norm)
                opt.step()
        train_s = time.perf_counter() - t1
        row = {"iteration": iteration, "agent_steps": steps,
               "reward_per_step": round(float(t_rew.sum() / max(1.0, float(t_valid.sum()))), 4),
               "episodes_ended": ended, "sample_s": round(sample_s, 3), "train_s": round(train_s, 3),
               "sampled_agent_steps_per_s": int(args.rollout * n / sample_s),
               "loss": round(float(loss), 4)}
        history.append(row)
        print(json.dumps(row), flush=True)
    env.close()
    if args.out:
        Path(args.out).write_text(json.dumps({"args": vars(args), "history": history}, indent=1))
    return history


if __name__ == "__main__":
    train(parse(sys.argv[1:]))
