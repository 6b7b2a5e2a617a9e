"""ShardFleet on a real local Ray: async stepping, SIGKILLed and hung shards recovered bit-exactly, FleetError."""

import os
import signal
import time

import numpy as np
import pytest

from paddock_ma.distributed.fleet import ShardFleet
from paddock_ma.distributed.fleet_types import FleetError
from paddock_ma.distributed.testing import FaultyShardCore, PinnedFleet

from .conftest import measured_hang_deadline, measured_shard_timing

pytestmark = pytest.mark.ray
STEPS = 30
# Deadlines. Where no hang is planted: far beyond any step of 2 worlds on a loaded machine (kills surface
# as Ray's errors, not through the deadline). Where one is: measured_hang_deadline, short so the test
# notices the hang soon; a healthy step that load still makes slower than that is failed and recovered as
# well, so those tests assert that the planted failure is among the failures (and the steps are
# unchanged), not that it is the only one.
DEADLINE = 60.0


def _run(config, *, on_step=None, fleet_cls=ShardFleet, **kw):
    opts = dict(seed=5, deadline_s=DEADLINE, snapshot_every=8, policy="random")
    opts.update(kw)
    fleet = fleet_cls(config, 2, 2, **opts)
    seen = {}
    try:
        for st in fleet.run(STEPS):
            key = (st.shard, st.seq)
            assert key not in seen, f"step {key} handed out twice"
            seen[key] = {"checksum": st.arrays["checksum"].copy(), "obs": st.obs.copy(),
                         "episode_id": st.arrays["episode_id"].copy(), "episode_step": st.arrays["episode_step"].copy()}
            if on_step:
                on_step(fleet, st)
    finally:
        fleet.shutdown()
    return seen, fleet


@pytest.fixture(scope="module")
def baseline(ray_session, warm_cache, env_config):
    ray_session.local()
    seen, fleet = _run(env_config)
    assert not fleet.failures and len(seen) == 2 * STEPS
    return seen


def _same(a, b):
    assert a.keys() == b.keys()
    for k in a:
        for field in a[k]:
            assert np.array_equal(a[k][field], b[k][field]), (k, field)


def test_fleet_matches_in_process_shards(baseline, env_config):
    from paddock_ma.distributed.policies import random_policy
    from paddock_ma.distributed.shard import ShardCore
    core = ShardCore(env_config, 2, 2)          # shard 1's worlds, stepped in this process
    obs = core.reset(5)["obs"]
    for t in range(1, STEPS + 1):
        _, a = core.step(t, random_policy(obs, worlds=np.arange(2, 4), seq=t, seed=5))
        assert np.array_equal(a["checksum"], baseline[(1, t)]["checksum"])
        obs = a["obs"]


def test_sigkilled_shards_are_replaced_and_resume_bit_exactly(baseline, env_config):
    kills = {(0, 3), (1, 12), (0, 26)}      # both shards, between snapshots (test_collect kills five times)

    def kill(fleet, st):
        if (st.shard, st.seq) in kills:
            os.kill(fleet.shard_pids()[st.shard], signal.SIGKILL)

    seen, fleet = _run(env_config, on_step=kill)
    assert len(fleet.failures) == 3, fleet.events
    assert {e["shard"] for e in fleet.failures} == {0, 1}
    _same(baseline, seen)


def test_a_hung_shard_is_killed_at_its_deadline_and_replaced(baseline, env_config, tmp_path):
    hang_once = FaultyShardCore.with_faults({1: {"hang_at_seq": 11}}, once_dir=tmp_path)    # its first life only
    seen, fleet = _run(env_config, deadline_s=measured_hang_deadline(env_config), shard_cls=hang_once)
    assert all(e["reason"].startswith("deadline") for e in fleet.failures), fleet.failures
    assert any(e["shard"] == 1 and e["seq"] == 10 for e in fleet.failures), fleet.failures    # hung at step 11
    _same(baseline, seen)              # (how long the run took depends on the machine's load: not asserted)


