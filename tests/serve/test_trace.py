"""paddock-ma record / replay: a trace replays bit for bit; a changed action is caught at its step with
the world, car and field named; a trace of other simulation versions is refused naming them; the viewer
opens a trace as frames."""

import base64
import json

import numpy as np
import pytest

from paddock_ma.cli.main import main
from paddock_ma.errors import PaddockError
from paddock_ma.serve.trace import TraceSource, load_trace, replay_trace


@pytest.fixture(scope="module")
def trace_path(tmp_path_factory):
    path = tmp_path_factory.mktemp("trace") / "oval.trace.json"
    assert main(["record", "--env", "paddock/oval-batch-v0", "--worlds", "2", "--seed", "5", "--steps", "30",
                 "--policy", "throttle", "--snapshot-every", "10", "--out", str(path)]) == 0
    return path


def test_a_trace_replays_every_step(trace_path, capsys):
    assert main(["replay", str(trace_path)]) == 0
    assert "every step reproduced" in capsys.readouterr().out
    trace = load_trace(trace_path)
    assert trace.actions.shape == (30, 2, 8, 3) and trace.checksums.shape == (31, 2)
    assert sorted(map(int, trace.snapshots)) == [0, 10, 20, 30]


def test_a_changed_action_is_caught_at_its_step_naming_world_car_and_field(trace_path, tmp_path):
    doc = json.loads(trace_path.read_text())
    actions = np.frombuffer(base64.b64decode(doc["actions"]), np.float32).reshape(30, 2, 8, 3).copy()
    actions[12, 1, 3, 0] = 0.5                       # step 13 of world 1: car-03 steers
    doc["actions"] = base64.b64encode(actions.tobytes()).decode()
    bad = tmp_path / "changed.trace.json"
    bad.write_text(json.dumps(doc))
    divergence = replay_trace(bad)
    assert (divergence.step, divergence.world) == (13, 1)
    assert "next snapshot, step 20" in divergence.detail and "car 'car-03'" in divergence.detail
    assert main(["replay", str(bad)]) == 1


def test_a_trace_of_other_versions_is_refused_naming_them(trace_path, tmp_path):
    doc = json.loads(trace_path.read_text())
    doc["versions"]["sim"] = "0123456789abcdef"
    old = tmp_path / "old.trace.json"
    old.write_text(json.dumps(doc))
    with pytest.raises(PaddockError) as err:
        replay_trace(old)
    assert err.value.field == "versions" and "0123456789abcdef" in err.value.message
    assert load_trace(trace_path).header["versions"]["sim"] in err.value.message
    assert main(["replay", str(old)]) == 2


def test_the_viewer_opens_a_trace_as_frames(trace_path):
    doc = TraceSource(trace_path, world=1).document()
    assert doc["kind"] == "trace" and doc["divergence"] is None and len(doc["frames"]) == 31
    assert [f["snapshot"]["step"] for f in doc["frames"]] == list(range(31))
    assert doc["frames"][-1]["meta"]["world"] == 1 and doc["track"]["name"] == "oval"
