"""Vehicle-dynamics parity with PaddockJS 2.0.0: replay its golden traces through our dynamics.

The traces (``tests/fixtures/paddockjs-2.0.0/traces``, recorded by ``tools/paddockjs/record_traces.mjs``
from PaddockJS's own environment on its trackSeed 2601 track, and in ``traces/grand-prix/`` on the shipped
grand-prix track given to PaddockJS as a track object) give, per scenario and physics mode,
the car's parameters and state after reset, the actions of 300 env steps at frame skip 4, the four
wheel surfaces each physics tick's dynamics read, and the state after every step. The replay feeds
the same actions and wheel surfaces to ``integrate_car`` tick by tick (no Node, no PaddockJS, no
track: this isolates the vehicle model) and compares the state after each step. The pit-entry trace
(car-00 asks for a committed stop) also needs the track: after each tick our wheel classification gives
PaddockJS's race distance and our rules start the stop where PaddockJS's do
(``race.pit_route.start_pit_route``); from then our port of PaddockJS's pit route
(``race.pit_route.pit_route_car_tick``) moves the car instead of the dynamics.

Tolerances (issue 22): position within 1 cm and heading within 1e-3 rad where nothing chaotic
happens; within 0.5 m once the car has spun (PaddockJS's spin-risk label or a body slip over 0.42 rad)
or touched another car: those amplify rounding. Car-car contacts are resolved by our
``resolve_contacts`` after each tick, as in the step. The car's DRS is open (``I_DRS_ACTIVE``, which the
dynamics read) from the tick after PaddockJS opened it to the tick after it closed it (the trace's
``drs-on`` / ``drs-off`` events: the latch itself is the track's, ``sim.race.drs``, compared in
``tests/env/test_paddockjs_closed_loop.py``). A trace is compared up to the car's destruction (the
barrier is the track's, not part of this replay), and in simulator mode until the car comes to rest
(below 0.5 m/s: PaddockJS's braked car then creeps backwards, ours does not). Telemetry (lateral /
longitudinal g, grip usage, slip angle) within 1e-3 of the vector's scale for it, and traction-limited and the stability
label equal, at the steps where the positions agree within 1 cm.

``python tests/sim/test_paddockjs_parity.py`` prints the parity table of docs/paddockjs-compatibility.md.
"""

import gzip
import json
import math
from pathlib import Path

import numpy as np
import pytest

from paddock_ma.sim.core import layout as L
from paddock_ma.sim.race.collisions import resolve_contacts
from paddock_ma.sim.race.pit_route import pit_route_car_tick, start_pit_route
from paddock_ma.sim.race.pit_route_path import N_COLS, ROUTE_MAX
from paddock_ma.sim.race.pit_service import pit_route_active
from paddock_ma.sim.track.paddockjs_track import paddockjs_track
from paddock_ma.sim.vehicle.dynamics import integrate_car
from paddock_ma.sim.vehicle.wheels import classify_car

TRACES = Path(__file__).resolve().parents[1] / "fixtures" / "paddockjs-2.0.0" / "traces"
SHIPPED_TRACKS = ("grand-prix", "technical")      # the same scenarios on shipped tracks, traces/<track>/
TRACE_FILES = (sorted(TRACES.glob("*.json.gz"))
               + [p for track in SHIPPED_TRACKS for p in sorted((TRACES / track).glob("*.json.gz"))])
SURFACE_CODE = {"track": L.SURF_TRACK, "kerb": L.SURF_KERB, "gravel": L.SURF_GRAVEL, "grass": L.SURF_GRASS,
                "barrier": L.SURF_BARRIER, "pit-entry": L.SURF_PIT_ENTRY, "pit-lane": L.SURF_PIT_LANE,
                "pit-exit": L.SURF_PIT_EXIT, "pit-box": L.SURF_PIT_BOX}
STABILITY_CODE = {"stable": L.INSTAB_NONE, "understeer": L.INSTAB_UNDERSTEER, "oversteer": L.INSTAB_OVERSTEER,
                  "spin-risk": L.INSTAB_SPIN_RISK}
