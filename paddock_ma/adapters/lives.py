"""Per-car lives over a BatchEnv: the bookkeeping shared by the PettingZoo and RLlib adapters.

A multi-agent API never lets an agent id come back once it is done inside one episode, but a training
world wants a crashed car back on track at once. So each *life* of a controlled car is its own agent,
``id_format.format(w=world, driver=driver, life=life)``, and every id of ``max_lives`` lives per car is
declared up front. Per step (one ``BatchEnv.step`` for every world):

* a car whose episode ends (terminated or truncated by the sim) reports its final observation, reward,
  flags and info under its current id, which then leaves the live set for good;
* with ``auto_reset`` and lives left, the car is reset at once by the engine's auto-reset
  (``BatchEnv.step(auto_reset=mask)``, the engine's ``reset_placement``) and its next life appears in the observations returned by the same ``step`` call
  (the observation the policy acts on next) and nothing else; with no lives left the car retires;
* a world is over when no car of it is alive, or when its step count reaches ``max_world_steps`` (every
  live agent of it is truncated then); the env episode is over when every world is over. A world that
  is over keeps stepping inside the batch (its cars are terminal or ignored) until the next ``reset``.

Without ``auto_reset`` a car has exactly one life per episode, so only the ``@0`` ids are declared.
Nothing here loops over cars in Python except to build the per-agent dicts the APIs need.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..env.episodes import (
    END_DESTROYED, END_REASON_NAMES, M_LEGAL_PROGRESS, EpisodeArrays, episode_dict, metrics_dict,
)
from ..errors import (
    EPISODE_ENDED, INVALID_ACTION, NOT_RESET, SNAPSHOT_REJECTED, UNKNOWN_DRIVER, ConfigError, PaddockError,
)
from ..value_rules import check_integer, check_placement
from .tally import EpisodeTally


def check_options(max_lives, reset_placement, max_world_steps):
    check_integer(max_lives, "max_lives", low=1)
    check_placement(reset_placement, "reset_placement")
    if max_world_steps is not None:
        check_integer(max_world_steps, "max_world_steps", low=1)    # or None: no cap


class Lives:
    """Agent bookkeeping of W worlds x K controlled cars x ``max_lives`` lives over one BatchEnv."""

    def __init__(self, engine, id_format: str, *, max_lives: int = 8, auto_reset: bool = False,
                 reset_placement: str | None = None, max_world_steps: int | None = None):
        reset_placement = engine.reset_placement if reset_placement is None else reset_placement
        check_options(max_lives, reset_placement, max_world_steps)
        if reset_placement != engine.reset_placement:
            raise ConfigError("reset_placement", f"got {reset_placement!r}, but the engine re-places with "
                              f"{engine.reset_placement!r}: new lives are the engine's auto-reset (give "
                              "BatchEnv(reset_placement=...) the same policy)")
        self.engine = engine
        self.auto_reset = bool(auto_reset)
        self.max_lives = int(max_lives) if auto_reset else 1
        self.reset_placement = reset_placement
        self.max_world_steps = max_world_steps
        w, k = engine.num_worlds, len(engine.controlled)
        self.shape = (w, k)
        self.id_format = id_format
        # ids[w][k][life] and the reverse index agent -> (w, k, life)
        self.ids = [[[id_format.format(w=wi, driver=d, life=life) for life in range(self.max_lives)]
                     for d in engine.controlled] for wi in range(w)]
        self.possible_agents = [self.ids[wi][ki][life] for wi in range(w) for ki in range(k)
                                for life in range(self.max_lives)]
        self.index = {a: (wi, ki, life) for wi in range(w) for ki in range(k)
                      for life, a in enumerate(self.ids[wi][ki])}
        if len(self.index) != len(self.possible_agents):
            raise ConfigError("id_format", f"{id_format!r} does not give unique agent ids")
        self.obs_sizes = [int(n) for n in engine.obs_sizes]
        self.alive = np.zeros(self.shape, bool)
        self.life = np.zeros(self.shape, np.int32)
        self.world_over = np.ones(w, bool)
        self.world_steps = np.zeros(w, np.int64)
        # each running life's legal progress and steps, and totals over every life that ended since this
        # object was built (across resets)
        self.tally = EpisodeTally(self.shape, "lives")
        self.agents: list[str] = []

    # -- helpers --------------------------------------------------------------------------------
    def agent_of(self, w: int, k: int) -> str:
        return self.ids[w][k][int(self.life[w, k])]

    def _live_list(self):
        wi, ki = np.nonzero(self.alive)
        return [self.ids[a][b][self.life[a, b]] for a, b in zip(wi.tolist(), ki.tolist())]

    def _obs(self, obs, w, k):
        return obs[w, k, :self.obs_sizes[k]]

    @property
    def all_over(self) -> bool:
        return bool(self.world_over.all())

    # -- reset ----------------------------------------------------------------------------------
    def reset(self, seed=None):
        """Reset every world. Returns (result, list of (w, k)) of the agents that start."""
        result = self.engine.reset(seed)
        self.life[:] = result.life
        self.alive[:] = ~result.done
        self.world_steps[:] = 0
        self.world_over[:] = ~self.alive.any(axis=1)
        self.tally.clear()
        self.agents = self._live_list()
        return result

    # -- actions ----------------------------------------------------------------------------------
    def actions_to_arrays(self, actions, split=None):
        """The arrays of a ``{agent: action}`` dict: float64[W, K, 3] (and pit arrays via ``split``).

        This checks the dict's shape only: unknown ids, ids that are not alive, a missing action for
        a live agent and a value that is not 3 numbers raise PaddockError naming the agent, and
        nothing is stepped. The values themselves follow the contract's one action rule, applied by
        ``BatchEnv.step`` (through ``step`` here): non-finite values are rejected naming the agent,
        out-of-range values are clamped and the clamped controls reported (``applied_controls``).
        ``split(agent, value)`` returns ``(vehicle_action, pit_intent, pit_compound)`` for Dict
        action spaces.
        """
        if self.engine.state is None:
            raise PaddockError(NOT_RESET, "the environment has not been reset: call reset() before step()")
        if self.world_over.all() and not self.agents:
            raise PaddockError(EPISODE_ENDED, "the episode is over (no live agents): call reset()")
        if not isinstance(actions, dict):
            raise PaddockError(INVALID_ACTION, f"actions: got {type(actions).__name__}; expected a dict "
                               "mapping live agent ids to actions", "actions")
        out = np.zeros(self.shape + (3,), np.float64)
        intents = compounds = None
        if split is not None:
            intents = np.full(self.shape, -1, np.int64)
            compounds = np.full(self.shape, -1, np.int64)
        keys = list(actions)
        where = [self.index.get(a) if isinstance(a, str) else None for a in keys]
        if None in where:
            agent = keys[where.index(None)]
            pattern = self.id_format.replace("{w}", "{world}")
            raise PaddockError(UNKNOWN_DRIVER, f"actions.{agent}: {agent!r} is not an agent of this "
                               f"environment (ids are {pattern!r}, see possible_agents)", f"actions.{agent}")
        if not keys:
            wi = ki = li = np.zeros(0, np.int64)
        else:
            wi, ki, li = (np.array(c, np.int64) for c in zip(*where))
        not_alive = ~self.alive[wi, ki] | (self.life[wi, ki] != li)
        if not_alive.any():
            i = int(np.argmax(not_alive))
            agent, (w, k, life) = keys[i], where[i]
            state = "has finished" if life < self.life[w, k] or not self.alive[w, k] else "is not born yet"
            raise PaddockError(EPISODE_ENDED, f"actions.{agent}: agent {agent!r} is not alive ({state}); "
                               "send actions only for the agents in `agents`", f"actions.{agent}")
        if len(keys) != int(self.alive.sum()):
            given = np.zeros(self.shape, bool)
            given[wi, ki] = True
            w, k = (int(i) for i in np.argwhere(self.alive & ~given)[0])
            agent = self.agent_of(w, k)
            raise PaddockError(INVALID_ACTION, f"actions.{agent}: missing action for live agent {agent!r}",
                               f"actions.{agent}")
        values = list(actions.values())
        if split is not None:
            parts = [split(a, v) for a, v in zip(keys, values)]
            values = [p[0] for p in parts]
            intents[wi, ki] = [p[1] for p in parts]
            compounds[wi, ki] = [p[2] for p in parts]
        try:
            vec = np.asarray(values, np.float64).reshape(len(keys), -1)
            ok = (vec.shape[1] == 3) if keys else True
        except (TypeError, ValueError):
            vec, ok = None, False
        if not ok:
            for agent, value in zip(keys, values):   # slow path: name the first agent whose value is no action
                try:
                    ok = np.asarray(value, np.float64).shape == (3,)
                except (TypeError, ValueError):
                    ok = False
                if not ok:
                    raise PaddockError(INVALID_ACTION, f"actions.{agent}: got {value!r}; expected 3 numbers "
                                       "[steering -1..1, throttle 0..1, brake 0..1] (out-of-range values are "
                                       "clamped)", f"actions.{agent}")
        if keys:
            out[wi, ki] = vec
        return out, intents, compounds

    # -- step -------------------------------------------------------------------------------------
    def step(self, acts, intents=None, compounds=None) -> "LivesStep":
        """One BatchEnv step of every world plus the lives logic; returns the step's ``LivesStep``.

        A non-finite action value raises PaddockError naming the agent (nothing is stepped); values out
        of range are clamped by the engine (``LivesStep.applied_controls``).
        """
        alive_before = self.alive.copy()
        active = ~self.world_over
        cap = np.zeros_like(active)
        if self.max_world_steps is not None:
            cap = active & (self.world_steps + 1 >= self.max_world_steps)     # worlds that reach the cap now
        # the engine's auto-reset starts the next life of a car whose life ends now, if it has lives left
        # and its world goes on
        may_reset = (alive_before & ~cap[:, None] & (self.life < self.max_lives - 1)) if self.auto_reset else False
        try:
            result = self.engine.step(acts, intents, compounds, auto_reset=may_reset)
        except PaddockError as exc:
            where = getattr(exc, "where", None)
            if where is None:
                raise
            agent = self.agent_of(*where)
            raise PaddockError(exc.code, f"actions.{agent}: got {list(np.asarray(acts)[where])!r}; expected 3 finite "
                               "numbers [steering -1..1, throttle 0..1, brake 0..1] (out-of-range values are "
                               "clamped)", f"actions.{agent}") from None
        self.world_steps[active] += 1
        done = result.done & alive_before
        self.tally.add(alive_before, result.metrics[..., M_LEGAL_PROGRESS])
        cap_trunc = alive_before & ~done & cap[:, None]
        ended = done | cap_trunc
        wi, ki = np.nonzero(ended)
        ended_ids = {(a, b): self.ids[a][b][self.life[a, b]] for a, b in zip(wi.tolist(), ki.tolist())}
        self.alive &= ~ended
        ended_progress, ended_steps = self.tally.meters.copy(), self.tally.steps.copy()
        self.tally.close(ended, result.end_reason)
        newborn = result.reset_mask
        reset_result = result.reset_result
        if reset_result is not None:
            self.life[newborn] = reset_result.life[newborn]
            # a placement that touches the barrier gives a terminal newborn: it still appears (obs
            # only) and reports its termination on the next step.
            self.alive |= newborn
        self.world_over |= active & (cap | ~self.alive.any(axis=1))
        self.agents = self._live_list()
        return LivesStep(result=result, final_obs=result.obs if result.final_obs is None else result.final_obs,
                         ended=ended, terminated=result.terminated & done,
                         truncated=(result.truncated & done) | cap_trunc, ended_ids=ended_ids, newborn=newborn,
                         reborn=reset_result, retired=done & ~newborn, capped=cap,
                         ended_progress=ended_progress, ended_steps=ended_steps,
                         applied_controls=self.engine.applied_controls())

    # -- snapshot -----------------------------------------------------------------------------------
    _ARRAYS = (("alive", bool), ("life", np.int32), ("world_over", bool), ("world_steps", np.int64),
               ("life_progress", np.float64), ("life_steps", np.int64))

    @property
    def life_progress(self) -> np.ndarray:
        """float64[W, K]: legal progress (m) of each running life."""
        return self.tally.meters

    @property
    def life_steps(self) -> np.ndarray:
        """int64[W, K]: steps of each running life."""
        return self.tally.steps

    @property
    def life_totals(self) -> dict:
        """Totals over every life that ended: ``lives_ended``, ``lives_crashed``, ``legal_meters``, ``steps``."""
        return self.tally.totals

    def snapshot(self) -> dict:
        """The engine's snapshot and this bookkeeping (alive lives, life counters, world steps, the running
        lives' progress and steps, the life totals), as one JSON-safe dict; ``restore`` brings both back."""
        return {"engine": self.engine.snapshot(), "id_format": self.id_format, "max_lives": self.max_lives,
                "shape": list(self.shape), "totals": dict(self.life_totals),
                "arrays": {name: getattr(self, name).tolist() for name, _ in self._ARRAYS}}

    def restore(self, doc: dict) -> None:
        """Restore ``snapshot()``'s document bit-exactly (engine and lives together). A document of another
        shape, id format or number of lives raises PaddockError(snapshot_rejected) and changes nothing."""
        def reject(what):
            raise PaddockError(SNAPSHOT_REJECTED, f"snapshot.{what}", "snapshot")
        if not isinstance(doc, dict) or not {"engine", "id_format", "max_lives", "shape", "totals",
                                             "arrays"} <= set(doc):
            reject("lives: expected a document of an adapter's snapshot() (engine, id_format, max_lives, "
                   "shape, totals, arrays)")
        for key, mine in (("id_format", self.id_format), ("max_lives", self.max_lives), ("shape", list(self.shape))):
            if doc[key] != mine:
                reject(f"{key}: got {doc[key]!r}; this env has {mine!r}")
        try:
            arrays = {name: np.asarray(doc["arrays"][name], dtype) for name, dtype in self._ARRAYS}
            totals = {key: type(value)(doc["totals"][key]) for key, value in self.life_totals.items()}
        except (KeyError, TypeError, ValueError) as exc:
            reject(f"arrays: unreadable ({type(exc).__name__}: {exc})")
        for name, array in arrays.items():
            want = self.shape[:1] if name.startswith("world") else self.shape
            if array.shape != want:
                reject(f"arrays.{name}: shape {array.shape}, expected {want}")
        self.engine.restore(doc["engine"])         # raises snapshot_rejected (nothing changed) on a bad engine doc
        for name, array in arrays.items():
            getattr(self, name)[...] = array
        self.tally.totals = totals
        self.agents = self._live_list()

    def end_episode(self) -> None:
        """End the env episode now: every world over, no agent alive (the next call is ``reset``)."""
        self.alive[:] = False
        self.world_over[:] = True
        self.agents = []

    def episode_info(self, result, w, k) -> dict:
        ep = EpisodeArrays(result.terminated, result.truncated, result.end_reason, result.episode_id,
                           result.episode_step, result.life)
        return episode_dict(ep, w, k)


