"""Throughput of the distributed path: fleet vs in-process engine, W dependence, JSON vs array, collection.

    paddock-ma bench --fleet [--env-worlds 64,256] [--seconds 5] [--json]
    python -m paddock_ma.distributed.bench_fleet [--env paddock/gp-batch-v0] [--worlds 16,64,256]
        [--seconds 5] [--json]

Figures are car-steps per second (one controlled car advanced one env step), built-in driver actions
(computed inside the shard, as the in-process reference computes them), measured after a warm-up
(actor start and numba cache load are not counted). The in-process reference is ``ShardCore`` (the
shard's own code, no Ray) in this process; the fleet runs on a private local Ray (``num_cpus`` = shards).
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time

import numpy as np


def in_process(config: dict, worlds: int, seconds: float) -> dict:
    from .shard import ShardCore
    core = ShardCore(config, 0, worlds)
    core.reset(1)
    for t in range(1, 21):
        core.step(t, None)
    seq, n, t0 = 20, 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        seq += 1
        core.step(seq, None)
        n += 1
    dt = time.perf_counter() - t0
    k = len(core.env.controlled)
    return {"what": "in-process ShardCore", "worlds": worlds, "steps": n, "seconds": round(dt, 2),
            "car_steps_per_s": round(n * worlds * k / dt), "ms_per_step": round(1e3 * dt / n, 2)}


def fleet(config: dict, shards: int, worlds: int, seconds: float, warmup_steps: int = 20, depth: int = 1) -> dict:
    from .fleet import ShardFleet
    f = ShardFleet(config, shards, worlds, seed=1, policy="builtin", snapshot_every=1_000_000, deadline_s=120,
                   pipeline_depth=depth)
    k = None
    n, t0 = 0, None
    try:
        for st in f.run(10**9):
            k = st.obs.shape[1]
            if st.seq == warmup_steps and t0 is None and all(s.seq >= warmup_steps for s in f.shards):
                t0, n = time.perf_counter(), 0
            elif t0 is not None:
                n += 1
                if time.perf_counter() - t0 >= seconds:
                    break
    finally:
        f.shutdown()
    dt = time.perf_counter() - t0
    return {"what": f"ShardFleet, {shards} shard(s), {depth} call(s) in flight", "worlds": worlds, "shard_steps": n, "seconds": round(dt, 2),
            "car_steps_per_s": round(n * worlds * k / dt)}


def json_vs_array(config: dict, worlds: int, calls: int = 60) -> dict:
    """Per-call time of one shard actor: array step vs the JSON protocol's batched step (plain and f32)."""
    import ray

    from ..protocol.codec import pack_f32
    from .shard import EnvShard
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
    for name, fn in (("array_ms", array_call), ("json_ms", lambda: json.loads(ray.get(shard.handle_line.remote(plain)))),
                     ("json_f32_ms", lambda: json.loads(ray.get(shard.handle_line.remote(packed))))):
        reply = fn()
        if isinstance(reply, dict) and not reply.get("ok", True):
            out[name] = f"refused: {reply.get('error')}"
            continue
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        out[name] = round(1e3 * (time.perf_counter() - t0) / calls, 2)
    ray.kill(shard)
    return out


def collection(env: str, shards: int, worlds: int, steps: int) -> dict:
    from .collect import CollectConfig, collect
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


def run(env: str = "paddock/gp-batch-v0", worlds=(16, 64, 256), seconds: float = 5.0, collect_steps: int = 128) -> list:
    """Every row of the fleet benchmark: in-process references, 1 and 2 shards with 1 and 2 calls in
    flight for each W of ``worlds``, one shard call on the array and JSON paths, and a collection."""
    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    import ray

    from ..catalog import resolve_config_dict as resolve_env
    config = resolve_env(env)
    rows = [in_process(config, w, seconds) for w in worlds]
    own = not ray.is_initialized()          # a private local Ray unless the caller already joined one
    if own:
        ray.init(address="local", num_cpus=2, object_store_memory=200 * 1024**2, include_dashboard=False,
                 log_to_driver=False)
    try:
        for w in worlds:
            for n in (1, 2):
                for depth in (1, 2):
                    rows.append(fleet(config, n, w, seconds, depth=depth))
        rows.append(json_vs_array(config, worlds[len(worlds) // 2]))
        rows.append(collection(env, 2, worlds[len(worlds) // 2], collect_steps))
    finally:
        if own:
            ray.shutdown()
    base = {r["worlds"]: r["car_steps_per_s"] for r in rows if r.get("what") == "in-process ShardCore"}
    for r in rows:
        if "car_steps_per_s" in r and r["worlds"] in base:
            r["vs_in_process"] = round(r["car_steps_per_s"] / base[r["worlds"]], 2)
    return rows


def format_report(rows: list) -> str:
    """The rows as a Markdown table (throughput rows) followed by the other measurements."""
    lines = ["| what | worlds per shard | car-steps/s | vs in-process |", "|---|---:|---:|---:|"]
    rest = []
    for r in rows:
        if "car_steps_per_s" in r:
            lines.append(f"| {r['what']} | {r['worlds']} | {r['car_steps_per_s']:,} | {r.get('vs_in_process', '')} |")
        else:
            rest.append(str(r))
    return "\n".join(lines + [""] + rest)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--env", default="paddock/gp-batch-v0")
    p.add_argument("--worlds", default="16,64,256", help="worlds per shard, comma-separated")
    p.add_argument("--seconds", type=float, default=5.0)
    p.add_argument("--collect-steps", type=int, default=128)
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    rows = run(args.env, tuple(int(w) for w in args.worlds.split(",")), args.seconds, args.collect_steps)
    print(json.dumps(rows, indent=1) if args.json else format_report(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
