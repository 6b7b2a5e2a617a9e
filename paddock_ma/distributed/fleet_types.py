"""The fleet's value types: how it runs its shards (``FleetOptions``), what a consumer receives
(``ShardStep``), the driver's record of one shard (``ShardRecord``: its actor, progress, snapshot and the
history it replays after a failure), ``FleetError``, and which Ray exceptions mean a shard is gone
(``failure_types``). ``fleet.py`` runs the fleet."""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass, field

import numpy as np

from ..value_rules import check_integer, seconds_problem
from .shard import ShardCore


class FleetError(RuntimeError):
    """The fleet cannot go on (see the module docstring); ``events`` holds the failures seen."""

    def __init__(self, message: str, events: list | None = None):
        super().__init__(message)
        self.events = list(events or [])


@dataclass(frozen=True)
class FleetOptions:
    """How a ``ShardFleet`` runs its shards; none of it changes a trajectory. ``ShardFleet(...,
    **fields)`` builds one from keywords of these names (``merged``).

    deadline_s: seconds a call may take once the fleet runs (pick more than an actor start-up plus a
    step); start_timeout_s: for the first reset of the initial shards (a cold numba cache compiles for
    minutes); capacity_wait_s: how long a shard that cannot be placed or keeps failing is retried
    (``shard_lifecycle``); max_consecutive_failures: failures in a row that end the run (with
    ``capacity_wait_s``). snapshot_every: K, steps between snapshots. pipeline_depth: step calls kept in
    flight per shard; 2 (builtin policy only) overlaps a step's transfer with the next step's simulation.
    steps_per_call: steps a shard takes in one call when its actions are computed in the shard (the
    built-in driver, or a shard running its policy) and no reset is pending; more than 1 shares the
    driver's per-call cost (a Ray round trip, ~0.5-1 ms of its CPU) over that many steps (``deadline_s``
    is then per call).
    rebalance_every_s: how often the fleet looks for nodes that joined the cluster and moves a shard onto
    one (``_maybe_rebalance``); None turns it off. shard_cls: the shard class, ``ShardCore`` or a subclass
    (made a Ray actor by ``shard.actor_class``); shard_options: its extra constructor keywords
    (``reset_placement``, ``start_placement``).
    """
    deadline_s: float = 30.0
    start_timeout_s: float = 300.0
    capacity_wait_s: float = 600.0
    max_consecutive_failures: int = 3
    snapshot_every: int = 16
    pipeline_depth: int = 1
    steps_per_call: int = 1
    rebalance_every_s: float | None = 5.0
    shard_cls: type = ShardCore
    shard_options: dict = field(default_factory=dict)

    def __post_init__(self):
        for name in ("snapshot_every", "max_consecutive_failures", "steps_per_call"):
            check_integer(getattr(self, name), name, low=1)
        if (seconds_problem(self.deadline_s, allow_inf=True) or seconds_problem(self.start_timeout_s, allow_inf=True)
                or seconds_problem(self.capacity_wait_s)):
            raise ValueError(f"deadline_s / start_timeout_s / capacity_wait_s: got {self.deadline_s!r} / "
                             f"{self.start_timeout_s!r} / {self.capacity_wait_s!r}; expected finite seconds > 0")
        if not (isinstance(self.shard_cls, type) and issubclass(self.shard_cls, ShardCore)):
            raise ValueError(f"shard_cls: got {self.shard_cls!r}; expected ShardCore or a subclass of it")
        for name in ("deadline_s", "start_timeout_s", "capacity_wait_s"):
            object.__setattr__(self, name, float(getattr(self, name)))
        object.__setattr__(self, "shard_options", dict(self.shard_options or {}))

    @classmethod
    def merged(cls, options: FleetOptions | None = None, **fields) -> FleetOptions:
        """``options`` (default: the defaults) with ``fields`` replaced; TypeError names an unknown field."""
        return dataclasses.replace(options or cls(), **fields)


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
    inflight_actions: list = field(default_factory=list)     # per step call in ``pending``: its steps' (actions, resets)
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
