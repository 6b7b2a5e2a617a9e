"""The worker protocol's compliance suite: one script of requests, byte-identical replies on every transport.

Like ``pettingzoo.test``, this ships in the package so that any transport of the protocol (the NDJSON
stdio worker, a Ray shard, a third-party server) can be checked against the reference, the in-process
``Dispatcher``::

    from paddock_ma.protocol.compliance import check_transport
    report = check_transport(my_worker.pipeline, "paddock/gp-v0", num_worlds=1)

A *transport* is a callable ``send_lines(lines: list[bytes]) -> list[bytes]``: it delivers the request
lines (no newline in them) in order to one worker and returns that worker's reply lines (no newline),
exactly one per request line. ``check_transport`` needs a **fresh** worker (never reset; the script
starts with requests that must be refused before the first reset) hosting ``num_worlds`` worlds of the
same environment, started with the default caps (``codec.Limits()``).

The script (``compliance_script``) is deterministic for a given action spec, world count and seed: a
handshake, the specs, requests before the first reset, seeded resets, 200+ requests in all with steps of
pseudo-random actions, PaddockJS-shaped ``resetDrivers``, ``getObservation``, ``getState`` in each output
(and through its ``resultOptions.stateOutput`` alias), ``snapshot``/``restore``, the batched forms when
the worker hosts several worlds, ended episodes, and malformed or invalid requests mixed in.

A ``restore`` needs the text of an earlier ``snapshot`` reply, which a script written in advance cannot
hold. The script therefore holds a placeholder, the JSON string ``SNAPSHOT_REF`` (or
``TAMPERED_SNAPSHOT_REF``), and ``run_script`` sends the script in segments: everything up to a line
with a placeholder is sent in one ``send_lines`` call (pipelined), then the placeholder is replaced by
the ``snapshot`` text of the latest successful ``snapshot`` reply of that same transport (or by a
tampered copy of it, ``tamper_snapshot``, which must be refused with ``snapshot_rejected``). The requests
between that snapshot and the restore are sent again after it, with the same ids: their replies must be
byte-identical to the first time (``replay_spans``).
"""

from __future__ import annotations

import base64
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np

from ..env.errors import ERROR_CODES
from .codec import F32_ENCODING, Limits, WireError, decode, encode, pack_f32

SendLines = Callable[[list], list]

# Placeholders of run_script: a JSON string value equal to one of these is replaced before sending.
SNAPSHOT_REF = "@@paddock-ma/compliance:latest-snapshot@@"
TAMPERED_SNAPSHOT_REF = "@@paddock-ma/compliance:latest-snapshot-tampered@@"
_REFS = {encode(SNAPSHOT_REF): False, encode(TAMPERED_SNAPSHOT_REF): True}   # quoted form -> tampered?

MIN_SCRIPT_LINES = 200
_MAIN_ITERATIONS = 120          # iterations of the main stepping loop (each one step, some more)
_REPLAY_STEPS = 6               # steps between a snapshot and its restore, replayed after the restore
_SHORT_EPISODE = 3              # episode.maxSteps of the last section (drivers' episodes end)
# Limits for reading replies: a reply is ours to check, not a request, so only strictness matters.
_REPLY_LIMITS = Limits(max_line_bytes=1 << 40, max_depth=10_000, max_key_chars=1 << 20,
                       max_string_chars=1 << 40, max_id_chars=1 << 20)


class ComplianceError(AssertionError):
    """A transport's replies differ from the reference's, or a reply breaks the protocol's rules."""


