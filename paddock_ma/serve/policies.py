"""A policy trained here behind PaddockJS's Policy Runner contract: drivers by id, batched decisions.

``ServedActor(doc)`` runs a ``paddockjs-distilled-actor-v1`` actor (``paddock_ma.paddockjs.checkpoint``)
for the drivers a session names: ``reset(driver_ids)`` starts a session (every driver's history zero),
``reset_state(driver_ids)`` restarts those drivers' history, ``decide(driver_ids, observations)`` returns
``{driver: {steering, throttle, brake}}`` for one batched step (one matrix product per layer for all
drivers). Observations are PaddockJS's: ``{"vector": [...], "object": {"self": {"speedKph",
"trackOffsetMeters"}}}``; without an object, speed and offset are read from the vector (its first entry
is km/h / 400, its 12th the offset in m). A driver listed without an observation gets zero controls and
keeps its history (PaddockJS's checkpoint controller does the same).

What a request may hold, as PaddockJS's Policy Runner sends it: driver ids are non-empty strings of at
most ``MAX_DRIVER_ID_CHARS`` characters, at most ``MAX_DRIVERS_PER_REQUEST`` a request (``too_large``
beyond); a vector is a non-empty list of JSON numbers (no booleans, no numeric strings) and, like
``speedKph`` and ``trackOffsetMeters``, each finite with a magnitude of at most ``MAX_MAGNITUDE`` (a
scaled observation entry is within a few units; 1e308 would overflow the network); ``object`` and its
``self`` are objects or absent. A session remembers at most ``MAX_REMEMBERED_DRIVERS`` drivers: a
request naming more new ones is refused (``too_large``) until ``reset`` starts a new session.

A bad request raises PaddockError naming the field (``invalid_request``, or ``too_large``) before any
state changes. A policy output that is not finite (an actor whose weights overflow) is refused as a
whole, naming the driver (``internal``, field ``actions.<driver>``): no driver's history moves, and no
``NaN`` ever reaches the wire.
"""

from __future__ import annotations

from itertools import chain

import numpy as np

from ..errors import INTERNAL_ERROR, INVALID_REQUEST, TOO_LARGE, PaddockError
from ..paddockjs.checkpoint import HISTORY_SIZE, OFFSET_INDEX, ActorPolicy, vector_speed_offset
from ..value_rules import number_problem

ZERO_ACTION = {"steering": 0.0, "throttle": 0.0, "brake": 0.0}
MAX_DRIVERS_PER_REQUEST = 1024
MAX_DRIVER_ID_CHARS = 256
MAX_REMEMBERED_DRIVERS = 4096
MAX_MAGNITUDE = 1e6
_NUMBER_TYPES = {int, float}


def _bad(field: str, message: str, code: str = INVALID_REQUEST):
    raise PaddockError(code, f"{field}: {message}", field)


def _shown(driver_id: str) -> str:
    """A driver id as a message shows it: whole when short, else its start and length."""
    return repr(driver_id) if len(driver_id) <= 40 else f"{driver_id[:20]!r}... ({len(driver_id)} characters)"


def driver_id_list(body: dict, field: str = "driverIds") -> list[str]:
    """The body's list of driver ids (absent or null: empty), each a non-empty string of at most
    ``MAX_DRIVER_ID_CHARS``, at most ``MAX_DRIVERS_PER_REQUEST`` of them."""
    ids = body.get(field)
    if ids is None:
        return []
    if not isinstance(ids, list):
        _bad(field, f"expected a list of driver id strings, got {type(ids).__name__}")
    if len(ids) > MAX_DRIVERS_PER_REQUEST:
        _bad(field, f"{len(ids)} drivers in one request; at most {MAX_DRIVERS_PER_REQUEST}: split the batch",
             TOO_LARGE)
    for i, d in enumerate(ids):
        if not isinstance(d, str) or not d:
            _bad(f"{field}[{i}]", f"expected a non-empty driver id string, got {d!r}"[:200])
        if len(d) > MAX_DRIVER_ID_CHARS:
            _bad(f"{field}[{i}]", f"got {_shown(d)}; a driver id has at most {MAX_DRIVER_ID_CHARS} characters")
    return ids


def _number(value, field: str, default: float) -> float:
    if value is None:
        return default
    problem = number_problem(value, -MAX_MAGNITUDE, MAX_MAGNITUDE)
    if problem is not None:
        _bad(field, problem[:200])
    return float(value)


def _object_self(obs: dict, field: str) -> dict | None:
    """The observation's ``object.self`` (None when absent), refusing an object or self of another type."""
    obj = obs.get("object")
    if obj is None:
        return None
    if not isinstance(obj, dict):
        _bad(f"{field}.object", f"expected an observation object or null, got {type(obj).__name__}")
    me = obj.get("self")
    if me is not None and not isinstance(me, dict):
        _bad(f"{field}.object.self", f"expected an object {{speedKph, trackOffsetMeters, ...}} or null, got "
             f"{type(me).__name__}")
    return me


