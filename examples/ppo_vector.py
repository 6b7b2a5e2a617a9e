"""PPO in one file, plain torch, over the car vector env: nothing but the policy between simulator and learner.

Every controlled car of every world is one sub-environment of ``paddock_ma.CarVectorEnv`` and shares one
Gaussian policy. The env uses gymnasium's next-step autoreset: when a car's episode ends at step t, its
step t+1 is the reset (action ignored, reward 0), so that transition is masked out of the loss, and the
observation stored at t+1 is the episode's final one, which bootstraps a truncated episode.

    python examples/ppo_vector.py --total-steps 400000 --num-worlds 16 --out ppo_vector.json

The env, its 400-step lives and the reward (legal progress minus crash and off-track penalties) are
``oval_reward``'s, shared with the RLlib examples. ``--out`` writes per-iteration figures over the car
lives that ended (``CarVectorEnv.episode_totals()``): legal progress per life and per car-step (m), crash
rate per life, lives finished; mean reward per car-step, sampling and training seconds, sampled
agent-steps/s, the last minibatch's loss, seconds since the start (``--seconds`` stops on a budget).

``--actor paddockjs`` trains PaddockJS's checkpoint network instead (``paddock_ma.paddockjs``): four linear
layers, ReLU, tanh on (steering, accel), on the observation plus PaddockJS's four history features
(``PaddockActorVectorEnv``), a state-independent Gaussian around its output; ``--export FILE.json`` writes
the trained actor as ``paddockjs-distilled-actor-v1`` (load it in PaddockJS's Policy Runner or serve it with
``paddock-ma policy-server``), ``--save FILE.pt`` as a torch checkpoint (``paddock-ma export-paddockjs``).

    python examples/ppo_vector.py --actor paddockjs --seconds 600 --export oval_actor.json

``--seconds`` stops after the iteration that passes it or at ``--total-steps`` (400,000 by default),
whichever comes first: give a large ``--total-steps`` for a pure wall-clock budget.
``--config FILE`` trains on a config file instead of a catalogued env (PaddockJS's camelCase options or
ours), e.g. ``examples/paddockjs_trackseed_config.json``: PaddockJS's ``trackSeed: 2097`` track, the one its
Policy Runner's Generation configuration drives on. The exported file's ``metadata`` then names the
config's ``physicsMode`` and ``trackSeed`` (the Policy Runner reads ``metadata.physicsMode``).
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
sys.path.insert(0, str(Path(__file__).resolve().parent))   # oval_reward, shared by the oval examples

import numpy as np  # noqa: E402
import torch  # noqa: E402
from torch import nn  # noqa: E402

from oval_reward import ENV_ID, LIFE_STEPS, life_rates, sum_totals, user_reward  # noqa: E402
from paddock_ma.adapters.vector_env import CarVectorEnv  # noqa: E402
from paddock_ma.adapters.paddockjs_actor import PaddockActorVectorEnv  # noqa: E402
from paddock_ma.env.config.root import EnvConfig  # noqa: E402
from paddock_ma.paddockjs.checkpoint import export_actor, make_torch_actor, save_torch_actor  # noqa: E402


@dataclass
class Args:
    env_id: str = ENV_ID                      # catalogued environment (its controlled cars are the sub-envs)
    config: str = ""                          # a config file (PaddockJS's options or ours) instead of env_id
    num_worlds: int = 16                      # worlds stepped together; sub-envs = worlds x controlled cars
    total_steps: int = 400_000                # agent-steps (car-steps) to train for
    seconds: float = 0.0                      # wall-clock budget: stop after the iteration that passes it (0: none)
    life_steps: int = LIFE_STEPS              # episode.max_steps of one car's life
    reset_placement: str = "random"           # where lives start: random (at rest), random-moving, grid
    rollout: int = 64                         # steps per sub-env between updates
    epochs: int = 4                           # passes over each rollout
    minibatches: int = 8                      # minibatches per pass
    lr: float = 3e-4                          # Adam learning rate
    gamma: float = 0.99                       # discount
    gae_lambda: float = 1.0                   # GAE lambda (RLlib's; with 0.95 crashes rose as the cars got fast)
    clip: float = 0.2                         # PPO ratio clip
    entropy: float = 0.0                      # entropy bonus coefficient
    value_coef: float = 0.5                   # value loss coefficient
    target_kl: float = 0.02                   # stop an update's epochs once its approximate KL passes this (0: off)
    max_grad_norm: float = 0.5                # gradient clipping, of the policy and the value parts each
    hidden: int = 64                          # width of the two hidden layers (RLlib's default net is 64, 64)
    seed: int = 1                             # seeds the env, torch and the action noise
    out: str = ""                             # JSON file for the per-iteration figures ("" = none)
    actor: str = "default"                    # "default" (the MLP above) or "paddockjs" (PaddockJS's checkpoint net)
    export: str = ""                          # --actor paddockjs: write the trained actor as PaddockJS JSON here
    save: str = ""                            # --actor paddockjs: write the trained actor as a torch checkpoint here


class Agent(nn.Module):
    """Gaussian policy and a value function, two separate MLPs (RLlib's default PPO network): the policy's
    last layer gives the means and log standard deviations of the 3 controls, so each state has its own
    spread (little steering noise where the car is fast, say)."""

    def __init__(self, obs_size: int, hidden: int):
        super().__init__()
        def body():
            return nn.Sequential(nn.Linear(obs_size, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh())
        self.actor, self.critic = body(), body()
        self.head = nn.Linear(hidden, 6)          # 3 means, 3 log standard deviations
        self.value = nn.Linear(hidden, 1)

    def dist(self, obs):
        mean, log_std = self.head(self.actor(obs)).chunk(2, dim=-1)
        return torch.distributions.Normal(mean, log_std.clamp(-5.0, 2.0).exp())

    def v(self, obs):
        return self.value(self.critic(obs)).squeeze(-1)

    def policy_parameters(self):
        return [*self.actor.parameters(), *self.head.parameters()]

    def value_parameters(self):
        return [*self.critic.parameters(), *self.value.parameters()]


class PaddockJSAgent(nn.Module):
    """PaddockJS's checkpoint actor (``make_torch_actor``: its output is the (steering, accel) mean in
    [-1, 1], exactly what PaddockJS runs) with a state-independent log standard deviation for exploration,
    and the same value MLP as ``Agent``."""

    def __init__(self, obs_size: int, hidden: int):
        super().__init__()
        self.actor = make_torch_actor(obs_size, (hidden, hidden, hidden))
        self.log_std = nn.Parameter(torch.full((2,), -0.5))
        self.critic = nn.Sequential(nn.Linear(obs_size, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh())
        self.value = nn.Linear(hidden, 1)

    def dist(self, obs):
        return torch.distributions.Normal(self.actor(obs), self.log_std.clamp(-5.0, 1.0).exp())

    def v(self, obs):
        return self.value(self.critic(obs)).squeeze(-1)

    def policy_parameters(self):
        return [*self.actor.parameters(), self.log_std]

    def value_parameters(self):
        return [*self.critic.parameters(), *self.value.parameters()]


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
    start, load = time.perf_counter(), os.getloadavg()
    torch.manual_seed(args.seed)
    torch.set_num_threads(1)
    source = EnvConfig.load(args.config) if args.config else args.env_id
    env = CarVectorEnv(source, args.num_worlds, autoreset_mode="next_step", reward=user_reward,
                       reset_placement=args.reset_placement, start_placement=args.reset_placement,
                       episode={"max_steps": args.life_steps})
    if args.actor not in ("default", "paddockjs"):
        raise SystemExit(f"--actor: got {args.actor!r}; expected default or paddockjs")
    paddockjs = args.actor == "paddockjs"
    if paddockjs:
        env = PaddockActorVectorEnv(env)
    n, d = env.num_envs, env.single_observation_space.shape[0]
    act_dim = env.single_action_space.shape[0]
    agent = PaddockJSAgent(d, args.hidden) if paddockjs else Agent(d, args.hidden)
    opt = torch.optim.Adam(agent.parameters(), lr=args.lr, eps=1e-5)
    low, high = torch.tensor(env.single_action_space.low), torch.tensor(env.single_action_space.high)

    t_obs = torch.zeros(args.rollout + 1, n, d)      # obs[t] at which a[t] was chosen; obs[T] for bootstrap
    t_act = torch.zeros(args.rollout, n, act_dim)
    t_logp = torch.zeros(args.rollout, n)
    t_rew = torch.zeros(args.rollout, n)
    t_term = torch.zeros(args.rollout, n)
    t_done = torch.zeros(args.rollout, n)
    t_valid = torch.zeros(args.rollout, n)           # 0 for the reset step after an episode ended

    obs, _ = env.reset(seed=args.seed)
    prev_done = np.zeros(n, bool)
    history, steps, iteration = [], 0, 0
    before = sum_totals([env.unwrapped.episode_totals()])
    while steps < args.total_steps and not (args.seconds and time.perf_counter() - start >= args.seconds):
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
        b_obs, b_act, b_logp = t_obs[:-1].reshape(-1, d), t_act.reshape(-1, act_dim), t_logp.reshape(-1)
        b_adv, b_ret, b_valid = adv.reshape(-1), returns.reshape(-1), t_valid.reshape(-1)
        keep = b_valid.nonzero().squeeze(-1)
        kl = 0.0
        for _ in range(args.epochs):
            if args.target_kl and kl > args.target_kl:
                break       # the policy moved far enough from the one that sampled: no more epochs
            # exactly `minibatches` parts (sizes differ by at most one): a leftover minibatch of one
            # transition would normalise its advantage by a NaN standard deviation
            for idx in keep[torch.randperm(keep.numel())].tensor_split(args.minibatches):
                dist = agent.dist(b_obs[idx])
                logp = dist.log_prob(b_act[idx]).sum(-1)
                log_ratio = logp - b_logp[idx]
                ratio = log_ratio.exp()
                kl = float(((ratio - 1) - log_ratio).mean())       # approximate KL(sampling || current)
                a = b_adv[idx]
                a = (a - a.mean()) / (a.std() + 1e-8)
                pg = -torch.min(ratio * a, ratio.clamp(1 - args.clip, 1 + args.clip) * a).mean()
                vloss = 0.5 * (agent.v(b_obs[idx]) - b_ret[idx]).pow(2).mean()
                loss = pg + args.value_coef * vloss - args.entropy * dist.entropy().sum(-1).mean()
                opt.zero_grad()
                loss.backward()
                # clipped apart: the value loss (returns of hundreds of metres) would otherwise take the
                # whole norm and leave the policy almost no step
                nn.utils.clip_grad_norm_(agent.policy_parameters(), args.max_grad_norm)
                nn.utils.clip_grad_norm_(agent.value_parameters(), args.max_grad_norm)
                opt.step()
        train_s = time.perf_counter() - t1
        now = sum_totals([env.unwrapped.episode_totals()])
        row = {"iteration": iteration, "agent_steps": steps, "elapsed_s": round(time.perf_counter() - start, 1),
               **life_rates(now, before),
               "reward_per_step": round(float(t_rew.sum() / max(1.0, float(t_valid.sum()))), 4),
               "episodes_ended": ended, "sample_s": round(sample_s, 3), "train_s": round(train_s, 3),
               "sampled_agent_steps_per_s": int(args.rollout * n / sample_s),
               "loss": round(float(loss), 4), "approx_kl": round(kl, 4)}
        before = now
        history.append(row)
        print(json.dumps(row), flush=True)
    env.close()
    if paddockjs and (args.export or args.save):
        config = env.unwrapped.engine.config
        meta = {"trained_by": "examples/ppo_vector.py", "agent_steps": steps,
                "seconds": round(time.perf_counter() - start, 1),
                "physicsMode": config.physics_mode, "frameSkip": config.frame_skip,
                **({"config": Path(args.config).name} if args.config else {"env_id": args.env_id}),
                **({"trackSeed": int(config.track.split(":", 1)[1])} if config.track.startswith("paddockjs:") else {})}
        if args.export:
            export_actor(agent.actor, args.export, metadata=meta)
        if args.save:
            save_torch_actor(agent.actor, args.save, metadata=meta)
    if args.out:
        Path(args.out).write_text(json.dumps({"env_id": args.config or args.env_id, "args": vars(args), "load_at_start": load,
                                              "history": history}, indent=1))
    return history


if __name__ == "__main__":
    train(parse(sys.argv[1:]))
