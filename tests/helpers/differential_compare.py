"""The differential tester's comparison (``tools/paddockjs/differential.py``, ``tests/paddockjs/
test_differential_fixtures.py``): a scenario run in ``PaddockEnv`` with the actions PaddockJS was sent, its
state after reset and every step compared with what PaddockJS recorded (``tools/paddockjs/differential.mjs``'s
answer, or a fixture's subset of it).

Per step and car: pose, velocity, speed, yaw rate, steering angle, accelerations, grip usage, slip angle
(``POSE_FIELDS``, within ``TOLERANCES``); wheel surfaces, lap, race order, destruction, finish, pit status,
DRS (``EXACT_FIELDS``, equal); per controlled driver its episode flags and end reason, and its observation
vector entry by entry (within ``VECTOR_TOL``: the vector holds scaled values). Cars no policy controls are
PaddockJS's built-in driver there and ours here (a deliberate difference, docs/paddockjs-compatibility.md):
they are not compared, and a scenario where one of them is seen or met is tallied apart (``ai-cars``).
"""

from __future__ import annotations

import math

import numpy as np

from paddock_ma.env.config.root import EnvConfig
from paddock_ma.env.environment import PaddockEnv
from paddock_ma.sim.core import layout as L

# first-divergence thresholds (tighter than the issue's, so the report points at the first cause)
TOLERANCES = {"x": 1e-3, "y": 1e-3, "heading": 1e-4, "vx": 1e-3, "vy": 1e-3, "speed": 1e-3, "yawRate": 1e-3,
              "steeringAngle": 1e-4, "lateralAcceleration": 4e-3 * L.GRAVITY,
              "longitudinalAcceleration": 5e-3 * L.GRAVITY, "gripUsage": 2e-3, "slipAngle": math.pi * 1e-3,
              "tireEnergy": 1e-3, "raceDistance": 2.5}
POSE_FIELDS = tuple(TOLERANCES)
EXACT_FIELDS = ("wheels", "lap", "rank", "destroyed", "finished", "pitStatus", "drsActive", "compound")
VECTOR_TOL = 1e-3
# the tolerances
POSITION_TOL, HEADING_TOL, CHAOTIC_POSITION_TOL = 0.01, 1e-3, 0.5
SURFACE_LETTER = {L.SURF_TRACK: "t", L.SURF_KERB: "k", L.SURF_GRAVEL: "g", L.SURF_GRASS: "s", L.SURF_BARRIER: "b",
                  L.SURF_PIT_ENTRY: "e", L.SURF_PIT_LANE: "l", L.SURF_PIT_EXIT: "x", L.SURF_PIT_BOX: "p"}
COMPOUND_LETTER = {L.COMPOUND_S: "S", L.COMPOUND_M: "M", L.COMPOUND_H: "H"}
WHEEL_SURFACES = (L.I_WHEEL_SURFACE_FL, L.I_WHEEL_SURFACE_FR, L.I_WHEEL_SURFACE_RL, L.I_WHEEL_SURFACE_RR)


def our_car_state(env: PaddockEnv, slot: int) -> dict:
    """Car ``slot``'s state in the Node half's field names (metres, seconds, radians)."""
    f = env.batch.state.cars_f[env.w, slot]
    i = env.batch.state.cars_i[env.w, slot]
    pit_stops = bool(env.batch.pit_stops_enabled)
    return {
        "x": f[L.F_X], "y": f[L.F_Y], "heading": f[L.F_HEADING], "vx": f[L.F_VX], "vy": f[L.F_VY],
        "speed": f[L.F_SPEED], "yawRate": f[L.F_YAW_RATE], "steeringAngle": f[L.F_STEER_ANGLE],
        "lateralAcceleration": f[L.F_LAT_ACC], "longitudinalAcceleration": f[L.F_LONG_ACC],
        "gripUsage": f[L.F_GRIP_USAGE], "slipAngle": f[L.F_SLIP_FRONT], "tireEnergy": f[L.F_TIRE_ENERGY],
        "raceDistance": f[L.F_PJS_RACE_DISTANCE], "lap": int(i[L.I_LAP]),
        "rank": int(i[L.I_RANK]) or None, "destroyed": int(i[L.I_DESTROYED]), "finished": int(i[L.I_FINISHED]),
        "pitStatus": L.PIT_STATUS_NAMES[int(i[L.I_PIT_STATUS])] if pit_stops else None,
        "wheels": "".join(SURFACE_LETTER.get(int(i[k]), "?") for k in WHEEL_SURFACES),
        "drsActive": int(i[L.I_DRS_ACTIVE]), "compound": COMPOUND_LETTER.get(int(i[L.I_COMPOUND]), "?"),
    }


