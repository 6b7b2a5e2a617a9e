"""PaddockEnv: one world with PaddockJS 2.0.1's dict API, over a one-world BatchEnv.

``reset``, ``step``, ``reset_drivers``, ``get_action_spec``, ``get_observation_spec``,
``get_observation``, ``get_state`` and ``close`` return plain dicts (numpy float32 vectors inside
observations; the protocol turns them into lists). A step result is::

    {"observation": {driver: {"object"?, "vector"?, "schema"?, "events"}},
     "reward": None | {driver: float}, "terminated", "truncated", "done",
     "events": [...], "metrics": {driver: {...}}, "state": None | {...},
     "info": {"step", "elapsed_seconds", "seed", "track", "track_seed", "controlled_drivers",
              "action_errors" (PaddockJS's strings), "action_error_details" ({code, message, field, driver_id}),
              "drivers": {driver: {terminated, truncated, end_reason, episode_id, episode_step}}}}

``done`` is true when every reported controlled driver is terminal (the 2.0.1 guide: a batch mixing
terminated and truncated drivers is done too); ``terminated`` when every one of them terminated,
``truncated`` when they are all done and at least one was truncated; ``info.end_reason`` by
``result_end_reason``.
"""

from __future__ import annotations

import numpy as np

from ..sim.core import layout as L
from .actions import action_spec, paddockjs_action_error, validate_actions
from .batch_env import BatchEnv
from .config.root import EnvConfig
from .episodes import episode_dicts, metrics_dicts
from ..errors import INTERNAL_ERROR, INVALID_REQUEST, NOT_RESET, PaddockError
from .views.events import race_flags, world_events
from .views.observation_object import object_view
from .rewards import VectorReward
from .reset.scenarios import parse_placements
from .views.state_view import paddockjs_state

STATE_OUTPUTS = ("full", "minimal", "none")


class RewardCallbackError(PaddockError):
    """The user's reward callback raised; ``driver_id`` names the driver it was computing."""

    def __init__(self, driver_id: str, exc: BaseException):
        super().__init__(INTERNAL_ERROR, f"reward callback failed for driver {driver_id!r}: "
                         f"{type(exc).__name__}: {exc}", "reward")
        self.driver_id = driver_id


