"""Property-based fuzzing of the worker protocol (Hypothesis): malformed requests change nothing.

Two properties over generated requests, sent to one in-process ``Dispatcher`` that was reset and stepped
(``paddock/oval-batch-v0``, 2 worlds, a 4 KiB line cap), and never accepted. ``PADDOCK_FUZZ_MESSAGES``
(default 1,000) is how many in all, half to each; the issue's full run is
``PADDOCK_FUZZ_MESSAGES=10000 pytest tests/protocol/test_fuzz.py -k refused``:

* ``test_malformed_lines_are_refused`` (half): request lines that are not one acceptable JSON value:
  NaN/Infinity tokens, numbers out of range, integers beyond 64 bits, nesting deeper than the cap,
  duplicate keys, lone UTF-16 surrogate escapes, invalid UTF-8 bytes, truncated lines, trailing garbage,
  lines over the cap. Reply: ``bad_json`` (``line_too_long`` over the cap), id null.
* ``test_invalid_requests_are_refused`` (half): well-formed JSON that the protocol must refuse: unknown
  or missing types, wrong field types, missing or extra fields (any id, echoed), world indices out of range, bad
  encodings, seeds, actions (a missing brake, an unknown driver, wrong types), placements, options,
  snapshots and protocol versions, and values that are not objects. Reply: a code of the closed set, never
  ``internal``, the request's id.

Each request gets exactly one reply line, ``ok`` false, a code from ``ERROR_CODES``, and leaves the
worker as it was: the engine's state checksums, the engine object and the worker's default seed.

``test_worker_survives_malformed_lines`` pipes a few thousand such lines into one ``paddock-ma serve``
worker: one error reply per line, byte-identical to the in-process dispatcher's, the same snapshot before
and after, a valid request still answered, exit 0 on EOF.

``EpisodeBookkeeping`` is a stateful test (``RuleBasedStateMachine``) of resets, steps, resetDrivers,
getState, snapshot/restore and bad requests against a model of the per-driver episode bookkeeping.
"""

from __future__ import annotations

import copy
import json
import os
import re

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, assume, given, note, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from paddock_ma.catalog import env_config
from paddock_ma.errors import ERROR_CODES
from paddock_ma.protocol.client import WorkerClient
from paddock_ma.protocol.codec import ENCODINGS, Limits, encode, pack_f32
from paddock_ma.protocol.compliance import dispatcher_transport, expected_reply_id
from paddock_ma.protocol.messages import MESSAGE_TYPES, Dispatcher
from paddock_ma.protocol.server import is_blank

pytestmark = pytest.mark.fuzz

ENV_ID = "paddock/oval-batch-v0"
WORLDS = 2
CAP = 4096
LIMITS = Limits(max_line_bytes=CAP)
DRIVERS = list(env_config(ENV_ID).controlled_drivers)
KNOWN_FIELDS = {
    "hello": {"protocolVersion", "client"},
    "reset": {"options", "env", "envs", "encoding"},
    "step": {"actions", "env", "envs", "encoding"},
    "resetDrivers": {"placements", "resultOptions", "env", "envs", "encoding"},
    "getObservation": {"env", "encoding"},
    "getState": {"stateOptions", "resultOptions", "env"},
    "restore": {"snapshot"},
}
ACTION_FIELDS = {"steering", "throttle", "brake", "pitIntent", "pitCompound", "pit_intent", "pit_compound"}
PLACEMENT_FIELDS = ("distanceMeters", "offsetMeters", "speedKph", "headingErrorRadians")
# what a message must not show: Python's own exception texts
PYTHON_INTERNALS = re.compile(r"Traceback|__init__\(\)|positional argument|keyword argument|has no attribute|"
                              r"NoneType|(Type|Key|Value|Attribute|Index)Error")
FUZZ_MESSAGES = int(os.environ.get("PADDOCK_FUZZ_MESSAGES", "1000"))     # both properties together
FUZZ = settings(deadline=None, database=None, print_blob=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                       HealthCheck.filter_too_much])

# ------------------------------------------------------------------------------------------------
# Strategies
# ------------------------------------------------------------------------------------------------
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-2**63, 2**64 - 1),
                    st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=12))
JSON_VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=4)
                           | st.dictionaries(st.text(max_size=8), inner, max_size=4), max_leaves=10)
NON_OBJECTS = JSON_VALUES.filter(lambda v: not isinstance(v, dict))
NOT_NULL_NOR_OBJECT = JSON_VALUES.filter(lambda v: v is not None and not isinstance(v, dict))
NOT_A_NUMBER = JSON_VALUES.filter(lambda v: type(v) not in (int, float))
IDS = st.one_of(st.integers(-2**63, 2**64 - 1), st.floats(allow_nan=False, allow_infinity=False),
                st.text(max_size=40), st.none())
# ids PaddockJS echoes and this worker once refused: booleans, lists, objects, long strings
ANY_IDS = st.one_of(IDS, st.booleans(), st.lists(SCALARS, max_size=3), st.dictionaries(st.text(max_size=5), SCALARS,
                    max_size=3), st.text(min_size=257, max_size=300))
UNIT = st.floats(0, 1)
ACTION = st.fixed_dictionaries({"steering": st.floats(-1, 1), "throttle": UNIT, "brake": UNIT})
ACTIONS = st.fixed_dictionaries({d: ACTION for d in DRIVERS})
PLACEMENT = st.fixed_dictionaries({"distanceMeters": st.floats(0, 1000)},
                                  optional={"offsetMeters": st.floats(-2, 2), "speedKph": st.floats(0, 150)})
