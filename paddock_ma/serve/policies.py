"""A policy trained here behind PaddockJS's Policy Runner contract: drivers by id, batched decisions.

``ServedActor(doc)`` runs a ``paddockjs-distilled-actor-v1`` actor (``paddock_ma.paddockjs.checkpoint``)
for the drivers a session names: ``reset(driver_ids)`` starts a session (every driver's history zero),
``reset_state(driver_ids)`` restarts those drivers' history, ``decide(driver_ids, observations)`` returns
``{driver: {steering, throttle, brake}}`` for one batched step (one matrix product per layer for all
drivers). Observations are PaddockJS's: ``{"vector": [...], "object": {"self": {"speedKph",
"trackOffsetMeters"}}}``; without an object, speed and offset are read from the vector (its first entry
is km/h / 400, its 12th the offset in m). A driver listed without an observation gets zero controls and
keeps its history (PaddockJS's checkpoint controller does the same). A bad body raises PaddockError
(invalid_request) naming the field, before any state changes.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import INVALID_REQUEST, PaddockError
from ..paddockjs.checkpoint import HISTORY_SIZE, OFFSET_INDEX, ActorPolicy, vector_speed_offset

ZERO_ACTION = {"steering": 0.0, "throttle": 0.0, "brake": 0.0}


def _bad(field: str, message: str):
    raise PaddockError(INVALID_REQUEST, f"{field}: {message}", field)


def driver_id_list(body: dict, field: str = "driverIds") -> list[str]:
    """The body's list of driver ids (absent or null: empty), each a non-empty string."""
    ids = body.get(field)
    if ids is None:
        return []
    if not isinstance(ids, list):
        _bad(field, f"expected a list of driver id strings, got {type(ids).__name__}")
    for i, d in enumerate(ids):
        if not isinstance(d, str) or not d:
            _bad(f"{field}[{i}]", f"expected a non-empty driver id string, got {d!r}")
    return ids


def _number(value, field: str, default: float) -> float:
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        _bad(field, f"expected a finite number, got {value!r}")
    return float(value)


def parse_observations(observations: list, fields: list[str]):
    """(vectors: float64[N, D] or a list of float64[D_i], speed km/h float64[N], offset m float64[N]) of
    PaddockJS observations; the vectors are converted in one call when they have one length."""
    raw = []
    for obs, field in zip(observations, fields):
        if not isinstance(obs, dict):
            _bad(field, f"expected an observation object {{vector, object}}, got {type(obs).__name__}")
        vector = obs.get("vector")
        if not isinstance(vector, list) or not vector:
            _bad(f"{field}.vector", "expected a non-empty list of numbers (observation output 'vector' or 'both')")
        raw.append(vector)
    try:
        vectors = np.array(raw, np.float64) if len({len(v) for v in raw}) == 1 else None
    except (TypeError, ValueError):
        vectors = None
    if vectors is None or vectors.ndim != 2:
        vectors = [_vector(v, f"{field}.vector") for v, field in zip(raw, fields)]
    elif not np.isfinite(vectors).all():
        bad_row = int(np.flatnonzero(~np.isfinite(vectors).all(axis=1))[0])
        _bad(f"{fields[bad_row]}.vector", "expected a flat list of finite numbers")
    speed, offset = np.zeros(len(raw)), np.zeros(len(raw))     # PaddockJS's default where nothing says
    for i, (obs, field, v) in enumerate(zip(observations, fields, vectors)):
        if len(v) > OFFSET_INDEX:
            s, o = vector_speed_offset(np.asarray(v)[None])
            speed[i], offset[i] = s[0], o[0]
        me = (obs.get("object") or {}).get("self") if isinstance(obs.get("object"), dict) else None
        if isinstance(me, dict):
            speed[i] = _number(me.get("speedKph"), f"{field}.object.self.speedKph", speed[i])
            offset[i] = _number(me.get("trackOffsetMeters"), f"{field}.object.self.trackOffsetMeters", offset[i])
    return vectors, speed, offset


def _vector(vector, field: str) -> np.ndarray:
    try:
        v = np.asarray(vector, np.float64)
    except (TypeError, ValueError):
        _bad(field, "expected a flat list of numbers")
    if v.ndim != 1 or not np.isfinite(v).all():
        _bad(field, "expected a flat list of finite numbers")
    return v


class ServedActor:
    """See the module docstring. ``doc``: a validated actor document."""

    kind = "paddockjs-distilled-actor-v1"

    def __init__(self, doc: dict):
        self.doc = doc
        self.obs_dim = int(doc["obsDim"])
        self.rows: dict[str, int] = {}
        self.policy = ActorPolicy(doc, 0)

    def _ensure(self, driver_ids) -> np.ndarray:
        """Rows of ``driver_ids``, adding a zero history for drivers not seen before."""
        new = [d for d in dict.fromkeys(driver_ids) if d not in self.rows]
        if new:
            old = self.policy.history
            n = len(self.rows)
            for d in new:
                self.rows[d] = len(self.rows)
            grown = type(old)(len(self.rows))
            grown.previous_action[:n], grown.previous_speed[:n], grown.previous_offset[:n] = \
                old.previous_action, old.previous_speed, old.previous_offset
            self.policy.history = grown
        return np.array([self.rows[d] for d in driver_ids], np.int64)

    def reset(self, driver_ids: list[str]) -> None:
        self.rows = {}
        self.policy.history = type(self.policy.history)(0)
        self._ensure(driver_ids)

    def reset_state(self, driver_ids: list[str]) -> None:
        rows = self._ensure(driver_ids)
        self.policy.history.reset(rows)

    def decide(self, driver_ids: list[str], observations) -> dict:
        if not isinstance(observations, dict):
            _bad("observations", f"expected an object {{driverId: observation}}, got {type(observations).__name__}")
        ids = [d for d in dict.fromkeys(driver_ids) if observations.get(d) is not None]
        actions = {d: dict(ZERO_ACTION) for d in driver_ids}
        if not ids:
            return actions
        vectors, speed, offset = parse_observations([observations[d] for d in ids], [f"observations.{d}" for d in ids])
        rows = self._ensure(ids)
        feats = self.policy.history.features(speed, offset, rows)
        inputs = np.zeros((len(ids), self.obs_dim))
        for i, v in enumerate(vectors):       # vectors may differ in length: each row is fitted on its own
            n = min(len(v), self.obs_dim)
            inputs[i, :n] = v[:n]
            if n < self.obs_dim:
                m = min(len(feats[i]), self.obs_dim - n)
                inputs[i, n:n + m] = feats[i, :m]
        sa = self.policy.forward(inputs)
        self.policy.history.advance(sa, speed, offset, rows)
        steering, accel = sa[:, 0].tolist(), sa[:, 1].tolist()
        for d, s, a in zip(ids, steering, accel):
            actions[d] = {"steering": s, "throttle": a if a > 0 else 0.0, "brake": -a if a < 0 else 0.0}
        return actions

    def describe(self) -> dict:
        return {"kind": self.kind, "obsDim": self.obs_dim, "historyFeatures": HISTORY_SIZE}
