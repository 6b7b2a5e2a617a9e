"""The dataset writer without Ray: a kill at every filesystem step resumes to the same bytes; one owner
per directory; the Parquet files open with pyarrow.dataset, duckdb and polars and describe themselves."""

import json
import os
import pickle
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from paddock_ma.distributed.collection.config import CollectConfig
from paddock_ma.dataset.format import (
    COLLECTION_END, DATASET_FORMAT, DATASET_VERSION, MANIFEST, TRANSITION_COLUMNS, CollectError, config_hash,
)
from paddock_ma.dataset.lock import OutLock
from paddock_ma.dataset.verify import VERIFY_INCOMPLETE, inspect, verify

from .conftest import ENV_ID, OVERRIDES
from .writer_double import CountingDisk, run_writer

ROOT = Path(__file__).resolve().parents[2]
DOUBLE = Path(__file__).with_name("writer_double.py")
# 2 shards x 2 worlds, files of 3 worlds (block 0 spans both shards), 3 fragments of 8 steps (the last of 6;
# episodes of 20 steps: the collection ends inside the second)
CFG = dict(env=ENV_ID, num_shards=2, worlds_per_shard=2, steps=22, seed=5, policy="random", fragment_steps=8,
           snapshot_every=4, env_overrides=OVERRIDES, file_worlds=3)


def _manifest0(cfg, env_config):
    """A new run's manifest, as collect() writes it before the first step."""
    from paddock_ma.env.episodes import METRIC_NAMES
    identity = cfg.identity()
    return {"format": DATASET_FORMAT, "format_version": DATASET_VERSION, "code_fingerprint": "test",
            "config_hash": config_hash(identity, env_config), "run": {"layout": cfg.layout()}, "status": "running",
            "config": identity, "env_config": env_config, "package_version": "test", "git_commit": None,
            "seeds": {"root": cfg.seed}, "layout": {"total_worlds": cfg.total_worlds,
                                                    "controlled": list(env_config["controlled_drivers"]),
                                                    "file_worlds": cfg.file_worlds},
            "columns": [list(c) for c in TRANSITION_COLUMNS], "metric_names": list(METRIC_NAMES), "files": []}


def _steps(cfg, env_config):
    """The ShardSteps the fleet would hand out, shard 1 lagging 5 steps behind shard 0 (so blocks wait)."""
    from paddock_ma.distributed.fleet_types import ShardStep
    from paddock_ma.distributed.policies import resolve_policy
    from paddock_ma.distributed.shard import ShardCore

    policy = resolve_policy(cfg.policy)
    out = []
    w = cfg.worlds_per_shard
    for s in range(cfg.num_shards):
        core = ShardCore(env_config, s * w, w)
        obs = core.reset(cfg.seed)["obs"]
        worlds = np.arange(s * w, (s + 1) * w, dtype=np.int64)
        for seq in range(1, cfg.steps + 1):
            actions = policy(obs, worlds=worlds, seq=seq, seed=cfg.seed)
            snap = seq % cfg.snapshot_every == 0 or seq == cfg.steps
            _, arrays = core.step(seq, actions, snapshot=snap)
            arrays = {k: (np.array(v, copy=True) if isinstance(v, np.ndarray) else v) for k, v in arrays.items()}
            out.append(ShardStep(s, seq, worlds, np.array(obs, copy=True), arrays))
            obs = arrays["obs"]
    return sorted(out, key=lambda st: (st.seq + 5 * st.shard, st.shard))


def _dataset(root):
    m = json.loads((root / MANIFEST).read_text())
    m.pop("run")
    return {p.name: p.read_bytes() for p in sorted((root / "data").iterdir())}, m


@pytest.fixture(scope="module")
def run(env_config, warm_cache, tmp_path_factory):
    """(cfg, manifest0, steps, the clean run's directory, the pickle a subprocess loads)."""
    cfg = CollectConfig(**CFG)
    steps = _steps(cfg, env_config)
    manifest0 = _manifest0(cfg, env_config)
    tmp = tmp_path_factory.mktemp("writer")
    disk = CountingDisk()
    run_writer(tmp / "clean", cfg, manifest0, steps, disk)
    with open(tmp / "run.pickle", "wb") as fh:
        pickle.dump((cfg, manifest0, steps), fh)
    return cfg, manifest0, steps, tmp / "clean", tmp / "run.pickle", disk.n


