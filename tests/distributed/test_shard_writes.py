"""Shards writing their own files, without Ray (in-process ShardCores): the driver's bytes, a kill at every
write step of a shard resumed to the same bytes, and the same dataset on a real S3-compatible server
(moto's, on 127.0.0.1) through the production clients: the commit point, the lease, the readers."""

import hashlib
import json
import os
import pickle
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from paddock_ma.dataset.format import MANIFEST, CollectError
from paddock_ma.dataset.manifest import new_manifest, run_base
from paddock_ma.dataset.storage.opening import open_store
from paddock_ma.dataset.storage.store import StoreConflict
from paddock_ma.dataset.verify import VERIFY_INCOMPLETE, inspect, verify
from paddock_ma.distributed.collection.config import CollectConfig

from ..helpers.s3_server import s3_server
from .conftest import ENV_ID, OVERRIDES
from .writer_double import run_shard_writes, run_writer

ROOT = Path(__file__).resolve().parents[2]
DOUBLE = Path(__file__).with_name("writer_double.py")
K = 8                               # controlled cars of paddock/oval-batch-v0
# 2 shards x 4 worlds, files of 2 worlds (blocks 0-1 in shard 0, 2-3 in shard 1), 2 fragments of 8 steps
CFG = dict(env=ENV_ID, num_shards=2, worlds_per_shard=4, steps=16, seed=7, policy="random", fragment_steps=8,
           snapshot_every=8, env_overrides=OVERRIDES, file_worlds=2)
BUCKET = "paddock-data"


def _manifest0(cfg):
    base = run_base(cfg.identity(), cfg.layout(), cfg.env_config(), "test")
    return new_manifest(base, cfg.identity(), cfg.env_config())


def _dataset(store_or_path):
    """``({data file: bytes}, manifest without its run section)`` of a dataset (path or URI)."""
    store = open_store(store_or_path)
    m = json.loads(store.read_manifest(MANIFEST)[0])
    m.pop("run", None)
    return {rel: store.read_bytes(rel) for rel in sorted(store.list_files("data"))}, m


def _driver_steps(cfg):
    """The ShardSteps a fleet hands the driver when it writes the files itself (the policy in the driver)."""
    from paddock_ma.distributed.fleet_types import ShardStep
    from paddock_ma.distributed.policies import resolve_policy
    from paddock_ma.distributed.shard import ShardCore
    policy, out, w = resolve_policy(cfg.policy), [], cfg.worlds_per_shard
    for s in range(cfg.num_shards):
        core = ShardCore(cfg.env_config(), s * w, w)
        obs = core.reset(cfg.seed)["obs"]
        worlds = np.arange(s * w, (s + 1) * w, dtype=np.int64)
        for seq in range(1, cfg.steps + 1):
            _, arrays = core.step(seq, policy(obs, worlds=worlds, seq=seq, seed=cfg.seed),
                                  snapshot=seq % cfg.fragment_steps == 0)
            out.append(ShardStep(s, seq, worlds, obs, arrays))
            obs = arrays["obs"]
    return sorted(out, key=lambda st: (st.seq, st.shard))


@pytest.fixture(scope="module")
def clean(warm_cache, tmp_path_factory):
    """``CFG`` written by its shards into a local directory."""
    cfg = CollectConfig(**CFG)
    out = tmp_path_factory.mktemp("shard-writes") / "clean"
    run_shard_writes(out, cfg, cfg.env_config(), _manifest0(cfg))
    return out


@pytest.fixture(scope="module")
def s3(warm_cache):
    with s3_server(buckets=(BUCKET,)) as endpoint:
        yield endpoint


def test_shard_written_files_are_the_driver_written_files_and_list_their_values(clean, tmp_path):
    cfg = CollectConfig(**CFG)
    assert verify(clean) == []
    data, m = _dataset(clean)
    assert sorted(data) == [f"data/block-{b:04d}-frag-{f:06d}.parquet" for b in range(4) for f in range(2)]
    for f in m["files"]:            # every entry a shard handed the driver, value by value
        b, fr = f["block"], f["fragment"]
        assert f["worlds"] == [2 * b, 2 * b + 2] and (f["seq_from"], f["seq_to"]) == (8 * fr + 1, 8 * fr + 8)
        assert f["rows"] == 2 * K * 8 and f["bytes"] == len(data[f["path"]])
        assert f["sha256"] == hashlib.sha256(data[f["path"]]).hexdigest()
        t = pq.read_table(clean / f["path"])
        assert t.num_rows == f["rows"] and sorted(set(t["world"].to_pylist())) == [2 * b, 2 * b + 1]
        assert (min(t["seq"].to_pylist()), max(t["seq"].to_pylist())) == (f["seq_from"], f["seq_to"])
    assert m["status"] == "complete" and m["state"] == {} and not any(open_store(clean).list_files("_run/state"))
    # the driver writing the same config (its policy in the driver, rows sent to it): the same bytes
    run_writer(tmp_path / "driver", cfg, _manifest0(cfg), _driver_steps(cfg))
    assert _dataset(tmp_path / "driver") == (data, m)
    # one shard of all 8 worlds: the same bytes (a dataset does not depend on the shards)
    one = CollectConfig(**dict(CFG, num_shards=1, worlds_per_shard=8))
    run_shard_writes(tmp_path / "one", one, one.env_config(), _manifest0(one))
    data1, m1 = _dataset(tmp_path / "one")
    assert data1 == data and m1["files"] == m["files"] and m1["config_hash"] == m["config_hash"]


