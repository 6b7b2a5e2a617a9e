"""EnvShard: at-most-once actor options, global world identity, bit-exact snapshots, seq refusal, JSON path."""

import json

import numpy as np
import pytest

from paddock_ma.distributed.policies import random_policy
from paddock_ma.distributed.shard import ACTOR_OPTIONS, EnvShard, ShardCore, ShardError, ShardSeqError, actor_class


@pytest.mark.ray
def test_shard_actors_are_at_most_once_and_single_threaded(ray_local, env_config):
    assert ACTOR_OPTIONS["max_task_retries"] == 0 and ACTOR_OPTIONS["max_restarts"] == 0
    assert ACTOR_OPTIONS["num_cpus"] == 1
    env_vars = ACTOR_OPTIONS["runtime_env"]["env_vars"]
    assert env_vars["OMP_NUM_THREADS"] == "1" and env_vars["NUMBA_NUM_THREADS"] == "1"
    # the actor class the fleet and EnvShard use: a killed actor stays dead (Ray does not restart it and
    # replay its calls), and the class is built once per shard class
    import os
    import signal

    from ray.exceptions import RayActorError

    ray = ray_local
    assert actor_class(ShardCore) is actor_class(ShardCore)
    shard = EnvShard.remote(env_config, 0, 1)
    pid = ray.get(shard.ping.remote())
    os.kill(pid, signal.SIGKILL)
    with pytest.raises(RayActorError):
        ray.get(shard.ping.remote(), timeout=60)


def test_a_shard_takes_the_seeds_the_engine_takes(env_config, warm_cache):
    core = ShardCore(env_config, 0, 1)
    for bad in (-1, 2**63, True, 2.0):
        with pytest.raises(ShardError, match="^seed: got"):
            core.reset(bad)
    assert core.reset(np.int64(2**63 - 1))["seq"] == 0 and core.seed == 2**63 - 1
    with pytest.raises(ShardSeqError, match="the next step is 1"):
        core.step(True, None)


def _drive(core, worlds, steps, seed, snapshot_at=None):
    head = core.reset(seed) if core.seq is None else None
    obs = head["obs"] if head else None
    out, snap = [], None
    for t in range(1, steps + 1):
        _, a = core.step(t, random_policy(obs, worlds=worlds, seq=t, seed=seed), snapshot=t == snapshot_at)
        out.append(a)
        obs = a["obs"]
        snap = a.get("snapshot", snap)
    return out, snap


def test_a_worlds_trajectory_does_not_depend_on_the_shard_holding_it(env_config, warm_cache):
    wide, _ = _drive(ShardCore(env_config, 0, 4), np.arange(4), 30, seed=11)
    narrow, _ = _drive(ShardCore(env_config, 2, 2), np.arange(2, 4), 30, seed=11)
    for a, b in zip(wide, narrow):
        assert np.array_equal(a["checksum"][2:], b["checksum"])
        assert np.array_equal(a["obs"][2:], b["obs"])
        assert np.array_equal(a["episode_id"][2:], b["episode_id"])
    assert sum(int(a["truncated"].sum()) for a in wide) > 0, "no car ended: the test does not cover lives"


def test_snapshot_restore_resumes_bit_exactly_and_a_replayed_seq_is_refused(env_config, warm_cache):
    full, _ = _drive(ShardCore(env_config, 0, 3), np.arange(3), 40, seed=4)
    first, snap = _drive(ShardCore(env_config, 0, 3), np.arange(3), 15, seed=4, snapshot_at=15)
    snap = json.loads(json.dumps(snap))             # the document is JSON-safe
    core = ShardCore(env_config, 0, 3)
    head = core.restore(snap)
    assert core.seq == 15 and np.array_equal(head["obs"], full[14]["obs"])
    with pytest.raises(ShardSeqError, match="next step is 16"):
        core.step(15, None)
    obs = head["obs"]
    for t in range(16, 41):
        _, a = core.step(t, random_policy(obs, worlds=np.arange(3), seq=t, seed=4))
        ref = full[t - 1]
        for key in ("checksum", "obs", "metrics", "episode_id", "episode_step", "terminated", "truncated"):
            assert np.array_equal(a[key], ref[key], equal_nan=True), (t, key)
        obs = a["obs"]
    with pytest.raises(Exception, match="same worlds"):
        ShardCore(env_config, 3, 3).restore(snap)
    with pytest.raises(Exception, match="taken at step 15"):
        ShardCore(env_config, 0, 3).restore(snap, 14)


@pytest.mark.ray
def test_shard_actor_array_path_and_json_path(ray_local, env_config):
    ray = ray_local
    shard = EnvShard.remote(env_config, 0, 2, start_placement=None)
    local = ShardCore(env_config, 0, 2, start_placement=None)
    head = ray.get(shard.reset.remote(9))
    assert np.array_equal(head["obs"], local.reset(9)["obs"])
    actions = np.tile(np.array([0.1, 0.8, 0.0], np.float32), (2, len(local.engine.controlled), 1))
    seq, arrays = ray.get(shard.step.remote(1, actions))
    assert seq == 1 and np.array_equal(arrays["checksum"], local.step(1, actions)[1]["checksum"])
    with pytest.raises(ray.exceptions.RayTaskError, match="next step is 2"):   # a replayed call never steps twice
        ray.get(shard.step.remote(1, actions))
    assert np.array_equal(ray.get(shard.checksums.remote()), local.checksums())
    # the JSON protocol path: same worlds (offset 0, no start placement), same numbers as the array path
    hello = json.loads(ray.get(shard.handle_line.remote(b'{"id": 1, "type": "hello", "protocolVersion": "1.0"}')))
    assert hello["ok"], hello
    reset = json.loads(ray.get(shard.handle_line.remote(b'{"id": 2, "type": "reset", "envs": "all", "options": {"seed": 9}}')))
    assert reset["ok"], reset
    assert np.array_equal(np.asarray(reset["result"]["observation"]["vectors"], np.float32), head["obs"])
    msg = {"id": 3, "type": "step", "envs": "all", "actions": actions.tolist()}
    step = ray.get(shard.handle.remote(msg))
    assert step["ok"], step
    assert np.array_equal(np.asarray(step["result"]["observation"]["vectors"], np.float32), arrays["obs"])
    bad = json.loads(ray.get(shard.handle_line.remote(b'{"id": 4, "type": "step", "actions": [NaN]}')))
    assert bad["ok"] is False and bad["code"] == "bad_json"
    ray.kill(shard)


@pytest.mark.ray
@pytest.mark.parametrize("env_id,worlds", [("paddock/gp-v0", 1), ("paddock/oval-batch-v0", 3)])
def test_the_protocol_compliance_suite_passes_against_a_shard(ray_local, env_id, worlds):
    """The JSON path of a shard answers the compliance script byte for byte like the in-process Dispatcher."""
    from paddock_ma.catalog import resolve_config_dict
    from paddock_ma.protocol.compliance import check_transport

    ray = ray_local
    shard = EnvShard.remote(resolve_config_dict(env_id), 0, worlds, env_id=env_id)

    def send_lines(lines):
        return ray.get([shard.handle_line.remote(line) for line in lines])    # one actor: calls run in order

    report = check_transport(send_lines, env_id, worlds)
    assert report.ok >= 150 and not report.internal, report.summary()
    ray.kill(shard)
