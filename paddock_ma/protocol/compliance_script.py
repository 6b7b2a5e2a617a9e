"""The compliance suite's script: one deterministic list of request lines for an environment.

``compliance_script(action_spec, num_worlds, seed)``: a handshake, the specs, requests before the first
reset, seeded resets, 200+ requests with steps of pseudo-random actions, PaddockJS-shaped
``resetDrivers``, ``getObservation``, ``getState`` in each output (and its alias), ``snapshot``/``restore``
(through the placeholders ``SNAPSHOT_REF``/``TAMPERED_SNAPSHOT_REF`` that ``compliance.run_script`` fills),
the batched forms when the worker hosts several worlds, ended episodes, and malformed or invalid requests
mixed in. ``paddock_ma.protocol.compliance`` runs it and compares the replies.
"""

from __future__ import annotations

import base64
from typing import Sequence

import numpy as np

from ..value_rules import check_integer
from .codec import F32_ENCODING, encode, pack_f32
from .compliance_refusals import bad_requests

# Placeholders of run_script: a JSON string value equal to one of these is replaced before sending.
SNAPSHOT_REF = "@@paddock-ma/compliance:latest-snapshot@@"
TAMPERED_SNAPSHOT_REF = "@@paddock-ma/compliance:latest-snapshot-tampered@@"

MIN_SCRIPT_LINES = 200
_MAIN_ITERATIONS = 120          # iterations of the main stepping loop (each one step, some more)
_REPLAY_STEPS = 6               # steps between a snapshot and its restore, replayed after the restore
_SHORT_EPISODE = 3              # episode.maxSteps of the last section (drivers' episodes end)


# ------------------------------------------------------------------------------------------------
# The script
# ------------------------------------------------------------------------------------------------
class _Script:
    """Builds the request lines; numbers them with varied id forms (numbers, strings, null)."""

    def __init__(self, drivers: list, num_worlds: int, rng: np.random.Generator):
        self.drivers = drivers
        self.k = len(drivers)
        self.w = num_worlds
        self.rng = rng
        self.lines: list = []
        self.count = 0

    # -- ids and lines
    def next_id(self):
        """Mostly integers; every 10th a string, every 23rd absent (null reply id), every 31st a float."""
        self.count += 1
        n = self.count
        if n % 23 == 0:
            return _ABSENT
        if n % 10 == 0:
            return f"req-{n}"
        if n % 31 == 0:
            return n + 0.5
        return n

    def add(self, kind: str, mid=None, **fields) -> None:
        """A request of ``kind`` with ``fields`` (in order), numbered unless ``mid`` is given."""
        mid = self.next_id() if mid is None else mid
        message = {} if mid is _ABSENT else {"id": mid}
        message["type"] = kind
        message.update(fields)
        self.lines.append(encode(message))

    def raw(self, template: str) -> None:
        """A hand-written line; ``{id}`` in it becomes a numeric id (raw lines must be byte-exact)."""
        self.count += 1
        self.lines.append(template.replace("{id}", str(self.count)).encode("utf-8", "surrogatepass"))

    def raw_bytes(self, prefix: bytes, suffix: bytes = b"") -> None:
        """``prefix`` + the next numeric id + ``suffix``: for lines that are not UTF-8 text."""
        self.count += 1
        self.lines.append(prefix + str(self.count).encode() + suffix)

    # -- actions and placements
    def action(self) -> dict:
        """One driver's pseudo-random action (gentle steering, so the cars stay on the track)."""
        steering, throttle, brake = self.rng.uniform((-0.05, 0.0, 0.0), (0.05, 1.0, 0.25))
        return {"steering": round(float(steering), 4), "throttle": round(float(throttle), 4),
                "brake": round(float(brake), 4)}

    def actions(self, drivers=None) -> dict:
        return {d: self.action() for d in (self.drivers if drivers is None else drivers)}

    def action_array(self, n: int) -> np.ndarray:
        lo = np.array([-0.05, 0.0, 0.0])
        hi = np.array([0.05, 1.0, 0.25])
        return np.round(self.rng.uniform(lo, hi, size=(n, self.k, 3)), 4)

    def placement(self) -> dict:
        """A placement in PaddockJS's shape."""
        distance, offset, speed = self.rng.uniform((20.0, -1.5, 20.0), (900.0, 1.5, 140.0))
        return {"distanceMeters": round(float(distance), 2), "offsetMeters": round(float(offset), 2),
                "speedKph": round(float(speed), 1)}

    def some_drivers(self) -> list:
        n = int(self.rng.integers(1, self.k + 1))
        picked = sorted(self.rng.choice(self.k, size=n, replace=False).tolist())
        return [self.drivers[i] for i in picked]


class _Absent:
    def __repr__(self):
        return "<no id>"


_ABSENT = _Absent()