def test_a_kill_at_every_write_step_resumes_to_the_same_bytes(run, tmp_path):
    cfg, manifest0, steps, clean, pickled, n_steps = run
    assert verify(clean) == []
    assert n_steps > 30            # 6 files, their snapshots and manifests: every step below is a kill point
    want = _dataset(clean)
    for k in range(1, n_steps + 1):
        out = tmp_path / f"k{k}"
        proc = subprocess.run([sys.executable, str(DOUBLE), str(pickled), str(out), str(k)], cwd=ROOT,
                              capture_output=True, text=True, timeout=300,
                              env=dict(os.environ, PYTHONPATH=str(ROOT)))     # this checkout's paddock_ma
        assert proc.returncode == -9, (k, proc.returncode, proc.stderr[-2000:])
        v = inspect(out)           # what a crash leaves: a consistent (incomplete) run, never a problem
        assert v.problems == [], (k, v.problems)
        run_writer(out, cfg, manifest0, steps)          # the resume
        assert _dataset(out) == want, k
        assert verify(out) == [], (k, verify(out))
        assert json.loads((out / MANIFEST).read_text())["state"] == {}, k
        shutil.rmtree(out)


def test_a_second_writer_is_refused_naming_the_owner_and_a_dead_owner_is_taken_over(tmp_path):
    out = tmp_path / "ds"
    holder = subprocess.Popen([sys.executable, "-c", "import sys, time; from pathlib import Path; "
                               "from paddock_ma.dataset.lock import OutLock; "
                               f"OutLock(Path({str(out)!r})).acquire(); print('held', flush=True); time.sleep(600)"],
                              cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(CollectError, match=rf"being written by another collector \(pid {holder.pid} on "):
            OutLock(out).acquire()
    finally:
        holder.kill()
        holder.wait()
    with OutLock(out) as lock:          # its owner died: the kernel dropped its flock
        assert lock.owner()["pid"] == os.getpid()
        with pytest.raises(CollectError, match=f"pid {os.getpid()}"):
            OutLock(out).acquire()      # one owner even within a process
    OutLock(out).acquire().release()


def test_an_interrupted_run_is_reported_incomplete_with_a_resume_line(run, tmp_path):
    cfg, manifest0, steps, clean, pickled, n_steps = run
    out = tmp_path / "ds"
    run_writer(out, cfg, manifest0, [st for st in steps if st.seq <= 9])
    v = inspect(out)
    assert v.problems == [] and not v.complete and v.exit_code == VERIFY_INCOMPLETE
    assert v.expected == {"steps": 22, "rows": 22 * 4 * 8, "files": 6}
    assert v.present == {"steps": 8, "rows": 8 * 4 * 8, "files": 2}
    from paddock_ma.cli.main import main as cli_main
    assert cli_main(["verify", str(out)]) == VERIFY_INCOMPLETE
    assert "collect(CollectConfig(...)" in v.resume      # env_overrides: not expressible on the command line


def test_the_dataset_opens_with_pyarrow_duckdb_and_polars_and_describes_itself(run):
    import duckdb
    import polars as pl
    import pyarrow.dataset as ds

    cfg, manifest0, steps, clean, pickled, n_steps = run
    rows = cfg.steps * cfg.total_worlds * 8
    assert ds.dataset(clean).to_table().num_rows == rows                 # the directory itself
    assert duckdb.sql(f"select count(*) from read_parquet('{clean}/data/**')").fetchall()[0][0] == rows
    assert duckdb.sql(f"select count(*) from '{clean}/**/*.parquet'").fetchall()[0][0] == rows
    assert pl.scan_parquet(clean / "data").select(pl.len()).collect().item() == rows
    assert pl.read_parquet(f"{clean}/**/*.parquet").height == rows
    t = ds.dataset(clean).to_table()
    schema = pq.read_schema(sorted((clean / "data").iterdir())[0])
    entries = json.loads(schema.metadata[b"paddock_ma.obs"])["vector"]
    assert len(entries) == schema.field("obs").type.list_size == 298
    assert entries[0]["name"] and len({e["name"] for e in entries}) == 298
    assert json.loads(schema.field("action").metadata[b"components"])[0] == {"name": "steering", "unit": "normalized",
                                                                            "min": -1.0, "max": 1.0}
    assert schema.field("progress_delta_meters").metadata[b"unit"] == b"m"
    assert schema.field("lap_time_seconds").metadata[b"unit"] == b"s"
    assert schema.field("lap_time_seconds").nullable and not schema.field("progress_delta_meters").nullable
    lap = t["lap_time_seconds"]
    no_lap = t.filter(pa.compute.equal(t["lap_completed"], 0))
    assert no_lap["lap_time_seconds"].null_count == no_lap.num_rows > 0            # null, not NaN, without a lap
    assert not np.isnan(lap.drop_null().to_numpy()).any()
    # every car's last row ends its episode: truncated, with the observation after it
    last = t.filter(pa.compute.equal(t["seq"], cfg.steps))
    assert last.num_rows == cfg.total_worlds * 8 and all(last["truncated"].to_pylist())
    assert set(last["end_reason"].to_pylist()) <= {COLLECTION_END, "destroyed", "stalled-off-track", "max-steps"}
    assert COLLECTION_END in last["end_reason"].to_pylist() and last["final_obs"].null_count == 0
    assert COLLECTION_END not in t.filter(pa.compute.less(t["seq"], cfg.steps))["end_reason"].to_pylist()