def test_a_kill_at_every_shard_write_step_resumes_to_the_same_bytes(clean, tmp_path):
    cfg = CollectConfig(**CFG)
    want = _dataset(clean)
    pickled = tmp_path / "run.pickle"
    with open(pickled, "wb") as fh:
        pickle.dump((cfg, _manifest0(cfg), cfg.env_config()), fh)
    # each shard-fragment: 2 blocks and a snapshot, each a temporary then a link: 6 steps, 2 x 2 of them
    n_steps, torn = 24, 0
    for k in range(1, n_steps + 1):
        out = tmp_path / f"k{k}"
        proc = subprocess.run([sys.executable, str(DOUBLE), str(pickled), str(out), str(k), "shards"], cwd=ROOT,
                              capture_output=True, text=True, timeout=300, env=dict(os.environ, PYTHONPATH=str(ROOT)))
        assert proc.returncode == -9, (k, proc.returncode, proc.stderr[-2000:])
        v = inspect(out)            # a consistent, incomplete run; a torn temporary is reported, not a problem
        assert v.problems == [] and v.exit_code == VERIFY_INCOMPLETE, (k, v.problems)
        torn += bool(v.temporaries)
        assert all(t.startswith("_run/tmp/") for t in v.temporaries)
        run_shard_writes(out, cfg, cfg.env_config(), _manifest0(cfg))        # the resume
        assert _dataset(out) == want, k
        assert verify(out) == [] and not open_store(out).list_files("_run/tmp"), k
    assert torn == n_steps          # every kill left its temporary (torn, or whole before its link), resume removed it


def test_writes_by_shards_are_refused_naming_a_layout_that_works_when_a_block_spans_shards():
    from paddock_ma.distributed.collection.run import writes_of
    cfg = CollectConfig(**dict(CFG, worlds_per_shard=6, file_worlds=4))
    with pytest.raises(CollectError) as err:
        writes_of(cfg, "shards")
    assert str(err.value) == ("writes: shards cannot write their own files when a file's world block spans shards "
                              "(file_worlds 4, worlds_per_shard 6); pass file_worlds=3 (a divisor of worlds_per_shard), "
                              "or worlds_per_shard a multiple of 4, or writes=driver")
    assert writes_of(cfg, "auto") is False and writes_of(CollectConfig(**CFG), "auto") is True
    assert writes_of(CollectConfig(**dict(CFG, num_shards=1, worlds_per_shard=5, file_worlds=2)), "shards") is True
    assert writes_of(CollectConfig(**CFG), "driver") is False


def test_shards_write_to_s3_the_local_bytes_and_every_reader_opens_them(clean, s3):
    import duckdb
    import polars as pl
    import pyarrow.dataset as ds
    import s3fs

    cfg = CollectConfig(**CFG)
    uri = f"s3://{BUCKET}/runs/clean"
    run_shard_writes(uri, cfg, cfg.env_config(), _manifest0(cfg))
    assert _dataset(uri) == _dataset(clean)
    assert verify(uri) == []
    rows = cfg.steps * cfg.total_worlds * K
    assert ds.dataset(uri).to_table().num_rows == rows                               # the prefix itself
    assert pl.read_parquet(f"{uri}/data/*.parquet").height == rows
    con = duckdb.connect()          # duckdb through fsspec (its httpfs extension is a download)
    con.register_filesystem(s3fs.S3FileSystem())
    assert con.sql(f"select count(*), sum(seq) from read_parquet('{uri}/data/*.parquet')").fetchall()[0] == \
        (rows, cfg.total_worlds * K * sum(range(1, cfg.steps + 1)))
    from paddock_ma.dataset.replay import load_dataset_world, replay_dataset_world
    world = load_dataset_world(uri, 5)
    assert world.actions.shape == (16, K, 3) and replay_dataset_world(world) is None    # bit-exact replay
    assert np.array_equal(world.obs, load_dataset_world(clean, 5).obs)


