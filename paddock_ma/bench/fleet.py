"""``paddock-ma bench fleet``: throughput of the distributed path: the Ray fleet against the in-process
engine, its dependence on worlds per shard, JSON against arrays, collection with Parquet.

    paddock-ma bench fleet [--env paddock/gp-batch-v0] [--worlds 16,64,256] [--shards 1,2] [--depths 1,2]
        [--seconds 5] [--collect-steps 128] [--json]

Figures are car-steps per second (one controlled car advanced one env step), built-in driver actions
(computed inside the shard, as the in-process reference computes them), measured after a warm-up
(actor start and numba cache load are not counted). The in-process reference is ``ShardCore`` (the
shard's own code, no Ray) in this process; the fleet runs on a private local Ray (CPUs: the largest
shard count, at least 2).
"""

from __future__ import annotations

import json
import os
import tempfile
import time

import numpy as np

from .report import table
from .timing import time_calls, time_for


def in_process(config: dict, worlds: int, seconds: float) -> dict:
    """Steps/s of ``ShardCore`` (the shard's own code, built-in driver actions) in this process, no Ray."""
    from ..distributed.shard import ShardCore
    core = ShardCore(config, 0, worlds)
    core.reset(1)
    seq = 0

    def step():
        nonlocal seq
        seq += 1
        core.step(seq, None)
    timing = time_for(step, seconds, warmup=20)
    n, dt = timing.calls, timing.seconds
    k = len(core.engine.controlled)
    return {"what": "in-process ShardCore", "worlds": worlds, "steps": n, "seconds": round(dt, 2),
            "car_steps_per_s": round(n * worlds * k / dt), "ms_per_step": round(1e3 * dt / n, 2)}


def fleet(config: dict, shards: int, worlds: int, seconds: float, warmup_steps: int = 20, depth: int = 1) -> dict:
    """Fleet steps/s of ``shards`` shards of ``worlds`` worlds with ``depth`` calls in flight, timed from
    the first step at which every shard has made ``warmup_steps`` steps (actors started, caches loaded)."""
    from ..distributed.fleet import ShardFleet
    f = ShardFleet(config, shards, worlds, seed=1, policy="builtin", snapshot_every=1_000_000, deadline_s=120,
                   pipeline_depth=depth)
    try:
        steps = f.run(10**9)
        st = next(steps)
        while not (st.seq >= warmup_steps and all(s.seq >= warmup_steps for s in f.shards)):
            st = next(steps)
        k = st.obs.shape[1]

        def advance() -> None:      # one fleet step: every shard's next result merged
            next(steps)
        timing = time_for(advance, seconds)
    finally:
        f.shutdown()
    n, dt = timing.calls, timing.seconds
    return {"what": f"ShardFleet, {shards} shard(s), {depth} call(s) in flight", "worlds": worlds, "shard_steps": n,
            "seconds": round(dt, 2), "car_steps_per_s": round(n * worlds * k / dt)}


def json_vs_array(config: dict, worlds: int, calls: int = 60) -> dict:
    """Per-call time of one shard actor: array step vs the JSON protocol's batched step (plain and f32)."""
    import ray

    from ..distributed.shard import EnvShard
    from ..protocol.codec import pack_f32
    shard = EnvShard.remote(config, 0, worlds, start_placement=None)
    head = ray.get(shard.reset.remote(1))
    k = head["obs"].shape[1]
    actions = np.tile(np.array([0.0, 0.5, 0.0], np.float32), (worlds, k, 1))
    ray.get(shard.handle_line.remote(json.dumps({"type": "reset", "envs": "all", "options": {"seed": 1}}).encode()))
    out = {"what": "one shard call (ms): array step, JSON batched step, JSON with f32-base64", "worlds": worlds}
    seq = 0

    def array_call():
        nonlocal seq
        seq += 1
        return ray.get(shard.step.remote(seq, actions))

    plain = json.dumps({"type": "step", "envs": "all", "actions": actions.tolist()}).encode()
    packed = json.dumps({"type": "step", "envs": "all", "encoding": "f32-base64",
                         "actions": pack_f32(actions)}).encode()
    for name, fn in (("array_ms", array_call),
                     ("json_ms", lambda: json.loads(ray.get(shard.handle_line.remote(plain)))),
                     ("json_f32_ms", lambda: json.loads(ray.get(shard.handle_line.remote(packed))))):
        reply = fn()
        if isinstance(reply, dict) and not reply.get("ok", True):
            out[name] = f"refused: {reply.get('error')}"
            continue
        out[name] = round(1e3 * time_calls(fn, calls).per_call_seconds, 2)
    ray.kill(shard)
    return out


