"""ShardLifecycle: the actors behind a ``ShardFleet``'s shards: created, placed, started, failed,
replaced and moved. ``ShardFleet`` (``fleet.py``) inherits it and sets the attributes it reads
(``shards``, ``config``, ``seed``, ``options`` (``fleet_types.FleetOptions``: ``deadline_s``,
``start_timeout_s``, ``capacity_wait_s``, ``max_consecutive_failures``, ``rebalance_every_s``,
``shard_cls``, ``shard_options``), ``code``, and the bookkeeping dicts ``_failing_since``,
``_retry_at``, ``_affinity``, ``_moves``, ``_no_room``).

Failure handling (Ray's own retries are off: shards are at-most-once). A shard is failed when a call
raises ``RayActorError`` (died, unavailable), ``ActorUnschedulableError`` (not a ``RayActorError``),
``WorkerCrashedError``/``ObjectLostError``/``NodeDiedError``, or misses its deadline (``deadline_s``
after it was submitted: a hung actor is not dead to Ray). The failed actor is killed (``ray.kill``) and
a new one is created with ``SPREAD`` scheduling (Ray places it on a live node). It is restored from the
shard's last snapshot (taken every ``snapshot_every`` steps, or the reset when there is none), then
replays the steps between that snapshot and the last step already handed out, with the actions recorded
for them, checking each replayed step's world checksums against the recorded ones: the partial episodes
resume bit-exactly, and those replayed transitions are not handed out again. A snapshot is also
taken at the last step of ``run``, so a later ``run`` or a resumed collection starts from it. An exception raised by
the shard's own code (a bad action, a refused sequence number) is not retried: ``FleetError``.

Shards are ``ShardCore`` actors, or actors of a subclass given as ``shard_cls`` (the test double
``distributed.testing.FaultyShardCore`` crashes or hangs on request); where a shard's actor is placed is
``placement`` (a subclass may override it: ``testing.PinnedFleet``).

A shard whose code fingerprint (``shard.code_fingerprint``) differs from the driver's is refused
(``FleetError``). A replay that does not reproduce its checksums is a ``FleetError`` at once.

Placement, then start. A shard's actor is created first and the fleet waits for Ray to place and
construct it (its ``__ray_ready__`` call) without blocking the other shards: the step loop watches that
call with every other call in flight. Only once it is placed are its start calls submitted (info, reset
or restore, replays), with their own timeout. So a replacement that cannot be placed (its node is gone
and no other node has a free CPU) waits, pending, while the shards that run go on stepping; Ray places
it when a node with room joins.

Waiting for capacity: a lost node takes its shards with it, and a real cluster replaces it in minutes.
The first replacement of a failed shard starts at once; after that, while the shard keeps failing (it
dies again once placed), it is retried with exponential backoff (``RETRY_FIRST_DELAY_S`` doubled per
attempt, at most 60 s: a replacement that died at once, e.g. placed on a node Ray had not yet declared
dead, is tried again seconds later, not a whole ``deadline_s`` later). The shards that run go on meanwhile, and events say which shard waits: ``retry`` (a backoff
began), ``wait`` (a replacement is still not placed, every ``WAIT_NOTE_S``) and ``placed`` (it is),
with how long the shard has been failing and ``give_up_s``. ``FleetError`` (the run is resumable) comes
only when a replacement has not been placed once its shard has been failing for ``capacity_wait_s`` (and
``2 * deadline_s`` since it was created), when a shard has failed
``max_consecutive_failures`` times in a row over more than ``capacity_wait_s``, or when no shard has
completed a step for ``capacity_wait_s`` (and ``2 * deadline_s``). A placed replacement's start
(restore, replay) gets what a first start gets, ``start_timeout_s`` (at least ``2 * deadline_s``): its
new worker process is slower than the first starts (Ray prestarts their workers), more so on a loaded
machine.
"""

from __future__ import annotations

import time

import numpy as np

from .fleet_types import FleetError, ShardRecord
from .shard import actor_class

WAIT_NOTE_S = 5.0       # seconds between "wait" events while a replacement is not placed (the progress line)
RETRY_FIRST_DELAY_S = 2.0   # backoff before a shard's second replacement; doubles per failure, at most 60 s


