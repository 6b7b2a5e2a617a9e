"""The shipped compliance suite (``paddock_ma.protocol.compliance``) against the NDJSON stdio worker.

``assert_compliant(send_lines, env_id, num_worlds)`` is the check any transport must pass (the Ray shard's
test reuses it with its own ``send_lines``): the 200+ request script gives byte-identical replies from the
transport and from a fresh in-process ``Dispatcher``, each reply carries its request's id and, when
refused, a code of the closed set, the replies after a ``restore`` repeat those after the ``snapshot``,
and the script reached every kind of refusal it is written to provoke.
"""

from __future__ import annotations

import json

import pytest

from paddock_ma.catalog import env_config
from paddock_ma.protocol import compliance
from paddock_ma.protocol.client import WorkerClient
from paddock_ma.protocol.codec import Limits
from paddock_ma.protocol.compliance import ComplianceError, check_transport, dispatcher_transport, run_script
from paddock_ma.protocol.compliance_script import (
    MIN_SCRIPT_LINES, SNAPSHOT_REF, TAMPERED_SNAPSHOT_REF, compliance_script, replay_spans,
)
from paddock_ma.protocol.messages import Dispatcher

CASES = [("paddock/gp-v0", 1), ("paddock/oval-batch-v0", 3)]
# The refusals the script provokes on every environment (an ended driver's action is accepted and
# ignored, as PaddockJS trainers send one: episode_ended is the adapters' code, not the worker's; a
# worker starts reset, so not_reset is the Python API's code only).
EXPECTED_CODES = {"bad_json", "invalid_request", "invalid_action", "invalid_config", "unknown_driver",
                  "snapshot_rejected", "unknown_type", "version_mismatch"}


def assert_compliant(send_lines, env_id: str, num_worlds: int, *, oversized_line: bool = True
                     ) -> compliance.ComplianceReport:
    """The compliance suite against ``send_lines`` (a fresh worker of ``env_id`` with ``num_worlds`` worlds
    and the default caps): byte-identical replies, no ``internal`` reply, every expected refusal reached.
    ``oversized_line`` also sends one line over the 1 MiB cap (a transport with another cap passes False).
    """
    report = check_transport(send_lines, env_id, num_worlds, oversized_line=oversized_line)
    assert report.requests >= MIN_SCRIPT_LINES
    assert report.ok >= 150, report.summary()
    missing = EXPECTED_CODES - set(report.codes)
    assert not missing, f"the script never provoked {sorted(missing)}: {report.summary()}"
    assert set(report.codes) <= EXPECTED_CODES | ({"line_too_long"} if oversized_line else set()), report.summary()
    assert report.codes["line_too_long"] == (1 if oversized_line else 0), report.summary()
    assert replay_spans(report.script), "the script has no snapshot/restore replay"
    return report


@pytest.mark.parametrize("env_id,num_worlds", CASES)
def test_ndjson_worker_is_byte_identical_to_the_dispatcher(env_id, num_worlds):
    """The NDJSON subprocess worker (``paddock-ma serve``) answers the whole script byte for byte like the
    in-process dispatcher, and exits 0 when its input ends."""
    with WorkerClient(env_id, worlds=num_worlds, timeout=120, stderr="capture") as worker:
        report = assert_compliant(worker.pipeline, env_id, num_worlds)
        assert worker.close() == 0, worker.stderr_text()[-2000:]
    print(report.summary())


def test_script_is_deterministic_and_long_enough():
    """The same action spec, world count and seed give the same bytes; another seed other actions; every
    line is one NDJSON line; the action spec may be the reply or its result."""
    spec = {"id": 1, "ok": True, "type": "getActionSpec:result",
            "result": {"controlledDrivers": ["car-00", "car-01"]}}
    one = compliance_script(spec, 2, seed=5)
    assert one == compliance_script(spec["result"], 2, seed=5)
    assert one != compliance_script(spec, 2, seed=6)
    assert len(one) >= MIN_SCRIPT_LINES
    assert all(b"\n" not in line for line in one)
    kinds = {json.loads(line).get("type") for line in one if _is_json_object(line)}
    assert {"hello", "reset", "step", "resetDrivers", "getActionSpec", "getObservationSpec", "getObservation",
            "getState", "snapshot", "restore", "destroy"} <= kinds
    batched = [line for line in one if b'"envs":' in line]
    assert batched and any(b'"encoding":"f32-base64"' in line for line in batched)
    assert not any(b'"envs":' in line and b'"type":"step"' in line and b'"envs":"all"' in line
                   for line in compliance_script(spec, 1))
    with pytest.raises(ValueError):
        compliance_script({"result": {}}, 1)