@pytest.mark.chaos
@pytest.mark.parametrize("fault", [{"crash_at_seq": 4}, {"hang_at_seq": 4}], ids=["crash", "hang"])
def test_every_shard_failing_raises_fleet_error_after_the_capacity_wait(ray_local, env_config, fault):
    # the wait must hold a replacement's start and a second failure (the retry asserted below): 15 s idle,
    # more where a measured actor start takes tens of seconds
    deadline, wait = 2.0, max(15.0, 3 * measured_shard_timing(env_config)[0])
    always = FaultyShardCore.with_faults({0: fault, 1: fault})        # in every incarnation
    fleet = ShardFleet(env_config, 2, 2, seed=5, deadline_s=deadline, snapshot_every=2, policy="random",
                       shard_cls=always, max_consecutive_failures=50, capacity_wait_s=wait)
    last = None
    with pytest.raises(FleetError) as err:
        for st in fleet.run(STEPS):
            last = time.time()
    raised = time.time()
    fleet.shutdown()
    # The wait runs from a shard's first failure (which may come before the other shard's last step) or
    # from the last completed step, whichever is earlier; the consumer sees that step a moment after the
    # fleet counted it: 1 s of slack (load only adds time here).
    first_failure = min(e["time"] for e in err.value.events if e["kind"] == "failure")
    since = raised - min(first_failure, last)
    assert since >= wait - 1.0, f"FleetError {since:.1f} s into the failures, before the capacity wait ({wait} s)"
    assert "(capacity_wait_s)" in str(err.value) and err.value.events       # never a hang: it did end
    assert any(e["kind"] == "retry" for e in err.value.events)              # retried with backoff meanwhile


def test_failure_types_include_errors_that_are_not_ray_actor_errors():
    import ray.exceptions as E
    from paddock_ma.distributed.fleet_types import failure_types
    assert not issubclass(E.ActorUnschedulableError, E.RayActorError)
    assert E.ActorUnschedulableError in failure_types() and E.RayActorError in failure_types()
    assert not any(issubclass(E.RayTaskError, t) for t in failure_types())   # a bug in a call is not retried


def test_an_unschedulable_shard_is_replaced_and_its_steps_are_unchanged(baseline, env_config):
    # shard 1's first actor is pinned hard to a node that does not exist: real Ray raises
    # ActorUnschedulableError (not a RayActorError) on its first call; the fleet starts it again elsewhere
    missing_node = "ab" * 28
    seen, fleet = _run(env_config, fleet_cls=PinnedFleet, pins={1: missing_node})
    assert [f["reason"].split(":")[0] for f in fleet.failures] == ["ActorUnschedulableError"]
    assert fleet.failures[0]["shard"] == 1
    _same(baseline, seen)


def test_two_calls_in_flight_give_the_same_steps_and_survive_a_hang_and_kills(ray_local, env_config, tmp_path):
    plain, _ = _run(env_config, policy="builtin")

    def kill(fleet, st):
        if (st.shard, st.seq) in {(0, 7), (1, 18)}:
            os.kill(fleet.shard_pids()[st.shard], signal.SIGKILL)

    piped, fleet = _run(env_config, policy="builtin", pipeline_depth=2, on_step=kill,
                        deadline_s=measured_hang_deadline(env_config),
                        shard_cls=FaultyShardCore.with_faults({0: {"hang_at_seq": 4}}, once_dir=tmp_path))
    reasons = [f["reason"].split(":")[0] for f in fleet.failures]
    assert reasons.count("ActorDiedError") == 2 and "deadline" in reasons, reasons         # the kills and the hang
    assert set(reasons) == {"ActorDiedError", "deadline"}, reasons
    _same(plain, piped)
    with pytest.raises(ValueError, match="builtin policy"):
        ShardFleet(env_config, 1, 1, policy="random", pipeline_depth=2)