WHEELS = (L.I_WHEEL_SURFACE_FL, L.I_WHEEL_SURFACE_FR, L.I_WHEEL_SURFACE_RL, L.I_WHEEL_SURFACE_RR)
POSITION_TOL = 0.01       # m
HEADING_TOL = 1e-3        # rad
CHAOTIC_POSITION_TOL = 0.5  # m
VECTOR_TOL = 1e-3         # of the vector entry's scale
# The vector's scales for the telemetry entries (sensing/vectors.py): lateral g / 4, longitudinal g / 5,
# grip usage / 2, slip angle / pi.
TELEMETRY_SCALE = {"lateralAcceleration": 4.0 * L.GRAVITY, "longitudinalAcceleration": 5.0 * L.GRAVITY,
                   "gripUsage": 2.0, "slipAngle": math.pi}


def load_trace(path):
    with gzip.open(path, "rt") as f:
        return json.load(f)


def trace_id(path):
    name = path.name.removesuffix(".json.gz")
    return f"{name}.{path.parent.name}" if path.parent != TRACES else name


def replay(trace):
    """Run our dynamics over a trace. Returns {car id: float64[steps, 10]} with columns x, y, heading,
    speed, yaw rate, lateral acceleration, longitudinal acceleration, grip usage, slip angle, and
    the traction-limited flag, and {car id: int[steps]} stability codes."""
    ids = list(trace["cars"])
    fields = trace["stepFields"]
    col = {name: i for i, name in enumerate(fields)}
    letters = {letter: SURFACE_CODE[name] for name, letter in trace["surfaceLetters"].items()}
    n = len(ids)
    cars_f = np.zeros((1, n, L.NF))
    cars_i = np.zeros((1, n, L.NI), np.int32)
    params = np.zeros((1, n, L.NP))
    rules = np.zeros((1, L.NR))
    rules[0, L.R_PHYSICS_MODE] = L.PHYSICS_SIMULATOR if trace["physicsMode"] == "simulator" else L.PHYSICS_ARCADE
    rules[0, L.R_TIRE_DEGRADATION] = 1.0
    rules[0, L.R_RESTITUTION] = 0.18          # PaddockJS's default collisionRestitution
    flags = np.full((1, n), L.FLAG_COLLIDES, np.int32)
    cars_i[0, :, L.I_ACTIVE] = 1
    for c, cid in enumerate(ids):
        car = trace["cars"][cid]
        veh = car["vehicle"]
        assert veh["tire"] == "M"
        params[0, c, L.P_MASS] = veh["mass"]
        params[0, c, L.P_POWER] = veh["powerNewtons"]
        params[0, c, L.P_BRAKE] = veh["brakeNewtons"]
        params[0, c, L.P_DRAG_CD] = veh["dragCoefficient"]
        params[0, c, L.P_DOWNFORCE_CL] = veh["downforceCoefficient"]
        params[0, c, L.P_TIRE_GRIP] = veh["tireGrip"]
        params[0, c, L.P_TIRE_CARE] = veh["tireCare"]
        cars_i[0, c, L.I_COMPOUND] = L.COMPOUND_M
        s = car["reset"]
        for name, field in (("x", L.F_X), ("y", L.F_Y), ("heading", L.F_HEADING), ("vx", L.F_VX), ("vy", L.F_VY),
                            ("speed", L.F_SPEED), ("yawRate", L.F_YAW_RATE), ("steeringAngle", L.F_STEER_ANGLE),
                            ("tireEnergy", L.F_TIRE_ENERGY)):
            cars_f[0, c, field] = s[col[name]]
    pit = pit_setup(trace, cars_f, cars_i, rules, flags)
    dt = trace["dt"]
    skip = trace["frameSkip"]
    n_steps = len(trace["actions"])
    out = {cid: np.zeros((n_steps, 10)) for cid in ids}
    stab = {cid: np.zeros(n_steps, np.int64) for cid in ids}
    drs = {cid: {tick: kind == "drs-on" for tick, kind in trace["events"][cid] if kind in ("drs-on", "drs-off")}
           for cid in ids}
    for step, row in enumerate(trace["actions"]):
        for k in range(skip):
            tick = step * skip + k
            for c, cid in enumerate(ids):
                if tick - 1 in drs[cid]:       # PaddockJS's latch ran at the end of the previous tick
                    cars_i[0, c, L.I_DRS_ACTIVE] = int(drs[cid][tick - 1])
                for wheel, letter in zip(WHEELS, trace["surfaces"][cid][tick]):
                    cars_i[0, c, wheel] = letters[letter]
                steer, throttle, brake = map(float, row[c])    # one compiled specialisation (JSON has ints too)
                cars_f[0, c, L.F_PREV_X] = cars_f[0, c, L.F_X]
                cars_f[0, c, L.F_PREV_Y] = cars_f[0, c, L.F_Y]
                cars_f[0, c, L.F_PREV_HEADING] = cars_f[0, c, L.F_HEADING]
                if pit is not None and not pit_route_active(cars_i, 0, c):
                    start_pit_route(pit[0], cars_f, cars_i, flags, pit[1], rules, 0, c, n)
                if pit is not None and pit_route_active(cars_i, 0, c):
                    tr, world_i, buf = pit
                    pit_route_car_tick(tr, cars_f, cars_i, params, flags, world_i, rules, 0, c, n, buf, dt)
                else:
                    integrate_car(cars_f, cars_i, params, rules, 0, c, steer, throttle, brake, dt)
            resolve_contacts(cars_f, cars_i, flags, rules, 0, n, dt)
            if pit is not None:
                pit_rules(pit, cars_f, cars_i, rules, flags, n)
        for c, cid in enumerate(ids):
            f = cars_f[0, c]
            slip = f[L.F_SLIP_FRONT]
            out[cid][step] = (f[L.F_X], f[L.F_Y], f[L.F_HEADING], f[L.F_SPEED], f[L.F_YAW_RATE], f[L.F_LAT_ACC],
                              f[L.F_LONG_ACC], f[L.F_GRIP_USAGE], slip, cars_i[0, c, L.I_TRACTION_LIMITED])
            stab[cid][step] = cars_i[0, c, L.I_INSTABILITY]
    return out, stab


