"""A demo reward for examples and smoke tests. It is NOT a canonical or recommended objective.

``progress_reward(weights)`` returns a ``reward(context)`` callable usable as ``EnvConfig.reward``.
Real training code should write its own domain-specific ``reward(context)`` (or collect data with no
reward at all); the environment's ``metrics`` are reward-neutral facts meant for exactly that.

The value only depends on facts that every output mode can supply, so a compact run
(``observation.output: "vector"`` with ``result.state_output: "minimal"``) gives the same reward as a
full run for the same transition:

* legal progress: ``metrics.legal_progress_delta_meters``;
* speed and legality: the observation object's ``self`` block when present, otherwise this driver's
  car in ``state.snapshot.cars`` (minimal or full), otherwise the metrics alone (speed unknown -> 0,
  legality from ``metrics.off_track``);
* contacts: ``metrics.contact_count``; steering and brake: the action sent for this step.
"""

from __future__ import annotations

import math

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


__all__ = ["DEFAULT_WEIGHTS", "progress_reward"]
