"""Deterministic evaluation: fixed scenario cases, a per-driver quality tracker, no rewards, no learning.

``run_evaluation(base_config, policy, cases=None)`` runs one fresh ``PaddockEnv`` per case (the case's
seed, preset and step budget merged over ``base_config``; the track comes from the base config) until
every controlled episode ends, and reports ``EvaluationTracker`` metrics per controlled driver:

* ``distance_meters``: race distance gained since the start of the case;
* ``lap_progress_meters``: lap progress at the end (None when neither the object observation nor a
  full snapshot is available);
* ``off_track_steps``: steps whose ``off_track`` metric is set (wheel-level legality: a kerb is legal);
* ``contact_count``: car-car contact events involving the driver (the ``contact_count`` metric);
* ``recovery_success``: the car started off the legal surface and was later back on it;
* ``pass_count``: start position minus best position (the first reported rank counts as the start);
* ``lap_time_seconds``: the first lap time the ``lap_time_seconds`` metric reports (a partial first lap,
  after a placement part-way round, completes a lap with no time and is skipped); None without one.

The policy is ``fn(observation_by_driver, ctx)`` or an object with ``predict(observation_by_driver, ctx)``
returning ``{driver: action}``; a driver with no action gets full brake ``(0, 0, 1)``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..env.config.base import deep_merge
from ..env.config.root import EnvConfig
from ..env.environment import PaddockEnv

DEFAULT_ACTION = {"steering": 0.0, "throttle": 0.0, "brake": 1.0}


@dataclass(frozen=True)
class EvaluationCase:
    name: str
    seed: int
    max_steps: int
    preset: str | None = None              # defaults to ``name``
    options: dict = field(default_factory=dict, compare=False)  # extra config keys merged last

    def config(self, base: EnvConfig) -> EnvConfig:
        """``base`` with the case's seed, step budget and preset, then its ``options``, merged over it."""
        cfg = base.merged(deep_merge({"seed": self.seed, "episode": {"max_steps": self.max_steps},
                                      "scenario": {"preset": self.preset or self.name}}, self.options or {}))
        if cfg.result.state_output == "none":
            cfg = cfg.merged({"result": {"state_output": "minimal"}})  # the tracker's bookkeeping needs a snapshot
        return cfg


DEFAULT_EVALUATION_CASES = (
    EvaluationCase("cornering", 7101, 420),
    EvaluationCase("off-track-recovery", 7102, 360),
    EvaluationCase("overtaking-pack", 7103, 600),
    EvaluationCase("pit-entry", 7104, 480),
)


def _snapshot_cars(result: dict) -> dict:
    state = result.get("state")
    if not isinstance(state, dict) or not isinstance(state.get("snapshot"), dict):
        raise ValueError("EvaluationTracker needs result['state']['snapshot']: create the environment with "
                         "result.state_output 'minimal' or 'full' (run_evaluation does this for you)")
    return {car["id"]: car for car in state["snapshot"].get("cars", ())}