class PaddockEnv:
    """One race world with the PaddockJS environment contract (see the module docstring)."""

    def __init__(self, config: EnvConfig | dict | None = None, **engine_options):
        self._engine_options = engine_options
        self._build(config if isinstance(config, EnvConfig) else EnvConfig.from_dict(config))

    @classmethod
    def world_of(cls, engine: BatchEnv, w: int) -> "PaddockEnv":
        """The dict API over world ``w`` of an existing ``engine`` (the worker protocol's worlds).

        A view shares the engine: its ``reset`` re-seeds world ``w`` alone and its ``step`` steps world
        ``w`` alone; a reset whose options change the config needs a new engine (rejected here).
        """
        env = cls.__new__(cls)
        env._engine_options = None
        env._attach(engine, w)
        return env

    def _build(self, config: EnvConfig):
        # a PaddockJS reward(context) is called here, per driver; the engine computes only vectorised ones
        context_reward = config.reward is not None and not isinstance(config.reward, VectorReward)
        engine_config = config.merged({"reward": None}) if context_reward else config
        previous = getattr(self, "engine", None)
        engine = BatchEnv(engine_config, 1, copy_obs=False, **self._engine_options)
        for observer in previous.observers if previous is not None else ():
            engine.add_observer(observer)      # a reset with config options rebuilds the engine: keep its watchers
        self._attach(engine, 0)
        self.config = config

    def _attach(self, engine: BatchEnv, w: int):
        self.config = engine.config
        self.engine = engine
        self.w = w
        self.controlled = engine.controlled
        self._config_driver_ids = tuple(d.id for d in engine.config.drivers)
        self._prev_state = None
        self._last = None

    # -- specs --------------------------------------------------------------------------------
    def get_action_spec(self) -> dict:
        return action_spec(self.controlled, self.engine.compounds)

    def get_observation_spec(self) -> dict:
        return self.engine.get_observation_spec()

    # -- reset --------------------------------------------------------------------------------
    def reset(self, seed: int | None = None, options: dict | None = None) -> dict:
        """Rebuild the world. ``options``: config keys merged over the current config (validated)."""
        if options:
            if not isinstance(options, dict):
                raise PaddockError(INVALID_REQUEST, f"options: expected an object, got {type(options).__name__}",
                                   "options")
            if self._engine_options is None:
                raise PaddockError(INVALID_REQUEST, "options: this world shares its engine with other worlds; "
                                   "config options apply to every world (rebuild the engine instead)", "options")
            self._build(self.config.merged(options))
        if self.engine.num_worlds == 1 or self.engine.state is None:
            self.engine.reset(seed)
        else:
            self.engine.reset(seed, worlds=self._world_selection())
        self._last = self._build_result(scope=None, reward=None, action_errors=[], state_output=None)
        return self._last

    # -- step ---------------------------------------------------------------------------------
    def step(self, actions: dict) -> dict:
        """Validate ``{driver: action}`` (nothing is stepped on an error), step ``frame_skip`` ticks."""
        self._require_reset()
        engine = self.engine
        w = self.w
        validated = validate_actions(
            actions, controlled=engine.controlled_index, running=engine.running_mask()[w],
            num_slots=len(self.controlled), compounds=engine.compounds,
            pit_stops_enabled=engine.pit_stops_enabled,
            in_active_stop=lambda: engine.active_pit_stops(w),
            policy=self.config.action_policy, all_drivers=self.config_driver_ids)
        intents = compounds = None
        if (validated.pit_intent >= 0).any() or (validated.pit_compound >= 0).any():
            intents, compounds = self._rows(validated.pit_intent, -1), self._rows(validated.pit_compound, -1)
        self._prev_state = self._last
        before = race_flags(engine, w)
        stepped = engine.step(self._rows(validated.controls, 0.0), pit_intent=intents, pit_compound=compounds,
                              release=self._rows(validated.release, 0),
                              worlds=None if engine.num_worlds == 1 else self._world_selection())
        result = self._build_result(scope=None, reward=None, action_errors=validated.errors, state_output=None,
                                    before=before)
        if stepped.reward is not None:       # the engine's vectorised reward (the config's VectorReward)
            result["reward"] = dict(zip(self.controlled, stepped.reward[w].tolist()))
        elif self.config.reward is not None:
            result["reward"] = self._rewards(result, actions)
        self._last = result
        return result

    def _world_selection(self) -> np.ndarray:
        """bool[W]: this world alone."""
        mask = np.zeros(self.engine.num_worlds, bool)
        mask[self.w] = True
        return mask

    def _rows(self, values: np.ndarray, fill) -> np.ndarray:
        """``values`` ([K, ...], this world's) as the engine's [W, K, ...] array, ``fill`` elsewhere."""
        if self.engine.num_worlds == 1:
            return values[None]
        out = np.full((self.engine.num_worlds,) + values.shape, fill, values.dtype)
        out[self.w] = values
        return out

    @property
    def config_driver_ids(self):
        return self._config_driver_ids

    def _rewards(self, result, actions) -> dict:
        # The context always carries a snapshot: with state_output "none" the reward still gets the
        # minimal one (PaddockJS's reward snapshot), so a compact run's reward equals a full run's.
        state = result["state"] if result["state"] is not None else self._state("minimal")
        rewards = {}
        for driver in result["metrics"]:
            context = {"driver_id": driver, "metrics": result["metrics"][driver],
                       "episode": result["info"]["drivers"][driver],
                       "observation": result["observation"].get(driver), "action": actions.get(driver),
                       "events": [e for e in result["events"] if driver in e.get("driver_ids", ())],
                       "previous": self._prev_state, "state": state}
            try:
                value = self.config.reward(context)
            except Exception as exc:
                raise RewardCallbackError(driver, exc) from exc
            rewards[driver] = 0.0 if value is None else float(value)
        return rewards

    # -- reset_drivers ------------------------------------------------------------------------
    def reset_drivers(self, placements: dict, observation_scope: str | None = None,
                      state_output: str | None = None) -> dict:
        """Start a new episode for some drivers inside the running world (see BatchEnv.reset_drivers).

        placements: ``{driver: {distance_meters, offset_meters?, speed_kph?, heading_error_radians?}}``
        (``None``/``{}`` = the driver's scenario placement). observation_scope ``"reset"`` limits
        observation, metrics and info.controlled_drivers to the reset drivers.
        """
        self._require_reset()
        scope = self.config.result.reset_drivers_observation_scope if observation_scope is None \
            else observation_scope
        if scope not in ("all", "reset"):
            raise PaddockError(INVALID_REQUEST, f"observation_scope: got {scope!r}; expected 'all' or 'reset'",
                               "observation_scope")
        if state_output is not None and state_output not in STATE_OUTPUTS:
            raise PaddockError(INVALID_REQUEST, f"state_output: got {state_output!r}; expected one of "
                               f"{', '.join(STATE_OUTPUTS)}", "state_output")
        parsed = parse_placements(placements, {d: k for k, d in enumerate(self.controlled)})
        engine = self.engine
        mask = np.zeros((engine.num_worlds, len(self.controlled)), bool)
        resolved = []
        for k, driver in enumerate(self.controlled):
            if driver in parsed:
                mask[self.w, k] = True
                p = parsed[driver]
                resolved.append(p if p is not None else engine.scenario_placement(driver))
        engine.reset_drivers(mask, resolved)
        reset_ids = [d for d in self.controlled if d in parsed]
        result = self._build_result(scope=reset_ids if scope == "reset" else None, reward=None, action_errors=[],
                                    state_output=state_output)
        # the latest result, as PaddockJS 2.0 keeps it: after a reset-scoped call, get_observation()
        # covers the reset drivers only (a controller loop merges them into its own cache)
        self._last = result
        return result

    def forget_latest(self) -> None:
        """Drop the cached latest result: the engine was reset or stepped as a batch, so the next
        ``get_observation()`` describes the world as it is then."""
        self._last = None

    # -- reads --------------------------------------------------------------------------------
    def get_observation(self) -> dict:
        self._require_reset()
        if self._last is None:      # the engine was reset or stepped as a batch: the world as it is now
            self._last = self._build_result(scope=None, reward=None, action_errors=[], state_output="none")
        return self._last["observation"]

    def get_state(self, output: str = "full") -> dict | None:
        self._require_reset()
        if output not in STATE_OUTPUTS:
            raise PaddockError(INVALID_REQUEST, f"output: got {output!r}; expected one of {', '.join(STATE_OUTPUTS)}", "output")
        return self._state(output)

    def snapshot(self) -> dict:
        return self.engine.snapshot()

    def restore(self, doc: dict) -> dict:
        self.engine.restore(doc)
        self._last = self._build_result(scope=None, reward=None, action_errors=[], state_output=None)
        return self._last

    def checksum(self) -> int:
        self._require_reset()
        return int(self.engine.checksums()[self.w])

    def close(self) -> None:
        self.engine.close()
        self._last = None

    # -- result building ----------------------------------------------------------------------
    def _require_reset(self):
        if self.engine.state is None:
            raise PaddockError(NOT_RESET, "the environment has not been reset: call reset() first")

    def _state(self, output, events=None):
        """The state view ``output`` with ``events`` (default: the latest result's) as its snapshot's
        events, as PaddockJS's snapshot carries the latest step's."""
        if output == "none":
            return None
        state = paddockjs_state(self.engine, self.w, output)
        if events is None:
            events = self._last["events"] if getattr(self, "_last", None) is not None else []
        state["snapshot"]["events"] = events
        return state

    def _build_result(self, scope, reward, action_errors, state_output, before=None) -> dict:
        engine = self.engine
        cfg = self.config
        w = self.w
        if scope is None:
            ids, ks = list(self.controlled), list(range(len(self.controlled)))
        else:
            ids = list(scope)
            ks = [engine.controlled_index[d] for d in ids]
        events, per_driver_events = world_events(engine, w, before)
        obs_cfg = cfg.observation
        with_object = obs_cfg.output in ("full", "object")
        with_vector = obs_cfg.output in ("full", "vector")
        # one copy of the step's vectors; each driver's is a row of it (its own length)
        vectors = engine.latest_obs[w].copy() if with_vector else None
        observation = {}
        for d, k in zip(ids, ks):
            o = {}
            if with_object:
                o["object"] = object_view(engine, w, k)
            if with_vector:
                o["vector"] = vectors[k, :engine.obs_sizes[k]]
                if obs_cfg.include_schema:
                    o["schema"] = engine.schemas[d]
            o["events"] = per_driver_events.get(d, [])
            observation[d] = o
        metrics = dict(zip(ids, metrics_dicts(engine.latest_metrics[w, ks])))
        drivers_info = dict(zip(self.controlled, episode_dicts(engine.state.cars_i[w, engine.slots])))
        reported = [drivers_info[d] for d in ids]
        done = all(i["terminated"] or i["truncated"] for i in reported)
        terminated = done and all(i["terminated"] for i in reported)
        output = state_output or cfg.result.state_output
        return {
            "observation": observation,
            "reward": reward,
            "metrics": metrics,
            "terminated": terminated,
            "truncated": done and not terminated,
            "done": done,
            "events": events,
            "state": self._state(output, events),
            "info": {
                "step": int(engine.state.world_i[w, L.WI_ENV_STEP]),
                "elapsed_seconds": float(engine.state.world_f[w, L.WF_TIME]),
                "seed": int(engine.state.world_i[w, L.WI_SEED]), "track": cfg.track_name,
                "track_seed": cfg.track_seed if cfg.track_seed is not None else paddockjs_track_seed(cfg.track_name),
                "controlled_drivers": ids,
                "action_errors": [paddockjs_action_error(e) for e in action_errors],
                "action_error_details": action_errors, "drivers": drivers_info,
                "end_reason": result_end_reason(reported) if done else None,
            },
        }


