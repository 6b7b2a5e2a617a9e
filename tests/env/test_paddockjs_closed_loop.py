"""Closed-loop parity with PaddockJS 2.0.0 through the environment (issue 22, points 3 and 4).

Each golden trace (``tests/fixtures/paddockjs-2.0.0/traces``, recorded by
``tools/paddockjs/record_traces.mjs``) carries the PaddockJS config it ran (trackSeed 2601, its
placements, frame skip 4; the ``grand-prix/`` ones the shipped grand-prix track as a PaddockJS track
object, ``tools/paddockjs/shipped_track_object.py``) and car-00's observation vector after reset and
after every step. Here that
config builds a ``PaddockEnv`` (``EnvConfig.from_paddockjs``), the recorded actions go through
``PaddockEnv.step`` and the cars' poses are compared with PaddockJS's after every step, and car-00's
observation vector at every step at which every car of the trace is still compared and within 1 cm of
PaddockJS's. Unlike the open-loop replay (``tests/sim/test_paddockjs_parity.py``, which feeds PaddockJS's
wheel surfaces to the dynamics), everything is ours: the generated track, the placement, the
wheel-surface classification, the barrier, car-car contact and the sensors (rays, radar, lookahead).

A trace is compared up to PaddockJS's destruction of the car, and in simulator mode the car coming to
rest (PaddockJS's braked car then creeps backwards; ours does not: docs/paddockjs-compatibility.md). The
cars' DRS (``sim.race.drs``) is open after exactly the steps at which PaddockJS's is (the trace's
``drs-on`` / ``drs-off`` events: car-01 of car-contact arcade, steps 86 to 200). Tolerances (issue 22):
1 cm and 1e-3 rad without spin or contact, 0.5 m with; every vector entry within 1e-3 of its scale (the vector holds scaled values), except the
entries of ``KNOWN_VECTOR_DIFFERENCES`` (and of ``KNOWN_VECTOR_STEPS`` at their steps).

    PYTHONPATH=. .venv/bin/python tests/env/test_paddockjs_closed_loop.py   # the parity table
"""

import gzip
import json
import math
from pathlib import Path

import numpy as np
import pytest

from paddock_ma.env.config.root import EnvConfig
from paddock_ma.env.environment import PaddockEnv
from paddock_ma.sim.core import layout as L

TRACES = Path(__file__).resolve().parents[1] / "fixtures" / "paddockjs-2.0.0" / "traces"
# the default profile's traces, car-00's physical-driver vector (contact patches, boundaries, every ray
# channel) on a few of the scenarios, the same on the shipped grand-prix track, and the default-profile
# ones on the shipped technical track
SHIPPED_TRACKS = ("grand-prix", "technical")
TRACE_FILES = (sorted(TRACES.glob("*.json.gz")) + sorted((TRACES / "physical-driver").glob("*.json.gz"))
               + [p for track in SHIPPED_TRACKS for p in sorted((TRACES / track).glob("*.json.gz"))
                  + sorted((TRACES / track / "physical-driver").glob("*.json.gz"))])
POSITION_TOL = 0.01         # m
HEADING_TOL = 1e-3          # rad
CHAOTIC_POSITION_TOL = 0.5  # m
VECTOR_TOL = 1e-3           # of the entry's scale (the vector holds scaled values)
REST_SPEED = 0.5            # m/s: a simulator-mode trace ends once PaddockJS's car is at rest
# Entries that differ by more than VECTOR_TOL where positions agree, per trace, and why (documented in
# docs/paddockjs-compatibility.md): PaddockJS's race distance advances by its car's nearest-sample
# progress (2 m steps) from the placement's distance, ours by the projection, so when car-00 passes
# car-01 PaddockJS ranks it ahead 5 steps later (2 on the grand-prix track; on the technical track, where
# the two cars run side by side, at single steps where their race distances are under 0.6 m apart).
KNOWN_VECTOR_DIFFERENCES = {"car-contact.arcade": {"race.positionNormalized"},
                            "car-contact.arcade.grand-prix": {"race.positionNormalized"},
                            "car-contact.arcade.technical": {"race.positionNormalized"},
                            "car-contact.simulator.technical": {"race.positionNormalized"}}
# Entries that differ at single steps only: at the lap line PaddockJS's lap progress reads its nearest
# sample's distance (0 once sample 0 is nearest), ours the projection (just under 1 of the lap).
KNOWN_VECTOR_STEPS = {"car-contact.arcade": {"self.lapProgressRatio": (124,)}}