def test_s3_a_kill_at_the_commit_point_resumes_to_the_same_bytes_and_other_bytes_are_refused(clean, s3):
    cfg = CollectConfig(**CFG)
    uri = f"s3://{BUCKET}/runs/commit-point"
    run_shard_writes(uri, cfg, cfg.env_config(), _manifest0(cfg), until=8, commit=False)
    v = inspect(uri)                # fragment 0's objects are there, the manifest does not list them
    assert v.problems == [] and v.exit_code == VERIFY_INCOMPLETE and v.present == {"steps": 0, "rows": 0, "files": 0}
    assert v.uncommitted == [f"data/block-{b:04d}-frag-000000.parquet" for b in range(4)]
    assert len(open_store(uri).list_files("_run/state")) == 2            # unlisted snapshots, removed by resume
    run_shard_writes(uri, cfg, cfg.env_config(), _manifest0(cfg))
    assert _dataset(uri) == _dataset(clean) and verify(uri) == []
    assert open_store(uri).list_files("_run/state") == {}
    # an object under a file's name with other bytes is never overwritten
    other = f"s3://{BUCKET}/runs/other"
    run_shard_writes(other, cfg, cfg.env_config(), _manifest0(cfg), until=8, commit=False)
    store = open_store(other)
    store.delete("data/block-0001-frag-000000.parquet")
    store.put_new("data/block-0001-frag-000000.parquet", b"PAR1 not these bytes")
    with pytest.raises(CollectError, match="block-0001-frag-000000.parquet exists with other bytes"):
        run_shard_writes(other, cfg, cfg.env_config(), _manifest0(cfg))


def test_s3_one_collector_per_dataset_by_lease_and_conditional_commit(s3):
    from paddock_ma.dataset.storage.lease import LeaseLock
    store = open_store(f"s3://{BUCKET}/runs/lease")
    first = LeaseLock(store, ttl_s=2.0).acquire()
    with pytest.raises(CollectError, match=rf"being written by another collector \(pid {os.getpid()} on "):
        LeaseLock(store, ttl_s=2.0).acquire()
    time.sleep(2.5)                 # the first stops renewing: its lease runs out and is taken over
    second = LeaseLock(store, ttl_s=2.0).acquire()
    with pytest.raises(StoreConflict, match="lease .* was taken over"):
        first.renew(force=True)
    second.renew(force=True)
    second.release()
    LeaseLock(store).acquire().release()            # released: free again
    # the manifest: created once, replaced only from the version a writer read
    token = store.commit_manifest(MANIFEST, b'{"v": 1}', None)
    with pytest.raises(StoreConflict):
        store.commit_manifest(MANIFEST, b'{"v": 1}', None)
    new = store.commit_manifest(MANIFEST, b'{"v": 2}', token)
    with pytest.raises(StoreConflict, match="changed under this run"):
        store.commit_manifest(MANIFEST, b'{"v": 3}', token)        # a writer holding the old version loses
    assert store.read_manifest(MANIFEST) == (b'{"v": 2}', new)


def test_the_readers_example_agrees_on_a_local_and_an_s3_dataset(clean, s3, capsys):
    import importlib.util
    spec = importlib.util.spec_from_file_location("dataset_readers", ROOT / "examples" / "dataset_readers.py")
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    t = pq.read_table(clean / "data", columns=["world", "driver", "episode_id", "legal_progress_delta_meters"])
    progress = float(t["legal_progress_delta_meters"].to_numpy().astype(np.float64).sum())
    want_lives = len(set(zip(t["world"].to_pylist(), t["driver"].to_pylist(), t["episode_id"].to_pylist())))
    got = example.summaries(str(clean))
    assert set(got) == {"pyarrow", "polars", "duckdb"} and len(set(got.values())) == 1
    rows, lives, total = got["pyarrow"]
    assert rows == 16 * 8 * K and lives == want_lives >= 8 * K and abs(total - progress) < 1e-2
    uri = f"s3://{BUCKET}/runs/readers"
    cfg = CollectConfig(**CFG)
    run_shard_writes(uri, cfg, cfg.env_config(), _manifest0(cfg))
    assert example.main([uri, "--duckdb-fsspec"]) == 0
    assert json.loads(capsys.readouterr().out)["duckdb"] == list(got["duckdb"])