def field_difference(name: str, ours, theirs):
    """(difference, diverged) of one field: the absolute difference (angles modulo 2 pi) against its
    tolerance, or inequality for the exact ones."""
    if name in EXACT_FIELDS:
        return (0.0 if ours == theirs else 1.0), ours != theirs
    if theirs is None:
        return 0.0, False
    d = float(ours) - float(theirs)
    if name in ("heading", "slipAngle"):
        d = math.remainder(d, 2 * math.pi)
    return abs(d), abs(d) > TOLERANCES[name]


class Comparison:
    """What one scenario's run found: ``first`` (the first divergence: {step, car, field, ours, theirs}),
    per controlled car the largest position and heading differences and whether contact or a spin made
    it chaotic, the largest vector difference where positions agree, ``ai_cars`` (built-in cars present)."""

    def __init__(self):
        self.first = None
        self.position = {}
        self.heading = {}
        self.chaotic = {}
        self.vector = 0.0
        self.vector_entry = None
        self.steps = 0
        self.error = None

    def note(self, step, car, field, ours, theirs, row=None):
        """Keep the first divergence (``row``: PaddockJS's state of that car then, for its cause)."""
        if self.first is None:
            self.first = {"step": step, "car": car, "field": field, "ours": _plain(ours), "theirs": _plain(theirs),
                          "row": row}

    def verdict(self) -> str:
        """``held`` (nothing parted beyond the first-divergence thresholds), ``within`` (the issue's
        tolerances hold: 1 cm / 1e-3 rad, 0.5 m with contact or spin, vectors 1e-3 where positions
        agree) or ``diverged``."""
        if self.error:
            return "error"
        if self.first is None:
            return "held"
        for car, pos in self.position.items():
            tol = CHAOTIC_POSITION_TOL if self.chaotic.get(car) else POSITION_TOL
            if pos > tol or (not self.chaotic.get(car) and self.heading.get(car, 0.0) > HEADING_TOL):
                return "diverged"
        return "within" if self.vector <= VECTOR_TOL else "diverged"


def _plain(v):
    if isinstance(v, (np.floating, float)):
        return float(v)
    if isinstance(v, (np.integer,)):
        return int(v)
    return v


def build_env(scenario: dict) -> PaddockEnv:
    return PaddockEnv(EnvConfig.from_paddockjs(scenario["config"]))


def chaos_from(answer: dict) -> dict:
    """Per controlled car, the first step (1-based; 0 the reset) after which PaddockJS's car had touched
    another car or was spinning (its ``spin-risk`` label or a body slip over 0.42 rad), else None: from then
    on the issue's chaotic tolerance (0.5 m) applies. A fixture holds it (``chaosFrom``)."""
    if "chaosFrom" in answer:
        return answer["chaosFrom"]
    col = {n: k for k, n in enumerate(answer["fields"])}
    out = {cid: None for cid in answer["controlled"]}
    for n, (rows, events) in enumerate(zip(answer["steps"], answer["events"])):
        for cid, row in zip(answer["cars"], rows):
            if cid not in out or out[cid] is not None:
                continue
            spin = row[col["stability"]] == "spin-risk" or abs(row[col["slipAngle"]] or 0.0) > 0.42
            if spin or any(e[1] == "contact" and cid in (e[2], e[3]) for e in events):
                out[cid] = n + 1
    return out


def compare_states(cmp: Comparison, env, slots, ids, controlled, theirs_rows, fields, step, chaos):
    """One step's (or the reset's, step 0) car states against PaddockJS's rows."""
    col = {n: k for k, n in enumerate(fields)}
    for cid, row in zip(ids, theirs_rows):
        if cid not in controlled:
            continue
        ours = our_car_state(env, slots[cid])
        cmp.chaotic[cid] = cmp.chaotic.get(cid, False) or (chaos[cid] is not None and step >= chaos[cid])
        if row[col["destroyed"]] and ours["destroyed"]:
            continue
        d_pos = math.hypot(ours["x"] - row[col["x"]], ours["y"] - row[col["y"]])
        cmp.position[cid] = max(cmp.position.get(cid, 0.0), d_pos)
        d_head = abs(math.remainder(ours["heading"] - row[col["heading"]], 2 * math.pi))
        cmp.heading[cid] = max(cmp.heading.get(cid, 0.0), d_head)
        for name in POSE_FIELDS + EXACT_FIELDS:
            if name not in col:
                continue
            _, bad = field_difference(name, ours[name], row[col[name]])
            if bad:
                cmp.note(step, cid, name, ours[name], row[col[name]], row=dict(zip(fields, row)))


