"""The Node.js client (workers/clients/node) with the machine's node: drive.js's session against a real
worker gives the in-process dispatcher's replies byte for byte, and its f32 decoding matches numpy's."""

import json
import shutil
import subprocess

import numpy as np
import pytest

from paddock_ma import catalog
from paddock_ma.protocol import codec
from paddock_ma.protocol.client import decode_f32, decode_vectors
from paddock_ma.protocol.messages import Dispatcher

from tests.helpers.worker import ENV_ID, ROOT, WORKER_ENV, serve_argv

NODE_DIR = ROOT / "workers" / "clients" / "node"
STEPS = 100


def node() -> str:
    path = shutil.which("node") or "/usr/bin/node"
    assert shutil.which(path), "node (v18+) is needed for the Node.js client tests"
    return path


@pytest.fixture(scope="module")
def session(tmp_path_factory):
    """drive.js --f32 against ``paddock-ma serve --env paddock/gp-v0``: (requests, replies, summary)."""
    sent = tmp_path_factory.mktemp("node") / "sent.ndjson"
    out = subprocess.run([node(), str(NODE_DIR / "drive.js"), "--f32", "--requests", str(sent), "--",
                          *serve_argv("--env", ENV_ID)], capture_output=True, timeout=300, cwd=ROOT, env=WORKER_ENV)
    stderr = out.stderr.decode("utf-8", "replace")
    assert out.returncode == 0, stderr
    summaries = [json.loads(line)["summary"] for line in stderr.splitlines() if line.startswith('{"summary":')]
    assert len(summaries) == 1, stderr
    return sent.read_bytes().splitlines(), out.stdout.splitlines(), summaries[0]


def test_drive_js_replies_are_the_in_process_dispatchers_bytes(session):
    requests, replies, summary = session
    assert len(requests) == len(replies) == 3 + STEPS + 2
    assert summary["requests"] == len(requests) and summary["failures"] == 0
    local = Dispatcher(catalog.env_config(ENV_ID), env_id=ENV_ID)
    for request, reply in zip(requests, replies):
        assert local.handle_line(request) == reply, request[:120]


def test_drive_js_follows_the_session_it_documents(session):
    requests, replies, summary = session
    sent = [json.loads(line) for line in requests]
    got = [decode_vectors(json.loads(line)) for line in replies]
    assert [m["type"] for m in sent] == ["hello", "getActionSpec", "reset"] + ["step"] * STEPS + [
        "resetDrivers", "getState"]
    assert all(r["ok"] and r["id"] == m["id"] for m, r in zip(sent, got))
    drivers = got[1]["result"]["controlledDrivers"]
    assert summary["controlledDrivers"] == drivers == ["car-00"]
    assert sent[2]["options"] == {"seed": 7}
    for t, (message, reply) in enumerate(zip(sent[3:3 + STEPS], got[3:3 + STEPS])):
        assert set(message["actions"]) == set(drivers)
        assert reply["result"]["info"]["step"] == t + 1
        vector = reply["result"]["observation"]["car-00"]["vector"]
        assert isinstance(vector, np.ndarray) and vector.dtype == np.float32
        assert set(reply["result"]["metrics"]) == set(drivers)
    assert sent[-2]["placements"] == {"car-00": {"distanceMeters": 1200, "offsetMeters": 0, "speedKph": 80}}
    assert sent[-2]["resultOptions"] == {"observationScope": "reset", "stateOutput": "none"}
    assert set(got[-2]["result"]["observation"]) == {"car-00"} and got[-2]["result"]["state"] is None
    assert sent[-1]["stateOptions"] == {"output": "minimal"} and "snapshot" in got[-1]["result"]
    last = json.loads(replies[2 + STEPS])["result"]["observation"]["car-00"]["vector"]
    assert np.asarray(summary["lastVector"], np.float32).tobytes() == decode_f32(last).tobytes()


