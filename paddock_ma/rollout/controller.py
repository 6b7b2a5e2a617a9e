"""DriverControllerLoop: drive a PaddockEnv (or anything with its dict API) from a user-owned controller.

The controller owns its model, hidden state, logging and checkpoints; the loop owns only the spec
handoff, the stable batching order, the action-repeat schedule and stepping. Controller methods:

* ``init(ctx)`` (optional, once, before the first reset): ``ctx.observation_spec``, ``ctx.action_spec``.
* ``reset(ctx)`` (optional, after every loop reset): ``ctx.controlled_drivers``, ``ctx.observations``,
  ``ctx.result``.
* ``decide_batch(ctx)`` (required, once per decision): ``ctx.ordered_observations`` (one observation
  per driver in ``ctx.controlled_drivers`` order, each carrying ``driver_id``), ``ctx.controlled_drivers``
  (the drivers whose episode is running, in the environment's controlled-driver order),
  ``ctx.observations`` (by driver), ``ctx.step``. Returns ``{driver: action}``.
* ``on_step(ctx)`` (optional, after every env step): ``ctx.actions`` (the map sent for this step),
  ``ctx.previous_actions`` (the map sent on the env step before, None on the first step after a
  reset; after ``reset_drivers`` the reset drivers are dropped from it), ``ctx.metrics``, ``ctx.result``,
  ``ctx.repeat_index``.

Contexts are ``LoopContext`` objects: attribute access (``ctx.metrics``) and item access
(``ctx["metrics"]``) both work. Drivers whose episode ended are left out of the action map (the
environment rejects actions for them) until ``reset_drivers`` brings them back. Any controller or
runtime error is stored in ``loop.stats.last_error`` and re-raised.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..value_rules import check_integer


class LoopContext(dict):
    """A dict whose keys are also attributes (``ctx.metrics is ctx["metrics"]``)."""

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


@dataclass
class LoopStats:
    steps: int = 0            # env.step calls made by the loop
    decisions: int = 0        # decide_batch calls
    resets: int = 0           # loop resets
    driver_resets: int = 0    # reset_drivers calls
    last_error: BaseException | None = None


class DriverControllerLoop:
    """Controller-driven stepping of ``runtime`` with ``action_repeat`` env steps per decision."""

    def __init__(self, runtime, controller, action_repeat: int = 1):
        check_integer(action_repeat, "action_repeat", low=1)
        if not callable(getattr(controller, "decide_batch", None)):
            raise TypeError("controller: expected an object with a decide_batch(ctx) method")
        self.runtime = runtime
        self.controller = controller
        self.action_repeat = action_repeat
        self.stats = LoopStats()
        self.observations: dict = {}       # the latest full observation of every controlled driver
        self.last_result: dict | None = None
        self.previous_actions: dict | None = None
        self._drivers_info: dict = {}
        self._initialized = False
        self._controlled: list | None = None

    # -- helpers ----------------------------------------------------------------------------------
    def _call(self, name: str, ctx: LoopContext):
        hook = getattr(self.controller, name, None)
        return hook(ctx) if callable(hook) else None

    def _guard(self, fn, *args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except BaseException as exc:  # playback stops; the error stays inspectable
            self.stats.last_error = exc
            raise

    @property
    def controlled_drivers(self) -> list:
        """Every controlled driver of the runtime, in its stable order (read from the action spec)."""
        if self._controlled is None:
            self._controlled = list(self.runtime.get_action_spec()["controlled_drivers"])
        return list(self._controlled)

    def active_drivers(self) -> list:
        """Controlled drivers whose episode is running, in the stable controlled-driver order."""
        info = self._drivers_info
        return [d for d in self.controlled_drivers
                if not (info.get(d, {}).get("terminated") or info.get(d, {}).get("truncated"))]

    @property
    def done(self) -> bool:
        return self.last_result is not None and not self.active_drivers()

    def _absorb(self, result: dict, partial: bool = False):
        obs = result.get("observation") or {}
        if partial:
            self.observations.update(obs)
        else:
            self.observations = dict(obs)
        self._drivers_info.update((result.get("info") or {}).get("drivers") or {})

    # -- public API -------------------------------------------------------------------------------
    def reset(self, seed: int | None = None, options: dict | None = None) -> dict:
        """Reset the runtime (``init`` the controller first if needed), then ``controller.reset``."""
        return self._guard(self._reset, seed, options)

    def _reset(self, seed, options):
        if not self._initialized:
            self._call("init", LoopContext(observation_spec=self.runtime.get_observation_spec(),
                                           action_spec=self.runtime.get_action_spec(), loop=self))
            self._initialized = True
        result = self.runtime.reset(seed=seed, options=options) if options else self.runtime.reset(seed=seed)
        self._controlled = None  # options may change the controlled drivers
        self._drivers_info = {}
        self._absorb(result)
        self.last_result = result
        self.previous_actions = None
        self.stats.resets += 1
        self._call("reset", LoopContext(controlled_drivers=self.controlled_drivers,
                                        observations=self.observations, result=result, loop=self))
        return result

    def step(self) -> dict:
        """One decision, applied for up to ``action_repeat`` env steps (fewer if everything ends).

        A fresh loop resets itself first. When every controlled driver's episode has ended, nothing is
        stepped and the last result is returned.
        """
        return self._guard(self._step)

    def _step(self):
        if self.last_result is None:
            self._reset(None, None)
        active = self.active_drivers()
        if not active:
            return self.last_result
        ordered = [dict(self.observations.get(d) or {}, driver_id=d) for d in active]
        decided = self.controller.decide_batch(LoopContext(
            ordered_observations=ordered, controlled_drivers=list(active), observations=self.observations,
            step=self.stats.steps, loop=self))
        self.stats.decisions += 1
        if not isinstance(decided, dict):
            raise TypeError(f"decide_batch returned {type(decided).__name__}; expected a {{driver: action}} dict")
        result = self.last_result
        for repeat in range(self.action_repeat):
            running = set(self.active_drivers())
            actions = {d: a for d, a in decided.items() if d in running or d not in self._drivers_info}
            result = self.runtime.step(actions)
            self.stats.steps += 1
            self._absorb(result)
            self.last_result = result
            self._call("on_step", LoopContext(actions=actions, previous_actions=self.previous_actions,
                                              metrics=result.get("metrics"), result=result,
                                              repeat_index=repeat, loop=self))
            self.previous_actions = actions
            if result.get("done"):
                break
        return result

    def run(self, max_steps: int | None = None) -> dict:
        """``step()`` until every controlled episode has ended or ``max_steps`` decisions were made."""
        result = self.last_result
        n = 0
        while max_steps is None or n < max_steps:
            result = self.step()
            n += 1
            if self.done:
                break
        return result

    def reset_drivers(self, placements: dict, state_output: str | None = None) -> dict:
        """Start new episodes for some drivers; their (partial, scope "reset") observations are merged
        into the cached full observations so the next ``decide_batch`` still sees every driver."""
        return self._guard(self._reset_drivers, placements, state_output)

    def _reset_drivers(self, placements, state_output):
        if self.last_result is None:
            raise RuntimeError("reset_drivers: the loop has not been reset; call loop.reset() first")
        result = self.runtime.reset_drivers(placements, observation_scope="reset", state_output=state_output)
        self._absorb(result, partial=True)
        self.stats.driver_resets += 1
        reset_ids = list((result.get("observation") or {}).keys())
        if self.previous_actions is not None:
            kept = {d: a for d, a in self.previous_actions.items() if d not in reset_ids}
            self.previous_actions = kept or None
        self._call("reset_drivers", LoopContext(driver_ids=reset_ids, observations=self.observations,
                                                result=result, loop=self))
        return result


__all__ = ["DriverControllerLoop", "LoopContext", "LoopStats"]
