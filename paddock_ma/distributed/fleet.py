"""ShardFleet: N EnvShards over a Ray cluster, stepped asynchronously, recovered by the driver.

Shard ``i`` holds global worlds ``i * W .. (i + 1) * W - 1``. Each shard always has exactly one call in
flight; when its step comes back the fleet computes its next actions and submits the next step at once
(``ray.wait`` over every in-flight call), so no shard waits for the slowest. Every step carries the
shard's sequence number (1, 2, ...), and the shard refuses any other.

``reset_drivers(worlds, drivers, placement, at_seq)`` routes per-driver resets to the shards holding those
worlds; a reset is part of its step's record (replayed and resent with it).

Creating, placing, starting, failing, replacing and moving the shards' actors is ``ShardLifecycle``'s
job (``shard_lifecycle.py``, whose docstring says how a failure is recovered and how long the fleet
waits for capacity); ``ShardFleet`` adds the step loop: submitting steps, collecting their results in
arrival order, watching deadlines and handing each step out once.
"""

from __future__ import annotations

import time
from typing import Callable, Iterator

import numpy as np

from ..catalog import resolve_config_dict
from ..env.seeding import check_seed
from ..value_rules import check_integer, check_placement, integer_problem
from .fleet_types import FleetError, FleetOptions, ShardRecord, ShardStep, failure_types
from .policies import resolve_policy
from .shard import code_fingerprint
from .shard_lifecycle import WAIT_NOTE_S, ShardLifecycle