@dataclass
class ComplianceReport:
    """What ``check_transport`` ran: the script, both sides' replies and a summary.

    ``codes`` counts the error codes of the refused requests; ``ok`` counts the accepted ones;
    ``seconds`` is the wall time of the reference and of the transport under test.
    """
    env_id: str | None
    num_worlds: int
    script: list
    sent: list                  # the lines as sent (placeholders replaced), from the transport's run
    replies: list               # the transport's reply lines (byte-identical to the reference's)
    ok: int = 0
    codes: Counter = field(default_factory=Counter)
    internal: list = field(default_factory=list)    # (request, reply) pairs refused with code "internal"
    seconds: dict = field(default_factory=dict)

    @property
    def requests(self) -> int:
        return len(self.sent)

    def summary(self) -> str:
        codes = ", ".join(f"{code} {n}" for code, n in sorted(self.codes.items()))
        return (f"{self.env_id or 'config'} x{self.num_worlds}: {self.requests} requests, {self.ok} ok, "
                f"{sum(self.codes.values())} refused ({codes}); reference {self.seconds.get('reference', 0):.2f} s, "
                f"transport {self.seconds.get('transport', 0):.2f} s")


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
    if type(num_worlds) is not int or num_worlds < 1:
        raise ValueError(f"num_worlds: got {num_worlds!r}; expected a whole number >= 1")
    s = _Script(drivers, num_worlds, np.random.default_rng(seed))
    w = num_worlds
    d0 = drivers[0]
    _handshake_and_unreset(s)
    # -- first reset(s)
    s.add("reset", options={"seed": seed + 1})
    if w > 1:
        s.add("reset", envs="all", options={"seed": seed + 2})
        s.add("reset", envs=[w - 1], options={"seed": seed + 3}, encoding=F32_ENCODING)
    bad = _bad_requests(s)
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
    if max_line_bytes is not None:
        s.raw('{"id":{id},"type":"hello","client":"' + "x" * (max_line_bytes + 1) + '"}')
        s.add("getActionSpec")
    # -- ended episodes: a short episode limit, steps past it, drivers reset one by one
    reset_fields = {"envs": "all"} if w > 1 else {}
    s.add("reset", **reset_fields, options={"seed": seed + 4, "episode": {"maxSteps": _SHORT_EPISODE}})
    for _ in range(_SHORT_EPISODE):
        s.add("step", actions=s.actions())
    s.add("step", actions=s.actions())                  # every driver of world 0 has ended: episode_ended
    if w > 1:
        s.add("step", envs="all", actions=[s.actions() for _ in range(w)])
    s.add("getState", stateOptions={"output": "minimal"})
    s.add("resetDrivers", placements={d0: s.placement()},
          resultOptions={"observationScope": "reset", "stateOutput": "none"})
    s.add("step", actions=s.actions([d0]))              # only the running driver acts
    if len(drivers) > 1:
        s.add("step", actions=s.actions(drivers[:2]))   # drivers[1] has ended: episode_ended
        s.add("resetDrivers", placements={d: None for d in drivers[1:]},
              resultOptions={"observationScope": "all", "stateOutput": "minimal"})
    s.add("step", actions=s.actions())
    s.add("step", actions=s.actions())
    if w > 1:
        s.add("resetDrivers", envs=[w - 1], placements=[{d: s.placement() for d in drivers}])
        s.add("step", env=w - 1, actions=s.actions())
    # -- the end: state, every driver reset, destroy (the worlds stay), a last step and handshake
    s.add("getState")
    s.add("resetDrivers", placements={d: s.placement() for d in drivers},
          resultOptions={"observationScope": "all", "stateOutput": "full"})
    s.add("destroy")
    s.add("getObservation")
    s.add("step", actions=s.actions())
    s.add("hello")
    if len(s.lines) < MIN_SCRIPT_LINES:                 # a guard for later edits of the sections above
        raise AssertionError(f"the compliance script has only {len(s.lines)} lines")
    return s.lines


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


