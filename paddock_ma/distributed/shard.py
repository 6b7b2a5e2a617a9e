"""EnvShard: a Ray actor owning one BatchEnv of W worlds, stepped by sequence-numbered calls.

A shard holds the worlds with global indices ``world_offset .. world_offset + W - 1`` of a fleet. A
world's identity is its global index ``g``: its generator key is ``SeedSequence(seed).spawn(n)[g]``'s
(the same whatever ``n`` and whichever shard holds it: ``BatchEnv``'s ``world_offset``), so its
trajectory does not depend on how the fleet is cut into shards. Every car has lives: the engine runs
with ``auto_reset``, so a car whose episode ends starts a new one at once (``reset_placement``) inside
its running world. How the worlds are built and started is ``dataset.worlds``'s (a dataset replay
re-runs a world from there too).

Array fast path (numpy in, numpy out; shapes with K controlled drivers, D = obs size, M metrics):

* ``reset(seed) -> arrays``: ``obs`` float32[W, K, D], ``episode_id``, ``life``, ``episode_step``
  int32[W, K], ``checksum`` uint64[W] (FNV-1a-64 of each world's state), ``seq`` = 0.
* ``step(seq, actions, snapshot=False) -> (seq, arrays)``: ``seq`` must be exactly the shard's last
  sequence number + 1, else ``ShardSeqError`` and nothing is stepped (a replayed call can never step
  twice). ``actions`` float32[W, K, 3] (steering [-1, 1], throttle [0, 1], brake [0, 1]) or None for the
  built-in driver's controls. ``arrays``: ``action`` float32[W, K, 3] (what was applied), ``obs``
  (the next observation: a car that just ended already shows its new life's), ``final_obs``
  float32[W, K, D] or None (the last observation of the cars that ended), ``metrics`` float32[W, K, M]
  (``episodes.METRIC_NAMES``, no reward), ``terminated``/``truncated`` bool[W, K], ``end_reason``
  int32[W, K] (``layout.END_REASON_NAMES``), and ``episode_id``/``life``/``episode_step`` int32[W, K] of
  the episode the transition belongs to (``episode_step`` counts its steps from 1), ``checksum``
  uint64[W] after the step, and ``snapshot`` (a ``snapshot()`` document) when asked for.
* ``step(..., reset_mask=bool[W, K], reset_placement=...)``: those cars start a new episode right after
  the step (per-driver ``reset_drivers``); their transition is truncated, ``reset_requested`` marks it.
* ``steps(seq, count, snapshots) -> [(seq, arrays)]``: ``count`` steps in one call, actions computed in
  the shard (the fleet's ``steps_per_call``: one round trip for many steps).
* ``snapshot() -> doc`` / ``restore(doc, seq=None) -> arrays``: the worlds' whole state and the sequence number,
  JSON-safe and checksummed; ``restore`` takes only a document of these same worlds.
* ``checksums() -> uint64[W]``.

JSON protocol path: ``handle(message) -> reply`` and ``handle_line(bytes) -> bytes`` are
``shard_protocol.ShardProtocol``'s, whose ``Dispatcher`` builds its own engine of W worlds of the same
config (its API constructs the engine itself): the protocol's worlds are not the array path's worlds.

Live preview: ``preview_frame``, ``preview_copy`` and ``track_picture`` are views of the array path's
worlds built by ``env.views.frames`` (they read the state only).

The actor runs with ``max_restarts=0`` and ``max_task_retries=0`` (at-most-once: Ray replaying a queued
``step`` onto a fresh actor would silently corrupt trajectories); ``ShardFleet`` recovers shards itself.
Numba, OpenMP and torch are pinned to one thread (``runtime_env`` environment variables).
``actor_class(cls)`` is the one place a shard class (``ShardCore`` or a subclass, such as the test
double ``distributed.testing.FaultyShardCore``) becomes a Ray actor class with these options.
"""

from __future__ import annotations

import functools
import os

import numpy as np