@dataclass
class LivesStep:
    """What one ``Lives.step`` did, as arrays over [W, K] (bool unless said otherwise).

    result: the step's BatchResult (its ``obs`` are the newborn lives' first observations);
    final_obs float32[W, K, D]: the observations the step ended with (an ended life's last); ended: lives that
    ended this step, with ``terminated``/``truncated`` their flags (a world step cap truncates);
    ended_ids: (w, k) -> agent id of each ended life; newborn: cars reset into their next life, whose
    observations are ``result.obs`` and whose new episodes ``reborn`` holds (the engine's
    ``reset_result``; None when there is none); retired: cars whose episode
    ended with no life left to start; capped: bool[W] worlds that reached ``max_world_steps`` now;
    ended_progress float64 / ended_steps int64: legal progress (m) and steps of each life up to this
    step (read at the ended ones); applied_controls float32[W, K, 3]: the controls the engine applied
    (out-of-range actions clamped).
    """
    result: object
    final_obs: np.ndarray
    ended: np.ndarray
    terminated: np.ndarray
    truncated: np.ndarray
    ended_ids: dict
    newborn: np.ndarray
    reborn: object
    retired: np.ndarray
    capped: np.ndarray
    ended_progress: np.ndarray
    ended_steps: np.ndarray
    applied_controls: np.ndarray