def load_trace(path):
    with gzip.open(path, "rt") as f:
        return json.load(f)


def trace_id(path):
    # <scenario>.<mode>[.<profile>][.<shipped track>], as trace_id_of
    return ".".join([path.name.removesuffix(".json.gz"), *reversed(path.parent.relative_to(TRACES).parts)])


def trace_id_of(trace):
    profile = trace["config"]["observation"].get("profile")
    return (f"{trace['scenario']}.{trace['physicsMode']}" + (f".{profile}" if profile else "")
            + (f".{trace['shippedTrack']}" if trace.get("shippedTrack") else ""))


def end_step(trace, cid):
    """The number of steps of car ``cid`` that are comparable (see the module docstring)."""
    skip = trace["frameSkip"]
    ev = trace["events"][cid]
    end = min([t for t, kind in ev if kind == "car-destroyed"], default=10 ** 9) // skip
    if trace["physicsMode"] == "simulator":
        speed = trace["stepFields"].index("speed")
        slow = [k for k, row in enumerate(trace["steps"][cid]) if row[speed] < REST_SPEED]
        if slow:
            end = min(end, slow[0])
    return min(end, len(trace["actions"]))


def drs_open_after(trace, cid):
    """PaddockJS's DRS of car ``cid`` after each step of the trace (bool[steps]), from its events."""
    skip = trace["frameSkip"]
    open_ = np.zeros(len(trace["actions"]), bool)
    for tick, kind in sorted(trace["events"][cid]):
        if kind in ("drs-on", "drs-off"):
            open_[tick // skip:] = kind == "drs-on"
    return open_


def run(trace):
    """Drive our environment with the trace's actions. Returns per car: {'steps', 'chaotic',
    'position', 'heading' (largest differences, m / rad), 'drs_mismatches' (compared steps after which
    our DRS is open and PaddockJS's not, or the other way round), 'vector' (car-00 only: largest difference
    at the recorded vector steps whose positions agree within 1 cm, None if none), 'vector_steps',
    'vector_index' (the entry of that largest difference), 'vector_diff' (per entry, the largest
    difference at those steps)}."""
    env = PaddockEnv(EnvConfig.from_paddockjs(trace["config"]))
    result = env.reset()
    state = env.engine.state
    w = env.w
    ids = list(trace["cars"])
    slots = [env.engine.driver_ids.index(cid) for cid in ids]
    col = {name: i for i, name in enumerate(trace["stepFields"])}
    stability = trace["stabilityNames"]
    skip = trace["frameSkip"]
    vec_values = dict(zip(trace["vectors"]["steps"], trace["vectors"]["values"]))
    names = [e["name"] for e in env.engine.schemas["car-00"]]
    known = [i for i, n in enumerate(names) if n in KNOWN_VECTOR_DIFFERENCES.get(trace_id_of(trace), ())]
    known_at = {}           # step -> indices of the entries known to differ at that step
    for n, at in KNOWN_VECTOR_STEPS.get(trace_id_of(trace), {}).items():
        for k in at:
            known_at.setdefault(k, []).append(names.index(n))
    ends = {cid: end_step(trace, cid) for cid in ids}
    first_contact = {cid: min([t for t, kind in trace["events"][cid] if kind == "contact"], default=10 ** 9)
                     for cid in ids}
    drs = {cid: drs_open_after(trace, cid) for cid in ids}
    out = {cid: {"steps": 0, "chaotic": False, "position": 0.0, "heading": 0.0, "drs_mismatches": 0,
                 "vector": None, "vector_steps": 0, "vector_index": None, "vector_name": None, "vector_diff": None}
           for cid in ids}

    lap_progress = names.index("self.lapProgressRatio")

    def compare_vector(step, agree):
        if step not in vec_values or not agree or any(step > ends[cid] for cid in ids):
            return
        ours = np.asarray(result["observation"]["car-00"]["vector"], dtype=np.float64)
        ref = np.asarray(vec_values[step], dtype=np.float64)
        assert ours.shape == ref.shape
        diff = np.abs(ours - ref)
        # the lap progress wraps at the line: 0.9999 and 0.0001 are 2e-4 apart (PaddockJS's nearest sample
        # is sample 0 a little before our projection crosses the line)
        diff[lap_progress] = min(diff[lap_progress], 1.0 - diff[lap_progress])
        diff[known] = 0.0
        diff[known_at.get(step, [])] = 0.0
        r = out["car-00"]
        if r["vector"] is None or diff.max() > r["vector"]:
            r["vector"] = float(diff.max())
            r["vector_index"] = int(diff.argmax())
            r["vector_name"] = names[r["vector_index"]]
        r["vector_diff"] = diff if r["vector_diff"] is None else np.maximum(r["vector_diff"], diff)
        r["vector_steps"] += 1

    reset_agree = True
    for c, cid in zip(slots, ids):
        ref = trace["cars"][cid]["reset"]
        d = math.hypot(state.cars_f[w, c, L.F_X] - ref[col["x"]], state.cars_f[w, c, L.F_Y] - ref[col["y"]])
        reset_agree = reset_agree and d <= POSITION_TOL
    compare_vector(0, reset_agree)
    for step, row in enumerate(trace["actions"]):
        if all(step >= ends[cid] for cid in ids):
            break
        running = env.engine.running_mask()[w]
        actions = {cid: {"steering": a[0], "throttle": a[1], "brake": a[2]}
                   for cid, a in zip(ids, row) if running[env.controlled.index(cid)]}
        if step == 0 and "pitIntent" in trace:      # the pit-entry trace: the first step asks for a stop
            for a in actions.values():
                a["pit_intent"] = trace["pitIntent"]
        if not actions:
            break
        result = env.step(actions)
        agree_all = True
        for c, cid in zip(slots, ids):
            if step >= ends[cid]:
                continue
            ref = trace["steps"][cid][step]
            r = out[cid]
            spin = stability[int(ref[col["stability"]])] == "spin-risk" or abs(ref[col["slipAngle"]]) > 0.42
            r["chaotic"] = r["chaotic"] or spin or first_contact[cid] < (step + 1) * skip
            d_pos = math.hypot(state.cars_f[w, c, L.F_X] - ref[col["x"]], state.cars_f[w, c, L.F_Y] - ref[col["y"]])
            d_head = abs(math.remainder(state.cars_f[w, c, L.F_HEADING] - ref[col["heading"]], 2 * math.pi))
            r["position"] = max(r["position"], d_pos)
            r["heading"] = max(r["heading"], d_head)
            r["drs_mismatches"] += int(bool(state.cars_i[w, c, L.I_DRS_ACTIVE]) != drs[cid][step])
            r["steps"] = step + 1
            agree_all = agree_all and d_pos <= POSITION_TOL
        compare_vector(step + 1, agree_all)
    env.close()
    return out


@pytest.mark.parametrize("path", TRACE_FILES, ids=trace_id)
def test_environment_follows_paddockjs(path):
    """Poses within the issue's tolerances; car-00's vector within 1e-3 of scale at every step where
    every car's position agrees (but ``KNOWN_VECTOR_DIFFERENCES`` and ``KNOWN_VECTOR_STEPS``)."""
    trace = load_trace(path)
    for cid, r in run(trace).items():
        assert r["steps"] >= 20, (cid, r)
        assert r["drs_mismatches"] == 0, (cid, r)
        if cid == "car-00":
            assert r["vector_steps"] >= 20, r
            assert r["vector"] <= VECTOR_TOL, (r["vector"], r["vector_index"])
        if r["chaotic"]:
            assert r["position"] <= CHAOTIC_POSITION_TOL, (cid, r)
        else:
            assert r["position"] <= POSITION_TOL, (cid, r)
            assert r["heading"] <= HEADING_TOL, (cid, r)


def parity_table():
    """Markdown rows: scenario, mode, car, steps compared, spin or contact, largest position /
    heading / vector differences."""
    lines = ["| scenario | mode | car | steps compared | spin or contact | position (m) | heading (rad) "
             "| vector (of scale), entry, steps compared |", "|---|---|---|---|---|---|---|---|"]
    for path in TRACE_FILES:
        trace = load_trace(path)
        for cid, r in run(trace).items():
            vec = ("-" if r["vector"] is None
                   else f"{r['vector']:.2e}, {r['vector_name']}, at {r['vector_steps']}")
            profile = trace["config"]["observation"].get("profile")
            tags = [t for t in (profile, trace.get("shippedTrack")) if t]
            scenario = trace["scenario"] + (f" ({', '.join(tags)})" if tags else "")
            lines.append(f"| {scenario} | {trace['physicsMode']} | {cid} | {r['steps']} | "
                         f"{'yes' if r['chaotic'] else 'no'} | {r['position']:.2e} | {r['heading']:.2e} | {vec} |")
    return "\n".join(lines)


if __name__ == "__main__":
    print(parity_table())