from ..dataset.shard_files import ShardFiles
from ..dataset.worlds import collection_engine, start_worlds
from ..env.seeding import check_seed
from ..value_rules import check_integer, check_placement, integer_problem
from .policies import resolve_policy
from .shard_protocol import ShardProtocol

SINGLE_THREAD_ENV = {"OMP_NUM_THREADS": "1", "NUMBA_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
                     "OPENBLAS_NUM_THREADS": "1", "RAY_AUTH_MODE": os.environ.get("RAY_AUTH_MODE", "")}
SHARD_FORMAT = "paddock-ma-shard-snapshot"
# The options every EnvShard actor is created with (tests read them back from the actor class).
ACTOR_OPTIONS = {"num_cpus": 1, "max_restarts": 0, "max_task_retries": 0, "max_concurrency": 1,
                 "runtime_env": {"env_vars": {k: v for k, v in SINGLE_THREAD_ENV.items() if v}}}


class ShardError(RuntimeError):
    """A shard refused a call; the message names the field, the value and the fix."""


class ShardSeqError(ShardError):
    """``step`` got a sequence number that is not the shard's next one (nothing was stepped)."""


_FINGERPRINT: str | None = None


def code_fingerprint() -> str:
    """SHA-256 (hex, 16 chars) of the package version and the bytes of every module that decides a
    trajectory (``paddock_ma/sim``, ``paddock_ma/env``, ``dataset/worlds.py``, ``distributed/shard.py``,
    ``distributed/policies.py``, the catalogue's manifests and tracks). Shards and the driver must agree on it: a cluster whose nodes run
    different code would replay a failed shard into a different trajectory."""
    global _FINGERPRINT
    if _FINGERPRINT is None:
        from pathlib import Path

        from .. import __version__
        from ..sources import files_digest, python_sources
        pkg = Path(__file__).resolve().parent.parent
        files = [*python_sources(pkg / "sim"), *python_sources(pkg / "env"), pkg / "dataset" / "worlds.py",
                 pkg / "distributed" / "shard.py", pkg / "distributed" / "policies.py",
                 *(pkg.parent / "envs").rglob("*.json")]
        _FINGERPRINT = files_digest(files, pkg.parent, salt=__version__.encode())[:16]
    return _FINGERPRINT


def _pin_threads() -> None:
    for key, value in SINGLE_THREAD_ENV.items():
        if key != "RAY_AUTH_MODE":
            os.environ.setdefault(key, value)
    try:
        import numba
        numba.set_num_threads(1)
    except (ImportError, ValueError):
        pass
    import sys
    if "torch" in sys.modules:      # torch reads OMP_NUM_THREADS when imported; pin it if already loaded
        sys.modules["torch"].set_num_threads(1)