def test_node_decode_f32_keeps_every_bit():
    values = np.array([[0.0, -0.0, 1.5e-45, -3.4028235e38], [np.pi, 1 / 3, -2.5, 7e-39]], np.float32)
    packed = json.dumps(codec.pack_f32(values))
    script = ("const { decodeF32, decodeVectors } = require(process.argv[1]);"
              "const obj = JSON.parse(process.argv[2]);"
              "const a = decodeF32(obj), b = decodeVectors({ v: [obj] }).v[0];"
              "process.stdout.write(JSON.stringify([Buffer.from(a.buffer).toString('hex'), a.length, "
              "b instanceof Float32Array, Array.from(decodeF32([1, 2]))]));")
    out = subprocess.run([node(), "-e", script, str(NODE_DIR / "paddock_client.js"), packed],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    hex_bytes, length, typed, plain = json.loads(out.stdout)
    assert bytes.fromhex(hex_bytes) == values.astype("<f4").tobytes() and length == values.size
    assert typed is True and plain == [1, 2]


def test_drive_js_names_a_bad_argument():
    out = subprocess.run([node(), str(NODE_DIR / "drive.js"), "--fast"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 1 and '"--fast"' in out.stderr and out.stdout == ""


def test_drive_and_bench_exit_non_zero_when_the_worker_cannot_start():
    for script, extra in (("drive.js", []), ("bench.js", ["--worlds", "1", "--cars", "1"])):
        out = subprocess.run([node(), str(NODE_DIR / script), *extra, "--", "no-such-paddock-worker", "serve"],
                             capture_output=True, text=True, timeout=60)
        assert out.returncode == 1, (script, out.stderr)
        assert "worker command `no-such-paddock-worker serve` could not start" in out.stderr, out.stderr
        assert "ENOENT" in out.stderr and out.stdout == ""


def test_drive_js_exits_non_zero_when_the_worker_dies(tmp_path):
    # a real worker that exits at start: its config file does not exist
    missing = tmp_path / "missing.json"
    out = subprocess.run([node(), str(NODE_DIR / "drive.js"), "--", *serve_argv("--config", str(missing))],
                         capture_output=True, text=True, timeout=300, cwd=ROOT, env=WORKER_ENV)
    assert out.returncode == 1, out.stderr
    assert "exited (code 2" in out.stderr and "with requests unanswered" in out.stderr, out.stderr


def test_a_request_times_out_and_its_late_reply_is_dropped():
    # the real worker is stopped (SIGSTOP) while a request with a 300 ms timeout waits, then resumed:
    # that request rejects, its late reply is read and dropped, and the next request gets its own reply
    script = """
const { PaddockWorker } = require(process.argv[1]);
const argv = JSON.parse(process.argv[2]);
(async () => {
  const worker = new PaddockWorker(argv[0], argv.slice(1), { stderr: 'ignore' });
  const out = {};
  out.first = (await worker.request({ type: 'hello' }, { timeoutMs: 600000 })).ok;
  process.kill(worker.pid, 'SIGSTOP');
  try { await worker.request({ type: 'getActionSpec' }, { timeoutMs: 300 }); out.timedOut = null; }
  catch (err) { out.timedOut = err.message; }
  process.kill(worker.pid, 'SIGCONT');
  const next = await worker.request({ type: 'hello' }, { timeoutMs: 600000 });
  out.next = { id: next.id, type: next.type, ok: next.ok };
  try { await worker.request({ type: 'hello' }, { timeoutMs: -1 }); } catch (err) { out.badTimeout = err.message; }
  out.exit = (await worker.close()).code;
  process.stdout.write(JSON.stringify(out));
})().catch((err) => { process.stderr.write(String(err.stack || err)); process.exit(1); });
"""
    out = subprocess.run([node(), "-e", script, str(NODE_DIR / "paddock_client.js"),
                          json.dumps(serve_argv("--env", ENV_ID))],
                         capture_output=True, text=True, timeout=600, cwd=ROOT, env=WORKER_ENV)
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)
    assert got["first"] is True
    assert got["timedOut"] is not None and "did not answer request 2 within 300 ms" in got["timedOut"]
    assert got["next"] == {"id": 3, "type": "hello:result", "ok": True}
    assert "timeoutMs must be a positive number" in got["badTimeout"]
    assert got["exit"] == 0


def test_bench_js_finds_its_inputs_by_schema_name():
    spec = Dispatcher(catalog.env_config("paddock/oval-batch-v0"), env_id="paddock/oval-batch-v0").handle_line(
        b'{"id":1,"type":"getObservationSpec"}')
    script = ("const { inputIndices } = require(process.argv[1]);"
              "process.stdout.write(JSON.stringify(inputIndices(JSON.parse(process.argv[2]).result)));")
    out = subprocess.run([node(), "-e", script, str(NODE_DIR / "bench.js"), spec.decode()],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    names = [e["name"] for e in json.loads(spec)["result"]["vector"]["schema"]]
    got = json.loads(out.stdout)
    assert got == {"speed": names.index("self.speedMetersPerSecond"),
                   "offset": names.index("self.trackOffsetMeters"),
                   "headingError": names.index("self.trackHeadingErrorRadians")}
    assert got["offset"] not in (6, 7)       # the entries bench.js used to read by position