def compare_vectors(cmp: Comparison, step, ours: dict, theirs: dict, agree: bool, names=None):
    """Each controlled driver's vector against PaddockJS's (both lists of floats or None)."""
    for cid, ref in theirs.items():
        mine = ours.get(cid)
        if ref is None or mine is None:
            if (ref is None) != (mine is None):
                cmp.note(step, cid, "vector", None if mine is None else "present", None if ref is None else "present")
            continue
        mine = np.asarray(mine, np.float64)
        ref = np.asarray([np.nan if v is None else v for v in ref], np.float64)
        if mine.shape != ref.shape:
            cmp.note(step, cid, "vector.length", mine.size, ref.size)
            continue
        diff = np.abs(mine - ref)
        diff[np.isnan(ref) & np.isnan(mine)] = 0.0
        if names:       # the lap progress wraps at the line: PaddockJS's nearest sample reads 0 a little before
            for k in (i for i, n in enumerate(names[cid]) if n.endswith("lapProgressRatio")):  # our projection does
                diff[k] = min(diff[k], 1.0 - diff[k])
        diff[np.isnan(diff)] = np.inf
        k = int(diff.argmax())
        if diff[k] > VECTOR_TOL:
            name = names[cid][k] if names else f"[{k}]"
            cmp.note(step, cid, f"vector.{name}", mine[k], ref[k])
        if agree and diff[k] > cmp.vector:
            cmp.vector = float(diff[k])
            cmp.vector_entry = names[cid][k] if names else k


def replay(scenario: dict, answer: dict) -> Comparison:
    """Run ``scenario`` in PaddockEnv with PaddockJS's sent actions (``answer``: differential.mjs's answer
    or a fixture holding a subset of its steps) and compare. ``answer['stepIndex']`` (fixtures) lists the
    steps (0-based) whose states it holds, ``answer['vectorSteps']`` the step counts (0: after reset) whose
    vectors it holds; without them every step is compared. Vectors count towards ``vector`` (the largest
    difference where positions agree) while every controlled car has stayed within 1 cm."""
    cmp = Comparison()
    env = build_env(scenario)
    try:
        result = env.reset()
        ids, controlled = answer["cars"], list(answer["controlled"])
        slots = {cid: env.batch.driver_ids.index(cid) for cid in ids}
        names = {cid: [e["name"] for e in env.batch.schemas[cid]] for cid in controlled}
        held = {k: n for n, k in enumerate(answer.get("stepIndex", range(len(answer["steps"]))))}
        vec_at = {k: n for n, k in enumerate(answer.get("vectorSteps", range(len(answer["actions"]) + 1)))}
        fields = answer["fields"]
        chaos = chaos_from(answer)
        compare_states(cmp, env, slots, ids, controlled, answer["reset"], fields, 0, chaos)
        _vectors(cmp, 0, result, answer, controlled, names, vec_at[0])
        resets = {r["step"]: r["placements"] for r in scenario.get("resets", [])}
        pit = scenario.get("pit", {})
        for step, row in enumerate(answer["actions"]):
            if step in resets:
                env.reset_drivers(_snake_placements(resets[step]))
            actions = {}
            for cid, a in zip(controlled, row):
                act = {"steering": a[0], "throttle": a[1], "brake": a[2]}
                ask = pit.get(str(step), {}).get(cid)
                if ask:
                    act["pit_intent"] = ask["pitIntent"]
                    if "pitCompound" in ask:
                        act["pit_compound"] = ask["pitCompound"]
                actions[cid] = act
            result = env.step(actions)
            cmp.steps = step + 1
            if step in held:
                n = held[step]
                compare_states(cmp, env, slots, ids, controlled, answer["steps"][n], fields, step + 1, chaos)
                _episodes(cmp, step + 1, result, answer["episodes"][n], controlled)
                if step + 1 in vec_at:
                    agree = all(cmp.position.get(c, 0.0) <= POSITION_TOL for c in controlled)
                    _vectors(cmp, step + 1, result, answer, controlled, names, vec_at[step + 1], agree)
    except Exception as exc:        # noqa: BLE001 - a refusal or crash is a finding, reported as such
        cmp.error = f"{type(exc).__name__}: {exc}"
    finally:
        env.close()
    return cmp