def compliance_script(action_spec: dict, num_worlds: int, seed: int = 0, *,
                      max_line_bytes: int | None = None) -> list:
    """The request lines (bytes, no newline) of the compliance run for one environment.

    action_spec: the ``getActionSpec`` reply of the worker, or its ``result`` (``controlledDrivers`` is
        read from it: the drivers the script sends actions and placements for).
    num_worlds: the worlds the worker hosts; with more than one the script also sends the batched forms
        (``envs: "all"`` and lists of worlds, ``encoding: "f32-base64"``) and one-world requests to other
        worlds (``env``).
    seed: seeds the resets and the numpy Generator of the actions and placements.
    max_line_bytes: when given, the worker's line cap: the script then also sends one line over it (to be
        refused with ``line_too_long``) and a normal request after it.

    Lines may hold the placeholders ``SNAPSHOT_REF``/``TAMPERED_SNAPSHOT_REF``: send them with
    ``run_script``. The same arguments always give the same bytes.
    """
    spec = action_spec.get("result", action_spec) if isinstance(action_spec, dict) else None
    drivers = list(spec.get("controlledDrivers") or []) if isinstance(spec, dict) else []
    if not drivers or not all(isinstance(d, str) for d in drivers):
        raise ValueError("action_spec: expected a getActionSpec reply (or its result) with a non-empty "
                         "controlledDrivers list of driver ids")
    check_integer(num_worlds, "num_worlds", low=1, error=ValueError)
    s = _Script(drivers, num_worlds, np.random.default_rng(seed))
    _handshake_and_unreset(s)
    _first_resets(s, seed)
    _main_loop(s)
    if max_line_bytes is not None:
        s.raw('{"id":{id},"type":"hello","client":"' + "x" * (max_line_bytes + 1) + '"}')
        s.add("getActionSpec")
    _ended_episodes(s, seed)
    _the_end(s)
    if len(s.lines) < MIN_SCRIPT_LINES:                 # a guard for later edits of the sections
        raise AssertionError(f"the compliance script has only {len(s.lines)} lines")
    return s.lines


def _first_resets(s: _Script, seed: int) -> None:
    """The first reset (and with several worlds, a batched one and one of the last world alone, packed)."""
    s.add("reset", options={"seed": seed + 1})
    if s.w > 1:
        s.add("reset", envs="all", options={"seed": seed + 2})
        s.add("reset", envs=[s.w - 1], options={"seed": seed + 3}, encoding=F32_ENCODING)


