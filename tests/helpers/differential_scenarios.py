"""The differential tester's scenarios (``tools/paddockjs/differential.py``): from a seed, one scenario inside
PaddockJS 2.0.0's option space, drawn by ``random.Random(seed)`` so a seed names the same scenario on every
machine.

A scenario is a JSON-able dict, what ``tools/paddockjs/differential.mjs`` reads: ``{id, config, steps,
actions | controller, pit, resets, dims}``; ``config`` is a PaddockJS config (``createPaddockEnvironment``'s
options) that ``EnvConfig.from_paddockjs`` loads here. ``DIMENSIONS`` lists what is drawn; a dimension left
out of ``dims`` keeps the baseline's value (issue 41's config: trackSeed 2601, 4 controlled cars, frame skip 4,
rays off, batch-training, arcade, rolling start, a smooth action schedule), so the option space widens
dimension by dimension.
"""

from __future__ import annotations

import json
import math
import random
from pathlib import Path

TRACKS = Path(__file__).resolve().parents[1] / "fixtures" / "paddockjs-2.0.0" / "tracks"
# what is drawn, in drawing order (each draws from its own generator, so leaving one out changes no other)
DIMENSIONS = ("mode", "track", "cars", "profile", "start", "placements", "drs", "pit", "frame_skip",
              "sensors", "schedule", "resets")
TRACK_SEEDS = (2601, 4101, 2602, 2701, 1971, 20, 2097, 10101)
TRAINING_PROFILES = ("training-short", "training-medium", "training-technical")
SHIPPED_TRACKS = ("grand-prix", "technical")
PROFILES = ("normal", "isolated-training", "batch-training", "phantom-race", "time-trial-overlay")
FLAGS = ("collidable", "detectableByRays", "detectableAsNearby", "blocksPitLane", "affectsRaceOrder")
SCHEDULES = ("smooth", "bang-bang", "random", "controller")
LAYOUTS = ("compact", "driver-front-heavy", "lidar-lite")
CHANNELS = ("roadEdge", "kerb", "illegalSurface", "car")
DEFAULT_STEPS = 300


def _rng(seed: int, dim: str) -> random.Random:
    return random.Random(f"{seed}:{dim}")


def _shipped_object(name: str) -> dict:
    return json.loads((TRACKS / f"{name}.object.json").read_text())["track"]


def draw_scenario(seed: int, dims=DIMENSIONS, steps: int = DEFAULT_STEPS) -> dict:
    """The scenario of ``seed`` (module docstring); ``dims``: the dimensions drawn, the rest at baseline."""
    dims = tuple(d for d in DIMENSIONS if d in set(dims))
    r = {d: _rng(seed, d) for d in DIMENSIONS}
    on = set(dims)
    n_cars, n_ctl = 4, 4
    if "cars" in on:
        n_cars = r["cars"].choice((1, 1, 1, 2, 2, 2, 3, 3, 4, 4, 5, 6, 8, 12, 20))
        n_ctl = n_cars if r["cars"].random() < 0.6 else r["cars"].randint(1, n_cars)
    ids = [f"car-{i:02d}" for i in range(n_cars)]
    rays = "sensors" in on and r["sensors"].random() >= 0.35
    if rays:        # PaddockJS senses every controlled car's rays in JavaScript: at most 4 keep a run short
        n_ctl = min(n_ctl, 4)
    controlled = sorted(r["cars"].sample(ids, n_ctl)) if "cars" in on else ids
    config = {
        "drivers": [{"id": d, "name": d, "tire": "M"} for d in ids],
        "seed": 7,
        "controlledDrivers": controlled,
        "physicsMode": r["mode"].choice(("arcade", "simulator")) if "mode" in on else "arcade",
        "frameSkip": r["frame_skip"].choice((1, 2, 3, 4, 4, 6)) if "frame_skip" in on else 4,
        "rules": {"standingStart": ("start" in on and r["start"].random() < 0.5)},
        "participantInteractions": {"defaultProfile": "batch-training"},
        "sensors": {"rays": {"enabled": False}},
        "observation": {"output": "vector", "includeSchema": False},
        "result": {"stateOutput": "none"},
    }
    _draw_track(config, r["track"], on)
    if "profile" in on:
        _draw_profile(config, r["profile"], ids)
    if "sensors" in on:
        _draw_sensors(config, r["sensors"], rays)
    if "pit" in on:
        _draw_pit(config, r["pit"])
    if "drs" in on:
        config["rules"]["drsDetectionSeconds"] = r["drs"].choice((1, 1, 0.5, 2, 3))
    scenario = {"id": seed, "config": config, "steps": steps, "dims": list(dims)}
    placements = _draw_placements(r["placements"], controlled, "drs" in on and r["drs"].random() < 0.5) \
        if "placements" in on or "drs" in on else {}
    if placements:
        config["scenario"] = {"placements": placements}
    _draw_schedule(scenario, r["schedule"] if "schedule" in on else None, controlled, steps)
    scenario["pit"] = _draw_pit_actions(r["pit"], config, controlled, steps) if "pit" in on else {}
    scenario["resets"] = _draw_resets(r["resets"], controlled, steps) if "resets" in on else []
    return scenario