def _snake_placements(placements: dict) -> dict:
    keys = {"distanceMeters": "distance_meters", "offsetMeters": "offset_meters", "speedKph": "speed_kph",
            "headingErrorRadians": "heading_error_radians"}
    return {d: {keys[k]: v for k, v in p.items()} for d, p in placements.items()}


def _episodes(cmp, step, result, theirs, controlled):
    for cid, (term, trunc, reason) in zip(controlled, theirs):
        mine = result["info"]["drivers"][cid]
        ours = (int(mine["terminated"]), int(mine["truncated"]), mine["end_reason"])
        if ours != (term, trunc, reason):
            cmp.note(step, cid, "episode", list(ours), [term, trunc, reason])


def _vectors(cmp, step, result, answer, controlled, names, index, agree=True):
    theirs = {cid: answer["vectors"][cid][index] for cid in controlled if cid in answer["vectors"]}
    ours = {cid: result["observation"].get(cid, {}).get("vector") for cid in controlled}
    compare_vectors(cmp, step, ours, theirs, agree, names)


# interaction profiles' flags (PaddockJS 2.0.0), to tell whether a built-in car can touch a scenario
PROFILE_FLAGS = {"normal": {"collidable", "detectableByRays", "detectableAsNearby", "blocksPitLane", "affectsRaceOrder"},
                 "isolated-training": {"affectsRaceOrder"}, "batch-training": set(),
                 "phantom-race": {"detectableByRays", "detectableAsNearby", "affectsRaceOrder"},
                 "time-trial-overlay": set()}


def builtin_cars_matter(config: dict) -> bool:
    """Whether a car no policy controls (PaddockJS's built-in driver there, ours here) can be met, seen or
    ranked by anyone: then what it does is part of what is compared."""
    pi = config.get("participantInteractions", {})
    default = pi.get("defaultProfile", "normal")
    for d in config["drivers"]:
        if d["id"] in config["controlledDrivers"]:
            continue
        o = pi.get("drivers", {}).get(d["id"], {})
        flags = set(PROFILE_FLAGS.get(o.get("profile", default), PROFILE_FLAGS["normal"]))
        flags |= {k for k, v in o.items() if k != "profile" and v is True}
        flags -= {k for k, v in o.items() if k != "profile" and v is False}
        if flags:
            return True
    return False


def _row_at(answer, car, step):
    """PaddockJS's state of ``car`` after ``step`` steps (0: the reset) as a dict, if the answer holds it."""
    rows = answer["reset"] if step == 0 else None
    if step > 0:
        held = answer.get("stepIndex")
        k = step - 1 if held is None else (held.index(step - 1) if step - 1 in held else None)
        rows = None if k is None else answer["steps"][k]
    if rows is None or car not in answer["cars"]:
        return {}
    return dict(zip(answer["fields"], rows[answer["cars"].index(car)]))


def classify(cmp: Comparison, scenario: dict, answer: dict) -> str:
    """The tally's cause of a scenario: ``held``, ``within``, ``documented:<difference>`` (a deliberate or
    plain-bug difference of docs/paddockjs-compatibility.md parted it first), ``builtin-cars:<field>``
    (a built-in car that can be met, seen or ranked was there), ``diverged:<field>``, or an error."""
    if not answer.get("ok", True):
        return "paddockjs-error"
    verdict = cmp.verdict()
    if verdict in ("held", "within"):
        return verdict
    if verdict == "error":
        return "ours-error"
    f = cmp.first
    field = ".".join(f["field"].split(".")[:2]) if f["field"].startswith("vector.") else f["field"]
    step, car = f["step"], f["car"]
    row = f.get("row") or _row_at(answer, car, step)
    if row.get("compound") not in (None, "M"):
        return "documented:compound-grip"
    if scenario["config"].get("physicsMode") == "simulator" and step > 0 and car in answer["controlled"]:
        before = _row_at(answer, car, step - 1)
        brake = answer["actions"][step - 1][answer["controlled"].index(car)][2]
        if brake > 0 and min(abs(before.get("speed", 1.0)), abs(row.get("speed", 1.0))) < 0.5:
            return "documented:braked-at-rest"
    if builtin_cars_matter(scenario["config"]):
        return f"builtin-cars:{field}"
    return f"diverged:{field}"
