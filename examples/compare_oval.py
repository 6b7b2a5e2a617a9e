"""The three oval training examples on one wall-clock budget, one after another, and one plot of them.

    python examples/compare_oval.py --seconds 540 --out-dir docs --plot docs/oval_three_examples.png

Runs ``rllib_ppo.py`` (RLlib, packed multi-agent worlds), ``rllib_vector_ppo.py`` (RLlib over the car
vector env) and ``ppo_vector.py`` (plain torch over the car vector env) in turn, never together, each for
``--seconds`` of wall clock counted from its own start (Ray's start-up included), on the same env, lives
and reward (``oval_reward``): every life starts at a random place of the oval at a random speed of
0-250 km/h (``random-moving``; the multi-agent example's world resets spread the cars at 220 km/h), so
an untrained policy crashes and learning shows as more legal progress and fewer crashes. Before each
run it waits (up to ``--wait`` s) for the 1-minute load average to fall below ``--max-load`` and records
the load it started at. Writes ``oval_<name>.json`` per example into ``--out-dir`` and the curves (legal
progress per car-step, crash rate per life, crashes per km against seconds) into ``--plot``. ``--plot-only`` redraws
from existing JSON files; each point pools the lives that ended in ``--window`` seconds.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent

# name -> (script, label, its arguments besides --seconds and --out). One PPO setting for the three: 8 worlds
# x 8 cars, updates of 8,192 agent-steps in 4 epochs, lr 3e-4, gamma 0.99, two hidden layers of 64 (RLlib's
# default PPO network; the torch example's is the same shape). Minibatches of 1,024 agent-steps, except the
# multi-agent run's 128: RLlib 2.60 checks the minibatch (agent-steps) against the train batch counted in
# env steps (128 packed steps of 64 cars), and its count_steps_by="agent_steps" fails in sampling (NaN).
RUNS = {
    "rllib_multiagent": ("rllib_ppo.py", "RLlib, packed multi-agent env",
                         ["--iterations", "100000", "--num-env-runners", "1", "--num-worlds", "8",
                          "--train-batch", "128", "--minibatch", "128", "--epochs", "4",
                          "--rollout-fragment-length", "64",
                          "--reset-placement", "random-moving", "--start-speed", "220"]),
    "rllib_vector": ("rllib_vector_ppo.py", "RLlib, vector env",
                     ["--iterations", "100000", "--num-env-runners", "1", "--num-worlds", "8", "--train-batch",
                      "8192", "--minibatch", "1024", "--epochs", "4", "--rollout", "64",
                      "--reset-placement", "random-moving"]),
    "torch_vector": ("ppo_vector.py", "plain torch, vector env",
                     ["--total-steps", str(10**12), "--num-worlds", "8", "--rollout", "128", "--minibatches", "8",
                      "--epochs", "4", "--reset-placement", "random-moving"]),
}


def wait_for_idle(max_load: float, wait_s: float) -> float:
    """Sleep until the 1-minute load average is below ``max_load`` or ``wait_s`` passed; -> the load."""
    deadline = time.time() + wait_s
    while os.getloadavg()[0] >= max_load and time.time() < deadline:
        time.sleep(15)
    return os.getloadavg()[0]


def run_one(name: str, seconds: float, out_dir: Path) -> Path:
    script, _, extra = RUNS[name]
    out = out_dir / f"oval_{name}.json"
    cmd = [sys.executable, str(HERE / script), *extra, "--seconds", str(seconds), "--out", str(out)]
    print("running", " ".join(cmd[1:]), flush=True)
    subprocess.run(cmd, check=True, env=dict(os.environ, OMP_NUM_THREADS="1", NUMBA_NUM_THREADS="1"))
    return out


def curves(doc: dict) -> list[dict]:
    """The per-iteration rows of an example's JSON (``iterations`` or ``history``)."""
    return doc.get("iterations") or doc.get("history") or []