def life_summary(record: LivesStep, w: int, k: int) -> dict:
    """Totals of the life of car (w, k) that ended in the step of ``record``, for per-life statistics."""
    reason = int(record.result.end_reason[w, k])   # 0 (none) when the world step cap ended a running car
    return {"legal_progress_meters": float(record.ended_progress[w, k]), "steps": int(record.ended_steps[w, k]),
            "crashed": reason == END_DESTROYED, "end_reason": END_REASON_NAMES[reason] or "world-step-cap",
            "retired": bool(record.retired[w, k])}


def info_for(lives: Lives, result, w: int, k: int, *, record: LivesStep | None = None, newborn: bool = False,
             full: bool = True) -> dict:
    """The per-agent info of car (w, k) from ``result`` (a reset's, a step's, or ``record.reborn``).

    full: driver, life, world step, the driver's episode state and the step's metrics and applied
    controls, plus ``newborn: True`` on a life's first appearance and ``life_summary`` on its last
    step. Otherwise (cheap, for RLlib) only ``newborn``/``life`` on the first appearance and
    ``life_summary`` at the end. ``record``: the step's LivesStep (None after a reset).
    """
    ended = record is not None and not newborn and bool(record.ended[w, k])
    if not full:
        if newborn:
            return {"newborn": True, "life": int(result.life[w, k])}
        return {"life_summary": life_summary(record, w, k)} if ended else {}
    info = {"driver": lives.engine.controlled[k], "life": int(result.life[w, k]),
            "world_step": int(lives.world_steps[w]), "episode": lives.episode_info(result, w, k)}
    if newborn:
        info["newborn"] = True
    else:
        info["metrics"] = metrics_dict(result.metrics[w, k])
        if record is not None:
            info["applied_controls"] = dict(zip(("steering", "throttle", "brake"),
                                                record.applied_controls[w, k].tolist()))
        if ended:
            info["life_summary"] = life_summary(record, w, k)
    return info


__all__ = ["Lives", "LivesStep", "info_for"]