def _bad_requests(s: _Script) -> list:
    """Closures that each add one request the worker must refuse (some of them a few lines)."""
    d0 = s.drivers[0]
    w = s.w

    def missing_brake():
        acts = s.actions()
        del acts[d0]["brake"]
        s.add("step", actions=acts)

    def unknown_driver():
        acts = s.actions()
        acts["no-such-driver"] = s.action()
        s.add("step", actions=acts)

    def wrong_type_action():
        acts = s.actions()
        acts[d0]["steering"] = "0.5"
        s.add("step", actions=acts)

    def boolean_action():
        acts = s.actions()
        acts[d0]["throttle"] = True
        s.add("step", actions=acts)

    def typo_field():
        s.add("step", action=s.actions())

    def env_out_of_range():
        s.add("step", env=w, actions=s.actions())

    def env_negative():
        s.add("getObservation", env=-1)

    def env_boolean():
        s.add("getState", env=True)

    def envs_bad():
        s.add("step", envs=[], actions=[])
        s.add("step", envs=[w], actions=[s.actions()])
        s.add("step", envs=[0, 0], actions=[s.actions(), s.actions()])
        s.add("step", env=0, envs=[0], actions=[s.actions()])
        s.add("reset", envs="some", options={"seed": 1})

    def encoding_bad():
        s.add("step", actions=s.actions(), encoding="f16-base64")

    def seeds_bad():
        s.add("reset", options={"seed": "7"})
        s.add("reset", options={"seed": -1})
        s.add("reset", options={"seed": 2 ** 63})
        s.add("reset", options={"seed": 1.5})
        s.add("reset", options=[1, 2])

    def config_key_bad():
        s.add("reset", options={"seed": 3, "episode": {"maxSteps": 0}}, **({"envs": "all"} if w > 1 else {}))
        s.add("reset", options={"seed": 3, "noSuchKey": 1}, **({"envs": "all"} if w > 1 else {}))

    def extra_field():
        s.add("getActionSpec", verbose=True)
        s.add("hello", protocolVersion="1.0", token="x")

    def get_state_bad():
        s.add("getState", stateOptions={"output": "everything"})
        s.add("getState", stateOptions="full")
        s.add("getState", resultOptions={"observationScope": "all"})
        s.add("getState", resultOptions={"stateOutput": "maximal"})

    def reset_drivers_bad():
        s.add("resetDrivers", placements={"no-such-driver": s.placement()})
        place = s.placement()
        place["distanceMeters"] = "far"
        s.add("resetDrivers", placements={d0: place})
        s.add("resetDrivers", placements={d0: s.placement()}, resultOptions={"observationScope": "some"})
        s.add("resetDrivers", placements={d0: s.placement()}, resultOptions={"stateOutput": "maximal"})
        s.add("resetDrivers", placements={d0: s.placement()}, resultOptions={"colour": "red"})
        s.add("resetDrivers", placements={})
        s.add("resetDrivers")
        s.add("resetDrivers", placements=[s.placement()])

    def restore_bad():
        s.add("restore", snapshot=42)
        s.add("restore")
        s.add("restore", snapshot="not base64 at all!")
        s.add("restore", snapshot=base64.b64encode(b"[1,2,3]").decode("ascii"))

    def not_an_object():
        s.raw('[{"id":{id},"type":"hello"}]')
        s.raw('"hello {id}"')
        s.raw("null")
        s.raw("{id}")
        s.raw("{}")

    def unknown_type():
        s.add("launch")
        s.add("Step", actions=s.actions())
        s.add("step:result")
        s.raw('{"id":{id},"type":7}')
        s.raw('{"id":{id}}')
        s.raw('{"id":{id},"type":null}')

    def non_finite_text():
        s.raw('{"id":{id},"type":"step","actions":{"' + d0 + '":{"steering":NaN,"throttle":0,"brake":0}}}')
        s.raw('{"id":{id},"type":"step","actions":{"' + d0 + '":{"steering":0,"throttle":Infinity,"brake":0}}}')
        s.raw('{"id":{id},"type":"reset","options":{"seed":-Infinity}}')
        s.raw('{"id":{id},"type":"step","actions":{"' + d0 + '":{"steering":1e400,"throttle":0,"brake":0}}}')

    def duplicate_keys():
        s.raw('{"id":{id},"type":"getState","type":"getState"}')
        s.raw('{"id":{id},"id":{id},"type":"hello"}')
        s.raw('{"id":{id},"type":"step","actions":{"' + d0 + '":{"steering":0,"steering":0.1,"throttle":0,"brake":0}}}')

    def invalid_utf8():
        s.raw_bytes(b'{"id":', b',"type":"hello","client":"\xc3\x28"}')
        s.raw_bytes(b'{"id":', b',"type":"hello","client":"\x80abc"}')
        s.raw_bytes(b'{"id":', b',"type":"hello","client":"\xc0\xaf"}')
        s.raw_bytes(b'{"id":', b',"type":"hello","client":"\xed\xa0\x80"}')    # a surrogate in UTF-8 form
        s.raw_bytes(b'\xef\xbb\xbf{"id":', b',"type":"hello"}')                # a byte order mark

    def lone_surrogates():
        s.raw('{"id":{id},"type":"hello","client":"\\ud800"}')
        s.raw('{"id":{id},"type":"hello","client":"x\\udfff"}')
        s.raw('{"id":{id},"type":"hello","client":"\\udc00\\ud800"}')
        s.raw('{"id":{id},"type":"hello","\\ud83d":"key"}')
        s.raw('{"id":{id},"type":"hello","client":"\\ud83d\\ude00 paired is fine"}')      # accepted

    def huge_integers():
        s.raw('{"id":18446744073709551616,"type":"hello"}')
        s.raw('{"id":{id},"type":"reset","options":{"seed":' + "9" * 40 + "}}")
        s.raw('{"id":-9223372036854775809,"type":"hello"}')
        s.raw('{"id":18446744073709551615,"type":"getActionSpec"}')                     # accepted: fits 64 bits
        s.raw('{"id":-9223372036854775808,"type":"getActionSpec"}')                     # accepted

    def deep_nesting():
        s.raw('{"id":{id},"type":"hello","client":' + "[" * 40 + "]" * 40 + "}")
        s.raw('{"id":{id},"type":"step","actions":' + '{"a":' * 40 + "1" + "}" * 40 + "}")

    def broken_json():
        s.raw('{"id":{id},"type":"step"')
        s.raw('{"id":{id},"type":"hello"} trailing')
        s.raw('{"id":{id},"type":"hello"}{"id":0,"type":"hello"}')
        s.raw("{'id':{id},'type':'hello'}")
        s.raw('{"id":{id},"type":"hello",}')
        s.raw("\x00")

    def ids():
        s.raw('{"id":{"n":{id}},"type":"hello"}')
        s.raw('{"id":true,"type":"hello"}')
        s.raw('{"id":[{id}],"type":"hello"}')
        s.add("hello", mid="x" * 257)
        s.add("getActionSpec", mid="ÿ" * 256)                                       # accepted: at the cap
        s.add("getActionSpec", mid=-7)
        s.add("getActionSpec", mid=0)

    def framing_tolerance():                        # accepted: CR before the newline, spaces around
        s.raw('{"id":{id},"type":"getActionSpec"}\r')
        s.raw('  {"id":{id},"type":"getActionSpec"}\t')

    def batched_bad():
        s.add("step", envs="all", actions=[s.actions() for _ in range(w + 1)])
        s.add("step", envs="all", actions=s.action_array(w)[:, :, :2].tolist())
        s.add("step", envs="all", encoding=F32_ENCODING, actions=pack_f32(s.action_array(w)[:, :1]))
        s.add("step", envs="all", encoding=F32_ENCODING, actions={"f32": "***", "shape": [w, s.k, 3]})
        s.add("step", envs="all", actions=pack_f32(s.action_array(w)))          # packed, encoding json
        s.add("resetDrivers", envs="all", placements=[{} for _ in range(w)],
              resultOptions={"observationScope": "reset"})
        s.add("resetDrivers", envs="all", placements={s.drivers[0]: s.placement()})
        s.add("reset", env=1, options={"seed": 5, "episode": {"maxSteps": 50}})   # config keys need envs

    closures = [missing_brake, unknown_type, non_finite_text, unknown_driver, duplicate_keys, wrong_type_action,
                invalid_utf8, env_out_of_range, lone_surrogates, typo_field, huge_integers, env_negative,
                deep_nesting, boolean_action, broken_json, env_boolean, envs_bad, ids, encoding_bad, seeds_bad,
                config_key_bad, extra_field, get_state_bad, reset_drivers_bad, restore_bad, not_an_object,
                framing_tolerance]
    if w > 1:
        closures.append(batched_bad)
    return closures


