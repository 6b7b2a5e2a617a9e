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

from ..errors import ERROR_CODES
from .codec import Limits, WireError, decode, encode
from .compliance_script import SNAPSHOT_REF, TAMPERED_SNAPSHOT_REF, compliance_script, replay_spans

SendLines = Callable[[list], list]

_REFS = {encode(SNAPSHOT_REF): False, encode(TAMPERED_SNAPSHOT_REF): True}   # quoted form -> tampered?

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
    """The id a reply to ``line`` must carry: the request's id (any JSON value) when the line is a JSON
    object; null otherwise (bad JSON, a value that is not an object)."""
    try:
        value = decode(line, limits)
    except WireError:
        return None
    if not isinstance(value, dict):
        return None
    return value.get("id")


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


def _clip(data: bytes, at: int = 0, width: int = 160) -> str:
    """``data`` shown around byte ``at`` (at most ``width`` bytes), as escaped text."""
    start = max(0, at - width // 2)
    shown = bytes(data[start:start + width])
    return ("..." if start else "") + repr(shown)[1:] + ("..." if start + width < len(data) else "")