def binned(rows: list[dict], window_s: float, min_lives: int = 1) -> list[dict]:
    """The lives that ended in each ``window_s`` of wall clock, pooled over the iterations that ended in
    it (an RLlib vector iteration lasts ~1 s and finishes few 400-step lives; a multi-agent one ~30 s):
    end of the window (s), lives, legal metres per car-step, crash rate per life, crashes per km. Windows
    with fewer than ``min_lives`` lives (the run's last fraction of a window) are left out."""
    bins: dict[int, list[dict]] = {}
    for r in rows:
        if r.get("lives_finished"):
            bins.setdefault(int(r["elapsed_s"] // window_s), []).append(r)
    out = []
    for b, group in sorted(bins.items()):
        lives = sum(r["lives_finished"] for r in group)
        if lives < min_lives:
            continue
        steps = sum(r["life_steps"] for r in group)
        meters, crashed = sum(r["life_meters"] for r in group), sum(r["lives_crashed"] for r in group)
        out.append({"elapsed_s": max(r["elapsed_s"] for r in group), "lives": lives,
                    "legal_m_per_car_step": meters / steps, "life_crash_rate": crashed / lives,
                    "crashes_per_km": crashed / (meters / 1000.0) if meters > 0 else float("nan")})
    return out


def plot(out_dir: Path, path: str, window_s: float = 30.0) -> dict:
    """Draw the curves; -> {name: binned rows} of the runs found."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(1, 3, figsize=(16, 4.4))
    found = {}
    for name, (_, label, _) in RUNS.items():
        file = out_dir / f"oval_{name}.json"
        if not file.exists():
            continue
        doc = json.loads(file.read_text())
        rows = found[name] = binned(curves(doc), window_s, min_lives=50)
        t = [r["elapsed_s"] for r in rows]
        load = doc.get("load_at_start", [None])[0]
        tag = f"{label}, load {load:.2f} at start" if load is not None else label
        ax[0].plot(t, [r["legal_m_per_car_step"] for r in rows], marker=".", label=tag)
        ax[1].plot(t, [r["life_crash_rate"] for r in rows], marker=".", label=tag)
        ax[2].plot(t, [r["crashes_per_km"] for r in rows], marker=".", label=tag)
    ax[0].set_ylabel("legal progress per car-step (m)")
    ax[1].set_ylabel("crash rate per life")
    ax[1].set_yscale("symlog", linthresh=0.01)
    ax[2].set_ylabel("crashes per km of legal progress")
    ax[2].set_yscale("symlog", linthresh=0.001)
    for a in ax:
        a.set_xlabel("wall-clock s since the start (start-up included)")
        a.grid(alpha=0.3)
    ax[0].legend(fontsize=8)
    fig.suptitle(f"PPO on paddock/oval-batch-v0, 400-step lives from random places and speeds, one reward "
                 f"(lives ended per {window_s:.0f} s)")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return found


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seconds", type=float, default=540.0, help="wall-clock budget of each run")
    p.add_argument("--out-dir", default=".", help="directory of the JSON files")
    p.add_argument("--plot", default="oval_three_examples.png")
    p.add_argument("--only", default=",".join(RUNS), help=f"comma-separated subset of {', '.join(RUNS)}")
    p.add_argument("--max-load", type=float, default=1.0, help="start a run when the load average is below this")
    p.add_argument("--wait", type=float, default=900.0, help="longest wait (s) for that load before starting anyway")
    p.add_argument("--window", type=float, default=30.0, help="seconds of wall clock pooled into one point")
    p.add_argument("--plot-only", action="store_true")
    args = p.parse_args(argv)
    out_dir = Path(args.out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    if not args.plot_only:
        for name in args.only.split(","):
            load = wait_for_idle(args.max_load, args.wait)
            print(f"{name}: load average {load:.2f} at start", flush=True)
            run_one(name, args.seconds, out_dir)
    for name, rows in plot(out_dir, args.plot, args.window).items():
        print(name, json.dumps([{k: round(v, 4) for k, v in r.items()} for r in rows]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