# ------------------------------------------------------------------------------------------------
# Running a script and checking replies
# ------------------------------------------------------------------------------------------------
def dispatcher_transport(dispatcher) -> SendLines:
    """``send_lines`` of an in-process dispatcher (``messages.Dispatcher``): the reference transport."""
    def send_lines(lines):
        return [dispatcher.handle_line(line) for line in lines]
    return send_lines


def tamper_snapshot(text: str) -> str:
    """``text`` changed so that it is still well-formed but no longer the snapshot taken (deterministic).

    A snapshot reply's text is base64 of a JSON document: one letter or digit of that document near its
    middle is changed (``A``<->``B``, other characters to ``A``) and the document re-encoded, so the
    worker must notice the change from the snapshot's own checks (``snapshot_rejected``), not from its
    framing. Text that is not base64 gets its middle character changed instead.
    """
    try:
        doc = bytearray(base64.b64decode(text, validate=True))
    except ValueError:
        doc = None
    if doc:
        middle = len(doc) // 2
        for i in list(range(middle, len(doc))) + list(range(middle - 1, -1, -1)):
            if chr(doc[i]).isalnum() and doc[i] < 128:
                doc[i] = ord("B") if doc[i] == ord("A") else ord("A")
                return base64.b64encode(bytes(doc)).decode("ascii")
    i = len(text) // 2
    return text[:i] + ("B" if text[i:i + 1] == "A" else "A") + text[i + 1:]