def pit_setup(trace, cars_f, cars_i, rules, flags):
    """A pit-entry trace (one with ``pit``, on a trackSeed track): its cars are policy cars with the
    trace's pit intent in box 0 (PaddockJS's first team), pit stops on as in its config (80 km/h, 2.8 s,
    no variability), PaddockJS's race distance from the placement. Returns (track, world_i, route
    scratch), or None for any other trace."""
    if "pit" not in trace:
        return None
    tr = paddockjs_track(trace["config"]["trackSeed"])
    world_i = np.zeros((1, L.NWI), np.int64)
    world_i[0, L.WI_PIT_LANE_OPEN] = 1
    world_i[0, L.WI_RACE_MODE] = L.MODE_GREEN
    rules[0, L.R_PIT_STOPS] = 1.0
    rules[0, L.R_TOTAL_LAPS] = trace["config"]["totalLaps"]
    rules[0, L.R_PIT_SPEED_LIMIT] = 80.0 * L.MPS_PER_KPH
    rules[0, L.R_PIT_STOP_SECONDS] = 2.8
    rules[0, L.R_PIT_MAX_CONCURRENT] = 3.0
    rules[0, L.R_PIT_MIN_GAP] = 20.0
    flags[:] |= L.FLAG_PIT_OCCUPIES
    placements = trace["config"]["scenario"]["placements"]
    for c, cid in enumerate(trace["cars"]):
        cars_i[0, c, L.I_MANUAL] = 1
        cars_i[0, c, L.I_PIT_INTENT] = trace["pitIntent"]
        cars_i[0, c, L.I_PIT_BOX] = 0
        cars_i[0, c, L.I_SEG_HINT] = -1
        cars_f[0, c, L.F_PJS_RACE_DISTANCE] = placements[cid]["distanceMeters"]
        cars_f[0, c, L.F_PJS_PROGRESS] = -1.0
        classify_car(tr, cars_f, cars_i, 0, c)
    return tr, world_i, np.zeros((ROUTE_MAX, N_COLS))


def pit_rules(pit, cars_f, cars_i, rules, flags, n):
    """After a tick of a pit-entry trace: PaddockJS's race distance from the nearest sample (our wheel
    classification; the surfaces it writes are overwritten by the trace's before the next tick). The next
    tick starts the stop where PaddockJS starts it (``race.pit_route.start_pit_route``)."""
    tr = pit[0]
    for c in range(n):
        classify_car(tr, cars_f, cars_i, 0, c)


REST_SPEED = 0.5   # m/s


def rest_step(trace, ref, col):
    """The first step after which PaddockJS's simulator-mode car is (nearly) at rest, or len(ref).
    From there PaddockJS's braked car creeps backwards and ours stays put (a deliberate difference,
    docs/paddockjs-compatibility.md), so the comparison ends there."""
    if trace["physicsMode"] != "simulator":
        return len(ref)
    slow = np.nonzero(ref[:, col["speed"]] < REST_SPEED)[0]
    return int(slow[0]) if len(slow) else len(ref)


