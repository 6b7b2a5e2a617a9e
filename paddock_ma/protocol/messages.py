"""The worker protocol's dispatcher: one JSON request in, one JSON reply out, no I/O.

Every transport (in-process, the NDJSON stdio worker, a Ray shard) calls ``Dispatcher.handle_line`` (or
``handle`` with an already-decoded value), so their replies are byte-identical. A dispatcher hosts W
worlds of one config in one ``BatchEnv``; world ``w`` is also a ``PaddockEnv`` view (the dict API).

Requests are PaddockJS 2.0's ``{"id", "type", ...}`` with camelCase fields; ``env`` (default 0) picks a
world. Replies are ``{"id", "ok": true, "type": "<type>:result", "result"}`` or ``{"id", "ok": false,
"type": "error", "error": "<message>", "code", "field"?}``. A rejected request changes no state.

Types: ``hello`` (version handshake), ``reset`` (``options``: ``seed`` and config keys such as
``scenario``), ``step`` (``actions``), ``resetDrivers`` (``placements``, ``resultOptions``),
``getActionSpec``, ``getObservationSpec``, ``getObservation``, ``getState`` (``stateOptions.output``, alias
``resultOptions.stateOutput``), ``snapshot``, ``restore`` (``snapshot``), ``destroy``.

The batched form: ``reset``, ``step`` and ``resetDrivers`` with ``envs`` (``"all"`` or a list of world
indices) run in one call of the engine, and the reply holds arrays whose first index is the position in
``envs`` (see ``batch_results``). ``encoding: "f32-base64"`` sends vectors (and takes batched actions)
as base64 float32 (``codec.pack_f32``) instead of JSON numbers.
"""

from __future__ import annotations

import re
import sys
import traceback

import numpy as np

from .. import __version__
from ..env.batch_env import BatchEnv
from ..env.config.root import EnvConfig, ignored_key_warnings
from ..env.environment import STATE_OUTPUTS, PaddockEnv
from ..errors import (
    INTERNAL_ERROR, INVALID_ACTION, INVALID_REQUEST, UNKNOWN_TYPE, VERSION_MISMATCH, PaddockError,
)
from ..env.reset.scenarios import parse_placements
from ..env.seeding import SEED_LIMIT
from ..paddockjs.naming import wire_name
from ..value_rules import integer_problem
from ..env.views.events import race_flags
from .batch_results import batch_result
from .codec import (
    ENCODINGS, F32_ENCODING, PLAIN_ENCODING, Limits, PackedF32, WireError, decode, encode, pack_f32,
)
from .batched import batched_actions
from .replies import error_reply, json_kind, short, wire_message
from .snapshots import pack_worker_snapshot, unpack_worker_snapshot, world_steps
from .wire_names import from_request, to_wire, wire_field

PROTOCOL = "paddock-ma-worker"
PROTOCOL_VERSION = "1.0"          # major.minor: a client of another major is refused at hello
CONTRACT_VERSION = "2.0.1"        # the PaddockJS environment contract the replies follow
DEFAULT_SEED = 0                  # a first reset without a seed (and no config seed) uses this
MESSAGE_TYPES = ("hello", "reset", "step", "resetDrivers", "getActionSpec", "getObservationSpec",
                 "getObservation", "getState", "snapshot", "restore", "destroy")
# the request fields each type accepts (besides "id" and "type")
_FIELDS = {
    "hello": {"protocolVersion", "client"},
    "reset": {"options", "env", "envs", "encoding"},
    "step": {"actions", "env", "envs", "encoding"},
    "resetDrivers": {"placements", "resultOptions", "env", "envs", "encoding"},
    "getActionSpec": set(),
    "getObservationSpec": set(),
    "getObservation": {"env", "encoding"},
    "getState": {"stateOptions", "resultOptions", "env"},
    "snapshot": set(),
    "restore": {"snapshot"},
    "destroy": set(),
}
_VERSION = re.compile(r"([0-9]{1,6})\.([0-9]{1,6})")