class ShardFleet(ShardLifecycle):
    """N shards of W worlds each (see the module docstring).

    config: a catalogue env id or an EnvConfig dict. seed: the root seed. policy: ``builtin``,
    ``random``, ``MODULE:FN`` or a callable (see ``policies``). resume: ``{shard: EnvShard.snapshot()
    doc}`` to start those shards from a snapshot instead of a reset. on_event: ``fn(event)`` for each
    of the fleet's events (failure, replace, retry, wait, placed, recovered, move). options: how the
    shards run (``FleetOptions``: deadlines, capacity wait, snapshots, pipelining, the shard class);
    keywords of its field names (``deadline_s=...``) replace its fields.
    """

    def __init__(self, config: dict | str, num_shards: int, worlds_per_shard: int, seed: int = 0, *,
                 policy="builtin", resume: dict | None = None, on_event: Callable[[dict], None] | None = None,
                 options: FleetOptions | None = None, **option_fields):
        for name, value in (("num_shards", num_shards), ("worlds_per_shard", worlds_per_shard)):
            check_integer(value, name, low=1)
        self.options = FleetOptions.merged(options, **option_fields)
        self.seed = check_seed(seed)
        self.config = resolve_config_dict(config)      # a catalogue env id or a config dict, checked here
        self.num_shards = num_shards
        self.worlds_per_shard = worlds_per_shard
        self.policy_name = policy if isinstance(policy, str) else getattr(policy, "__name__", "callable")
        self.policy = resolve_policy(policy) if isinstance(policy, str) else policy
        if self.options.pipeline_depth not in (1, 2) or (self.options.pipeline_depth == 2 and self.policy is not None):
            raise ValueError(f"pipeline_depth: got {self.options.pipeline_depth!r}; expected 1, or 2 with the builtin "
                             "policy (whose actions are computed in the shard, so step t+1 need not wait for step "
                             "t's observations)")
        self.resume = dict(resume or {})
        self.on_event = on_event
        self.events: list[dict] = []
        self.code = code_fingerprint()
        self.shards = [ShardRecord(i) for i in range(num_shards)]
        self.steps_done = 0                 # shard-steps handed out by this fleet object
        self._started = False
        self._last_progress = 0.0
        self._target = None
        self._snapshot_at_end = True
        self._next_rebalance = 0.0
        self._affinity: dict[int, str] = {}     # shard -> node its next incarnation is placed on (a move)
        self._moves: dict[int, str] = {}        # shard -> node it is moving to, until it has started
        self._no_room: set[str] = set()         # nodes a moved shard could not be placed on
        self._failing_since: dict[int, float] = {}   # shard -> when its current run of failures began
        self._retry_at: dict[int, float] = {}        # shard -> when its next attempt starts (backoff)

    # -- bookkeeping -------------------------------------------------------------------------------
    @property
    def total_worlds(self) -> int:
        return self.num_shards * self.worlds_per_shard

    def worlds_of(self, shard: int) -> np.ndarray:
        """int64[W]: the global world indices shard ``shard`` holds."""
        w = self.worlds_per_shard
        return np.arange(shard * w, (shard + 1) * w, dtype=np.int64)

    def _event(self, kind: str, shard: int | None, **extra) -> None:
        ev = {"time": time.time(), "kind": kind, "shard": shard, **extra}
        self.events.append(ev)
        if self.on_event is not None:
            self.on_event(ev)

    @property
    def failures(self) -> list[dict]:
        return [e for e in self.events if e["kind"] == "failure"]

    # -- stepping ----------------------------------------------------------------------------------
    def _fill(self, sh: ShardRecord) -> None:
        """Submit steps until ``pipeline_depth`` are in flight (or the run's last step is); a new head
        call's deadline starts now (the calls behind it start only when it is done)."""
        if sh.kind != "step" or sh.pending is None:
            sh.pending, sh.inflight_actions, sh.kind = [], [], "step"
        was_empty = not sh.pending
        while len(sh.pending) < self.options.pipeline_depth and self._submitted(sh) < self._target:
            seq = self._submitted(sh) + 1
            n = min(self.options.steps_per_call, self._target - seq + 1) if self.policy is None and not sh.resets else 1
            if n > 1:                   # several steps in one call: the driver's per-call cost is shared
                snaps = [t for t in range(seq, seq + n) if self._snapshot_due(t)]
                sh.pending.append(sh.actor.steps.remote(seq, n, snaps))
                sh.inflight_actions.append([(None, {})] * n)
                continue
            actions = None if self.policy is None else np.ascontiguousarray(
                self.policy(sh.obs, worlds=self.worlds_of(sh.index), seq=seq, seed=self.seed), np.float32)
            resets = sh.resets.get(seq, {})        # kept until the step is handed out (a lost call resends it)
            sh.pending.append(sh.actor.step.remote(seq, actions, self._snapshot_due(seq), *self._reset_args(resets)))
            sh.inflight_actions.append([(actions, resets)])
        if was_empty and sh.pending:
            sh.budget = self.options.deadline_s
            sh.deadline = time.monotonic() + self.options.deadline_s
        if not sh.pending:
            sh.pending = None

    def _snapshot_due(self, seq: int) -> bool:
        return seq % self.options.snapshot_every == 0 or (seq == self._target and self._snapshot_at_end)

    @staticmethod
    def _submitted(sh: ShardRecord) -> int:
        """The last step shard ``sh`` has been asked for (handed out or in flight)."""
        return sh.seq + sum(len(call) for call in sh.inflight_actions)

    @staticmethod
    def _reset_args(resets: dict) -> tuple:
        """The shard step's (reset_mask, reset_placement) arguments of one step's reset requests."""
        if not resets:
            return ()
        (placement, mask), = resets.items()
        return (mask, placement)

    def reset_drivers(self, worlds, drivers, placement: str = "random", at_seq: int | None = None) -> None:
        """Start a new episode for car ``drivers[i]`` (a controlled-driver index or id) of global world
        ``worlds[i]``, routed to the shard holding that world and applied right after its step ``at_seq``
        (default: its next step not yet submitted; see ``EnvShard.step``'s ``reset_mask``). A step already
        submitted cannot take one (ValueError naming it). Give ``at_seq`` for a reproducible run: "the next
        step" depends on how far each shard has got. One placement per step and shard."""
        from ..env.config.root import EnvConfig
        check_placement(placement, "placement", error=ValueError)
        controlled = list(EnvConfig.from_dict(self.config).controlled_drivers)
        worlds = np.atleast_1d(np.asarray(worlds))
        drivers = list(np.atleast_1d(np.asarray(drivers, dtype=object)))
        if len(worlds) != len(drivers):
            raise ValueError(f"worlds / drivers: {len(worlds)} worlds for {len(drivers)} drivers; give one world per driver")
        for g, d in zip(worlds.tolist(), drivers):
            if integer_problem(g, 0, self.total_worlds) is not None:
                raise ValueError(f"worlds: got {g!r}; expected a global world index in [0, {self.total_worlds})")
            k = controlled.index(d) if isinstance(d, str) and d in controlled else d
            if integer_problem(k, 0, len(controlled)) is not None:
                raise ValueError(f"drivers: got {d!r}; expected one of {controlled} or an index below {len(controlled)}")
            sh = self.shards[g // self.worlds_per_shard]
            submitted = self._submitted(sh) if sh.kind == "step" and sh.pending else sh.seq
            seq = submitted + 1 if at_seq is None else at_seq
            if integer_problem(seq, submitted + 1) is not None:
                raise ValueError(f"at_seq: got {at_seq!r}; shard {sh.index} (world {g}) has submitted up to step "
                                 f"{submitted}, so the earliest is {submitted + 1}")
            step_resets = sh.resets.setdefault(seq, {})
            other = [p for p in step_resets if p != placement]
            if other:
                raise ValueError(f"placement: shard {sh.index} already has resets with placement {other[0]!r} "
                                 f"after step {seq}; use one placement per step")
            mask = step_resets.setdefault(placement, np.zeros((self.worlds_per_shard, len(controlled)), bool))
            mask[g % self.worlds_per_shard, int(k)] = True

    def start(self) -> None:
        """Create every shard and reset (or restore) it; returns once they are submitted."""
        import ray
        if not ray.is_initialized():
            raise FleetError("Ray is not initialised: call ray.init(address=...) first (collect() does it for you)")
        for sh in self.shards:
            doc = self.resume.get(sh.index)
            if doc is not None:
                sh.snap, sh.snap_seq, sh.seq = doc, int(doc["seq"]), int(doc["seq"])
            self._start_chain(sh, self.options.start_timeout_s)
        self._started = True

    # -- results -----------------------------------------------------------------------------------
    def _finish_step(self, sh: ShardRecord, result, actions: tuple) -> ShardStep:
        seq, arrays = result
        if seq != sh.seq + 1:
            raise FleetError(f"shard {sh.index}: answered step {seq}, expected {sh.seq + 1}", self.events)
        out = ShardStep(sh.index, seq, self.worlds_of(sh.index), sh.obs, arrays)
        sh.seq, sh.obs = seq, arrays.get("obs")      # none when the shard writes its own files
        sh.resets.pop(seq, None)
        # a copy: a view would pin the whole returned object (observations included) in the object store
        sh.history[seq] = (actions, np.array(arrays["checksum"], copy=True))
        if "snapshot" in arrays:
            sh.snap, sh.snap_seq = arrays["snapshot"], seq
            sh.history = {s: v for s, v in sh.history.items() if s > seq}
        sh.consecutive_failures = 0
        self._failing_since.pop(sh.index, None)
        self.steps_done += 1
        return out

    def run(self, steps: int, snapshot_at_end: bool = True) -> Iterator[ShardStep]:
        """Step every shard up to sequence number ``steps``; yields each ShardStep once, as it arrives.

        Can be called again with a larger ``steps`` to go on. snapshot_at_end: also snapshot each shard at
        ``steps`` (a later run or a resumed collection starts there); a lockstep caller that runs one step
        at a time passes False and relies on ``snapshot_every``."""
        steps = check_integer(steps, "steps", low=0)
        self._target, self._snapshot_at_end = steps, snapshot_at_end
        if not self._started:
            self.start()
        # the no-progress watchdog runs once every shard has started
        starting = any(sh.kind in ("place", "start") and sh.pending for sh in self.shards)
        self._last_progress = None if starting else time.monotonic()
        give_up = max(2 * self.options.deadline_s, self.options.capacity_wait_s)
        while True:
            self._start_due_retries()
            live = [sh for sh in self.shards if sh.pending]
            if not live:
                if all(sh.seq >= steps for sh in self.shards):
                    return
                self._fill_idle(steps)
                continue
            self._check_progress(live, give_up)
            yield from self._take_ready(live, give_up)
            self._check_deadlines()
            self._maybe_rebalance()

    def _start_due_retries(self) -> None:
        """Replace the failed shards whose backed-off retry is due."""
        now = time.monotonic()
        for index, at in sorted(self._retry_at.items()):
            if now >= at:
                self._replace(self.shards[index])

    def _fill_idle(self, steps: int) -> None:
        """Nothing in flight: submit the steps of shards that finished starting but have not stepped yet,
        or sleep until the next backed-off retry is due."""
        for sh in self.shards:
            if sh.seq < steps and not sh.pending and sh.index not in self._retry_at:
                self._fill(sh)
        if self._retry_at and not any(sh.pending for sh in self.shards):
            time.sleep(max(0.0, min(self._retry_at.values()) - time.monotonic()))

    def _check_progress(self, live: list, give_up: float) -> None:
        """FleetError when no shard has completed a step for ``give_up`` seconds (the watchdog)."""
        if (self._last_progress is not None and time.monotonic() - self._last_progress > give_up
                and not self._any_ready(live)):
            raise FleetError(f"no shard completed a step in {give_up:.0f} s (capacity_wait_s); "
                             f"{len(self.failures)} failures so far: the cluster cannot run these shards",
                             self.events)

    def _wait_timeout(self, live: list, give_up: float) -> float:
        """Seconds until the first deadline, retry, wait note or watchdog limit that is due."""
        due = min([sh.deadline for sh in live] + list(self._retry_at.values())
                  + [sh.next_wait_note for sh in live if sh.kind == "place"])
        if self._last_progress is not None:
            due = min(due, self._last_progress + give_up)
        return max(0.0, due - time.monotonic())

    def _take_ready(self, live: list, give_up: float) -> Iterator[ShardStep]:
        """Wait for a watched call of ``live`` to finish (or the next thing due), then take every finished
        one; yields the steps among them."""
        import ray
        by_ref = {self._watched(sh): sh for sh in live}
        ready, _ = ray.wait(list(by_ref), num_returns=1, timeout=self._wait_timeout(live, give_up))
        if ready:
            ready, _ = ray.wait(list(by_ref), num_returns=len(by_ref), timeout=0)
        for ref in ready:
            yield from self._take(by_ref[ref], ref)

    def _take(self, sh: ShardRecord, ref) -> list[ShardStep]:
        """Shard ``sh``'s finished call ``ref``: a placement's start calls are submitted, a start is checked
        and its steps submitted, a step call's steps are returned (with the next call already on its way);
        a lost actor is failed (``_fail``) and an exception of the shard's own code is a ``FleetError``."""
        import ray
        from ray.exceptions import RayTaskError
        try:
            results = ray.get(sh.pending if sh.kind == "start" else ref)
            if sh.kind == "place":          # placed and constructed: now its start calls
                if sh.index in self._failing_since:
                    self._event("placed", sh.index, incarnation=sh.incarnation,
                                waited_s=round(time.monotonic() - sh.placing_since, 1))
                self._submit_start(sh)
                return []
        except failure_types() as exc:
            self._fail(sh, f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}")
            return []
        except RayTaskError as exc:
            raise FleetError(f"shard {sh.index}: its call raised {type(exc.cause).__name__}: "
                             f"{exc.cause}", self.events) from exc.cause
        if sh.kind == "start":
            sh.pending = None
            self._finish_start(sh, results)
            if self._last_progress is None and all(s.kind not in ("place", "start") or not s.pending
                                                   for s in self.shards):
                self._last_progress = time.monotonic()
            self._fill(sh)
            return []
        sh.pending.pop(0)
        calls = sh.inflight_actions.pop(0)
        out = [self._finish_step(sh, r, a) for r, a in zip(results if len(calls) > 1 else [results], calls)]
        self._last_progress = time.monotonic()
        if sh.pending:                 # the next call in flight is the head now: its deadline starts
            sh.deadline = time.monotonic() + self.options.deadline_s
        self._fill(sh)                 # the next step is on its way before the consumer sees this one
        return out

    def _check_deadlines(self) -> None:
        """Fail the shards whose call in flight is late; note the replacements still waiting to be placed."""
        now = time.monotonic()
        for sh in self.shards:
            # a call that finished while the consumer held the generator is not late: next round takes it
            if sh.pending and now > sh.deadline and not self._any_ready([sh]):
                if sh.kind == "place" and sh.index in self._failing_since:
                    raise FleetError(f"shard {sh.index}: its replacement was not placed in {sh.budget:.0f} s, "
                                     f"failing for {now - self._failing_since[sh.index]:.0f} s "
                                     f"(capacity_wait_s): no node has a free CPU for it; add nodes", self.events)
                what = {"place": "placement and construction", "start": "start/recovery"}.get(
                    sh.kind, f"step {sh.seq + 1}")
                self._fail(sh, f"deadline: {what} took more than {sh.budget:.1f} s (a hung or lost shard)")
            elif sh.kind == "place" and sh.pending and now >= sh.next_wait_note:
                sh.next_wait_note = now + WAIT_NOTE_S
                if sh.index in self._failing_since:
                    self._event("wait", sh.index, waited_s=round(now - sh.placing_since, 1),
                                failing_s=round(now - self._failing_since[sh.index], 1),
                                give_up_s=self.options.capacity_wait_s)

    @staticmethod
    def _watched(sh: ShardRecord):
        """The ref whose completion moves shard ``sh`` on: a start chain is done when its last call is;
        step calls finish in order (watch the first); a placement has one call."""
        return sh.pending[-1] if sh.kind == "start" else sh.pending[0]

    @classmethod
    def _any_ready(cls, shards) -> bool:
        import ray
        refs = [cls._watched(sh) for sh in shards if sh.pending]
        return bool(refs) and bool(ray.wait(refs, num_returns=1, timeout=0)[0])

    # -- introspection / shutdown ----------------------------------------------------------------------
    def shard_pids(self) -> dict:
        """``{shard: pid}`` of the current incarnations (as reported when they started)."""
        return {sh.index: sh.pid for sh in self.shards}

    def shard_nodes(self) -> dict:
        return {sh.index: sh.node_id for sh in self.shards}

    def snapshots(self) -> dict:
        """``{shard: (seq, doc or None)}``: the last snapshot of each shard (None: its reset)."""
        return {sh.index: (sh.snap_seq, sh.snap) for sh in self.shards}

    def shutdown(self) -> None:
        """Kill every shard actor this fleet created (its current incarnations)."""
        for sh in self.shards:
            self._kill(sh)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.shutdown()