class ShardLifecycle:
    """The shard actors' lifecycle (see the module docstring); the step loop is ``ShardFleet.run``."""

    def placement(self, sh: ShardRecord):
        """The Ray scheduling strategy of shard ``sh``'s next actor (``sh.incarnation`` is its number):
        ``SPREAD`` (Ray places it on a live node), or, for a move onto a node that joined
        (``_maybe_rebalance``), a soft affinity to that node (there if it has room, else anywhere)."""
        node = self._affinity.pop(sh.index, None)
        if node is None:
            return "SPREAD"
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy
        return NodeAffinitySchedulingStrategy(node_id=node, soft=True)

    def _new_actor(self, sh: ShardRecord):
        sh.incarnation += 1
        return actor_class(self.options.shard_cls).options(scheduling_strategy=self.placement(sh)).remote(
            self.config, sh.index * self.worlds_per_shard, self.worlds_per_shard, **self.options.shard_options)

    def _start_chain(self, sh: ShardRecord, timeout: float, place_timeout: float | None = None) -> None:
        """Create the shard's actor and wait for Ray to place it (``kind`` "place": its ``__ray_ready__``
        call, watched by the step loop with the other calls in flight, for ``place_timeout`` seconds,
        default ``timeout``); then ``_submit_start`` queues its start calls, given ``timeout``."""
        sh.actor = self._new_actor(sh)
        now = time.monotonic()
        place_timeout = timeout if place_timeout is None else place_timeout
        sh.pending, sh.kind, sh.budget = [sh.actor.__ray_ready__.remote()], "place", place_timeout
        sh.deadline, sh.start_timeout, sh.placing_since = now + place_timeout, timeout, now
        sh.next_wait_note = now + WAIT_NOTE_S

    def _submit_start(self, sh: ShardRecord) -> None:
        """Queue a placed actor's start: info, reset or restore, then the replays up to ``sh.seq``."""
        refs = [sh.actor.info.remote()]
        refs.append(sh.actor.reset.remote(self.seed) if sh.snap is None
                    else sh.actor.restore.remote(sh.snap, sh.snap_seq))
        for seq in range(sh.snap_seq + 1, sh.seq + 1):
            actions, resets = sh.history[seq][0]
            refs.append(sh.actor.step.remote(seq, actions, False, *self._reset_args(resets)))
        sh.pending, sh.kind, sh.budget = refs, "start", sh.start_timeout
        sh.deadline = time.monotonic() + sh.start_timeout

    def _recovery_timeout(self) -> float:
        """Seconds a replacement may take to start, restore and replay (see the module docstring)."""
        return max(2 * self.options.deadline_s, self.options.start_timeout_s)

    def _kill(self, sh: ShardRecord) -> None:
        import ray
        if sh.actor is not None:
            try:
                ray.kill(sh.actor, no_restart=True)
            except Exception:   # noqa: BLE001 - the actor may already be gone with its node
                pass
        sh.actor, sh.pending, sh.inflight_actions = None, None, []

    def _fail(self, sh: ShardRecord, reason: str) -> None:
        sh.consecutive_failures += 1
        now = time.monotonic()
        since = self._failing_since.setdefault(sh.index, now)
        self._event("failure", sh.index, reason=reason, seq=sh.seq, incarnation=sh.incarnation, pid=sh.pid)
        self._kill(sh)
        if sh.consecutive_failures >= self.options.max_consecutive_failures and now - since > self.options.capacity_wait_s:
            raise FleetError(f"shard {sh.index} failed {sh.consecutive_failures} times in a row over "
                             f"{now - since:.0f} s (capacity_wait_s {self.options.capacity_wait_s:.0f}; last: {reason}); "
                             "check the cluster's health and the shard's logs", self.events)
        if sh.consecutive_failures == 1:
            self._replace(sh)
            return
        delay = min(RETRY_FIRST_DELAY_S * 2 ** (sh.consecutive_failures - 2), 60.0)
        self._retry_at[sh.index] = now + delay
        self._event("retry", sh.index, attempt=sh.consecutive_failures, delay_s=round(delay, 1),
                    failing_s=round(now - since, 1), give_up_s=self.options.capacity_wait_s)

    def _replace(self, sh: ShardRecord) -> None:
        """Start a new actor for failed shard ``sh``. It may wait to be placed until the shard has been
        failing for ``capacity_wait_s`` (its node is gone: Ray places it when one with room joins), and at
        least ``2 * deadline_s``."""
        self._retry_at.pop(sh.index, None)
        left = self._failing_since[sh.index] + self.options.capacity_wait_s - time.monotonic()
        self._start_chain(sh, self._recovery_timeout(), place_timeout=max(left, 2 * self.options.deadline_s))
        self._event("replace", sh.index, incarnation=sh.incarnation, restore_seq=sh.snap_seq,
                    replay=sh.seq - sh.snap_seq)

    def _maybe_rebalance(self) -> None:
        """Grow onto nodes that joined: when a live node with a free CPU holds no shard while another node
        holds two or more, move one of those shards there (every ``rebalance_every_s`` seconds, one move a
        time). A move is a recovery without a failure: the shard is killed, and its next incarnation,
        placed on the new node, restores its last snapshot and replays the steps handed out since, so no
        transition is lost or repeated. Shrinking needs nothing more: a shard whose node left fails and
        is replaced on a live node."""
        if self.options.rebalance_every_s is None or time.monotonic() < self._next_rebalance:
            return
        self._next_rebalance = time.monotonic() + self.options.rebalance_every_s
        import ray
        running = [sh for sh in self.shards if sh.kind == "step" and sh.actor is not None and sh.node_id]
        if len(running) < len(self.shards):
            return                          # a start or a recovery is under way: wait for it
        per_node: dict[str, list] = {}
        for sh in running:
            per_node.setdefault(sh.node_id, []).append(sh)
        free = [n["NodeID"] for n in ray.nodes() if n.get("Alive") and n["NodeID"] not in per_node
                and n["NodeID"] not in self._no_room and n.get("Resources", {}).get("CPU", 0) >= 1]
        crowded = max(per_node.values(), key=len)
        if not free or len(crowded) < 2:
            return
        sh = max(crowded, key=lambda s: s.index)
        target = sorted(free)[0]
        self._event("move", sh.index, from_node=sh.node_id, to_node=target, seq=sh.seq)
        self._kill(sh)
        self._affinity[sh.index] = self._moves[sh.index] = target
        self._start_chain(sh, self._recovery_timeout())

    def _finish_start(self, sh: ShardRecord, results: list) -> None:
        info, head = results[0], results[1]
        sh.pid, sh.node_id = info["pid"], info["node_id"]
        target = self._moves.pop(sh.index, None)
        if target is not None and sh.node_id != target:      # no room there after all: do not try it again
            self._no_room.add(target)
        if info.get("code") != self.code:
            raise FleetError(f"shard {sh.index} on node {info['node_id']} runs paddock_ma code {info.get('code')}, this "
                             f"driver {self.code}: install the same paddock_ma (and envs/) on every node (a "
                             "replayed shard would otherwise not reproduce its trajectory)", self.events)
        if head["seq"] != sh.snap_seq:
            raise FleetError(f"shard {sh.index}: restored to seq {head['seq']}, expected {sh.snap_seq}", self.events)
        if sh.obs is None or sh.seq == sh.snap_seq:
            sh.obs, sh.head = head["obs"], head
        for seq, (got_seq, arrays) in zip(range(sh.snap_seq + 1, sh.seq + 1), results[2:]):
            want = sh.history[seq][1]
            if got_seq != seq or not np.array_equal(arrays["checksum"], want):
                raise FleetError(f"shard {sh.index}: replay of step {seq} after recovery gave world checksums "
                                 f"{arrays['checksum'].tolist()}, recorded {want.tolist()}: the replay is not "
                                 "bit-exact", self.events)
        if sh.seq > sh.snap_seq:
            self._event("recovered", sh.index, seq=sh.seq, replayed=sh.seq - sh.snap_seq, pid=sh.pid)
