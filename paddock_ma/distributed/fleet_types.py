"""The fleet's value types: what a consumer receives (``ShardStep``), the driver's record of one shard
(``ShardRecord``: its actor, progress, snapshot and the history it replays after a failure), ``FleetError``,
and which Ray exceptions mean a shard is gone (``failure_types``). ``fleet.py`` runs the fleet."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

import numpy as np


class FleetError(RuntimeError):
    """The fleet cannot go on (see the module docstring); ``events`` holds the failures seen."""

    def __init__(self, message: str, events: list | None = None):
        super().__init__(message)
        self.events = list(events or [])


@dataclass
class ShardStep:
    """One step of one shard, handed out once: ``shard``, ``seq``, ``worlds`` int64[W] (global indices),
    ``obs`` float32[W, K, D] (what the cars acted on) and ``arrays`` (EnvShard.step's dict: ``action``,
    ``obs`` (next), ``final_obs``, ``metrics``, ``terminated``, ``truncated``, ``end_reason``, ``episode_id``,
    ``life``, ``episode_step``, ``checksum``, and ``snapshot`` when one was taken at this step)."""
    shard: int
    seq: int
    worlds: np.ndarray
    obs: np.ndarray
    arrays: dict


@dataclass
class ShardRecord:
    """The driver's record of shard ``index``: its actor, how far it has got, its last snapshot and the
    steps since (replayed after a failure), the calls in flight and their deadline."""
    index: int
    actor: object = None
    incarnation: int = -1
    seq: int = 0                       # last step handed out
    obs: np.ndarray | None = None      # observation after step ``seq`` (what the next step acts on)
    snap_seq: int = 0                  # seq of ``snap`` (0 with snap None: the reset)
    snap: dict | None = None
    history: dict = field(default_factory=dict)     # seq -> ((actions, resets), checksum uint64[W]) since snap
    pending: list | None = None        # "start": the chain's refs; "step": the step calls in flight, in order
    kind: str = ""                     # "place" (the actor's creation), "start" (reset/restore + replays), "step"
    inflight_actions: list = field(default_factory=list)     # (actions, resets) of the step calls in ``pending``
    resets: dict = field(default_factory=dict)   # seq -> {placement: bool[W, K]}: per-driver resets after that step
    deadline: float = 0.0              # time.monotonic() by which the call in flight must be done
    budget: float = 0.0                # seconds the calls in flight were given (for messages)
    start_timeout: float = 0.0         # seconds the start calls get once the actor is placed
    placing_since: float = 0.0         # when the current actor was created (time.monotonic())
    next_wait_note: float = 0.0        # when the next "wait" event is due while it is not placed
    consecutive_failures: int = 0
    pid: int | None = None
    node_id: str | None = None
    head: dict | None = None           # the reset/restore arrays the shard's current run started from


@functools.cache
def failure_types() -> tuple:
    """Ray exceptions that mean "this actor is gone or unreachable", as opposed to a bug in a call."""
    import ray.exceptions as E
    return tuple(getattr(E, n) for n in (
        "RayActorError", "ActorUnschedulableError", "WorkerCrashedError", "ObjectLostError", "NodeDiedError",
        "ActorPlacementGroupRemoved", "LocalRayletDiedError") if hasattr(E, n))