def _draw_track(config, rng, on):
    if "track" not in on:
        config["trackSeed"] = 2601
        return
    kind = rng.random()
    if kind < 0.6:
        config["trackSeed"] = rng.choice(TRACK_SEEDS)
    elif kind < 0.85:
        config["trackSeed"] = rng.choice(TRACK_SEEDS[:4])
        config["trackGeneration"] = {"profile": rng.choice(TRAINING_PROFILES)}
    else:
        config["track"] = _shipped_object(rng.choice(SHIPPED_TRACKS))


def _draw_profile(config, rng, ids):
    pi = {"defaultProfile": rng.choice(PROFILES)}
    if rng.random() < 0.3:
        drivers = {}
        for d in rng.sample(ids, rng.randint(1, len(ids))):
            o = {"profile": rng.choice(PROFILES)} if rng.random() < 0.5 else {}
            for f in rng.sample(FLAGS, rng.randint(0, 2)):
                o[f] = rng.random() < 0.5
            drivers[d] = o
        pi["drivers"] = drivers
    config["participantInteractions"] = pi


def _draw_sensors(config, rng, rays: bool):
    if not rays:
        config["sensors"] = {"rays": {"enabled": False}}
    else:
        rays = {"enabled": True}
        if rng.random() < 0.5:
            rays["layout"] = rng.choice(LAYOUTS)
        if rng.random() < 0.5:
            rays["channels"] = rng.sample(CHANNELS, rng.randint(1, 4))
        if rng.random() < 0.3:
            rays["lengthMeters"] = rng.choice((60, 120, 200))
        config["sensors"] = {"rays": rays}
    if rng.random() < 0.3:
        config["sensors"]["nearbyCars"] = {"enabled": rng.random() < 0.7, "maxCars": rng.randint(1, 8),
                                           "radiusMeters": rng.choice((50, 150, 300))}
    obs = config["observation"]
    if rng.random() < 0.4:
        obs["profile"] = "physical-driver"
    if rng.random() < 0.2:
        obs["lookaheadMeters"] = sorted(rng.sample((10, 20, 40, 80, 150, 300), rng.randint(1, 4)))


def _draw_pit(config, rng):
    if rng.random() < 0.5:
        return
    config["rules"]["modules"] = {"pitStops": {"enabled": True}}
    if rng.random() < 0.4:
        config["rules"]["modules"]["tireStrategy"] = {"enabled": True, "compounds": ["S", "M", "H"]}
    config["totalLaps"] = rng.choice((2, 3, 5))
    if rng.random() < 0.25:     # compounds other than M scale grip here, not in PaddockJS (documented)
        for d in config["drivers"]:
            d["tire"] = rng.choice(("S", "M", "H"))


