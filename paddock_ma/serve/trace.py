"""Traces: a run recorded as its config, seed and every action, with checksums to replay it exactly.

``record_trace(env_id, ...)`` runs a catalogued env's ``BatchEnv`` under a simple policy and writes a JSON
trace: the env id and overrides, worlds, seed, the versions that decide a trajectory (package version and
digests of ``paddock_ma/sim`` and ``paddock_ma/env``), every step's actions float32[T, W, K, 3] and
built-in-driver release mask bool[T, W, K] (base64), each world's state checksum after the reset and
after every step (uint64[T + 1, W], hex), and a snapshot every ``snapshot_every`` steps and at the end.

``replay_trace(path)`` refuses a trace recorded by other versions (naming both), rebuilds the env, resets
it with the trace's seed and steps it with the trace's actions, comparing every world's checksum after
every step. At the first difference it stops and names the step and world, then steps on to the next
recorded snapshot and names the first car and state field that differ there (``--snapshot-every 1``
makes that the divergent step itself). ``trace_frames`` replays a trace into viewer frames
(``TraceSource``: ``paddock-ma view --trace FILE``).
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import INVALID_CONFIG, PaddockError
from ..env.views.snapshot_diff import decode_array, first_difference
from ..value_rules import integer_problem

TRACE_FORMAT = "paddock-ma-trace"
TRACE_VERSION = 1
POLICIES = ("builtin", "throttle", "actor")


def simulation_versions() -> dict:
    """What decides a trajectory: the package version and digests of the simulation and env sources."""
    from .. import __version__
    from ..sources import files_digest, python_sources
    pkg = Path(__file__).resolve().parent.parent
    return {"package": __version__, **{room: files_digest(python_sources(pkg / room), pkg / room)[:16]
                                       for room in ("sim", "env")}}


def _b64(array: np.ndarray) -> str:
    return base64.b64encode(np.ascontiguousarray(array).tobytes()).decode("ascii")


def _engine(env_id: str, num_worlds: int, overrides: dict | None):
    from ..catalog import make
    return make(env_id, num_worlds=num_worlds, **(overrides or {}))


class _Policy:
    """(actions float32[W, K, 3], release bool[W, K]) for a step, from the latest observation vectors."""

    def __init__(self, kind: str, engine, actor: str | None):
        if kind not in POLICIES:
            raise PaddockError(INVALID_CONFIG, f"policy: got {kind!r}; expected one of {POLICIES}", "policy")
        w, k = engine.num_worlds, len(engine.controlled)
        self.kind, self.shape = kind, (w, k)
        if kind == "actor":
            from ..paddockjs.checkpoint import ActorPolicy, load_actor_file
            if not actor:
                raise PaddockError(INVALID_CONFIG, "actor: the actor policy needs --actor FILE", "actor")
            self.actor = ActorPolicy(load_actor_file(actor), w * k)

    def __call__(self, obs: np.ndarray):
        w, k = self.shape
        release = np.zeros((w, k), bool)
        actions = np.zeros((w, k, 3), np.float32)
        if self.kind == "builtin":
            release[:] = True
        elif self.kind == "throttle":
            actions[..., 1] = 1.0
        else:
            from ..paddockjs.checkpoint import vector_speed_offset
            flat = obs.reshape(w * k, -1)
            actions = self.actor.decide(flat, *vector_speed_offset(flat)).reshape(w, k, 3)
        return actions, release


def record_trace(path, env_id: str, num_worlds: int = 1, seed: int = 0, steps: int = 200, policy: str = "builtin",
                 actor: str | None = None, snapshot_every: int = 25, overrides: dict | None = None) -> dict:
    """Run and write a trace (see the module docstring); -> its header (no arrays)."""
    if steps < 1 or snapshot_every < 1:
        raise PaddockError(INVALID_CONFIG, "steps, snapshot_every: expected positive integers", "steps")
    engine = _engine(env_id, num_worlds, overrides)
    choose = _Policy(policy, engine, actor)
    result = engine.reset(seed)
    w, k = num_worlds, len(engine.controlled)
    actions = np.zeros((steps, w, k, 3), np.float32)
    release = np.zeros((steps, w, k), bool)
    checksums = np.zeros((steps + 1, w), np.uint64)
    checksums[0] = engine.checksums()
    snapshots = {"0": engine.snapshot()}
    for t in range(steps):
        actions[t], release[t] = choose(result.obs)
        result = engine.step(actions[t], release=release[t])
        checksums[t + 1] = engine.checksums()
        if (t + 1) % snapshot_every == 0 or t + 1 == steps:
            snapshots[str(t + 1)] = engine.snapshot()
    header = {"format": TRACE_FORMAT, "version": TRACE_VERSION, "versions": simulation_versions(), "env": env_id,
              "overrides": overrides or {}, "num_worlds": w, "controlled": list(engine.controlled), "seed": int(seed),
              "steps": steps, "policy": policy, "snapshot_every": snapshot_every}
    doc = dict(header, actions=_b64(actions), release=_b64(release.astype(np.uint8)),
               checksums=[[f"{int(c):016x}" for c in row] for row in checksums], snapshots=snapshots)
    Path(path).write_text(json.dumps(doc))
    return header


@dataclass
class Trace:
    """A loaded trace: its header and arrays."""
    header: dict
    actions: np.ndarray       # float32[T, W, K, 3]
    release: np.ndarray       # bool[T, W, K]
    checksums: np.ndarray     # uint64[T + 1, W]
    snapshots: dict           # step -> snapshot document


def load_trace(path, check_versions: bool = True) -> Trace:
    """A trace file, refused (PaddockError) if malformed or recorded by other simulation versions."""
    try:
        doc = json.loads(Path(path).read_text())
    except (OSError, ValueError) as exc:
        raise PaddockError(INVALID_CONFIG, f"trace: cannot read {path}: {exc}", "trace") from None
    if not isinstance(doc, dict) or doc.get("format") != TRACE_FORMAT or doc.get("version") != TRACE_VERSION:
        raise PaddockError(INVALID_CONFIG, f"trace: {path} is not a {TRACE_FORMAT} v{TRACE_VERSION} file", "trace")
    here = simulation_versions()
    if check_versions and doc.get("versions") != here:
        raise PaddockError(INVALID_CONFIG, f"trace.versions: {path} was recorded by {doc.get('versions')}, this is "
                           f"{here}: the simulation changed, so replaying would not reproduce it (record it again "
                           "with this version)", "versions")
    t, w, k = doc["steps"], doc["num_worlds"], len(doc["controlled"])
    header = {key: value for key, value in doc.items() if key not in ("actions", "release", "checksums", "snapshots")}
    return Trace(header, decode_array(doc["actions"], np.float32, (t, w, k, 3)),
                 decode_array(doc["release"], np.uint8, (t, w, k)).astype(bool),
                 np.array([[int(c, 16) for c in row] for row in doc["checksums"]], np.uint64), doc["snapshots"])


@dataclass
class Divergence:
    step: int
    world: int
    expected: str
    got: str
    detail: str

    def __str__(self) -> str:
        return (f"diverged at step {self.step}, world {self.world}: checksum {self.got}, recorded {self.expected}; "
                f"{self.detail}")


def replay_trace(path_or_trace, on_step=None) -> Divergence | None:
    """Replay a trace, checking every step's checksums; -> None if it reproduces, else the first
    ``Divergence``. ``on_step(engine, t)`` is called after the reset (t = 0) and every step."""
    trace = path_or_trace if isinstance(path_or_trace, Trace) else load_trace(path_or_trace)
    h = trace.header
    engine = _engine(h["env"], h["num_worlds"], h["overrides"])
    engine.reset(h["seed"])
    if on_step:
        on_step(engine, 0)
    for t in range(h["steps"] + 1):
        if t:
            engine.step(trace.actions[t - 1], release=trace.release[t - 1])
            if on_step:
                on_step(engine, t)
        got = engine.checksums()
        bad = np.flatnonzero(got != trace.checksums[t])
        if bad.size:
            w = int(bad[0])
            later = sorted(int(s) for s in trace.snapshots if int(s) >= t)
            if not later:
                detail = "no snapshot was recorded at or after it"
            else:
                for u in range(t, later[0]):
                    engine.step(trace.actions[u], release=trace.release[u])
                where = "" if later[0] == t else f" (at the next snapshot, step {later[0]})"
                detail = f"first difference{where}: " + first_difference(
                    engine.snapshot(), trace.snapshots[str(later[0])], engine.driver_ids, w)
            return Divergence(t, w, f"{int(trace.checksums[t, w]):016x}", f"{int(got[w]):016x}", detail)
    return None


class TraceSource:
    """A trace as a viewer source: replayed into frames of one world (``--world``)."""

    kind = "trace"

    def __init__(self, path, world: int = 0):
        self.path, self.world = Path(path), world
        self.trace = load_trace(path)
        problem = integer_problem(world, 0, self.trace.header["num_worlds"])
        if problem is not None:         # refused here, when the viewer opens it, not on every request
            raise PaddockError(INVALID_CONFIG, f"world: {problem} (the worlds of {self.path.name})", "world")
        self.name = f"{self.path.name} ({self.trace.header['env']}, seed {self.trace.header['seed']}, world {world})"

    def describe(self) -> dict:
        return {"kind": self.kind, "name": self.name}         # no path: a reply names nothing of this machine

    def document(self) -> dict:
        from ..env.views.frames import preview_frame, track_picture
        frames, track = [], {}

        def collect(engine, t):
            if not track:
                track.update(track_picture(engine))
            frames.append(preview_frame(engine, self.world, observe=True, meta={"traceStep": t}))
        divergence = replay_trace(self.trace, collect)
        return {"kind": self.kind, "name": self.name, "track": track, "frames": frames,
                "divergence": None if divergence is None else str(divergence)}
