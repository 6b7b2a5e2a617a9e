"""The worker's ``getState`` has PaddockJS 2.0.0's snapshot shape, key for key (issue 21, point 3).

Golden snapshots recorded from PaddockJS itself (``tools/paddockjs/record_state_snapshots.mjs``:
``tests/fixtures/paddockjs-2.0.0/state-snapshots/<config>.json.gz``, ``getState`` with output ``full``
and ``minimal`` after ``reset`` and after 5 steps of fixed actions) are compared with the worker's replies
to the same messages on the same config. Each snapshot becomes its key tree: every path (``$.snapshot.
cars[].wheels[].surface``; ``[]`` stands for every element of an array) with the JSON types seen there over
both moments and every element. The test fails on

* a missing key: a path of PaddockJS's that our snapshot lacks;
* an extra key: a path of ours that PaddockJS's lacks, unless it is one of paddock_ma's own keys
  (``OWN_KEYS``, the list on docs/paddockjs-compatibility.md) or below an array PaddockJS left empty
  (``events``, ``penalties``, ``classification``, ``replayGhosts``: their elements' shape is not in the
  recording);
* a type change: a JSON type of ours at a path where PaddockJS never has it (``null`` is a type:
  PaddockJS's ``pitStop`` is ``null`` unless pit stops are on, and so must ours be).
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from paddock_ma.protocol.messages import Dispatcher
from paddock_ma.protocol.wire_names import config_from_wire

GOLDEN = Path(__file__).resolve().parents[1] / "fixtures/paddockjs-2.0.0/state-snapshots"
NAMES = sorted(p.name[:-len(".json.gz")] for p in GOLDEN.glob("*.json.gz"))

# paddock_ma's own keys beside PaddockJS's (wire names), by output; a path below one of them is ours too
OWN_WORLD = ["tick", "step", "raceMode", "redFlag", "pitLaneOpen", "raceFinished",
             "track.lengthMeters", "track.pitEntryMeters", "track.pitExitMeters"]
OWN_CAR = ["lap", "completedLaps", "surface", "onTrack", "contactsThisStep", "raceDistanceMeters",
           "speedKph", "distanceMeters", "positionSource", "finished", "wheels[].signedOffsetMeters", "pitStop.box"]
OWN_CAR_FULL = ["velocityX", "velocityY", "progressMeters", "signedOffsetMeters", "tire", "usedTireCompounds",
                "inPitLane", "pitIntent", "lastLapTime", "bestLapTime", "instability", "retired", "gridLocked",
                "interactionFlags", "steeringAngle", "pitStop.boxIndex", "pitStop.targetTire"]
OWN_KEYS = {
    "minimal": ["$.snapshot." + k for k in OWN_WORLD] + ["$.snapshot.cars[]." + k for k in OWN_CAR],
    "full": ["$.snapshot." + k for k in OWN_WORLD + ["checksum", "rules.modules.stalledDnf"]]
            + ["$.snapshot.cars[]." + k for k in OWN_CAR + OWN_CAR_FULL],
}
STEPS = 5


def json_type(value) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def key_tree(value, path: str = "$", out: dict | None = None) -> dict:
    """{path: set of JSON types} of ``value`` (arrays: ``path[]`` for every element)."""
    out = {} if out is None else out
    out.setdefault(path, set()).add(json_type(value))
    if isinstance(value, list):
        for item in value:
            key_tree(item, path + "[]", out)
    elif isinstance(value, dict):
        for key, item in value.items():
            key_tree(item, f"{path}.{key}", out)
    return out


def merged(trees) -> dict:
    out: dict = {}
    for tree in trees:
        for path, types in tree.items():
            out.setdefault(path, set()).update(types)
    return out


def under(path: str, prefixes) -> bool:
    return any(path == p or path.startswith(p + ".") or path.startswith(p + "[]") for p in prefixes)


def differences(golden: dict, ours: dict, own_keys) -> list:
    """What makes ``ours`` (a merged key tree) another shape than ``golden``: one line a difference."""
    empty_arrays = [p for p, types in golden.items() if "array" in types and p + "[]" not in golden]
    out = [f"missing {p} ({'/'.join(sorted(t))})" for p, t in sorted(golden.items()) if p not in ours]
    out += [f"extra {p} ({'/'.join(sorted(t))})" for p, t in sorted(ours.items())
            if p not in golden and not under(p, own_keys) and not under(p, empty_arrays)]
    out += [f"type {p}: ours {'/'.join(sorted(ours[p]))}, PaddockJS {'/'.join(sorted(golden[p]))}"
            for p in sorted(golden) if p in ours and not ours[p] <= golden[p]]
    return out


def send(d: Dispatcher, message: dict) -> dict:
    reply = json.loads(d.handle_line(json.dumps(message).encode()))
    assert reply["ok"], reply
    return reply["result"]


@pytest.fixture(scope="module", params=NAMES)
def recorded(request):
    """(name, golden document, our getState replies {output: [after reset, after 5 steps]})."""
    doc = json.loads(gzip.decompress((GOLDEN / f"{request.param}.json.gz").read_bytes()))
    d = Dispatcher(config_from_wire(doc["config"]))
    send(d, {"id": 0, "type": "reset"})
    ours = {o: [send(d, {"id": 1, "type": "getState", "stateOptions": {"output": o}})] for o in ("full", "minimal")}
    for n in range(STEPS):
        send(d, {"id": 2 + n, "type": "step", "actions": doc["actions"]})
    for o in ours:
        ours[o].append(send(d, {"id": 9, "type": "getState", "stateOptions": {"output": o}}))
    return request.param, doc, ours


@pytest.mark.parametrize("output", ["full", "minimal"])
def test_snapshot_has_paddockjs_keys_nesting_and_types(recorded, output):
    name, doc, ours = recorded
    assert [m["steps"] for m in doc["moments"]] == [0, STEPS]
    golden = merged(key_tree(m[output]) for m in doc["moments"])
    mine = merged(key_tree(s) for s in ours[output])
    problems = differences(golden, mine, OWN_KEYS[output])
    assert not problems, f"{name} {output}: {len(problems)} differences\n" + "\n".join(problems[:80])


def test_the_comparison_sees_a_missing_an_extra_key_and_a_type_change():
    """The comparison itself: each kind of difference is reported."""
    golden = key_tree({"snapshot": {"a": 1, "b": {"c": None}, "cars": [{"x": 1.0}], "events": []}})
    assert differences(golden, dict(golden), []) == []
    assert differences(golden, key_tree({"snapshot": {"a": 1, "b": {"c": None}, "cars": [{}], "events": []}}),
                       []) == ["missing $.snapshot.cars[].x (number)"]
    extra = key_tree({"snapshot": {"a": 1, "b": {"c": None, "d": 2}, "cars": [{"x": 1}], "events": [{"t": 1}]}})
    assert differences(golden, extra, []) == ["extra $.snapshot.b.d (number)"]
    assert differences(golden, extra, ["$.snapshot.b.d"]) == []
    changed = key_tree({"snapshot": {"a": "1", "b": {"c": None}, "cars": [{"x": 1}], "events": []}})
    assert differences(golden, changed, []) == ["type $.snapshot.a: ours string, PaddockJS number"]