def run_script(send_lines: SendLines, script: Sequence[bytes]) -> list:
    """Send ``script`` through ``send_lines`` and return the reply lines, one per request line.

    Lines are sent in segments that end before each line holding a snapshot placeholder (each segment
    pipelined in one call); the placeholder is replaced by the latest ``snapshot`` reply's text of this
    run (``TAMPERED_SNAPSHOT_REF``: that text, tampered). The lines as sent are available through
    ``run_script_sent``; this function returns only the replies.
    """
    return run_script_sent(send_lines, script)[1]


def run_script_sent(send_lines: SendLines, script: Sequence[bytes]) -> tuple:
    """``(lines as sent, replies)`` of ``run_script``."""
    sent: list = []
    replies: list = []
    pending: list = []
    latest = None                                   # text of the latest successful snapshot reply

    def flush():
        nonlocal latest
        if not pending:
            return
        got = list(send_lines(list(pending)))
        if len(got) != len(pending):
            raise ComplianceError(f"the transport returned {len(got)} replies to {len(pending)} request lines "
                                  f"(requests {len(sent)}..{len(sent) + len(pending) - 1} of the script)")
        for reply in got:
            text = _snapshot_text(reply)
            if text is not None:
                latest = text
        sent.extend(pending)
        replies.extend(got)
        pending.clear()

    for n, line in enumerate(script):
        line = bytes(line)
        if b"\n" in line:
            raise ValueError(f"script line {n} holds a newline; a request line must be one NDJSON line")
        refs = [(quoted, tampered) for quoted, tampered in _REFS.items() if quoted in line]
        if refs:
            flush()
            if latest is None:
                raise ComplianceError(f"script line {n} restores a snapshot, but no snapshot reply came before it")
            for quoted, tampered in refs:
                line = line.replace(quoted, encode(tamper_snapshot(latest) if tampered else latest))
        pending.append(line)
    flush()
    return sent, replies