def test_a_deviating_transport_is_named():
    """check_transport names the first request whose reply differs (with both replies), and a transport
    that loses a reply."""
    env_id = "paddock/gp-v0"
    config = env_config(env_id)

    def altered(lines, d=Dispatcher(config, env_id=env_id), seen=[0]):
        replies = dispatcher_transport(d)(lines)
        for n, reply in enumerate(replies):
            if seen[0] + n == 40:
                replies[n] = reply.replace(b'"ok":', b'"ok" :', 1)
        seen[0] += len(lines)
        return replies

    with pytest.raises(ComplianceError, match=r"request 40 .*\n  reference: .*\n  transport: "):
        check_transport(altered, env_id)

    def lossy(lines, d=Dispatcher(config, env_id=env_id)):
        return dispatcher_transport(d)(lines)[:-1]

    with pytest.raises(ComplianceError, match="replies to"):
        check_transport(lossy, env_id)


def test_snapshot_placeholder_is_filled_from_the_transports_own_reply():
    """run_script sends up to a restore, then fills the placeholder with that run's latest snapshot text."""
    sent = []

    def fake(lines):
        sent.append(list(lines))
        return [b'{"id":1,"ok":true,"type":"snapshot:result","result":{"snapshot":"QUJD"}}'
                if b'"snapshot"' in line and b"restore" not in line else b'{"id":1,"ok":true,"type":"x"}'
                for line in lines]

    script = [b'{"id":1,"type":"snapshot"}', b'{"id":2,"type":"hello"}',
              b'{"id":3,"type":"restore","snapshot":"' + SNAPSHOT_REF.encode() + b'"}',
              b'{"id":4,"type":"restore","snapshot":"' + TAMPERED_SNAPSHOT_REF.encode() + b'"}']
    assert len(run_script(fake, script)) == 4
    assert [len(batch) for batch in sent] == [2, 1, 1]
    assert sent[1][0] == b'{"id":3,"type":"restore","snapshot":"QUJD"}'
    assert sent[2][0] == b'{"id":4,"type":"restore","snapshot":"QUFD"}'      # "ABC" tampered to "AAC"


def test_internal_replies_fail_the_check(monkeypatch):
    """A worker answering with ``internal`` (a bug by definition) fails the check, even when every
    transport gives the same bytes, unless allowed; the report lists those requests either way."""
    env_id = "paddock/gp-v0"

    def broken_destroy(self, message):
        raise RuntimeError("boom")

    monkeypatch.setattr(Dispatcher, "_destroy", broken_destroy)
    transport = dispatcher_transport(Dispatcher(env_config(env_id), env_id=env_id))
    with pytest.raises(ComplianceError, match="code internal"):
        check_transport(transport, env_id)
    transport = dispatcher_transport(Dispatcher(env_config(env_id), env_id=env_id))
    report = check_transport(transport, env_id, allow_internal=True)
    assert report.internal and all(b'"type":"destroy"' in line for line, _ in report.internal)


def test_oversized_line_reply_is_byte_identical():
    """A line over a small cap gets the same ``line_too_long`` reply in process and over NDJSON (regression:
    the worker once worded it differently), and the next line is served."""
    env_id, cap = "paddock/gp-v0", 256
    lines = [b'{"id":1,"type":"hello","client":"' + b"x" * cap + b'"}', b'{"id":2,"type":"getActionSpec"}']
    reference = Dispatcher(env_config(env_id), env_id=env_id, limits=Limits(max_line_bytes=cap))
    with WorkerClient(env_id, max_line_bytes=cap, timeout=120, stderr="capture") as worker:
        got = worker.pipeline(lines)
    assert json.loads(got[0])["code"] == "line_too_long"
    assert got == dispatcher_transport(reference)(lines)


def _is_json_object(line: bytes) -> bool:
    try:
        return isinstance(json.loads(line), dict)
    except ValueError:
        return False