PLACEMENTS = st.dictionaries(st.sampled_from(DRIVERS), st.one_of(st.none(), PLACEMENT), min_size=1, max_size=3)
# Placement values outside their ranges (PaddockJS's speed 0..330 km/h and heading error -pi..pi, |offset|
# <= 100 m, |distance| <= 1e6 m): every one a refusal naming the field
OUT_OF_RANGE = {
    "speedKph": st.one_of(st.floats(330.0, 1e308, exclude_min=True), st.floats(-1e308, 0.0, exclude_max=True)),
    "offsetMeters": st.one_of(st.floats(100.0, 1e308, exclude_min=True), st.floats(-1e308, -100.0, exclude_max=True)),
    "headingErrorRadians": st.one_of(st.floats(np.pi, 1e308, exclude_min=True),
                                     st.floats(-1e308, -np.pi, exclude_max=True)),
    "distanceMeters": st.one_of(st.floats(1e6, 1e308, exclude_min=True), st.floats(-1e308, -1e6, exclude_max=True)),
}
RESULT_OPTIONS = st.fixed_dictionaries({}, optional={"observationScope": st.sampled_from(["all", "reset"]),
                                                     "stateOutput": st.sampled_from(["full", "minimal", "none"])})
WORLD = st.integers(0, WORLDS - 1)
OUTPUTS = st.sampled_from(["full", "minimal", "none"])
BAD_WORLD = st.one_of(st.integers(-2**63, -1), st.integers(WORLDS, 2**64 - 1), NOT_A_NUMBER,
                      st.floats(allow_nan=False, allow_infinity=False))
BAD_ENVS = st.one_of(st.just([]), st.lists(st.integers(WORLDS, 2**63), min_size=1, max_size=3),
                     st.lists(st.integers(-2**63, -1), min_size=1, max_size=3),
                     WORLD.map(lambda w: [w, w]), JSON_VALUES.filter(lambda v: v != "all" and not isinstance(v, list)),
                     st.lists(NOT_A_NUMBER, min_size=1, max_size=3))
BAD_ENCODING = JSON_VALUES.filter(lambda v: v not in ENCODINGS)
BAD_SEED = st.one_of(st.integers(-2**63, -1), st.integers(2**63, 2**64 - 1), st.floats(allow_nan=False,
                     allow_infinity=False).filter(lambda f: f != int(f)), NOT_NULL_NOR_OBJECT.filter(
                     lambda v: type(v) is not int), st.dictionaries(st.text(max_size=4), SCALARS, max_size=2))


@st.composite
def valid_messages(draw, kind=None):
    """A request the worker would accept (the base that a mutation makes invalid)."""
    kind = draw(st.sampled_from(["hello", "getActionSpec", "getObservationSpec", "getObservation", "getState",
                                 "step", "resetDrivers", "reset", "snapshot", "destroy", "restore"])) \
        if kind is None else kind
    message = {"id": draw(IDS)} if draw(st.booleans()) else {}
    message["type"] = kind
    batched = draw(st.booleans())
    if kind == "hello":
        message.update(draw(st.fixed_dictionaries({}, optional={"protocolVersion": st.sampled_from(["1.0", "1.7"]),
                                                                 "client": JSON_VALUES})))
    elif kind == "getObservation":
        message.update(draw(st.fixed_dictionaries({}, optional={"env": WORLD, "encoding": st.sampled_from(ENCODINGS)})))
    elif kind == "getState":
        message.update(draw(st.fixed_dictionaries({}, optional={
            "env": WORLD, "stateOptions": st.fixed_dictionaries({"output": OUTPUTS}),
            "resultOptions": st.fixed_dictionaries({"stateOutput": OUTPUTS})})))
    elif kind == "step":
        if batched:
            message["envs"] = "all"
            message["actions"] = draw(st.lists(ACTIONS, min_size=WORLDS, max_size=WORLDS))
        else:
            message["actions"] = draw(ACTIONS)
            message.update(draw(st.fixed_dictionaries({}, optional={"env": WORLD})))
    elif kind == "resetDrivers":
        if batched:
            message["envs"] = "all"
            message["placements"] = draw(st.lists(PLACEMENTS, min_size=WORLDS, max_size=WORLDS))
        else:
            message["placements"] = draw(PLACEMENTS)
            message.update(draw(st.fixed_dictionaries({}, optional={"env": WORLD, "resultOptions": RESULT_OPTIONS})))
    elif kind == "reset":
        message["options"] = {"seed": draw(st.integers(0, 2**63 - 1))}
        if batched:
            message["envs"] = "all"
    elif kind == "restore":
        message["snapshot"] = "not yet valid"          # every mutation of it stays invalid: see below
    return message


def _drop(message, key):
    message.pop(key, None)
    return message


@st.composite
def invalid_messages(draw):
    """A JSON value that decodes (within the caps) but that the protocol must refuse, with how."""
    message = draw(valid_messages())
    kind = message["type"]
    how = draw(st.sampled_from(["type", "missing type", "extra field", "not an object", "field"]))
    if draw(st.booleans()):
        message["id"] = draw(ANY_IDS)        # any id is echoed; it never makes a request invalid
    if how == "field" and kind not in KNOWN_FIELDS and kind != "restore":
        how = "extra field"
    if how == "type":
        message["type"] = draw(st.one_of(st.text(max_size=20).filter(lambda t: t not in MESSAGE_TYPES), NON_OBJECTS
                                         .filter(lambda v: not isinstance(v, str)), st.dictionaries(
                                             st.text(max_size=4), SCALARS, max_size=2)))
    elif how == "missing type":
        del message["type"]
    elif how == "extra field":
        allowed = KNOWN_FIELDS.get(kind, set()) | {"id", "type"}
        key = draw(st.text(min_size=1, max_size=16).filter(lambda k: k not in allowed))
        message[key] = draw(JSON_VALUES)
    elif how == "not an object":
        return how, draw(st.one_of(NON_OBJECTS, st.lists(st.just(message), min_size=1, max_size=2)))
    else:
        how = f"field of {kind}"
        message = draw(_invalid_field(message))
    return how, message


