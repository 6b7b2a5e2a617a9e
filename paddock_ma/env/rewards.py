"""Rewards: one vectorised interface, named example rewards, and PaddockJS's per-driver context.

**The interface.** A reward is ``fn(metrics: float32[W, K, M]) -> float[W, K]`` over a step's metric
arrays (columns ``episodes.METRIC_NAMES``: worlds x controlled drivers x metrics). ``VectorReward(fn)``
marks a callable as one (so that ``EnvConfig.reward`` can tell it from a PaddockJS context reward) and
checks the shape it returns; ``resolve_reward(spec)`` turns a name of ``EXAMPLE_REWARDS``, a
VectorReward or a plain callable (taken to be vectorised) into a VectorReward. Where a reward comes from:

* ``EnvConfig.reward = VectorReward(fn)``: honoured by ``BatchEnv`` (``BatchResult.reward``),
  ``PaddockEnv`` (``result["reward"]``), the PettingZoo and RLlib adapters, with the same numbers;
* ``BatchEnv(reward_fn=...)``, PettingZoo's ``reward_fn=`` and RLlib's ``env_config["reward"]``: the
  same kinds of spec; giving one there and one in the config is an error (which one would count?);
* ``EnvConfig.reward = reward(context)``, a plain callable: PaddockJS 2.0.1's per-driver contract with
  a dict context (``driver_id``, ``metrics``, ``episode``, ``observation``, ``action``, ``events``,
  ``previous``, ``state``). Only ``PaddockEnv`` can call it; ``BatchEnv`` and the adapters reject it
  with a ConfigError saying to wrap a vectorised reward instead. ``VectorReward.per_driver`` is the
  dict-shaped wrapper the other way round: a vectorised reward as a ``reward(context)`` callable.

**Examples** (for getting started, NOT canonical objectives; write your own from the neutral metrics):
``legal_progress`` and ``progress_crash`` (vectorised, in ``EXAMPLE_REWARDS``), and ``progress_reward``,
a demo ``reward(context)``:

``progress_reward(weights)`` returns a ``reward(context)`` callable usable as ``EnvConfig.reward``.
Real training code should write its own domain-specific ``reward(context)`` (or collect data with no
reward at all); the environment's ``metrics`` are reward-neutral facts meant for exactly that.

The value only depends on facts that every output mode can supply, so a compact run
(``observation.output: "vector"`` with ``result.state_output: "minimal"`` or ``"none"``) gives the same
reward as a full run for the same transition (``PaddockEnv`` hands a reward the minimal snapshot when
the result carries no state):

* legal progress: ``metrics.legal_progress_delta_meters``;
* speed and legality: the observation object's ``self`` block when present, otherwise this driver's
  car in ``state.snapshot.cars`` (minimal or full), otherwise the metrics alone (speed unknown -> 0,
  legality from ``metrics.off_track``: a context built by hand without a snapshot);
* contacts: ``metrics.contact_count``; steering and brake: the action sent for this step.
"""

from __future__ import annotations

import math

import numpy as np

from .episodes import M_DESTROYED, M_LEGAL_PROGRESS, M_OFF_TRACK, metrics_row
from ..errors import INTERNAL_ERROR, ConfigError, PaddockError


class VectorReward:
    """A vectorised reward ``fn(metrics float32[W, K, M]) -> float[W, K]`` (module docstring)."""

    def __init__(self, fn, name: str | None = None):
        if not callable(fn):
            raise ConfigError("reward", f"got {fn!r}; expected a callable fn(metrics[W, K, M]) -> [W, K]")
        self.fn = fn
        self.name = name or getattr(fn, "__name__", "reward")

    def __call__(self, metrics: np.ndarray) -> np.ndarray:
        """float32[W, K] of ``metrics`` float32[W, K, M]; PaddockError (internal) on another shape."""
        out = np.asarray(self.fn(metrics), np.float32)
        if out.shape != metrics.shape[:-1]:
            raise PaddockError(INTERNAL_ERROR, f"reward {self.name!r} returned shape {out.shape}; expected "
                               f"{metrics.shape[:-1]} (worlds, controlled drivers)", "reward")
        return out

    def per_driver(self, context: dict) -> float:
        """This reward as a PaddockJS ``reward(context)``: the context's metrics dict as one row."""
        return float(self(metrics_row(context["metrics"])[None, None])[0, 0])

    def __repr__(self) -> str:
        return f"VectorReward({self.name!r})"


def legal_progress_reward(metrics: np.ndarray) -> np.ndarray:
    """Example: metres of race distance gained this step with every wheel on a legal surface."""
    return metrics[..., M_LEGAL_PROGRESS].astype(np.float32)


def progress_crash_reward(metrics: np.ndarray, crash_penalty: float = 50.0, off_track_penalty: float = 0.1):
    """Example: legal progress (m) minus ``crash_penalty`` when the car hit the barrier and a small
    off-track cost."""
    return (metrics[..., M_LEGAL_PROGRESS] - crash_penalty * metrics[..., M_DESTROYED]
            - off_track_penalty * metrics[..., M_OFF_TRACK]).astype(np.float32)