@pytest.mark.chaos
def test_shards_that_cannot_start_or_run_other_code_raise_fleet_error(ray_local, env_config):
    fleet = ShardFleet(env_config, 2, 1, seed=5, deadline_s=DEADLINE, max_consecutive_failures=2, capacity_wait_s=0.1,
                       shard_cls=FaultyShardCore.with_faults({0: {"fail_on_start": True}}))
    with pytest.raises(FleetError, match="shard 0 failed 2 times in a row"):
        list(fleet.run(5))
    fleet.shutdown()
    fleet = ShardFleet("paddock/oval-batch-v0", 1, 1, seed=5)     # an env id works as the config
    fleet.code = "0000000000000000"           # as if this driver ran another version of the simulator
    with pytest.raises(FleetError, match="install the same paddock_ma"):
        list(fleet.run(5))
    fleet.shutdown()


def test_a_slow_consumer_does_not_make_finished_shards_late(baseline, env_config):
    """Time the consumer holds the generator is not charged to shards whose calls finished meanwhile."""
    import ray

    def slow(fleet, st):
        if (st.shard, st.seq) == (0, 5):
            # hold the generator until the shards' next calls have finished, then past their deadlines
            busy = [sh for sh in fleet.shards if sh.pending]        # (shard 1 may have finished its steps)
            ray.wait([sh.pending[0] for sh in busy], num_returns=len(busy))
            stepping = [sh.deadline for sh in busy if sh.kind == "step"]    # not a start's longer timeout
            time.sleep(max(0.0, max(stepping, default=0.0) - time.monotonic()) + 0.5)

    seen, fleet = _run(env_config, deadline_s=10.0, on_step=slow)     # held past it: about 10 s
    assert not fleet.failures, fleet.failures
    _same(baseline, seen)


def test_per_driver_resets_are_routed_to_their_shard_and_survive_a_kill(ray_local, env_config):
    """reset_drivers((world, driver)) reaches the shard holding that world, after its next step; a shard
    killed with a reset in flight replays it; the steps equal an in-process shard given the same resets."""
    from paddock_ma.distributed.shard import ShardCore
    requests = {4: ([3, 0], ["car-02", 5]), 11: ([1], [7]), 12: ([2, 2], [0, 1])}

    def run(kill):
        fleet = ShardFleet(env_config, 2, 2, seed=5, deadline_s=DEADLINE, snapshot_every=8, policy="builtin")
        for t, (worlds, drivers) in requests.items():
            fleet.reset_drivers(worlds, drivers, placement="random", at_seq=t)
        seen = {}
        try:
            for st in fleet.run(STEPS):
                seen[(st.shard, st.seq)] = {"checksum": st.arrays["checksum"].copy(), "obs": st.obs.copy(),
                                            "truncated": st.arrays["truncated"].copy()}
                if kill and (st.shard, st.seq) in {(1, 10), (0, 3)}:    # resets of steps 11/12 and 4 in flight
                    os.kill(fleet.shard_pids()[st.shard], signal.SIGKILL)
                if (st.shard, st.seq) == (0, 20):
                    with pytest.raises(ValueError, match="earliest is"):
                        fleet.reset_drivers([0], [0], at_seq=20)
        finally:
            fleet.shutdown()
        return seen, fleet

    seen, _ = run(kill=False)
    again, fleet = run(kill=True)
    assert len(fleet.failures) == 2
    _same(seen, again)
    # in process: shard 1's worlds (2, 3) with the requests that routed to it, after the step they name
    core = ShardCore(env_config, 2, 2)
    core.reset(5)
    reset_seen = 0
    for t in range(1, STEPS + 1):
        mask = np.zeros((2, 8), bool)
        for g, d in zip(*requests.get(t, ([], []))):
            if g >= 2:
                mask[g - 2, ["car-00", "car-01", "car-02", "car-03", "car-04", "car-05", "car-06", "car-07"].index(d)
                     if isinstance(d, str) else d] = True
        _, a = core.step(t, None, reset_mask=mask if mask.any() else None)
        assert np.array_equal(a["checksum"], seen[(1, t)]["checksum"]), t
        reset_seen += int(a.get("reset_requested", np.zeros(1, bool)).sum())
    assert reset_seen >= 3
