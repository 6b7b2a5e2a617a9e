"""Differential tester: random scenarios inside PaddockJS 2.0.0's option space, run in PaddockJS under Node
(``differential.mjs``) and in ``PaddockEnv``, compared every step (issue 41).

    PYTHONPATH=. .venv/bin/python tools/paddockjs/differential.py --seed 17            # one scenario, in detail
    PYTHONPATH=. .venv/bin/python tools/paddockjs/differential.py --count 200 --start 0 # a tally
    PYTHONPATH=. .venv/bin/python tools/paddockjs/differential.py --budget 600          # as many as fit
    PYTHONPATH=. .venv/bin/python tools/paddockjs/differential.py --record              # re-record the fixtures

A seed names a scenario (``tests/helpers/differential_scenarios.py``: physics mode, track, cars and controlled
subset, interaction profiles, start, placements, DRS, pit stops and tyres, frame skip, sensors, an action
schedule, ``resetDrivers`` calls); ``--dims`` restricts what is drawn (the rest stays at issue 41's baseline).
Each scenario prints its first divergence (step, car, field, both values) and the command that reproduces it;
a run of many prints the tally: held (nothing parted beyond the first-divergence thresholds), within (the
issue's tolerances hold), diverged by the field that parted first. PaddockJS 2.0.0 is read from
``--paddockjs`` (default /tmp/paddockjs); Node >= 20 must be on the PATH.
"""

from __future__ import annotations

import argparse
import collections
import gzip
import hashlib
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.helpers.differential_compare import classify, replay  # noqa: E402
from tests.helpers.differential_fixtures import FIXTURE, FIXTURE_SEEDS, record_fixture  # noqa: E402
from tests.helpers.differential_scenarios import DEFAULT_STEPS, DIMENSIONS, draw_scenario  # noqa: E402

NODE_HALF = Path(__file__).with_name("differential.mjs")


class PaddockJS:
    """The Node half, one process for many scenarios (one JSON line each way); with ``cache`` (a folder)
    its answers are kept there by the scenario's hash and read back instead of running PaddockJS again."""

    def __init__(self, checkout: str, cache: str | None = None):
        self.proc = subprocess.Popen(["node", str(NODE_HALF), checkout], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True, bufsize=1)
        self.cache = Path(cache) if cache else None
        if self.cache:
            self.cache.mkdir(parents=True, exist_ok=True)

    def run(self, scenario: dict) -> dict:
        line = json.dumps(scenario)
        path = None
        if self.cache:
            path = self.cache / f"{hashlib.sha256(line.encode()).hexdigest()[:24]}.json.gz"
            if path.exists():
                with gzip.open(path, "rt") as f:
                    return json.load(f)
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        answer = self.proc.stdout.readline()
        if not answer:
            raise RuntimeError("differential.mjs ended without an answer")
        if path:
            with gzip.open(path, "wt") as f:
                f.write(answer)
        return json.loads(answer)

    def close(self):
        self.proc.stdin.close()
        self.proc.wait()


def command(seed: int, dims, steps: int) -> str:
    extra = "" if tuple(dims) == DIMENSIONS else f" --dims {','.join(dims) or 'none'}"
    extra += "" if steps == DEFAULT_STEPS else f" --steps {steps}"
    return f"PYTHONPATH=. .venv/bin/python tools/paddockjs/differential.py --seed {seed}{extra}"


def describe(seed, scenario, answer, cmp, dims, steps) -> str:
    c = scenario["config"]
    what = (f"seed {seed}: {c['physicsMode']}, {c.get('trackSeed', 'track object')}"
            f"{' ' + c['trackGeneration']['profile'] if 'trackGeneration' in c else ''}, "
            f"{len(c['drivers'])} cars ({len(c['controlledDrivers'])} controlled), "
            f"{c['participantInteractions']['defaultProfile']}, "
            f"{'standing' if c['rules'].get('standingStart') else 'rolling'}, frame skip {c['frameSkip']}, "
            f"{scenario['schedule']}, {len(scenario.get('resets', []))} resets")
    if not answer.get("ok", True):
        return f"{what}\n  PaddockJS refused: {answer.get('error')}"
    if cmp.error:
        return f"{what}\n  ours failed: {cmp.error}\n  {command(seed, dims, steps)}"
    pos = max(cmp.position.values(), default=0.0)
    line = f"{what}\n  {classify(cmp, scenario, answer)}: position {pos:.2e} m, vector {cmp.vector:.2e} ({cmp.vector_entry})"
    if cmp.first:
        f = cmp.first
        line += (f"\n  first divergence: step {f['step']}, {f['car']}, {f['field']}: ours {f['ours']!r}, "
                 f"PaddockJS {f['theirs']!r}\n  {command(seed, dims, steps)}")
    return line


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--seed", type=int, help="one scenario")
    p.add_argument("--count", type=int, default=0, help="scenarios to run (seeds start, start+1, ...)")
    p.add_argument("--start", type=int, default=0)
    p.add_argument("--budget", type=float, default=0.0, help="seconds: run scenarios until it is spent")
    p.add_argument("--steps", type=int, default=DEFAULT_STEPS)
    p.add_argument("--dims", default=",".join(DIMENSIONS), help=f"drawn dimensions ({','.join(DIMENSIONS)}; none: issue 41's baseline)")
    p.add_argument("--paddockjs", default="/tmp/paddockjs")
    p.add_argument("--cache", help="a folder keeping PaddockJS's answers (deterministic) between runs")
    p.add_argument("--record", action="store_true", help=f"re-record {FIXTURE.relative_to(ROOT)}")
    p.add_argument("--node-only", action="store_true", help="only run PaddockJS (fill --cache)")
    p.add_argument("--quiet", action="store_true", help="print only divergences and the tally")
    args = p.parse_args(argv)
    dims = tuple(d for d in args.dims.split(",") if d and d != "none")
    unknown = set(dims) - set(DIMENSIONS)
    if unknown:
        p.error(f"unknown dimensions {sorted(unknown)}; known: {','.join(DIMENSIONS)}")
    node = PaddockJS(args.paddockjs, args.cache)
    try:
        if args.record:
            record_fixture(node.run)
            print(f"wrote {FIXTURE} ({len(FIXTURE_SEEDS)} scenarios)")
            return 0
        seeds = [args.seed] if args.seed is not None else None
        tally = collections.Counter()
        t0 = time.time()
        k = 0
        while True:
            if seeds is not None:
                if k >= len(seeds):
                    break
                seed = seeds[k]
            else:
                if (args.count and k >= args.count) or (args.budget and time.time() - t0 > args.budget) \
                        or (not args.count and not args.budget):
                    break
                seed = args.start + k
            k += 1
            scenario = draw_scenario(seed, dims, args.steps)
            answer = node.run(scenario)
            if args.node_only:
                continue
            cmp = replay(scenario, answer) if answer.get("ok") else None
            why = classify(cmp, scenario, answer) if cmp else "paddockjs-error"
            tally[why] += 1
            if not args.quiet or not why.startswith(("held", "within", "documented")):
                print(describe(seed, scenario, answer, cmp, dims, args.steps) if cmp
                      else f"seed {seed}: PaddockJS refused: {answer.get('error')}", flush=True)
        if k > 1:
            print(f"\n{k} scenarios in {time.time() - t0:.0f} s (dims {','.join(dims)}, {args.steps} steps):")
            for why, n in tally.most_common():
                print(f"  {why}: {n}")
    finally:
        node.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