def js_string(value) -> str:
    """JavaScript's String(value) of a decoded JSON value (what PaddockJS's template strings show)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e21:
        return str(int(value))
    if isinstance(value, list):
        return ",".join("" if v is None else js_string(v) for v in value)
    if isinstance(value, dict):
        return "[object Object]"
    return str(value)


class Dispatcher:
    """W worlds of one config behind the JSON worker protocol (see the module docstring)."""

    def __init__(self, config: EnvConfig | dict, *, num_worlds: int = 1, env_id: str | None = None,
                 limits: Limits = Limits()):
        self.limits = limits
        self.env_id = env_id
        self.num_worlds = num_worlds
        self._build(config if isinstance(config, EnvConfig) else EnvConfig.from_dict(config))
        self._handlers = {
            "hello": self._hello, "reset": self._reset, "step": self._step, "resetDrivers": self._reset_drivers,
            "getActionSpec": self._action_spec, "getObservationSpec": self._observation_spec,
            "getObservation": self._get_observation, "getState": self._get_state, "snapshot": self._snapshot,
            "restore": self._restore, "destroy": self._destroy,
        }

    def _build(self, config: EnvConfig) -> None:
        before = set(self.engine.config.ignored_keys) if hasattr(self, "engine") else set()
        # PaddockJS keys that change nothing here: said once, in the next reply's "warnings"
        self._warnings = ignored_key_warnings(set(config.ignored_keys) - before)
        previous = getattr(self, "engine", None)
        self.engine = BatchEnv(config, self.num_worlds, copy_obs=False)
        for observer in previous.observers if previous is not None else ():
            self.engine.add_observer(observer)    # a reset with config options rebuilds the engine: keep its watchers
        self.worlds = [PaddockEnv.world_of(self.engine, w) for w in range(self.num_worlds)]
        self._seed: int | None = None

    @property
    def config(self) -> EnvConfig:
        return self.engine.config

    @property
    def last_seed(self) -> int | None:
        """The seed of the last accepted reset, which a later reset without ``options.seed`` reuses
        (None before the first reset: then the config's seed or the default applies)."""
        return self._seed

    # -- entry points ----------------------------------------------------------------------------
    def handle_line(self, line: bytes | str) -> bytes:
        """One request line -> one reply line (compact JSON, no newline). Never raises."""
        try:
            message = decode(line, self.limits)
        except WireError as exc:
            return self.error_line(exc.code, exc.message, exc.field)
        return encode(self._dispatch(message, PackedF32))

    def error_line(self, code: str, message: str, field: str | None = None, id=None) -> bytes:
        """An error reply line (for transports: e.g. ``line_too_long`` for a line they did not read)."""
        return encode(error_reply(id, code, message, field))

    def handle(self, message) -> dict:
        """One decoded request -> its reply (JSON-safe). Never raises; a rejected request changes nothing."""
        return self._dispatch(message, pack_f32)

    def _dispatch(self, message, pack) -> dict:
        """``handle`` with ``pack`` turning float32 arrays into their f32-base64 form (``pack_f32``'s dict,
        or ``PackedF32``, which ``encode`` writes with the same bytes, faster); pending config warnings
        go into this reply's ``warnings``."""
        reply = self._answer(message, pack)
        if self._warnings:
            reply["warnings"], self._warnings = self._warnings, []
        return reply

    def _answer(self, message, pack) -> dict:
        self._pack = pack
        mid = None
        try:
            if not isinstance(message, dict):
                raise PaddockError(INVALID_REQUEST, f"request: got {json_kind(message)}; expected a JSON object "
                                   "{\"id\", \"type\", ...}", "request")
            mid = self._check_id(message.get("id"))
            kind = message.get("type")
            handler = self._handlers.get(kind) if isinstance(kind, str) else None
            if handler is None:   # PaddockJS's text (its template string of the type), then the known types
                shown = "undefined" if "type" not in message else js_string(kind)
                raise PaddockError(UNKNOWN_TYPE, f"Unsupported PaddockJS environment worker message type: {shown} "
                                   f"(expected one of {', '.join(MESSAGE_TYPES)})", "type")
            for key in message:
                if key not in ("id", "type") and key not in _FIELDS[kind]:
                    allowed = ", ".join(sorted(_FIELDS[kind])) or "none"
                    raise PaddockError(INVALID_REQUEST, f"{key}: unknown field of a {kind} message; its fields: "
                                       f"{allowed}", key)
            return {"id": mid, "ok": True, "type": f"{kind}:result", "result": handler(message)}
        except PaddockError as exc:
            return error_reply(mid, exc.code, wire_message(exc), wire_field(exc.field))
        except Exception as exc:  # a bug: report it and keep serving
            traceback.print_exc(file=sys.stderr)
            return error_reply(mid, INTERNAL_ERROR, f"internal error: {type(exc).__name__}: {exc}", None)

    def _check_id(self, mid):
        """The request's id, echoed in its reply whatever its JSON type (as PaddockJS echoes it): a number,
        a string, null, a boolean, a list or an object; the line cap bounds its size."""
        return mid

    # -- helpers ----------------------------------------------------------------------------------
    def _worlds_of(self, message) -> list[int] | None:
        """The batched form's world list (``envs``), or None for a one-world request (``env``)."""
        if "envs" not in message:
            return None
        if "env" in message:
            raise PaddockError(INVALID_REQUEST, "env: give either env (one world) or envs (a batch), not both", "env")
        envs = message["envs"]
        if envs == "all":
            return list(range(self.num_worlds))
        if not isinstance(envs, list) or not envs:
            raise PaddockError(INVALID_REQUEST, f"envs: got {short(envs)}; expected \"all\" or a non-empty list of "
                               f"world indices in [0, {self.num_worlds})", "envs")
        for i, w in enumerate(envs):
            if integer_problem(w, 0, self.num_worlds) is not None:
                raise PaddockError(INVALID_REQUEST, f"envs[{i}]: got {short(w)}; expected a world index in "
                                   f"[0, {self.num_worlds})", f"envs[{i}]")
        if len(set(envs)) != len(envs):
            raise PaddockError(INVALID_REQUEST, "envs: a world is listed twice", "envs")
        return envs

    def _world(self, message) -> PaddockEnv:
        w = message.get("env", 0)
        if integer_problem(w, 0, self.num_worlds) is not None:
            raise PaddockError(INVALID_REQUEST, f"env: got {short(w)}; expected a world index in "
                               f"[0, {self.num_worlds})", "env")
        return self.worlds[w]

    def _encoding(self, message) -> str:
        encoding = message.get("encoding", PLAIN_ENCODING)
        if encoding not in ENCODINGS:
            raise PaddockError(INVALID_REQUEST, f"encoding: got {short(encoding)}; expected one of "
                               f"{', '.join(ENCODINGS)}", "encoding")
        return encoding

    def _object(self, message, key, default=None) -> dict | None:
        value = message.get(key, default)
        if value is not None and not isinstance(value, dict):
            raise PaddockError(INVALID_REQUEST, f"{key}: got {json_kind(value)}; expected an object", key)
        return value

    def _require_reset(self):
        """A worker starts reset, as a PaddockJS environment is created reset: before the first explicit
        reset, every world is reset here with the config's seed (or DEFAULT_SEED), once, when a request
        first needs the worlds."""
        if self.engine.state is None:
            self._seed = self._seed if self._seed is not None else (
                self.config.seed if self.config.seed is not None else DEFAULT_SEED)
            self.engine.reset(self._seed)
            self._forget_results()

    def _forget_results(self):
        for world in self.worlds:
            world.forget_latest()

    def _one_world_result(self, result: dict, encoding: str) -> dict:
        if encoding == F32_ENCODING:     # a copy: the world keeps its latest result for getObservation
            result = dict(result, observation={d: dict(o, vector=self._pack(o["vector"])) if "vector" in o else o
                                               for d, o in result["observation"].items()})
        return to_wire(result)

    # -- handlers ---------------------------------------------------------------------------------
    def _hello(self, message) -> dict:
        requested = message.get("protocolVersion")
        if requested is not None:
            match = _VERSION.fullmatch(requested) if isinstance(requested, str) else None
            if match is None:
                raise PaddockError(INVALID_REQUEST, f"protocolVersion: got {short(requested)}; expected "
                                   "\"MAJOR.MINOR\", e.g. \"1.0\"", "protocolVersion")
            if match.group(1) != PROTOCOL_VERSION.split(".")[0]:
                raise PaddockError(VERSION_MISMATCH, f"protocolVersion: the client speaks {requested}, this worker "
                                   f"speaks {PROTOCOL_VERSION}; use a worker or client of the same major version",
                                   "protocolVersion")
        return to_wire({
            "protocol": PROTOCOL, "protocol_version": PROTOCOL_VERSION, "package": "paddock-ma",
            "package_version": __version__, "contract_version": CONTRACT_VERSION, "env_id": self.env_id,
            "env_version": _env_version(self.env_id), "worlds": self.num_worlds,
            "controlled_drivers": list(self.engine.controlled), "encodings": list(ENCODINGS),
            "message_types": list(MESSAGE_TYPES),
            "limits": {"max_line_bytes": self.limits.max_line_bytes, "max_depth": self.limits.max_depth,
                       "max_drivers": self.limits.max_drivers},
        })

    def _reset(self, message) -> dict:
        encoding = self._encoding(message)
        envs = self._worlds_of(message)
        world = self._world(message) if envs is None else None      # checked before anything changes
        options = from_request(self._object(message, "options") or {})
        seed = options.pop("seed", None)
        if seed is not None and integer_problem(seed, 0, SEED_LIMIT) is not None:
            raise PaddockError(INVALID_REQUEST, f"options.seed: got {short(seed)}; expected an integer in "
                               "[0, 2**63)", "options.seed")
        if seed is None:
            seed = self._seed if self._seed is not None else (
                self.config.seed if self.config.seed is not None else DEFAULT_SEED)
        if options:   # config keys: a new engine for every world (checked before anything changes)
            if envs is None and self.num_worlds > 1:
                raise PaddockError(INVALID_REQUEST, "options: config keys change every world of this worker; "
                                   "send them in a batched reset (envs: \"all\")", "options")
            self._build(self.config.merged(options))
        self._seed = seed
        if envs is None:
            return self._one_world_result(self.worlds[world.w].reset(seed), encoding)
        if len(envs) == self.num_worlds or self.engine.state is None:
            self.engine.reset(seed)
        else:
            picked = np.zeros(self.num_worlds, bool)
            picked[envs] = True
            self.engine.reset(seed, worlds=picked)
        self._forget_results()
        return batch_result(self.engine, envs, encoding, self._pack, before=None)

    def _step(self, message) -> dict:
        self._require_reset()
        encoding = self._encoding(message)
        envs = self._worlds_of(message)
        if "actions" not in message:
            raise PaddockError(INVALID_ACTION, "actions: missing; send an object mapping each controlled driver "
                               "to {steering, throttle, brake}", "actions")
        if envs is None:
            world = self._world(message)
            actions = message["actions"]
            self.check_driver_count(actions, "actions")
            return self._one_world_result(world.step(from_request(actions, "actions")
                                                     if isinstance(actions, dict) else actions), encoding)
        acts, intents, compounds, release, errors = batched_actions(self, message["actions"], envs, encoding)
        picked = np.zeros(self.num_worlds, bool)
        picked[envs] = True
        before = race_flags(self.engine, envs)
        self.engine.step(acts, pit_intent=intents, pit_compound=compounds, release=release,
                         worlds=None if len(envs) == self.num_worlds else picked)
        self._forget_results()
        return batch_result(self.engine, envs, encoding, self._pack, before=before, action_errors=errors)

    def check_driver_count(self, entries, field):
        if isinstance(entries, dict) and len(entries) > self.limits.max_drivers:
            raise PaddockError(INVALID_REQUEST, f"{field}: {len(entries)} drivers is over the cap of "
                               f"{self.limits.max_drivers} per message", field)

    def _reset_drivers(self, message) -> dict:
        self._require_reset()
        encoding = self._encoding(message)
        envs = self._worlds_of(message)
        options = from_request(self._object(message, "resultOptions") or {})
        unknown = set(options) - {"observation_scope", "state_output"}
        if unknown:
            key = sorted(unknown)[0]
            raise PaddockError(INVALID_REQUEST, f"resultOptions.{key}: unknown option; options: observationScope, "
                               "stateOutput", f"resultOptions.{key}")
        placements = message.get("placements")
        scope, state_output = options.get("observation_scope"), options.get("state_output")
        if scope is not None and scope not in ("all", "reset"):
            raise PaddockError(INVALID_REQUEST, f"resultOptions.observationScope: got {short(scope)}; expected "
                               "'all' or 'reset'", "resultOptions.observationScope")
        if state_output is not None and state_output not in STATE_OUTPUTS:
            raise PaddockError(INVALID_REQUEST, f"resultOptions.stateOutput: got {short(state_output)}; expected "
                               f"one of {', '.join(STATE_OUTPUTS)}", "resultOptions.stateOutput")
        if envs is None:
            self.check_driver_count(placements, "placements")
            return self._one_world_result(self._world(message).reset_drivers(
                from_request(placements, "placements") if isinstance(placements, dict) else placements,
                options.get("observation_scope"), options.get("state_output")), encoding)
        scope = options.get("observation_scope", self.config.result.reset_drivers_observation_scope)
        if scope not in ("all", "reset"):
            raise PaddockError(INVALID_REQUEST, f"resultOptions.observationScope: got {short(scope)}; expected "
                               "'all' or 'reset'", "resultOptions.observationScope")
        if options.get("state_output", "none") != "none":
            raise PaddockError(INVALID_REQUEST, "resultOptions.stateOutput: a batched resetDrivers sends no state; "
                               "leave it out or send 'none' (getState reads a world's state)",
                               "resultOptions.stateOutput")
        if not isinstance(placements, list) or len(placements) != len(envs):
            raise PaddockError(INVALID_REQUEST, f"placements: expected a list of {len(envs)} objects (one per world "
                               "of envs) mapping controlled drivers to placements", "placements")
        engine = self.engine
        mask = np.zeros((self.num_worlds, len(engine.controlled)), bool)
        chosen = {}
        for i, (w, entry) in enumerate(zip(envs, placements)):
            if isinstance(entry, dict) and not entry:
                continue
            self.check_driver_count(entry, f"placements[{i}]")
            try:
                parsed = parse_placements(from_request(entry, "placements") if isinstance(entry, dict) else entry,
                                          engine.controlled_index)
            except PaddockError as exc:
                raise PaddockError(exc.code, exc.message.replace("placements", f"placements[{i}]", 1),
                                   exc.field.replace("placements", f"placements[{i}]", 1) if exc.field else None) \
                    from None
            for driver, placement in parsed.items():
                k = engine.controlled_index[driver]
                mask[w, k] = True
                chosen[(w, k)] = placement if placement is not None else engine.scenario_placement(driver)
        worlds, ks = np.nonzero(mask)
        engine.reset_drivers(mask, [chosen[(w, k)] for w, k in zip(worlds.tolist(), ks.tolist())])
        self._forget_results()
        return batch_result(engine, envs, encoding, self._pack, before=None, reset_mask=mask,
                            reset_scope=scope == "reset")

    def _action_spec(self, message) -> dict:
        spec = to_wire(self.worlds[0].get_action_spec())
        action = spec.get("action", {})
        if isinstance(action.get("perDriver"), dict):    # keyed by action field names here, not driver ids
            action["perDriver"] = {wire_name(k): v for k, v in action["perDriver"].items()}
        return spec

    def _observation_spec(self, message) -> dict:
        spec = self.worlds[0].get_observation_spec()
        spec["encodings"] = list(ENCODINGS)
        return to_wire(spec)

    def _get_observation(self, message) -> dict:
        self._require_reset()
        observation = self._world(message).get_observation()
        if self._encoding(message) == F32_ENCODING:
            observation = {d: dict(o, vector=self._pack(o["vector"])) if "vector" in o else o
                           for d, o in observation.items()}
        return to_wire(observation, "observation")

    def _get_state(self, message) -> dict | None:
        self._require_reset()
        output = "full"
        state_options = from_request(self._object(message, "stateOptions") or {})
        result_options = from_request(self._object(message, "resultOptions") or {})
        for name, options, key in (("stateOptions", state_options, "output"),
                                   ("resultOptions", result_options, "state_output")):
            extra = set(options) - {key}
            if extra:
                bad = sorted(extra)[0]
                raise PaddockError(INVALID_REQUEST, f"{name}.{bad}: unknown option; getState reads "
                                   "stateOptions.output (or its alias resultOptions.stateOutput)", f"{name}.{bad}")
        field = None
        if "state_output" in result_options:
            output, field = result_options["state_output"], "resultOptions.stateOutput"
        if "output" in state_options:
            output, field = state_options["output"], "stateOptions.output"
        if output not in STATE_OUTPUTS:
            raise PaddockError(INVALID_REQUEST, f"{field}: got {short(output)}; expected one of "
                               f"{', '.join(STATE_OUTPUTS)}", field)
        return to_wire(self._world(message).get_state(output))

    def _snapshot(self, message) -> dict:
        self._require_reset()
        return {"snapshot": pack_worker_snapshot(self.engine, self._seed), "worlds": self.num_worlds,
                "steps": world_steps(self.engine)}

    def _restore(self, message) -> dict:
        doc, seed = unpack_worker_snapshot(message.get("snapshot"), self.num_worlds)
        self.engine.restore(doc)      # checks track, layout, shape and checksums; nothing changes on failure
        self._seed = seed
        self._forget_results()
        return {"worlds": self.num_worlds, "steps": world_steps(self.engine)}

    def _destroy(self, message) -> None:
        """Release the cached results. The worlds stay: a later step still works, as in PaddockJS 2.0; a
        worker process ends when its input closes."""
        self._forget_results()
        return None


def _env_version(env_id: str | None):
    match = re.search(r"-v(\d+)$", env_id or "")
    return int(match.group(1)) if match else None