def _snapshot_text(reply: bytes):
    if b'"type":"snapshot:result"' not in reply:
        return None
    try:
        value = decode(reply, _REPLY_LIMITS)
    except WireError:
        return None
    if isinstance(value, dict) and value.get("ok") is True and value.get("type") == "snapshot:result":
        text = (value.get("result") or {}).get("snapshot")
        return text if isinstance(text, str) else None
    return None


def expected_reply_id(line: bytes, limits: Limits = Limits()):
    """The id a reply to ``line`` must carry: the request's id when the line is a JSON object whose id is
    a number, a string within ``limits.max_id_chars`` or null; null otherwise (bad JSON, a bad id)."""
    try:
        value = decode(line, limits)
    except WireError:
        return None
    if not isinstance(value, dict):
        return None
    mid = value.get("id")
    if type(mid) in (int, float) or (type(mid) is str and len(mid) <= limits.max_id_chars):
        return mid
    return None


def reply_problems(lines: Sequence[bytes], replies: Sequence[bytes], limits: Limits = Limits()) -> list:
    """The protocol-rule violations of ``replies`` to ``lines`` as messages (empty when all is well).

    Rules: one reply per line; each reply is one strict JSON object (no NaN/Infinity, no duplicate keys)
    ``{"id", "ok", "type", ...}`` whose id is the request's (``expected_reply_id``, same JSON type); an
    accepted reply has type ``<request type>:result`` and a ``result``; a refused one has type ``error``,
    an ``error`` message string, a ``code`` from the closed set ``ERROR_CODES`` and, if any, a string
    ``field``.
    """
    problems = []
    if len(lines) != len(replies):
        problems.append(f"{len(replies)} replies to {len(lines)} requests")
    for n, (line, reply) in enumerate(zip(lines, replies)):
        where = f"request {n} {_clip(line)}"
        try:
            value = decode(reply, _REPLY_LIMITS)
        except WireError as exc:
            problems.append(f"{where}: the reply is not strict JSON ({exc.message}): {_clip(reply)}")
            continue
        if not isinstance(value, dict) or not {"id", "ok", "type"} <= set(value):
            problems.append(f"{where}: the reply is not an object with id, ok and type: {_clip(reply)}")
            continue
        want = expected_reply_id(line, limits)
        got = value["id"]
        if type(got) is not type(want) or got != want:
            problems.append(f"{where}: reply id {got!r}, expected {want!r}")
        if value["ok"] is True:
            request = decode(line, limits)
            if value["type"] != f"{request.get('type')}:result" or "result" not in value:
                problems.append(f"{where}: an accepted reply of type {value['type']!r} (or without result)")
        elif value["ok"] is False:
            if value["type"] != "error" or not isinstance(value.get("error"), str):
                problems.append(f"{where}: a refusal without type 'error' and an error message: {_clip(reply)}")
            if value.get("code") not in ERROR_CODES:
                problems.append(f"{where}: error code {value.get('code')!r} is not in ERROR_CODES")
            if "field" in value and not isinstance(value["field"], str):
                problems.append(f"{where}: field {value['field']!r} is not a string")
        else:
            problems.append(f"{where}: ok is {value['ok']!r}, not a boolean")
    return problems


def first_difference(lines: Sequence[bytes], expected: Sequence[bytes], got: Sequence[bytes]) -> str | None:
    """A description of the first request whose replies differ (both shown around the first differing
    byte), or None when the two reply lists are byte-identical."""
    for n, (want, have) in enumerate(zip(expected, got)):
        if want != have:
            at = next((i for i, (a, b) in enumerate(zip(want, have)) if a != b), min(len(want), len(have)))
            return (f"request {n} {_clip(lines[n] if n < len(lines) else b'?')} got different replies "
                    f"(first difference at byte {at}):\n  reference: {_clip(want, at)}\n  transport: "
                    f"{_clip(have, at)}")
    if len(expected) != len(got):
        return f"{len(expected)} reference replies but {len(got)} from the transport"
    return None