@st.composite
def _invalid_field(draw, message):
    """``message`` with one of its own fields made invalid."""
    kind = message["type"]
    batched = message.get("envs") == "all"
    choices = []
    if kind in ("reset", "step", "resetDrivers", "getObservation", "getState"):
        choices.append("env")
        choices.append("env and envs")
    if kind in ("reset", "step", "resetDrivers"):
        choices += ["envs", "encoding"]
    if kind == "getObservation":
        choices.append("encoding")
    if kind == "reset":
        choices += ["options", "seed"]
    if kind == "step":
        choices += ["actions", "list action"] if batched else ["actions", "missing driver", "unknown driver",
                                                              "driver action", "missing control", "control type",
                                                              "extra control"]
    if kind == "resetDrivers":
        choices += ["placements", "placement range", "missing distance"] if batched else [
            "placements", "unknown placement driver", "placement", "placement field", "result options",
            "placement range", "missing distance"]
    if kind == "getState":
        choices += ["state options", "state output", "state alias"]
    if kind == "hello":
        choices.append("protocolVersion")
    if kind == "restore":
        choices.append("snapshot")
    choice = draw(st.sampled_from(choices))
    d = draw(st.sampled_from(DRIVERS))
    if choice == "env":
        message.pop("envs", None)
        if kind == "step" and batched:
            message["actions"] = message["actions"][0]
        if kind == "resetDrivers" and batched:
            message["placements"] = message["placements"][0]
        message["env"] = draw(BAD_WORLD)
    elif choice == "env and envs":
        message["env"] = draw(WORLD)
        message["envs"] = "all"
    elif choice == "envs":
        message["envs"] = draw(BAD_ENVS)
    elif choice == "encoding":
        message["encoding"] = draw(BAD_ENCODING)
    elif choice == "options":
        message["options"] = draw(NOT_NULL_NOR_OBJECT)
    elif choice == "seed":
        message["options"]["seed"] = draw(BAD_SEED)
    elif choice == "actions":
        message["actions"] = draw(st.one_of(st.none(), NOT_NULL_NOR_OBJECT.filter(lambda v: not isinstance(v, list)),
                                            st.lists(ACTIONS, max_size=WORLDS + 2).filter(lambda v: len(v) != WORLDS),
                                            st.just(pack_f32(np.zeros((WORLDS, 1, 3), np.float32)))))
        if message["actions"] is None:
            del message["actions"]
    elif choice == "list action":           # the [worlds][drivers][3] number form, one entry not a number
        rows = [[[a["steering"], a["throttle"], a["brake"]] for a in entry.values()] for entry in message["actions"]]
        w, k, c = (draw(st.integers(0, len(rows) - 1)), draw(st.integers(0, len(DRIVERS) - 1)),
                   draw(st.integers(0, 2)))
        rows[w][k][c] = draw(NOT_A_NUMBER.filter(lambda v: v is not None))
        message["actions"] = rows
    elif choice == "missing driver":
        del message["actions"][d]
    elif choice == "unknown driver":
        message["actions"][draw(st.text(max_size=10).filter(lambda t: t not in DRIVERS))] = draw(ACTION)
    elif choice == "driver action":
        message["actions"][d] = draw(NOT_NULL_NOR_OBJECT | st.none())
    elif choice == "missing control":
        del message["actions"][d][draw(st.sampled_from(["steering", "throttle", "brake"]))]
    elif choice == "control type":
        message["actions"][d][draw(st.sampled_from(["steering", "throttle", "brake"]))] = draw(NOT_A_NUMBER)
    elif choice == "extra control":
        message["actions"][d][draw(st.text(min_size=1, max_size=10).filter(lambda t: t not in ACTION_FIELDS))] = \
            draw(JSON_VALUES)
    elif choice == "placements":
        message["placements"] = draw(st.one_of(st.none(), st.just({}), NOT_NULL_NOR_OBJECT.filter(
            lambda v: not (isinstance(v, list) and len(v) == WORLDS and all(isinstance(x, dict) for x in v)))))
        if message["placements"] is None:
            del message["placements"]
    elif choice == "unknown placement driver":
        message["placements"][draw(st.text(max_size=10).filter(lambda t: t not in DRIVERS))] = draw(PLACEMENT)
    elif choice == "placement":
        message["placements"][d] = draw(NOT_NULL_NOR_OBJECT)
    elif choice == "placement field":
        place = draw(PLACEMENT)
        place[draw(st.sampled_from(PLACEMENT_FIELDS))] = draw(NOT_A_NUMBER.filter(lambda v: v is not None))
        message["placements"][d] = place
    elif choice in ("placement range", "missing distance"):
        place = draw(PLACEMENT)
        if choice == "placement range":
            key = draw(st.sampled_from(sorted(OUT_OF_RANGE)))
            place[key] = draw(OUT_OF_RANGE[key])
        else:                                   # a non-empty placement without a distance ({} means default)
            place = {"offsetMeters": draw(st.floats(-2, 2)), **({"speedKph": draw(st.floats(0, 150))}
                                                                if draw(st.booleans()) else {})}
        if batched:
            message["placements"][draw(st.integers(0, WORLDS - 1))][d] = place
        else:
            message["placements"][d] = place
    elif choice == "result options":
        message["resultOptions"] = draw(st.one_of(
            NOT_NULL_NOR_OBJECT,
            st.fixed_dictionaries({"observationScope": JSON_VALUES.filter(lambda v: v not in ("all", "reset", None))}),
            st.fixed_dictionaries({"stateOutput": JSON_VALUES.filter(lambda v: v not in ("full", "minimal", "none",
                                                                                            None))}),
            st.dictionaries(st.text(min_size=1, max_size=10).filter(
                lambda k: k not in ("observationScope", "stateOutput")), JSON_VALUES, min_size=1, max_size=2)))
    elif choice == "state options":
        message["stateOptions"] = draw(st.one_of(NOT_NULL_NOR_OBJECT, st.dictionaries(
            st.text(min_size=1, max_size=10).filter(lambda k: k != "output"), JSON_VALUES, min_size=1, max_size=2)))
    elif choice == "state output":
        message["stateOptions"] = {"output": draw(JSON_VALUES.filter(lambda v: v not in ("full", "minimal", "none")))}
        message.pop("resultOptions", None)
    elif choice == "state alias":
        message.pop("stateOptions", None)
        message["resultOptions"] = draw(st.one_of(
            st.fixed_dictionaries({"stateOutput": JSON_VALUES.filter(lambda v: v not in ("full", "minimal", "none"))}),
            st.dictionaries(st.text(min_size=1, max_size=10).filter(lambda k: k != "stateOutput"), JSON_VALUES,
                            min_size=1, max_size=2)))
    elif choice == "protocolVersion":
        message["protocolVersion"] = draw(st.one_of(
            st.text(max_size=12).filter(lambda t: not _is_v1(t)),
            NOT_NULL_NOR_OBJECT.filter(lambda v: not isinstance(v, str)),
            st.integers(0, 10**6).filter(lambda m: m != 1).map(lambda m: f"{m}.0")))
    elif choice == "snapshot":
        message["snapshot"] = draw(st.one_of(JSON_VALUES, st.binary(max_size=64).map(_b64)))
        if message["snapshot"] is None:
            del message["snapshot"]
    return message