# Example rewards by name: examples for getting started, not the project's canonical reward.
EXAMPLE_REWARDS = {"legal_progress": legal_progress_reward, "progress_crash": progress_crash_reward}
# The adapters' reward when neither the caller nor the config gives one (an example, not a canonical objective).
DEFAULT_REWARD = "legal_progress"


def reward_or_default(given, config_reward):
    """The reward option an adapter hands its engine: ``given``; else None when the config has a reward
    (the engine computes that one); else ``DEFAULT_REWARD``."""
    if given is not None:
        return given
    return None if config_reward is not None else DEFAULT_REWARD


def resolve_reward(spec, field: str = "reward") -> VectorReward | None:
    """A VectorReward from None, an ``EXAMPLE_REWARDS`` name, a VectorReward or a vectorised callable."""
    if spec is None or isinstance(spec, VectorReward):
        return spec
    if isinstance(spec, str):
        if spec not in EXAMPLE_REWARDS:
            raise ConfigError(field, f"got {spec!r}; expected a vectorised callable or one of {sorted(EXAMPLE_REWARDS)}")
        return VectorReward(EXAMPLE_REWARDS[spec], spec)
    if callable(spec):
        return VectorReward(spec)
    raise ConfigError(field, f"got {spec!r}; expected a name of {sorted(EXAMPLE_REWARDS)} or a callable "
                      "fn(metrics[W, K, M]) -> [W, K]")


def engine_reward(config_reward, given, field: str = "reward_fn") -> VectorReward | None:
    """The reward an engine computes: ``given`` (its own option) or the config's vectorised reward.

    A PaddockJS context reward in the config, or a reward given both ways, is a ConfigError."""
    if config_reward is not None and not isinstance(config_reward, VectorReward):
        raise ConfigError("reward", "the config's reward is a per-driver reward(context), which only PaddockEnv "
                          "calls; BatchEnv, PettingZoo and RLlib take a vectorised reward: set "
                          "paddock_ma.env.rewards.VectorReward(fn) with fn(metrics[W, K, M]) -> [W, K]")
    if given is not None and config_reward is not None:
        raise ConfigError(field, "a reward is given here and in the config (config.reward); give one of them")
    return resolve_reward(given, field) if given is not None else config_reward

DEFAULT_WEIGHTS = {
    "progress": 1.0,     # per metre of legal race-distance gain
    "speed": 0.01,       # per km/h while on a legal surface
    "off_track": -2.0,   # once per step while off the legal surface
    "collision": -10.0,  # per car-car contact event
    "steering": -0.03,   # per unit |steering| command
    "brake": -0.02,      # per unit |brake| command
}


def _driver_facts(context: dict) -> tuple[float, bool]:
    """(speed km/h, on a legal surface) of the context's driver, from the best available source."""
    driver = context.get("driver_id")
    obs = context.get("observation") or context.get("current") or {}
    obj = obs.get("object") if isinstance(obs, dict) else None
    if obj and isinstance(obj.get("self"), dict):
        me = obj["self"]
        return float(me.get("speed_kph", 0.0)), bool(me.get("on_track", True))
    snapshot = (context.get("state") or {}).get("snapshot") or {}
    for car in snapshot.get("cars", ()):
        if car.get("id") == driver:
            return float(car.get("speed_kph", 0.0)), bool(car.get("on_track", True))
    metrics = context.get("metrics") or {}
    return 0.0, not bool(metrics.get("off_track", False))


def _action_value(action, name: str) -> float:
    if not isinstance(action, dict):
        return 0.0
    value = action.get(name, 0.0)
    try:
        value = float(value)
    except (TypeError, ValueError):
        return 0.0
    return value if math.isfinite(value) else 0.0


def progress_reward(weights: dict | None = None):
    """A demo ``reward(context)``: an example for tutorials, NOT the canonical reward.

    reward = progress * legal progress (m) + speed * speed_kph (when on track) + off_track (when off)
             + collision * contacts + steering * |steering| + brake * |brake|

    Example::

        env = PaddockEnv({"track": "oval", "drivers": 2, "reward": progress_reward({"speed": 0.0})})

    weights: overrides of ``DEFAULT_WEIGHTS`` (unknown names are an error).
    """
    w = dict(DEFAULT_WEIGHTS)
    if weights:
        unknown = sorted(set(weights) - set(DEFAULT_WEIGHTS))
        if unknown:
            raise ValueError(f"progress_reward: unknown weight(s) {unknown}; known: {sorted(DEFAULT_WEIGHTS)}")
        w.update({k: float(v) for k, v in weights.items()})

    def reward(context: dict) -> float:
        metrics = context.get("metrics") or {}
        speed_kph, on_track = _driver_facts(context)
        action = context.get("action")
        value = w["progress"] * float(metrics.get("legal_progress_delta_meters", 0.0))
        value += w["speed"] * speed_kph if on_track else w["off_track"]
        value += w["collision"] * float(metrics.get("contact_count", 0))
        value += w["steering"] * abs(_action_value(action, "steering"))
        value += w["brake"] * abs(_action_value(action, "brake"))
        return float(value)

    reward.weights = dict(w)
    return reward


__all__ = ["VectorReward", "EXAMPLE_REWARDS", "resolve_reward", "engine_reward", "legal_progress_reward",
           "progress_crash_reward", "DEFAULT_WEIGHTS", "progress_reward"]