def collection(env: str, shards: int, worlds: int, steps: int) -> dict:
    """Rows/s of ``collect`` (Parquet on) with ``shards`` shards, timed from its first step."""
    from ..distributed.collection.config import CollectConfig
    from ..distributed.collection.run import collect
    with tempfile.TemporaryDirectory() as tmp:
        cfg = CollectConfig(env=env, num_shards=shards, worlds_per_shard=worlds, steps=steps, seed=1,
                            policy="builtin", fragment_steps=64, snapshot_every=16)
        first = {}

        def mark(fleet, st):
            first.setdefault("t", time.perf_counter())
        res = collect(cfg, os.path.join(tmp, "ds"), progress=False, on_step=mark)
        dt = time.perf_counter() - first["t"]
        size = sum(os.path.getsize(os.path.join(tmp, "ds", f["path"])) for f in res.manifest["files"])
    return {"what": f"collect, {shards} shard(s), Parquet on", "worlds": worlds, "steps": steps, "rows": res.rows,
            "seconds_after_first_step": round(dt, 2), "rows_per_s": round(res.rows / dt),
            "bytes_per_row": round(size / res.rows, 1)}


def run(env: str = "paddock/gp-batch-v0", worlds=(16, 64, 256), seconds: float = 5.0, collect_steps: int = 128,
        shards=(1, 2), depths=(1, 2)) -> dict:
    """Every row of the fleet benchmark: in-process references, then for each W of ``worlds`` the fleet
    with each count of ``shards`` and each count of calls in flight (``depths``), one shard call on the
    array and JSON paths, and a collection of ``collect_steps`` steps with the largest shard count (each
    at the middle W). Runs on a private local Ray (CPUs: the largest shard count, at least 2) unless this
    process already joined one. Returns the report: ``env_id`` and ``rows``."""
    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    import ray

    from ..catalog import resolve_config_dict as resolve_env
    config = resolve_env(env)
    rows = [in_process(config, w, seconds) for w in worlds]
    own = not ray.is_initialized()          # a private local Ray unless the caller already joined one
    if own:
        ray.init(address="local", num_cpus=max(2, *shards), object_store_memory=200 * 1024**2,
                 include_dashboard=False, log_to_driver=False)
    try:
        for w in worlds:
            for n in shards:
                for depth in depths:
                    rows.append(fleet(config, n, w, seconds, depth=depth))
        rows.append(json_vs_array(config, worlds[len(worlds) // 2]))
        rows.append(collection(env, max(shards), worlds[len(worlds) // 2], collect_steps))
    finally:
        if own:
            ray.shutdown()
    base = {r["worlds"]: r["car_steps_per_s"] for r in rows if r.get("what") == "in-process ShardCore"}
    for r in rows:
        if "car_steps_per_s" in r and r["worlds"] in base:
            r["vs_in_process"] = round(r["car_steps_per_s"] / base[r["worlds"]], 2)
    return {"env_id": env, "rows": rows}


def format_report(report: dict) -> str:
    """The throughput rows as a Markdown table, then the per-call times and the collection."""
    speeds = [r for r in report["rows"] if "car_steps_per_s" in r]
    lines = [f"{report['env_id']}, built-in driver actions computed in the shards.", ""] + table(
        ("what", "worlds per shard", "car-steps/s", "vs in-process"),
        [(r["what"], r["worlds"], f"{r['car_steps_per_s']:,}", r.get("vs_in_process", "")) for r in speeds], left=1)
    calls = [r for r in report["rows"] if "array_ms" in r]
    if calls:
        lines += [""] + table(("one shard call", "worlds", "array step (ms)", "JSON step (ms)", "JSON f32-base64 (ms)"),
                              [("ms per call", r["worlds"], r["array_ms"], r["json_ms"], r["json_f32_ms"])
                               for r in calls], left=1)
    collected = [r for r in report["rows"] if "rows_per_s" in r]
    if collected:
        lines += [""] + table(("collection", "worlds per shard", "steps", "rows", "rows/s", "bytes/row"),
                              [(r["what"], r["worlds"], r["steps"], f"{r['rows']:,}", f"{r['rows_per_s']:,}",
                                r["bytes_per_row"]) for r in collected], left=1)
    return "\n".join(lines)