def paddockjs_track_seed(track: str):
    """PaddockJS's ``info.trackSeed``: the seed of a ``trackSeed`` track (``paddockjs:<seed>``), else None
    (a named track has no seed)."""
    return int(track.split(":", 1)[1]) if track.startswith("paddockjs:") else None


def result_end_reason(reported: list) -> str | None:
    """``info.end_reason`` of a result whose reported drivers (their ``info.drivers`` entries) have all
    ended. PaddockJS 2.0.0's race-level rule: a finished race is ``race-finish``; all terminated is the
    driver's own reason for one driver and ``all-drivers-terminated`` for several; all truncated is
    ``max-steps``. Terminated and truncated together, where the guide makes the result done (2.0.0
    never ends such a batch), is ``mixed`` (each driver's own reason stays in ``info.drivers``)."""
    reasons = [i["end_reason"] for i in reported]
    if "race-finish" in reasons:
        return "race-finish"
    if all(i["terminated"] for i in reported):
        return reasons[0] if len(reported) == 1 else "all-drivers-terminated"
    if not any(i["terminated"] for i in reported):
        return reasons[0] if len(set(reasons)) == 1 else "max-steps"
    return "mixed"


__all__ = ["PaddockEnv", "RewardCallbackError", "paddockjs_track_seed", "result_end_reason"]