def _is_v1(text: str) -> bool:
    """Whether the dispatcher takes ``text`` for a 1.x version (its own pattern, so "1.0\\n" counts)."""
    match = re.match(r"^(\d{1,6})\.(\d{1,6})$", text)
    return match is not None and match.group(1) == "1"


def _b64(raw: bytes) -> str:
    import base64
    return base64.b64encode(raw).decode("ascii")


TOKEN = "@@fuzz-token@@"
KEY_TOKEN = "@@fuzz-key@@"
BAD_UTF8 = [b"\x80", b"\xbf", b"\xc0\xaf", b"\xc1\xbf", b"\xc3\x28", b"\xe2\x28\xa1", b"\xe2\x82", b"\xed\xa0\x80",
            b"\xed\xbf\xbf", b"\xf0\x28\x8c\x28", b"\xf4\x90\x80\x80", b"\xf5\x80\x80\x80", b"\xf8\x88\x80\x80\x80",
            b"\xfe", b"\xff", b"\xef\xbf"]


@st.composite
def malformed_lines(draw):
    """A request line that is not one acceptable JSON value, with how it was made."""
    message = draw(valid_messages())
    how = draw(st.sampled_from(["non-finite", "number overflow", "huge integer", "deep nesting", "duplicate key",
                                "lone surrogate", "invalid utf-8", "truncated", "trailing garbage", "oversized",
                                "blank"]))
    if how in ("non-finite", "number overflow", "huge integer", "deep nesting", "lone surrogate"):
        if how == "non-finite":
            token = draw(st.sampled_from(["NaN", "Infinity", "-Infinity", "-NaN", "+Infinity", "nan", "inf"]))
        elif how == "number overflow":
            token = draw(st.sampled_from(["1e400", "-1e400", "1E309", "123456789e999", "-0.5e99999"]))
        elif how == "huge integer":
            token = str(draw(st.one_of(st.integers(min_value=2**64, max_value=2**300),
                                       st.integers(min_value=-2**300, max_value=-2**63 - 1))))
        elif how == "deep nesting":
            depth = draw(st.integers(LIMITS.max_depth + 1, 300))
            token = draw(st.sampled_from(["[" * depth + "]" * depth, '{"a":' * depth + "0" + "}" * depth,
                                          "[{" * (depth // 2) + "}]" * (depth // 2) + ""]))
            assume(token.count("[") + token.count("{") > LIMITS.max_depth - 1)
        else:
            unit = draw(st.integers(0xD800, 0xDFFF))
            token = f'"{draw(st.text("abc xyz", max_size=3))}\\u{unit:04x}{draw(st.text("abc", max_size=3))}"'
        where = draw(st.sampled_from(["id", "new field", "key", "nested"]))
        if where == "key" and how == "lone surrogate":
            message[KEY_TOKEN] = 0
            line = encode(message).replace(encode(KEY_TOKEN), token.encode())
        else:
            if where == "id":
                message["id"] = TOKEN
            elif where == "nested" and isinstance(message.get("actions"), dict):
                message["actions"][DRIVERS[0]]["steering"] = TOKEN
            elif where == "nested" and isinstance(message.get("options"), dict):
                message["options"]["seed"] = TOKEN
            else:
                message[draw(st.sampled_from(["client", "extra", "actions", "z"]))] = TOKEN
            line = encode(message).replace(encode(TOKEN), token.encode())
    elif how == "duplicate key":
        line = _dumps_with_duplicate(message, draw)
    elif how == "invalid utf-8":
        line = encode(message)
        at = draw(st.integers(0, len(line)))
        line = line[:at] + draw(st.sampled_from(BAD_UTF8)) + line[at:]
    elif how == "truncated":
        line = encode(message)
        line = line[:draw(st.integers(1, len(line) - 1))]
    elif how == "trailing garbage":
        line = encode(message) + draw(st.sampled_from([b"x", b"}", b",", b"{}", b"[]", b"1", b"null", b'"a"', b"\x00",
                                                       b" // comment", b"\x0b"]))
    elif how == "oversized":
        message["client"] = "x" * (CAP + draw(st.integers(0, 2 * CAP)))
        line = encode(message)
    else:
        line = draw(st.sampled_from([b"", b" ", b"\t\r", b"\r"]))       # blank: in process only
    return how, line


def _dumps_with_duplicate(message: dict, draw) -> bytes:
    """``message`` as JSON text in which one of its objects (the top level or a nested one) repeats a key."""
    objects = []

    def walk(value):
        if isinstance(value, dict):
            if value:
                objects.append(value)
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    walk(message)
    target = draw(st.sampled_from(objects))
    key = draw(st.sampled_from(sorted(target)))
    again = draw(JSON_VALUES)

    def dump(value) -> str:
        if isinstance(value, dict):
            parts = [json.dumps(k, ensure_ascii=False) + ":" + dump(v) for k, v in value.items()]
            if value is target:
                parts.insert(draw(st.integers(0, len(parts))), json.dumps(key, ensure_ascii=False) + ":" + dump(again))
            return "{" + ",".join(parts) + "}"
        if isinstance(value, list):
            return "[" + ",".join(dump(v) for v in value) + "]"
        return json.dumps(value, ensure_ascii=False, allow_nan=False)

    return dump(message).encode("utf-8")


# ------------------------------------------------------------------------------------------------
# The in-process properties
# ------------------------------------------------------------------------------------------------
def _fuzz_dispatcher() -> Dispatcher:
    """oval-batch-v0 x2 with a 4 KiB line cap, reset and stepped a few times (both worlds, then one)."""
    d = Dispatcher(env_config(ENV_ID), num_worlds=WORLDS, env_id=ENV_ID, limits=LIMITS)
    act = {x: {"steering": 0.01, "throttle": 0.6, "brake": 0.0} for x in DRIVERS}
    lines = [{"id": 1, "type": "reset", "envs": "all", "options": {"seed": 11}}]
    lines += [{"id": 2 + i, "type": "step", "envs": "all", "actions": [act] * WORLDS} for i in range(3)]
    lines += [{"id": 9, "type": "step", "env": 1, "actions": act}]
    for reply in dispatcher_transport(d)([encode(m) for m in lines]):
        assert json.loads(reply)["ok"], reply
    return d


@pytest.fixture(scope="module")
def fuzz_dispatcher():
    return _fuzz_dispatcher()


class _Unchanged:
    """What a refused request must leave as it was: the state checksums, the engine, the default seed."""

    def __init__(self, d: Dispatcher):
        self.d = d
        self.engine = d.engine
        self.checksums = d.engine.checksums().copy()
        self.seed = d.last_seed        # the seed a later seedless reset uses (not in the checksum)

    def check(self, line) -> None:
        d = self.d
        assert d.engine is self.engine, f"the engine was rebuilt by {line[:200]!r}"
        assert d.engine.state is not None, f"the worlds were dropped by {line[:200]!r}"
        assert np.array_equal(d.engine.checksums(), self.checksums), f"the state changed after {line[:200]!r}"
        assert d.last_seed == self.seed, f"the default seed changed after {line[:200]!r}"


def _refused(d: Dispatcher, line: bytes) -> dict:
    """The one reply line to ``line``, checked to be a refusal of the closed set with the right id."""
    reply_line = d.handle_line(line)
    assert isinstance(reply_line, bytes) and b"\n" not in reply_line
    reply = json.loads(reply_line)
    note(f"reply: {reply_line[:300]!r}")
    assert reply["ok"] is False and reply["type"] == "error", reply
    assert reply["code"] in ERROR_CODES and reply["code"] != "internal", reply
    assert isinstance(reply["error"], str) and reply["error"]
    want = expected_reply_id(line, LIMITS)
    assert type(reply["id"]) is type(want) and reply["id"] == want, (reply["id"], want)
    return reply


@settings(FUZZ, max_examples=max(1, FUZZ_MESSAGES // 2))
@given(case=malformed_lines())
def test_malformed_lines_are_refused(fuzz_dispatcher, case):
    """Lines that are not one acceptable JSON value: bad_json (line_too_long over the cap), id null, no
    state change."""
    how, line = case
    note(f"{how}: {line[:300]!r}")
    unchanged = _Unchanged(fuzz_dispatcher)
    reply = _refused(fuzz_dispatcher, line)
    assert reply["code"] == ("line_too_long" if len(line) > CAP else "bad_json"), (how, reply)
    assert reply["id"] is None
    unchanged.check(line)


@settings(FUZZ, max_examples=max(1, FUZZ_MESSAGES // 2))
@given(case=invalid_messages())
def test_invalid_requests_are_refused(fuzz_dispatcher, case):
    """Well-formed JSON the protocol must refuse: a code of the closed set (never internal, bad_json or
    line_too_long), the request's id when it is a valid one, no state change."""
    how, message = case
    line = encode(message)
    assume(len(line) <= CAP)
    note(f"{how}: {line[:300]!r}")
    unchanged = _Unchanged(fuzz_dispatcher)
    reply = _refused(fuzz_dispatcher, line)
    assert reply["code"] not in ("bad_json", "line_too_long"), (how, reply)
    assert not PYTHON_INTERNALS.search(reply["error"]), reply
    unchanged.check(line)


@settings(FUZZ, max_examples=300)
@given(key=st.sampled_from(sorted(OUT_OF_RANGE)), data=st.data(), batched=st.booleans())
def test_out_of_range_placements_name_field_value_and_range(fuzz_dispatcher, key, data, batched):
    """A placement value outside its range: invalid_request naming the wire field, the value and the
    range; no state change."""
    value = data.draw(OUT_OF_RANGE[key])
    d = data.draw(st.sampled_from(DRIVERS))
    place = {"distanceMeters": 100.0, key: value}
    message = ({"id": 5, "type": "resetDrivers", "envs": "all", "placements": [{d: place}, {}]} if batched
               else {"id": 5, "type": "resetDrivers", "placements": {d: place}})
    line = encode(message)
    unchanged = _Unchanged(fuzz_dispatcher)
    reply = _refused(fuzz_dispatcher, line)
    assert reply["code"] == "invalid_request", reply
    assert reply["field"].endswith(f"{d}.{key}"), reply
    assert repr(value) in reply["error"] and "expected a number in [" in reply["error"], reply
    unchanged.check(line)


def test_a_placement_without_distance_is_a_clear_request_error(fuzz_dispatcher):
    reply = json.loads(fuzz_dispatcher.handle_line(encode({"id": "x", "type": "resetDrivers",
                                                           "placements": {DRIVERS[0]: {"offsetMeters": 1.0}}})))
    assert reply["ok"] is False and reply["id"] == "x"
    assert reply["code"] == "invalid_request" and reply["field"] == f"placements.{DRIVERS[0]}.distanceMeters"
    assert "is required" in reply["error"] and not PYTHON_INTERNALS.search(reply["error"])


def test_fuzzed_dispatcher_still_steps_like_a_fresh_one(fuzz_dispatcher):
    """After the fuzzing (or none, when run alone), the dispatcher's next step is the same bytes as that
    of a dispatcher that never saw a refused request."""
    act = {x: {"steering": -0.02, "throttle": 0.9, "brake": 0.0} for x in DRIVERS}
    line = encode({"id": 77, "type": "step", "envs": "all", "actions": [act] * WORLDS})
    assert fuzz_dispatcher.handle_line(line) == _fuzz_dispatcher().handle_line(line)


# ------------------------------------------------------------------------------------------------
# Regressions: bugs the fuzzing found (fixed in 7d3ac72), kept as plain examples
# ------------------------------------------------------------------------------------------------
def test_refused_reset_with_a_bad_world_changes_nothing():
    """A reset refused for its world index leaves the default seed and the engine (config keys) alone."""
    d = _fuzz_dispatcher()
    unchanged = _Unchanged(d)
    for message in ({"id": 1, "type": "reset", "env": WORLDS, "options": {"seed": 99}},
                    {"id": 2, "type": "reset", "env": -1, "options": {"seed": 5, "episode": {"maxSteps": 9}}}):
        line = encode(message)
        assert json.loads(d.handle_line(line))["code"] == "invalid_request"
        unchanged.check(line)


def test_batched_list_actions_refuse_strings_and_booleans():
    """The batched number-list form refuses strings and booleans as the one-world form does."""
    d = _fuzz_dispatcher()
    for bad in ("0.5", True):
        rows = [[[0.0, 0.5, 0.0] for _ in DRIVERS] for _ in range(WORLDS)]
        rows[0][0][1] = bad
        reply = json.loads(d.handle_line(encode({"id": 1, "type": "step", "envs": "all", "actions": rows})))
        assert reply["ok"] is False and reply["code"] == "invalid_action", reply


def test_reset_drivers_refuses_a_falsy_observation_scope():
    """A falsy wrong resultOptions.observationScope ([], "", 0, false, {}) is refused, not defaulted."""
    d = _fuzz_dispatcher()
    for bad in ([], "", 0, False, {}):
        reply = json.loads(d.handle_line(encode({"id": 1, "type": "resetDrivers", "placements": {DRIVERS[0]: None},
                                                 "resultOptions": {"observationScope": bad}})))
        assert reply["ok"] is False and reply["code"] == "invalid_request", (bad, reply)


# ------------------------------------------------------------------------------------------------
# The same over NDJSON: one worker process, a few thousand malformed lines pipelined
# ------------------------------------------------------------------------------------------------
SUBPROCESS_LINES = 3_000


def _generated_lines(count: int) -> list:
    """``count`` malformed or invalid request lines (non-blank), drawn by Hypothesis with a fixed seed."""
    lines: list = []

    @settings(max_examples=count, derandomize=True, database=None, deadline=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(case=st.one_of(malformed_lines(), invalid_messages().map(lambda c: (c[0], encode(c[1])))))
    def collect(case):
        line = case[1]
        if not is_blank(line) and b"\n" not in line:
            lines.append(line)

    collect()
    return lines


def test_worker_survives_malformed_lines():
    """A few thousand malformed lines pipelined into one ``paddock-ma serve``: exactly one error reply per
    line, in order, byte-identical to the in-process dispatcher's (overlong lines included); the state is
    unchanged (same snapshot), a valid request is still answered, and the worker exits 0 when its input
    ends."""
    lines = _generated_lines(SUBPROCESS_LINES)
    assert len(lines) >= 2_000
    reference = _fuzz_dispatcher()
    setup = [b'{"id":1,"type":"reset","envs":"all","options":{"seed":11}}'] + [
        encode({"id": 2 + i, "type": "step", "envs": "all", "actions": [
            {x: {"steering": 0.01, "throttle": 0.6, "brake": 0.0} for x in DRIVERS}] * WORLDS}) for i in range(3)] + [
        encode({"id": 9, "type": "step", "env": 1,
                "actions": {x: {"steering": 0.01, "throttle": 0.6, "brake": 0.0} for x in DRIVERS}})]
    snapshot = b'{"id":"snap","type":"snapshot"}'
    with WorkerClient(ENV_ID, worlds=WORLDS, max_line_bytes=CAP, timeout=120, stderr="capture") as worker:
        assert all(json.loads(r)["ok"] for r in worker.pipeline(setup))
        before = worker.pipeline([snapshot])[0]
        assert before == reference.handle_line(snapshot)
        replies = worker.pipeline(lines)
        assert len(replies) == len(lines)
        expected = dispatcher_transport(reference)(lines)
        for n, (line, got, want) in enumerate(zip(lines, replies, expected)):
            reply = json.loads(got)
            assert reply["ok"] is False and reply["code"] in ERROR_CODES and reply["code"] != "internal", (n, line, got)
            assert got == want, f"line {n} {line[:200]!r}:\n worker {got[:300]!r}\n in-process {want[:300]!r}"
        assert worker.pipeline([snapshot])[0] == before
        spec = json.loads(worker.request_line(b'{"id":"last","type":"getActionSpec"}'))
        assert spec["ok"] and spec["id"] == "last" and spec["result"]["controlledDrivers"] == DRIVERS
        assert worker.close() == 0, worker.stderr_text()[-2000:]


# ------------------------------------------------------------------------------------------------
# Stateful: the per-driver episode bookkeeping
# ------------------------------------------------------------------------------------------------
MODEL_DRIVERS = DRIVERS
MAX_STEPS = 5


class EpisodeBookkeeping(RuleBasedStateMachine):
    """Resets, steps, resetDrivers, getState, snapshot/restore and bad requests on world 0 of a
    two-world oval-batch-v0 worker (the fuzzing's shape, so that its bad requests stay bad) with 5-step
    episodes, against a model of the bookkeeping:

    * a reset starts every driver's episode: episodeId 0, episodeStep 0; info.step 0;
    * a step advances info.step by 1 and each running driver's episodeStep by 1; a driver whose
      episodeStep reaches 5 has ended (truncated, endReason max-steps) and keeps its counters;
    * resetDrivers of a driver increments its episodeId and sets its episodeStep to 0 (running again);
    * actions for an ended driver are accepted and ignored (the step goes on as without them), a
      missing running driver is refused with invalid_action, and any refused request changes nothing
      (checksum, and the model goes on);
    * after restore the worker continues from the snapshot point: the model is the one saved with the
      snapshot and getState(full) gives the bytes it gave right after the snapshot.

    The actions are gentle (little steering, no braking) so that no episode ends another way.
    """

    dispatcher = None           # one worker for all runs; each run starts with a seeded reset

    def __init__(self):
        super().__init__()
        cls = type(self)
        if cls.dispatcher is None:
            config = env_config(ENV_ID, episode={"max_steps": MAX_STEPS})
            cls.dispatcher = Dispatcher(config, num_worlds=WORLDS, env_id=ENV_ID, limits=LIMITS)
        self.d = cls.dispatcher
        self.model = None
        self.saved = None       # (snapshot text, model, getState full bytes) of the latest snapshot
        self.next_id = 0

    def send(self, message: dict, decoded: bool = False) -> dict:
        """The reply to ``message`` sent as a line (or, ``decoded``, as the decoded value: a snapshot is
        longer than the 4 KiB line cap the bad requests are made for)."""
        self.next_id += 1
        message = {"id": self.next_id, **message}
        reply = self.d.handle(message) if decoded else json.loads(self.d.handle_line(encode(message)))
        assert reply["id"] == self.next_id, reply
        return reply

    def expect(self, reply: dict, info: dict) -> None:
        """The reply's bookkeeping (info.step, info.drivers) is the model's."""
        assert reply["ok"], reply
        assert info["step"] == self.model["step"], (info["step"], self.model)
        for driver, row in self.model["drivers"].items():
            got = info["drivers"][driver]
            assert got["episodeId"] == row["id"], (driver, got, row)
            assert got["episodeStep"] == row["step"], (driver, got, row)
            assert got["truncated"] is row["ended"] and got["terminated"] is False, (driver, got, row)
            assert got["endReason"] == ("max-steps" if row["ended"] else None), (driver, got, row)

    def running(self) -> list:
        return [d for d, row in self.model["drivers"].items() if not row["ended"]]

    def ended(self) -> list:
        return [d for d, row in self.model["drivers"].items() if row["ended"]]

    @initialize(seed=st.integers(0, 2**31))
    def reset(self, seed):
        self.model = {"step": 0, "drivers": {d: {"id": 0, "step": 0, "ended": False} for d in MODEL_DRIVERS}}
        self.saved = None
        reply = self.send({"type": "reset", "options": {"seed": seed}})      # world 0
        self.expect(reply, reply["result"]["info"])

    @precondition(lambda self: self.model["step"] >= 8)
    @rule(seed=st.integers(0, 2**31))
    def reset_again(self, seed):
        self.reset(seed)

    @precondition(lambda self: self.running())
    @rule(steering=st.floats(-0.03, 0.03), throttle=st.floats(0.2, 0.9), repeat=st.integers(1, 6))
    def step(self, steering, throttle, repeat):
        """``repeat`` steps (while a driver runs), every running driver acting, each reply checked."""
        for _ in range(repeat):
            if not self.running():
                break
            actions = {d: {"steering": steering, "throttle": throttle, "brake": 0.0} for d in self.running()}
            reply = self.send({"type": "step", "actions": actions})
            self.model["step"] += 1
            for d in actions:
                row = self.model["drivers"][d]
                row["step"] += 1
                row["ended"] = row["step"] >= MAX_STEPS
            self.expect(reply, reply["result"]["info"])

    @rule(data=st.data())
    def reset_drivers(self, data):
        picked = data.draw(st.lists(st.sampled_from(MODEL_DRIVERS), min_size=1, max_size=3, unique=True))
        placements = {d: data.draw(st.one_of(st.none(), st.fixed_dictionaries({
            "distanceMeters": st.floats(50, 800), "offsetMeters": st.floats(-1, 1), "speedKph": st.floats(40, 120)})))
            for d in picked}
        reply = self.send({"type": "resetDrivers", "placements": placements,
                           "resultOptions": {"observationScope": data.draw(st.sampled_from(["reset", "all"])),
                                             "stateOutput": "none"}})
        for d in picked:
            row = self.model["drivers"][d]
            row.update(id=row["id"] + 1, step=0, ended=False)
        self.expect(reply, reply["result"]["info"])

    @rule(output=st.sampled_from(["full", "minimal", "none"]), alias=st.booleans())
    def get_state(self, output, alias):
        options = {"resultOptions": {"stateOutput": output}} if alias else {"stateOptions": {"output": output}}
        reply = self.send({"type": "getState", **options})
        assert reply["ok"], reply
        if output == "none":
            assert reply["result"] is None
        else:
            assert reply["result"]["snapshot"]["step"] == self.model["step"]

    @rule()
    def snapshot(self):
        reply = self.send({"type": "snapshot"})
        assert reply["ok"] and reply["result"]["steps"][0] == self.model["step"], reply
        state = self.d.handle_line(b'{"id":0,"type":"getState"}')
        self.saved = (reply["result"]["snapshot"], copy.deepcopy(self.model), state)

    @precondition(lambda self: self.saved is not None)
    @rule()
    def restore(self):
        text, model, state = self.saved
        reply = self.send({"type": "restore", "snapshot": text}, decoded=True)
        assert reply["ok"] and reply["result"]["steps"][0] == model["step"], reply
        self.model = copy.deepcopy(model)
        assert self.d.handle_line(b'{"id":0,"type":"getState"}') == state

    @precondition(lambda self: self.ended())
    @rule(data=st.data())
    def step_an_ended_driver(self, data):
        running = self.running()
        drivers = running + [data.draw(st.sampled_from(self.ended()))]
        reply = self.send({"type": "step", "actions": {d: {"steering": 0.0, "throttle": 0.5, "brake": 0.0}
                                                       for d in drivers}})
        self.model["step"] += 1
        for d in running:
            row = self.model["drivers"][d]
            row["step"] += 1
            row["ended"] = row["step"] >= MAX_STEPS
        self.expect(reply, reply["result"]["info"])

    @precondition(lambda self: len(self.running()) >= 1)
    @rule(data=st.data())
    def step_without_a_running_driver(self, data):
        drivers = self.running()
        drivers.remove(data.draw(st.sampled_from(drivers)))
        self.refused({"type": "step", "actions": {d: {"steering": 0.0, "throttle": 0.5, "brake": 0.0}
                                                  for d in drivers}}, "invalid_action")

    @rule(case=st.one_of(invalid_messages(), malformed_lines()))
    def bad_request(self, case):
        how, message = case
        line = message if isinstance(message, bytes) else encode(message)
        assume(not is_blank(line))
        self.refused(line, None)

    def refused(self, message, code) -> None:
        line = message if isinstance(message, bytes) else encode({"id": "bad", **message})
        before = self.d.engine.checksums().copy()
        reply = json.loads(self.d.handle_line(line))
        assert reply["ok"] is False and reply["code"] in ERROR_CODES and reply["code"] != "internal", reply
        if code is not None:
            assert reply["code"] == code, reply
        assert np.array_equal(self.d.engine.checksums(), before), line[:200]

    @invariant()
    def bookkeeping_is_the_models(self):
        """getState is side-effect free; its cars carry no episode fields, so compare the step."""
        if self.model is not None:
            reply = json.loads(self.d.handle_line(b'{"id":0,"type":"getState","stateOptions":{"output":"minimal"}}'))
            assert reply["result"]["snapshot"]["step"] == self.model["step"]


EpisodeBookkeeping.TestCase.settings = settings(max_examples=20, stateful_step_count=20, deadline=None,
                                                database=None, suppress_health_check=[HealthCheck.too_slow,
                                                                                      HealthCheck.filter_too_much,
                                                                                      HealthCheck.data_too_large])
test_episode_bookkeeping = EpisodeBookkeeping.TestCase