def _check_entries(raw: list, fields: list[str]) -> None:
    """Every vector entry a JSON number (no booleans, no strings): one pass over all of them, then the
    first bad entry named."""
    if set(map(type, chain.from_iterable(raw))) <= _NUMBER_TYPES:
        return
    for vector, field in zip(raw, fields):
        for i, x in enumerate(vector):
            if type(x) not in _NUMBER_TYPES:
                _bad(f"{field}.vector", f"entry [{i}]: got {x!r}"[:200] + "; expected a finite number")


def _check_magnitudes(vectors, fields: list[str]) -> None:
    """Every entry finite and within +-MAX_MAGNITUDE (NaN fails the comparison too)."""
    if isinstance(vectors, np.ndarray):
        ok = np.abs(vectors) <= MAX_MAGNITUDE
        if ok.all():
            return
        row, i = (int(k) for k in np.argwhere(~ok)[0])
        value = vectors[row, i]
    else:
        for row, v in enumerate(vectors):
            ok = np.abs(v) <= MAX_MAGNITUDE
            if not ok.all():
                i = int(np.flatnonzero(~ok)[0])
                value = v[i]
                break
        else:
            return
    _bad(f"{fields[row]}.vector", f"entry [{i}]: " + number_problem(float(value), -MAX_MAGNITUDE, MAX_MAGNITUDE))


def parse_observations(observations: list, fields: list[str]):
    """(vectors: float64[N, D] or a list of float64[D_i], speed km/h float64[N], offset m float64[N]) of
    PaddockJS observations; the vectors are converted in one call when they have one length."""
    raw, selves = [], []
    for obs, field in zip(observations, fields):
        if not isinstance(obs, dict):
            _bad(field, f"expected an observation object {{vector, object}}, got {type(obs).__name__}")
        vector = obs.get("vector")
        if not isinstance(vector, list) or not vector:
            _bad(f"{field}.vector", "expected a non-empty list of numbers (observation output 'vector' or 'both')")
        raw.append(vector)
        selves.append(_object_self(obs, field))
    _check_entries(raw, fields)
    if len({len(v) for v in raw}) == 1:
        vectors = np.array(raw, np.float64)
    else:
        vectors = [np.array(v, np.float64) for v in raw]
    _check_magnitudes(vectors, fields)
    speed, offset = np.zeros(len(raw)), np.zeros(len(raw))     # PaddockJS's default where nothing says
    for i, (field, v, me) in enumerate(zip(fields, vectors, selves)):
        if len(v) > OFFSET_INDEX:
            s, o = vector_speed_offset(np.asarray(v)[None])
            speed[i], offset[i] = s[0], o[0]
        if me is not None:
            speed[i] = _number(me.get("speedKph"), f"{field}.object.self.speedKph", speed[i])
            offset[i] = _number(me.get("trackOffsetMeters"), f"{field}.object.self.trackOffsetMeters", offset[i])
    return vectors, speed, offset


class ServedActor:
    """See the module docstring. ``doc``: a validated actor document."""

    kind = "paddockjs-distilled-actor-v1"

    def __init__(self, doc: dict):
        self.doc = doc
        self.obs_dim = int(doc["obsDim"])
        self.rows: dict[str, int] = {}
        self.policy = ActorPolicy(doc, 0)

    def _ensure(self, driver_ids) -> np.ndarray:
        """Rows of ``driver_ids``, adding a zero history for drivers not seen before (refused, changing
        nothing, when the session would remember more than ``MAX_REMEMBERED_DRIVERS``)."""
        new = [d for d in dict.fromkeys(driver_ids) if d not in self.rows]
        if len(self.rows) + len(new) > MAX_REMEMBERED_DRIVERS:
            _bad("driverIds", f"this session remembers {len(self.rows)} drivers and {len(new)} more would pass the cap "
                 f"of {MAX_REMEMBERED_DRIVERS}; POST /policy/reset starts a new session with the drivers it names",
                 TOO_LARGE)
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
        finite = np.isfinite(sa).all(axis=1)
        if not finite.all():                   # refused before any history moves: no NaN reaches the wire
            k = int(np.flatnonzero(~finite)[0])
            raise PaddockError(INTERNAL_ERROR, f"actions.{ids[k]}: the policy's output for driver {_shown(ids[k])} is "
                               f"not finite (steering {sa[k, 0]}, accel {sa[k, 1]}) although its observation is in "
                               "range: the actor's weights overflow; no driver's state changed", f"actions.{ids[k]}")
        self.policy.history.advance(sa, speed, offset, rows)
        steering, accel = sa[:, 0].tolist(), sa[:, 1].tolist()
        for d, s, a in zip(ids, steering, accel):
            actions[d] = {"steering": s, "throttle": a if a > 0 else 0.0, "brake": -a if a < 0 else 0.0}
        return actions

    def describe(self) -> dict:
        return {"kind": self.kind, "obsDim": self.obs_dim, "historyFeatures": HISTORY_SIZE}
