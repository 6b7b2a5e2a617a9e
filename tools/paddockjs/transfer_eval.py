"""Transfer, measured: one exported actor file driven here and in PaddockJS 2.0.0, same config, same starts.

    python tools/paddockjs/transfer_eval.py --checkout /tmp/paddockjs --actor examples/paddockjs_actor_trackseed.json \
        --config examples/paddockjs_trackseed_config.json [--rounds 5] [--steps 400] [--seed 1000] [--out FILE]

A maintainer tool (PaddockJS is not part of this repository; its checkout at commit 28fc6c4 needs no npm
install for this). It writes a plan of ``--rounds`` rounds: in round r every controlled driver i starts at
rest on the centre line at ``(i + r / rounds) / K`` of the lap (K drivers; the rounds cover the lap
evenly), seeded ``seed + r``; each round runs ``--steps`` steps. Both sides run the same plan:

* here: a one-world ``BatchEnv`` of the config with the round's placements, the actor evaluated by
  ``paddockjs.checkpoint.ActorPolicy`` (the format's arithmetic in float64, PaddockJS's history features);
* there: ``tools/paddockjs/transfer_eval.mjs`` under Node, PaddockJS's ``createPaddockEnvironment`` and its
  Policy Runner's ``createCheckpointPolicy``.

A driver's life is its steps up to and including its first destroyed step (or the end of its episode).
Figures per side, pooled over every life: legal progress per step (metres of ``legalProgressDeltaMeters``
over the steps lived), crashes per km of legal progress, lives crashed; then there / here. The goal of
issue 23: progress there >= 90 % of here, crash rate there <= 1.5x here.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from paddock_ma.env.batch_env import BatchEnv  # noqa: E402
from paddock_ma.env.config.root import EnvConfig  # noqa: E402
from paddock_ma.env.episodes import M_DESTROYED, M_LEGAL_PROGRESS  # noqa: E402
from paddock_ma.paddockjs.checkpoint import ActorPolicy, vector_speed_offset  # noqa: E402
from paddock_ma.sim.track.load import load_track  # noqa: E402


def make_plan(config_doc: dict, rounds: int, steps: int, seed: int) -> dict:
    """The rounds both sides run (see the module docstring)."""
    drivers = config_doc["controlledDrivers"]
    length = float(load_track(EnvConfig.from_paddockjs(config_doc).track).length)
    k = len(drivers)
    plan_rounds = [{"seed": seed + r, "placements": {
        d: {"distanceMeters": round(((i + r / rounds) / k) * length, 2), "offsetMeters": 0.0, "speedKph": 0.0}
        for i, d in enumerate(drivers)}} for r in range(rounds)]
    return {"config": config_doc, "steps": steps, "rounds": plan_rounds, "lapMeters": round(length, 2)}


def run_here(actor: dict, plan: dict) -> list[dict]:
    """Each round's lives here: {driver: {steps, legalMeters, crashed}}."""
    drivers = plan["config"]["controlledDrivers"]
    out = []
    for rnd in plan["rounds"]:
        doc = {**plan["config"], "seed": rnd["seed"],
               "scenario": {"participants": drivers, "placements": rnd["placements"]}}
        engine = BatchEnv(EnvConfig.from_paddockjs(doc), 1)
        result = engine.reset(rnd["seed"])
        width = int(engine.obs_sizes[0])
        policy = ActorPolicy(actor, len(drivers))
        k = len(drivers)
        steps, legal = np.zeros(k, np.int64), np.zeros(k)
        crashed, alive = np.zeros(k, bool), np.ones(k, bool)
        for _ in range(plan["steps"]):
            vectors = result.obs[0, :, :width]
            speed, offset = vector_speed_offset(vectors)
            result = engine.step(policy.decide(vectors, speed, offset)[None])
            metrics = result.metrics[0]
            steps += alive
            legal += np.where(alive, metrics[:, M_LEGAL_PROGRESS], 0.0)
            destroyed = metrics[:, M_DESTROYED] > 0
            crashed |= alive & destroyed
            alive &= ~(destroyed | result.done[0])
            if not alive.any():
                break
        engine.close()
        out.append({d: {"steps": int(steps[i]), "legalMeters": float(legal[i]), "crashed": bool(crashed[i])}
                    for i, d in enumerate(drivers)})
    return out


def run_paddockjs(checkout: str, actor_path: str, plan: dict) -> list[dict]:
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(plan, f)
    try:
        done = subprocess.run(["node", str(ROOT / "tools/paddockjs/transfer_eval.mjs"), checkout, actor_path, f.name],
                              capture_output=True, text=True, check=False)
    finally:
        os.unlink(f.name)
    if done.returncode != 0:
        raise SystemExit(f"transfer_eval.mjs failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout)["rounds"]


def figures(rounds: list[dict]) -> dict:
    lives = [life for rnd in rounds for life in rnd.values()]
    steps = sum(life["steps"] for life in lives)
    meters = sum(life["legalMeters"] for life in lives)
    crashes = sum(life["crashed"] for life in lives)
    return {"lives": len(lives), "steps": steps, "legal_m": round(meters, 1),
            "legal_m_per_step": round(meters / steps, 4) if steps else None,
            "crashes": crashes, "crashes_per_km": round(crashes / (meters / 1000), 4) if meters > 0 else None,
            "mean_life_steps": round(steps / len(lives), 1)}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--checkout", required=True, help="a PaddockJS 2.0.0 source tree (commit 28fc6c4)")
    p.add_argument("--actor", required=True, help="a paddockjs-distilled-actor-v1 file")
    p.add_argument("--config", required=True, help="the PaddockJS environment options (JSON) of both sides")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--steps", type=int, default=400)
    p.add_argument("--seed", type=int, default=1000)
    p.add_argument("--out", default="", help="write the plan, every life and the figures here (JSON)")
    args = p.parse_args(argv)
    config_doc = json.loads(Path(args.config).read_text())
    actor = json.loads(Path(args.actor).read_text())
    plan = make_plan(config_doc, args.rounds, args.steps, args.seed)
    here = run_here(actor, plan)
    there = run_paddockjs(args.checkout, str(Path(args.actor).resolve()), plan)
    f_here, f_there = figures(here), figures(there)
    ratio = {
        "progress_there_over_here": round(f_there["legal_m_per_step"] / f_here["legal_m_per_step"], 3)
        if f_here["legal_m_per_step"] else None,
        "crash_rate_there_over_here": round(f_there["crashes_per_km"] / f_here["crashes_per_km"], 3)
        if f_here["crashes_per_km"] and f_there["crashes_per_km"] is not None else None,
    }
    report = {"actor": args.actor, "config": args.config, "physics_mode": config_doc.get("physicsMode"),
              "rounds": args.rounds, "steps": args.steps, "seed": args.seed, "lap_m": plan["lapMeters"],
              "here": f_here, "paddockjs": f_there, **ratio}
    print(json.dumps(report, indent=1))
    if args.out:
        Path(args.out).write_text(json.dumps({**report, "plan": plan, "lives_here": here, "lives_paddockjs": there}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