def _draw_placements(rng, controlled, pack: bool) -> dict:
    """Explicit placements of some controlled drivers (``pack``: close together, as DRS needs)."""
    out = {}
    base = rng.uniform(0, 3500)
    for i, d in enumerate(controlled):
        if pack:
            out[d] = {"distanceMeters": round(base + 25 * i, 3), "offsetMeters": round(rng.uniform(-4, 4), 3),
                      "speedKph": round(rng.uniform(150, 260), 2)}
        elif rng.random() < 0.6:
            out[d] = {"distanceMeters": round(rng.uniform(0, 3500), 3), "offsetMeters": round(rng.uniform(-6, 6), 3),
                      "speedKph": round(rng.uniform(0, 280), 2),
                      "headingErrorRadians": round(rng.uniform(-0.3, 0.3), 4)}
    return out


def _draw_schedule(scenario, rng, controlled, steps):
    """Actions for every step (``actions``), or a lane-keeping driver's parameters (``controller``)."""
    kind = rng.choice(SCHEDULES) if rng is not None else "smooth"
    scenario["schedule"] = kind
    n = len(controlled)
    if kind == "controller":
        scenario["controller"] = [{"offset": round(rng.uniform(-5, 5), 2), "latLimit": rng.choice((16, 20, 24, 30)),
                                   "gain": rng.choice((0.3, 0.6, 1.0)), "weave": rng.choice((0, 0, 3, 8))}
                                  for _ in range(n)]
        return
    if kind == "smooth" and rng is None:     # issue 41's schedule
        scenario["actions"] = [[[0.25 * math.sin(k / 9 + i), 0.7 if k < 30 else 0.0, 0.0 if k < 30 else 0.4]
                                for i in range(n)] for k in range(steps)]
        scenario["actions"] = [[[round(v, 6) for v in a] for a in row] for row in scenario["actions"]]
        return
    if kind == "smooth":
        amp, period = rng.uniform(0.05, 0.6), rng.uniform(5, 30)
        on, off = rng.randint(10, 80), rng.randint(5, 40)
        acts = [[[amp * math.sin(k / period + i), rng.uniform(0.5, 1) if k % (on + off) < on else 0.0,
                  0.0 if k % (on + off) < on else rng.uniform(0.1, 0.6)] for i in range(n)] for k in range(steps)]
    elif kind == "bang-bang":
        hold = rng.randint(3, 25)
        amp = rng.uniform(0.2, 1)
        acts = []
        for k in range(steps):
            phase = (k // hold) % 4
            acts.append([[amp if (phase + i) % 2 == 0 else -amp, 1.0 if phase < 3 else 0.0,
                          1.0 if phase == 3 else 0.0] for i in range(n)])
    else:
        acts = [[[rng.uniform(-1, 1), rng.random(), rng.random() * (rng.random() < 0.3)] for _ in range(n)]
                for _ in range(steps)]
    scenario["actions"] = [[[round(v, 6) for v in a] for a in row] for row in acts]


def _draw_pit_actions(rng, config, controlled, steps) -> dict:
    """``{step: {driver: {pitIntent, pitCompound?}}}`` (JSON keys are strings): a few pit requests when pit
    stops are on and the track has a pit lane."""
    if not config["rules"].get("modules", {}).get("pitStops", {}).get("enabled") \
            or "trackGeneration" in config:
        return {}
    out = {}
    for d in controlled:
        if rng.random() < 0.5:
            k = rng.randrange(0, steps // 2)
            ask = {"pitIntent": rng.choice((1, 2))}
            if rng.random() < 0.5:
                ask["pitCompound"] = rng.choice(("S", "M", "H"))
            out.setdefault(str(k), {})[d] = ask
    return out


def _draw_resets(rng, controlled, steps) -> list:
    """``resetDrivers`` calls at random steps: ``[{step, placements}]``."""
    out = []
    for _ in range(rng.choice((0, 1, 1, 2, 3))):
        who = rng.sample(controlled, rng.randint(1, len(controlled)))
        out.append({"step": rng.randrange(1, steps), "placements": {
            d: {"distanceMeters": round(rng.uniform(0, 3500), 3), "offsetMeters": round(rng.uniform(-6, 6), 3),
                "speedKph": round(rng.uniform(0, 250), 2), "headingErrorRadians": round(rng.uniform(-0.4, 0.4), 4)}
            for d in who}})
    steps_seen = set()
    return sorted((r for r in out if not (r["step"] in steps_seen or steps_seen.add(r["step"]))),
                  key=lambda r: r["step"])