def check_transport(send_lines: SendLines, config_or_env_id, num_worlds: int = 1, *, seed: int = 0,
                    limits: Limits = Limits(), oversized_line: bool = True,
                    allow_internal: bool = False) -> ComplianceReport:
    """Run the compliance script against a fresh in-process ``Dispatcher`` and against ``send_lines``.

    config_or_env_id: a catalogued env id (``"paddock/gp-v0"``), an ``EnvConfig`` or a config dict: the
        environment the transport's worker hosts (an env id is also the ``envId`` hello names).
    send_lines: the transport (see the module docstring): a fresh worker of ``num_worlds`` worlds whose
        caps are ``limits`` (the default caps unless the worker was started with others).
    oversized_line: also send a line over ``limits.max_line_bytes`` (see ``compliance_script``); pass
        False for a transport that cannot carry a line of that size.
    allow_internal: accept replies with the code ``internal`` (a bug of the worker by definition); they
        are listed in the report's ``internal`` either way.

    Raises ``ComplianceError`` naming the first request whose replies differ (and both replies), the
    protocol rules a reply breaks (``reply_problems``), or the requests answered with ``internal``;
    returns a ``ComplianceReport`` otherwise.
    """
    from .messages import Dispatcher

    if isinstance(config_or_env_id, str):
        from ..catalog import env_config
        env_id, config = config_or_env_id, env_config(config_or_env_id)
    else:
        env_id, config = None, config_or_env_id
    reference = Dispatcher(config, num_worlds=num_worlds, env_id=env_id, limits=limits)
    spec = decode(reference.handle_line(encode({"id": 0, "type": "getActionSpec"})), _REPLY_LIMITS)  # stateless
    script = compliance_script(spec, num_worlds, seed,
                               max_line_bytes=limits.max_line_bytes if oversized_line else None)
    started = time.perf_counter()
    ref_sent, expected = run_script_sent(dispatcher_transport(reference), script)
    middle = time.perf_counter()
    sent, got = run_script_sent(send_lines, script)
    ended = time.perf_counter()
    problems = reply_problems(ref_sent, expected, limits)
    if problems:
        raise ComplianceError("the reference dispatcher breaks the protocol's rules:\n  " + "\n  ".join(problems[:10]))
    difference = first_difference(sent, expected, got)
    if difference is None and sent != ref_sent:
        difference = first_difference(ref_sent, ref_sent, sent)
        difference = f"the restored snapshots differ: {difference}"
    if difference is not None:
        raise ComplianceError(difference)
    for before, after in replay_spans(script):
        for n, (first, again) in enumerate(zip(got[before], got[after])):
            if first != again:
                at = before.start + n
                raise ComplianceError(f"request {after.start + n} {_clip(sent[after.start + n])}, sent again after "
                                      f"restoring the snapshot taken before request {at}, got a different reply:"
                                      f"\n  before: {_clip(first)}\n  after:  {_clip(again)}")
    report = ComplianceReport(env_id, num_worlds, script, sent, got,
                              seconds={"reference": middle - started, "transport": ended - middle})
    for reply in got:
        value = decode(reply, _REPLY_LIMITS)
        if value["ok"]:
            report.ok += 1
        else:
            report.codes[value["code"]] += 1
    report.internal = [(line, reply) for line, reply in zip(sent, got) if b'"code":"internal"' in reply
                       and decode(reply, _REPLY_LIMITS).get("code") == "internal"]
    if report.internal and not allow_internal:
        shown = "\n  ".join(f"{_clip(line)} -> {_clip(reply)}" for line, reply in report.internal[:5])
        raise ComplianceError(f"{len(report.internal)} requests were answered with code internal (a bug of the "
                              f"worker), e.g.:\n  {shown}")
    return report


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


def _clip(data: bytes, at: int = 0, width: int = 160) -> str:
    """``data`` shown around byte ``at`` (at most ``width`` bytes), as escaped text."""
    start = max(0, at - width // 2)
    shown = bytes(data[start:start + width])
    return ("..." if start else "") + repr(shown)[1:] + ("..." if start + width < len(data) else "")