def compare(trace):
    """Per car: the differences to PaddockJS over the comparable steps (up to its destruction).
    Returns {car id: dict} with 'steps' (compared), 'chaotic' (a spin or a contact happened before),
    'position', 'heading' (largest differences, m and rad), 'telemetry' (largest difference over the
    telemetry scale at steps whose positions agree within 1 cm), 'flags' (steps with a different
    traction-limited flag or stability label among those)."""
    ours, stab = replay(trace)
    col = {name: i for i, name in enumerate(trace["stepFields"])}
    names = trace["stabilityNames"]
    skip = trace["frameSkip"]
    result = {}
    for cid, rows in trace["steps"].items():
        ref = np.asarray(rows, dtype=np.float64)
        destroyed = min([tick for tick, kind in trace["events"][cid] if kind == "car-destroyed"], default=10 ** 9)
        contact = min([tick for tick, kind in trace["events"][cid] if kind == "contact"], default=10 ** 9)
        n = min(len(ref), destroyed // skip)         # steps that end before the destruction's tick
        n = min(n, rest_step(trace, ref, col))
        chaotic = False
        pos = head = tele = 0.0
        flags = 0
        for k in range(n):
            r = ref[k]
            spin = names[int(r[col["stability"]])] == "spin-risk" or abs(r[col["slipAngle"]]) > 0.42
            chaotic = chaotic or spin or contact < (k + 1) * skip
            d_pos = math.hypot(ours[cid][k, 0] - r[col["x"]], ours[cid][k, 1] - r[col["y"]])
            d_head = abs(math.remainder(ours[cid][k, 2] - r[col["heading"]], 2 * math.pi))
            pos = max(pos, d_pos)
            head = max(head, d_head)
            if d_pos <= POSITION_TOL:
                for j, name in ((5, "lateralAcceleration"), (6, "longitudinalAcceleration"), (7, "gripUsage"),
                                (8, "slipAngle")):
                    diff = ours[cid][k, j] - r[col[name]]
                    if name == "slipAngle":
                        diff = math.remainder(diff, 2 * math.pi)
                    tele = max(tele, abs(diff) / TELEMETRY_SCALE[name])
                ref_label = names[int(r[col["stability"]])]
                if (int(ours[cid][k, 9]) != int(r[col["tractionLimited"]])
                        or stab[cid][k] != STABILITY_CODE.get(ref_label, -1)):
                    flags += 1
        result[cid] = {"steps": n, "chaotic": chaotic, "position": pos, "heading": head, "telemetry": tele,
                       "flags": flags}
    return result


def test_traces_are_present():
    assert len(TRACE_FILES) >= 36, "run tools/paddockjs/record_traces.mjs (README: with and without TRACK_OBJECT)"


@pytest.mark.parametrize("path", TRACE_FILES, ids=trace_id)
def test_replay_follows_paddockjs(path):
    trace = load_trace(path)
    for cid, r in compare(trace).items():
        assert r["steps"] >= 20, (cid, r)
        if r["chaotic"]:
            assert r["position"] <= CHAOTIC_POSITION_TOL, (cid, r)
        else:
            assert r["position"] <= POSITION_TOL, (cid, r)
            assert r["heading"] <= HEADING_TOL, (cid, r)
        assert r["telemetry"] <= VECTOR_TOL, (cid, r)
        assert r["flags"] == 0, (cid, r)


def parity_table():
    """Markdown rows: scenario, mode, car, steps compared, chaotic, largest position / heading /
    telemetry differences."""
    lines = ["| scenario | mode | car | steps compared | spin or contact | position (m) | heading (rad) | telemetry (of scale) "
             "| flag mismatches |", "|---|---|---|---|---|---|---|---|---|"]
    for path in TRACE_FILES:
        trace = load_trace(path)
        for cid, r in compare(trace).items():
            scenario = trace["scenario"] + (f" ({trace['shippedTrack']})" if trace.get("shippedTrack") else "")
            lines.append(f"| {scenario} | {trace['physicsMode']} | {cid} | {r['steps']} | "
                         f"{'yes' if r['chaotic'] else 'no'} | {r['position']:.2e} | {r['heading']:.2e} | "
                         f"{r['telemetry']:.2e} | {r['flags']} |")
    return "\n".join(lines)


if __name__ == "__main__":
    print(parity_table())