def _main_loop(s: _Script) -> None:
    """``_MAIN_ITERATIONS`` steps with, between them, a refusal every 3 steps (round after round, every one
    at least once by the end), getState, getObservation, resetDrivers, and one snapshot and replay."""
    w = s.w
    bad = bad_requests(s)
    bad_at = 0
    for i in range(_MAIN_ITERATIONS):
        _step(s, i)
        if i % 3 == 1:                                  # one malformed or invalid request every 3 steps
            bad[bad_at % len(bad)]()
            bad_at += 1
        if i % 11 == 5:
            _get_state(s, i // 11)
        if i % 13 == 7:
            s.add("getObservation", **({"env": i % w} if w > 1 else {}),
                  **({"encoding": F32_ENCODING} if i % 2 else {}))
        if i % 10 == 9:
            _reset_drivers(s, i // 10)
        if i == 60:
            _snapshot_and_replay(s)
    while bad_at < len(bad):                            # every bad request at least once
        bad[bad_at]()
        bad_at += 1


def _ended_episodes(s: _Script, seed: int) -> None:
    """Ended episodes: a short episode limit, steps past it, drivers reset one by one."""
    w, drivers = s.w, s.drivers
    d0 = drivers[0]
    reset_fields = {"envs": "all"} if w > 1 else {}
    s.add("reset", **reset_fields, options={"seed": seed + 4, "episode": {"maxSteps": _SHORT_EPISODE}})
    for _ in range(_SHORT_EPISODE):
        s.add("step", actions=s.actions())
    s.add("step", actions=s.actions())                  # every driver of world 0 has ended: ignored
    if w > 1:
        s.add("step", envs="all", actions=[s.actions() for _ in range(w)])
    s.add("getState", stateOptions={"output": "minimal"})
    s.add("resetDrivers", placements={d0: s.placement()},
          resultOptions={"observationScope": "reset", "stateOutput": "none"})
    s.add("step", actions=s.actions([d0]))              # only the running driver acts
    if len(drivers) > 1:
        s.add("step", actions=s.actions(drivers[:2]))   # drivers[1] has ended: its action is ignored
        s.add("resetDrivers", placements={d: None for d in drivers[1:]},
              resultOptions={"observationScope": "all", "stateOutput": "minimal"})
    s.add("step", actions=s.actions())
    s.add("step", actions=s.actions())
    if w > 1:
        s.add("resetDrivers", envs=[w - 1], placements=[{d: s.placement() for d in drivers}])
        s.add("step", env=w - 1, actions=s.actions())


def _the_end(s: _Script) -> None:
    """State, every driver reset, destroy (the worlds stay), a last step and a handshake."""
    s.add("getState")
    s.add("resetDrivers", placements={d: s.placement() for d in s.drivers},
          resultOptions={"observationScope": "all", "stateOutput": "full"})
    s.add("destroy")
    s.add("getObservation")
    s.add("step", actions=s.actions())
    s.add("hello")


def _handshake_and_unreset(s: _Script) -> None:
    """hello (accepted and refused), the specs, and requests that must be refused before a reset."""
    s.add("hello", protocolVersion="1.0", client="paddock-ma compliance ✓")
    s.add("hello", protocolVersion="2.0")
    s.add("hello", protocolVersion="1")
    s.add("getActionSpec")
    s.add("getObservationSpec")
    s.add("step", actions=s.actions())
    s.add("getObservation")
    s.add("getState", stateOptions={"output": "full"})
    s.add("resetDrivers", placements={s.drivers[0]: s.placement()})
    s.add("snapshot")
    s.add("restore", snapshot=base64.b64encode(b'{"not":"a snapshot"}').decode("ascii"))
    s.add("destroy")


def _step(s: _Script, i: int) -> None:
    """One step; with several worlds, rotating over the one-world and batched forms."""
    w = s.w
    if w == 1:
        if i % 4 == 3:
            s.add("step", env=0, actions=s.actions(), encoding=F32_ENCODING)
        else:
            s.add("step", actions=s.actions())
        return
    form = i % 6
    if form == 0:
        s.add("step", env=i % w, actions=s.actions())
    elif form == 1:
        s.add("step", envs="all", actions=[s.actions() for _ in range(w)])
    elif form == 2:
        s.add("step", envs="all", actions=s.action_array(w).tolist())
    elif form == 3:
        s.add("step", envs="all", encoding=F32_ENCODING, actions=pack_f32(s.action_array(w)))
    elif form == 4:
        envs = [w - 1, 0] if w > 2 else [w - 1]
        s.add("step", envs=envs, actions=[s.actions() for _ in envs])
    else:
        envs = list(range(1, w))
        s.add("step", envs=envs, encoding=F32_ENCODING, actions=pack_f32(s.action_array(len(envs))))


def _get_state(s: _Script, n: int) -> None:
    """getState in each output, through stateOptions, the resultOptions alias, both, and the default."""
    forms = [
        {"stateOptions": {"output": "full"}},
        {"stateOptions": {"output": "minimal"}},
        {"stateOptions": {"output": "none"}},
        {"resultOptions": {"stateOutput": "minimal"}},
        {"resultOptions": {"stateOutput": "none"}},
        {"stateOptions": {"output": "none"}, "resultOptions": {"stateOutput": "full"}},
        {},
    ]
    extra = {"env": n % s.w} if s.w > 1 else {}
    s.add("getState", **forms[n % len(forms)], **extra)


def _reset_drivers(s: _Script, n: int) -> None:
    """resetDrivers in PaddockJS's message shape (every driver of the world every other time, so that the
    run keeps its drivers running; a subset otherwise); with several worlds, also the batched form."""
    picked = s.drivers if n % 2 == 0 else s.some_drivers()
    if s.w > 1 and n % 4 in (1, 2):
        if n % 4 == 2:
            s.add("resetDrivers", envs="all", placements=[{d: s.placement() for d in picked} for _ in range(s.w)],
                  **({"encoding": F32_ENCODING} if n % 3 == 0 else {}))
        else:
            s.add("resetDrivers", envs=[s.w - 1, 0], placements=[{d: s.placement() for d in picked}, {}])
        return
    scope = "reset" if n % 2 == 0 else "all"
    output = ("none", "minimal", "full")[n % 3]
    s.add("resetDrivers", placements={d: s.placement() for d in picked},
          resultOptions={"observationScope": scope, "stateOutput": output},
          **({"env": n % s.w} if s.w > 1 else {}))


def _snapshot_and_replay(s: _Script) -> None:
    """snapshot; a block of steps; restore; the same block again with the same ids (identical replies
    expected); a tampered restore (refused, nothing changes); restore again."""
    s.add("snapshot")
    block_start = len(s.lines)
    for _ in range(_REPLAY_STEPS):
        if s.w > 1:
            s.add("step", envs="all", actions=[s.actions() for _ in range(s.w)])
        else:
            s.add("step", actions=s.actions())
    s.add("getState", stateOptions={"output": "minimal"})
    block = s.lines[block_start:]
    s.add("restore", snapshot=SNAPSHOT_REF)
    s.lines.extend(block)
    s.add("restore", snapshot=TAMPERED_SNAPSHOT_REF)
    s.add("getState", stateOptions={"output": "minimal"})


def replay_spans(script: Sequence[bytes]) -> list:
    """``(before, after)`` slices of the script around each restore of ``SNAPSHOT_REF``: ``before`` are the
    requests between the snapshot and the restore, ``after`` the same requests sent again after it. A
    worker that restores faithfully gives byte-identical replies to both."""
    spans = []
    quoted = encode(SNAPSHOT_REF)
    for n, line in enumerate(script):
        if quoted in line:
            length = _REPLAY_STEPS + 1
            before, after = slice(n - length, n), slice(n + 1, n + 1 + length)
            if list(script[before]) != list(script[after]):
                raise ValueError(f"script line {n}: the requests around the restore are not the same")
            spans.append((before, after))
    return spans