class ShardCore:
    """The shard's logic without Ray (``EnvShard`` is this class as a Ray actor).

    config: an EnvConfig dict. world_offset: the global index of this shard's first world.
    num_worlds: W. reset_placement: where a car's new life starts (``random``, ``random-moving``,
    ``grid``, ``scenario``). start_placement: after ``reset``, every controlled car is placed once with
    this policy from its world's own draws (so worlds are not copies of one another; its episode ids
    then start at 1), or None to keep the scenario's grid.
    env_id: the catalogue id the JSON path's ``hello`` names (optional). policy: ``builtin``, ``random``
    or ``MODULE:FN`` (``policies``): the actions of a ``step`` given none (``steps`` always), computed here
    from the shard's own observations. files: a ``dataset.shard_files.FilesSpec`` dict: the shard keeps
    its steps and writes its world blocks' files and its snapshot at each fragment's end, and a step
    returns only ``checksum``, ``written`` (the files' manifest entries, or None) and ``snapshot``.

    ``engine`` is the array path's ``BatchEnv``. The same actor also answers the JSON protocol
    (``protocol``: ``shard_protocol.ShardProtocol``, its own engine) and the live preview (frames built
    by ``env.views.frames`` from ``engine``'s state, read only).
    """

    def __init__(self, config: dict, world_offset: int, num_worlds: int, *, reset_placement: str = "random",
                 start_placement: str | None = "random", env_id: str | None = None, policy: str = "builtin",
                 files: dict | None = None):
        _pin_threads()
        self.code = code_fingerprint()       # at import time of this process: what its kernels run
        self.world_offset = check_integer(world_offset, "world_offset", low=0, error=ShardError)
        self.num_worlds = check_integer(num_worlds, "num_worlds", low=1, error=ShardError)
        self.engine = collection_engine(config, self.world_offset, self.num_worlds, reset_placement)
        self.start_placement = start_placement
        self.seq: int | None = None
        self.seed: int | None = None
        self.env_id = env_id
        self.protocol = ShardProtocol(config, self.num_worlds, env_id)
        self._builtin = np.zeros((self.num_worlds, len(self.engine.controlled), 3), np.float32)
        self.policy = resolve_policy(policy)      # None: the built-in driver (both computed here, not by the caller)
        self._obs = None                          # float32[W, K, D]: what the next step acts on
        self.files = None if files is None else ShardFiles(files, config, self.world_offset, self.num_worlds,
                                                           tuple(self.engine.controlled), int(self.engine.obs_size))

    # -- identity ----------------------------------------------------------------------------------
    def info(self) -> dict:
        """pid, node id (when in Ray), worlds, drivers, obs size: what the fleet and tests need."""
        node = None
        try:
            import ray
            if ray.is_initialized():
                node = ray.get_runtime_context().get_node_id()
        except Exception:   # noqa: BLE001 - informational only
            node = None
        return {"pid": os.getpid(), "node_id": node, "code": self.code, "world_offset": self.world_offset,
                "num_worlds": self.num_worlds, "controlled": list(self.engine.controlled),
                "obs_size": int(self.engine.obs_size), "seq": self.seq}

    # -- array fast path -------------------------------------------------------------------------
    def reset(self, seed: int) -> dict:
        """Reset every world from the root ``seed`` (see the module docstring); seq becomes 0."""
        seed = check_seed(seed, error=ShardError)
        result = start_worlds(self.engine, seed, self.start_placement)
        self.seq = 0
        self.seed = seed
        return self._head(result)

    def _head(self, result) -> dict:
        self._obs = np.array(result.obs, np.float32, copy=True)
        if self.files is not None:
            self.files.restart()
        return {"seq": self.seq, "obs": self._obs,
                "episode_id": result.episode_id, "life": result.life, "episode_step": result.episode_step,
                "checksum": self.engine.checksums()}

    def step(self, seq: int, actions, snapshot: bool = False, reset_mask=None, reset_placement: str = "random"):
        """Step every world once as step number ``seq`` (see the module docstring) -> ``(seq, arrays)``.

        reset_mask: optional bool[W, K], cars to start a new episode right after this step (the per-driver
        ``reset_drivers`` of the contract, with ``reset_placement``), inside their running worlds. Their
        transition of this step ends their episode: ``truncated`` is True for them, ``reset_requested``
        bool[W, K] marks them, ``final_obs`` holds their last observation and ``obs`` their new episode's
        first. A car whose episode ended in this step anyway is not reset twice.
        """
        if reset_mask is not None:
            reset_mask = self._checked_reset_mask(reset_mask, reset_placement)
        self._check_next_seq(seq)
        engine = self.engine
        if actions is None and self.policy is not None:
            actions = self.policy(self._obs, worlds=np.arange(self.world_offset, self.world_offset + self.num_worlds),
                                  seq=int(seq), seed=self.seed)
        actions = engine.builtin_actions(self._builtin) if actions is None else np.asarray(actions)
        result = engine.step(actions)
        self.seq = int(seq)
        out = {"action": np.array(actions, np.float32, copy=True), "obs": result.obs, "final_obs": result.final_obs,
               "metrics": result.metrics, "terminated": result.terminated, "truncated": result.truncated,
               "end_reason": result.end_reason, "episode_id": result.episode_id, "life": result.life,
               "episode_step": result.episode_step}
        if reset_mask is not None:
            self._reset_requested(result, out, reset_mask, reset_placement)
        out["checksum"] = engine.checksums()
        if snapshot or (self.files is not None and self.files.is_fragment_end(self.seq)):
            out["snapshot"] = self.snapshot()
        acted_on, self._obs = self._obs, out["obs"]
        if self.files is not None:
            return self.seq, self._written(acted_on, out)
        return self.seq, out

    def steps(self, seq: int, count: int, snapshots=()) -> list:
        """``count`` steps from ``seq`` in one call, each as ``step(seq, None, seq in snapshots)`` (actions
        computed here: the built-in driver or this shard's policy) -> their ``(seq, arrays)``."""
        count = check_integer(count, "count", low=1, error=ShardError)
        return [self.step(t, None, t in snapshots) for t in range(seq, seq + count)]

    def _written(self, acted_on: np.ndarray, out: dict) -> dict:
        """The step handed to this shard's own files (``dataset.shard_files``); what goes back to the caller
        is only ``checksum``, ``snapshot`` when one was taken, and ``written`` (the manifest entries of the
        files a fragment's end wrote, else None): no rows."""
        written = self.files.add(self.seq, acted_on, out, out.get("snapshot"))
        slim = {"checksum": out["checksum"], "written": written}
        if "snapshot" in out:
            slim["snapshot"] = out["snapshot"]
        return slim

    def _checked_reset_mask(self, reset_mask, reset_placement: str) -> np.ndarray:
        """``reset_mask`` as a bool[W, K] array, with its placement checked; ShardError otherwise."""
        reset_mask = np.asarray(reset_mask)
        shape = (self.num_worlds, len(self.engine.controlled))
        if reset_mask.shape != shape or reset_mask.dtype != np.bool_:
            raise ShardError(f"reset_mask: got {reset_mask.dtype} {reset_mask.shape}; expected bool {shape}")
        check_placement(reset_placement, "reset_placement", error=ShardError)
        return reset_mask

    def _check_next_seq(self, seq) -> None:
        """ShardSeqError unless ``seq`` is this shard's next step (nothing is stepped then)."""
        if self.seq is None:
            raise ShardError("step: the shard has not been reset; call reset(seed) first")
        if integer_problem(seq, self.seq + 1, self.seq + 2) is not None:
            raise ShardSeqError(f"seq: got {seq!r}; this shard is at {self.seq}, so the next step is "
                                f"{self.seq + 1} (a replayed or out-of-order call is refused)")

    def _reset_requested(self, result, out: dict, reset_mask: np.ndarray, placement: str) -> None:
        """Start a new episode for the cars of ``reset_mask`` the step did not already reset, and mark
        their transition in ``out`` (truncated, ``final_obs``, the new episode's ``obs``, ``reset_requested``)."""
        mask = reset_mask & ~result.reset_mask          # not the cars the step already reset
        if mask.any():
            final = result.final_obs if result.final_obs is not None else np.zeros_like(result.obs)
            final[mask] = result.obs[mask]
            placed = self.engine.reset_drivers(mask, placement)
            out.update(obs=np.array(placed.obs, np.float32, copy=True), final_obs=final,
                       truncated=result.truncated | mask)
        out["reset_requested"] = mask

    def snapshot(self) -> dict:
        """``{"format", "seq", "world_offset", "num_worlds", "seed", "state"}``: JSON-safe; ``state`` is
        BatchEnv.snapshot()'s checksummed document."""
        if self.seq is None:
            raise ShardError("snapshot: the shard has not been reset; call reset(seed) first")
        return {"format": SHARD_FORMAT, "seq": self.seq, "world_offset": self.world_offset,
                "num_worlds": self.num_worlds, "seed": self.seed, "state": self.engine.snapshot()}

    def restore(self, doc: dict, seq: int | None = None) -> dict:
        """Take a ``snapshot()`` document of these same worlds; returns the reset-shaped arrays at its seq.
        ``seq``, when given, must be the document's (the caller's check that it restores the step it means)."""
        if not isinstance(doc, dict) or doc.get("format") != SHARD_FORMAT:
            raise ShardError(f"snapshot.format: expected {SHARD_FORMAT!r}; pass a document from EnvShard.snapshot()")
        for key, mine in (("world_offset", self.world_offset), ("num_worlds", self.num_worlds)):
            if doc.get(key) != mine:
                raise ShardError(f"snapshot.{key}: got {doc.get(key)!r}, this shard has {mine}; restore a "
                                 "snapshot into a shard holding the same worlds")
        expected, (seq, seed) = seq, (doc.get("seq"), doc.get("seed"))
        seq = check_integer(seq, "snapshot.seq", low=0, error=ShardError)
        seed = check_seed(seed, "snapshot.seed", error=ShardError)
        if expected is not None and expected != seq:
            raise ShardError(f"seq: got {expected!r}, but the snapshot was taken at step {seq}; pass its own seq")
        self.engine.restore(doc["state"])      # a fresh engine takes a snapshot without a reset first
        self.seq, self.seed = seq, seed
        return self._head(self.engine.current_result())

    def checksums(self) -> np.ndarray:
        """uint64[W] state checksum of each world (FNV-1a-64)."""
        return self.engine.checksums()

    def ping(self) -> int:
        return os.getpid()

    # -- live preview: views of the contract (env.views.frames), reading the state only ---------------
    def preview_frame(self, world: int, meta: dict | None = None) -> dict:
        """PaddockJS's preview packet of local world ``world`` (``env.views.frames.preview_frame``), JSON-safe;
        reads the state only, so frames taken between steps leave the data unchanged."""
        from ..env.views.frames import preview_frame
        world = self._viewed_world(world, "preview_frame")
        return preview_frame(self.engine, world, meta=self._frame_meta(world, meta))

    def preview_copy(self, world: int, meta: dict | None = None):
        """Local world ``world`` copied for a live preview (``env.views.world_copy.WorldCopy``, with what
        ``env.views.frames.copy_frame`` needs): the preview server builds the packet from it, so the shard's
        own time pays only the copy (tens of microseconds), not the packet (milliseconds)."""
        from ..env.views.frames import frame_extra
        from ..env.views.world_copy import copy_world
        world = self._viewed_world(world, "preview_copy")
        return copy_world(self.engine, world, extra=frame_extra(self.engine, None, self._frame_meta(world, meta)))

    def track_picture(self) -> dict:
        """The static track for a viewer (``env.views.frames.track_picture``)."""
        from ..env.views.frames import track_picture
        return track_picture(self.engine)

    def _viewed_world(self, world, what: str) -> int:
        world = check_integer(world, "world", low=0, high=self.num_worlds, error=ShardError)
        if self.seq is None:
            raise ShardError(f"{what}: the shard has not been reset; call reset(seed) first")
        return world

    def _frame_meta(self, world: int, meta: dict | None) -> dict:
        return {"seq": self.seq, "globalWorld": self.world_offset + world, **(meta or {})}

    # -- JSON protocol path (shard_protocol.ShardProtocol: its own engine, no state shared) -----------
    def handle(self, message) -> dict:
        """One decoded JSON request -> its reply (the worker protocol, ``protocol.messages``)."""
        return self.protocol.handle(message)

    def handle_line(self, line: bytes) -> bytes:
        """One NDJSON request line -> one reply line (strict JSON; never pickled or evaluated)."""
        return self.protocol.handle_line(line)


@functools.cache
def actor_class(shard_cls: type = ShardCore):
    """``shard_cls`` (ShardCore or a subclass) as a Ray actor class with ``ACTOR_OPTIONS``: the one place a
    shard becomes an actor (the fleet, ``EnvShard`` and the tests create theirs here). Cached per class."""
    import ray
    return ray.remote(**ACTOR_OPTIONS)(shard_cls)


class _LazyActor:
    """``EnvShard`` is built on first use so ``import paddock_ma.distributed.shard`` does not import Ray."""

    def __getattr__(self, name):
        return getattr(actor_class(ShardCore), name)


EnvShard = _LazyActor()