class EvaluationTracker:
    """Per-driver quality metrics over a sequence of results; needs ``state.snapshot`` in each."""

    def __init__(self, result: dict):
        cars = _snapshot_cars(result)
        self.drivers = list(result["info"]["controlled_drivers"])
        self.steps = 0
        self._start = {}
        self._track = {}
        for d in self.drivers:
            car = cars.get(d, {})
            self._start[d] = {"distance": float(car.get("race_distance_meters", 0.0)),
                              "on_track": bool(car.get("on_track", True)), "rank": car.get("rank")}
            self._track[d] = {"distance": self._start[d]["distance"], "off_track_steps": 0, "contacts": 0,
                              "back_on_track": False, "start_rank": car.get("rank"), "best_rank": car.get("rank"),
                              "lap_time": None, "lap_progress": None}
            self._read_progress(d, result, car)

    def _read_progress(self, d, result, car):
        obj = ((result.get("observation") or {}).get(d) or {}).get("object")
        if obj:
            self._track[d]["lap_progress"] = float(obj["self"]["lap_progress_meters"])
        elif "progress_meters" in car:
            self._track[d]["lap_progress"] = float(car["progress_meters"])

    def update(self, result: dict) -> None:
        """Account one step result (drivers absent from a scoped result keep their values)."""
        cars = _snapshot_cars(result)
        self.steps += 1
        metrics = result.get("metrics") or {}
        for d in self.drivers:
            t, car, m = self._track[d], cars.get(d), metrics.get(d)
            if car is None:
                continue
            t["distance"] = float(car["race_distance_meters"])
            self._read_progress(d, result, car)
            on_track = bool(car.get("on_track", True))
            if m is not None:
                t["off_track_steps"] += int(bool(m.get("off_track")))
                t["contacts"] += int(m.get("contact_count", 0))
                if t["lap_time"] is None and m.get("lap_completed") and m.get("lap_time_seconds") is not None:
                    t["lap_time"] = float(m["lap_time_seconds"])
            else:
                t["off_track_steps"] += int(not on_track)
            if on_track and not self._start[d]["on_track"]:
                t["back_on_track"] = True
            rank = car.get("rank")
            if rank is not None:
                if t["start_rank"] is None:
                    t["start_rank"] = rank
                t["best_rank"] = rank if t["best_rank"] is None else min(t["best_rank"], rank)

    def metrics(self) -> dict:
        """``{driver: {distance_meters, lap_progress_meters, off_track_steps, contact_count,
        recovery_success, pass_count, lap_time_seconds}}``."""
        out = {}
        for d in self.drivers:
            t = self._track[d]
            start_rank, best = t["start_rank"], t["best_rank"]
            out[d] = {
                "distance_meters": t["distance"] - self._start[d]["distance"],
                "lap_progress_meters": t["lap_progress"],
                "off_track_steps": t["off_track_steps"],
                "contact_count": t["contacts"],
                "recovery_success": (not self._start[d]["on_track"]) and t["back_on_track"],
                "pass_count": (start_rank - best) if start_rank is not None and best is not None else 0,
                "lap_time_seconds": t["lap_time"],
            }
        return out


def _resolve_policy(policy):
    if callable(getattr(policy, "predict", None)):
        return policy.predict
    if callable(policy):
        return policy
    raise TypeError("policy: expected fn(observation_by_driver, ctx) or an object with predict(...)")


def _case(case) -> EvaluationCase:
    if isinstance(case, EvaluationCase):
        return case
    if isinstance(case, dict):
        return EvaluationCase(**case)
    raise TypeError(f"evaluation case: got {type(case).__name__}; expected an EvaluationCase or a dict")


def run_case(base_config, policy, case) -> dict:
    """Run one evaluation case; see ``run_evaluation`` for the result entry."""
    predict = _resolve_policy(policy)
    case = _case(case)
    base = base_config if isinstance(base_config, EnvConfig) else EnvConfig.from_dict(base_config)
    base = base.merged({"reward": None})  # evaluation is reward-neutral
    env = PaddockEnv(case.config(base))
    try:
        result = env.reset(seed=case.seed)
        tracker = EvaluationTracker(result)
        steps = 0
        while not result["done"] and steps < case.max_steps:
            drivers = result["info"]["drivers"]
            active = [d for d in result["info"]["controlled_drivers"]
                      if not (drivers[d]["terminated"] or drivers[d]["truncated"])]
            ctx = {"case": case.name, "step": steps, "result": result, "controlled_drivers": active}
            decided = predict(result["observation"], ctx) or {}
            actions = {d: decided.get(d) or dict(DEFAULT_ACTION) for d in active}
            result = env.step(actions)
            tracker.update(result)
            steps += 1
    finally:
        env.close()
    return {"name": case.name, "seed": case.seed, "steps": steps, "done": bool(result["done"]),
            "end_reason": result["info"]["end_reason"], "metrics": tracker.metrics()}


def run_evaluation(base_config, policy, cases=None) -> dict:
    """Run ``cases`` (default ``DEFAULT_EVALUATION_CASES``) and return
    ``{"cases": [{name, seed, steps, done, end_reason, metrics: {driver: tracker metrics}}]}``.

    base_config: an ``EnvConfig`` or config dict (its ``state_output: "none"`` is upgraded to
    ``"minimal"`` internally); policy: ``fn(observation_by_driver, ctx)`` or an object with ``predict``.
    """
    cases = DEFAULT_EVALUATION_CASES if cases is None else cases
    return {"cases": [run_case(base_config, policy, c) for c in cases]}


__all__ = ["DEFAULT_ACTION", "DEFAULT_EVALUATION_CASES", "EvaluationCase", "EvaluationTracker", "run_case",
           "run_evaluation"]
