"""``paddock-ma bench collect``: where a collected row's time goes and how collection grows with shards:
the fleet stepping without writing, the driver writing every row (``writes=driver``) and the shards
writing their own files (``writes=shards``), interleaved, each with the driver's and the shards' CPU a
row; and, with ``--upload-uri``, one dataset file put to an object store by each client.

    paddock-ma bench collect [--env paddock/gp-batch-v0] [--worlds 256] [--steps 512] [--shards 1,2]
        [--writes fleet,driver,shards] [--repeats 2] [--file-worlds 64] [--out-uri s3://B/P]
        [--upload-uri s3://B/P] [--address local|HOST:PORT] [--json]

CPU: the driver's is this process's (``time.process_time``, all its threads) from each shard's first
step to the last; a shard's is its process's user + system time (``/proc/PID/stat``) over the same
steps, so the shards must run on this machine (a local Ray or ``cluster/local_cluster.py``). Rows/s
are timed from the first step handed out (actor start and kernel loading are not counted).
"""

from __future__ import annotations

import os
import tempfile
import time

from .report import table

CLOCK = os.sysconf("SC_CLK_TCK")


def process_cpu_s(pid: int) -> float | None:
    """User + system CPU seconds of process ``pid`` (None when it is gone)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / CLOCK
    except (OSError, IndexError, ValueError):
        return None


class _Meter:
    """Each shard's CPU from its first step handed out to its last, and the driver's over the same span."""

    def __init__(self, steps: int):
        self.steps = steps
        self.first: dict = {}
        self.last: dict = {}
        self.t0 = self.cpu0 = None
        self.t1 = self.cpu1 = None

    def on_step(self, fleet, st) -> None:
        if self.t0 is None:
            self.t0, self.cpu0 = time.perf_counter(), time.process_time()
        pid = fleet.shard_pids()[st.shard]
        if st.shard not in self.first:
            self.first[st.shard] = (pid, process_cpu_s(pid))
        if st.seq == self.steps:
            self.last[st.shard] = (pid, process_cpu_s(pid))
            if len(self.last) == fleet.num_shards:
                self.t1, self.cpu1 = time.perf_counter(), time.process_time()

    def report(self, rows: int) -> dict:
        shard_s = sum(self.last[s][1] - self.first[s][1] for s in self.last
                      if self.first[s][0] == self.last[s][0] and None not in (self.first[s][1], self.last[s][1]))
        seconds, driver_s = self.t1 - self.t0, self.cpu1 - self.cpu0
        return {"rows": rows, "seconds": round(seconds, 2), "rows_per_s": round(rows / seconds),
                "driver_us_per_row": round(1e6 * driver_s / rows, 2), "shard_us_per_row": round(1e6 * shard_s / rows, 2),
                "driver_share": round(driver_s / shard_s, 4) if shard_s else None}


def fleet_only(env: str, shards: int, worlds: int, steps: int, fragment_steps: int) -> dict:
    """The fleet as a collection with shard-written files runs it (built-in driver, two calls in flight of
    ``STEPS_PER_CALL`` steps, snapshots at fragment ends), its steps consumed and dropped: rows/s without
    writing (the rows travel to the driver)."""
    from ..distributed.collection.run import STEPS_PER_CALL
    from ..distributed.fleet import ShardFleet
    meter = _Meter(steps)
    fleet = ShardFleet(env, shards, worlds, seed=1, policy="builtin", pipeline_depth=2, deadline_s=300,
                       snapshot_every=fragment_steps, steps_per_call=min(STEPS_PER_CALL, fragment_steps))
    k = len(fleet.config["controlled_drivers"])
    try:
        for st in fleet.run(steps):
            meter.on_step(fleet, st)
    finally:
        fleet.shutdown()
    return {"what": f"fleet only, {shards} shard(s), no writing", "worlds": worlds, "steps": steps,
            **meter.report(shards * worlds * k * steps)}


def collection(env: str, shards: int, worlds: int, steps: int, writes: str, file_worlds: int,
               fragment_steps: int, out_uri: str | None) -> dict:
    """One collection with ``writes`` (``driver`` or ``shards``) into a temporary directory (or a fresh
    prefix under ``out_uri``): rows/s, CPU a row, bytes a row."""
    from ..distributed.collection.config import CollectConfig
    from ..distributed.collection.run import collect
    cfg = CollectConfig(env=env, num_shards=shards, worlds_per_shard=worlds, steps=steps, seed=1, policy="builtin",
                        fragment_steps=fragment_steps, snapshot_every=min(16, fragment_steps), file_worlds=file_worlds)
    meter = _Meter(steps)
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "ds") if out_uri is None else f"{out_uri.rstrip('/')}/bench-{time.time_ns()}"
        res = collect(cfg, out, progress=False, on_step=meter.on_step, writes=writes, deadline_s=300)
        size = sum(f["bytes"] for f in res.manifest["files"])
    where = "local disk" if out_uri is None else out_uri.split("://")[0] + "://"
    return {"what": f"collect, {shards} shard(s), {writes} writes, {where}", "worlds": worlds, "steps": steps,
            **meter.report(res.rows), "bytes_per_row": round(size / res.rows, 1)}


def upload_clients(uri: str, data: bytes, repeats: int = 5) -> dict:
    """Seconds to put ``data`` (one dataset file) under ``uri`` with each client a shard could use:
    pyarrow's filesystem, fsspec (s3fs) and boto3's create-only PUT (the one ``storage`` uses)."""
    import pyarrow.fs as pafs
    out = {"what": f"one {len(data) / 1e6:.1f} MB file put to {uri.split('://')[0]}:// (ms, best of {repeats})"}
    fs, root = pafs.FileSystem.from_uri(uri)
    bucket, _, prefix = root.partition("/")

    def pyarrow_put(i):
        with fs.open_output_stream(f"{root}/upload/pa-{i}") as fh:
            fh.write(data)

    def fsspec_put(i):
        import s3fs
        s3fs.S3FileSystem().pipe(f"{root}/upload/fsspec-{i}", data)

    def boto3_put(i):
        from ..dataset.storage.conditions import S3Conditions
        S3Conditions(bucket).create(f"{prefix}/upload/boto3-{time.time_ns()}-{i}", data)

    for name, fn in (("pyarrow_ms", pyarrow_put), ("fsspec_ms", fsspec_put), ("boto3_create_only_ms", boto3_put)):
        best = float("inf")
        for i in range(repeats):
            t0 = time.perf_counter()
            fn(i)
            best = min(best, time.perf_counter() - t0)
        out[name] = round(1e3 * best, 1)
    return out


def _sample_file(env: str) -> bytes:
    """A dataset file of this env as a shard writes one (64 worlds x 64 steps)."""
    import numpy as np

    from ..catalog import resolve_config_dict
    from ..dataset.fragments import arrow_schema, encode_parquet, fragment_table, observation_entries
    from ..dataset.shard_files import FragmentStep
    from ..distributed.shard import ShardCore

    config = resolve_config_dict(env)
    core = ShardCore(config, 0, 64)
    obs = core.reset(1)["obs"]
    steps = []
    for seq in range(1, 65):
        _, arrays = core.step(seq, None)
        steps.append(FragmentStep(seq, np.arange(64), obs, arrays))
        obs = arrays["obs"]
    schema = arrow_schema(obs.shape[-1], observation_entries(config))
    return encode_parquet(fragment_table(steps, tuple(core.engine.controlled), obs.shape[-1], schema=schema))


def run(env: str = "paddock/gp-batch-v0", worlds: int = 256, steps: int = 512, shards=(1, 2),
        writes=("fleet", "driver", "shards"), repeats: int = 2, file_worlds: int = 64, fragment_steps: int = 64,
        out_uri: str | None = None, upload_uri: str | None = None, address: str = "local") -> dict:
    """Every row, interleaved: for each repeat, each shard count, each of ``writes`` (``fleet``: no
    writing). Joins ``address`` (``local``: a private Ray of max(2, shards) CPUs) unless this process
    already joined one. Returns the report: ``env_id`` and ``rows``."""
    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    import ray
    rows = []
    if upload_uri is not None:
        rows.append(upload_clients(upload_uri, _sample_file(env)))
    own = not ray.is_initialized()
    if own:
        if address == "local":
            ray.init(address="local", num_cpus=max(2, *shards), object_store_memory=200 * 1024**2,
                     include_dashboard=False, log_to_driver=False)
        else:
            ray.init(address=address, log_to_driver=False)
    try:
        for r in range(repeats):
            for n in shards:
                for how in writes if r % 2 == 0 else tuple(reversed(writes)):     # interleaved: ABC, CBA...
                    if how == "fleet":
                        row = fleet_only(env, n, worlds, steps, fragment_steps)
                    else:
                        row = collection(env, n, worlds, steps, how, file_worlds, fragment_steps, out_uri)
                    rows.append(dict(row, repeat=r + 1))
    finally:
        if own:
            ray.shutdown()
    return {"env_id": env, "rows": rows}


def format_report(report: dict) -> str:
    """The collection rows as a Markdown table, then the upload clients."""
    runs = [r for r in report["rows"] if "rows_per_s" in r]
    lines = [f"{report['env_id']}, built-in driver, rows/s from the first step; CPU a row (µs).", ""] + table(
        ("what", "repeat", "worlds per shard", "steps", "rows/s", "driver µs/row", "shard µs/row",
         "driver/shard", "bytes/row"),
        [(r["what"], r["repeat"], r["worlds"], r["steps"], f"{r['rows_per_s']:,}", r["driver_us_per_row"],
          r["shard_us_per_row"], r["driver_share"], r.get("bytes_per_row", "")) for r in runs], left=1)
    for r in report["rows"]:
        if "pyarrow_ms" in r:
            lines += ["", f"{r['what']}: pyarrow {r['pyarrow_ms']} ms, fsspec (s3fs) {r['fsspec_ms']} ms, "
                          f"boto3 create-only {r['boto3_create_only_ms']} ms"]
    return "\n".join(lines)
