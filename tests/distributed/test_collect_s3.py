"""``paddock-ma collect`` on a real local Ray into a real S3-compatible server (moto's, on 127.0.0.1): the
shards write their own objects, the driver receives no rows, the dataset is the local one byte for byte,
an interrupted run resumes to the same bytes, ``verify`` works on the URI."""

import json

import pytest

from paddock_ma.cli import main as cli_main
from paddock_ma.dataset.format import MANIFEST
from paddock_ma.dataset.storage.opening import open_store
from paddock_ma.dataset.verify import VERIFY_INCOMPLETE, inspect, verify
from paddock_ma.distributed.collection.run import collect

from ..helpers.s3_server import s3_server
from .conftest import ENV_ID, collect_config

pytestmark = pytest.mark.ray
BUCKET = "paddock-ray"
SLIM = {"checksum", "written", "snapshot"}      # all a shard writing its own files sends the driver


@pytest.fixture(scope="module")
def ray_s3(ray_session, warm_cache):
    """The S3 server, then a local Ray started after it (its workers inherit the AWS_* environment, as the
    nodes of a real cluster have theirs); both stopped after."""
    with s3_server(buckets=(BUCKET,)) as endpoint:
        ray_session.shutdown()
        ray_session.local()
        yield endpoint
        ray_session.shutdown()


def _dataset(out):
    store = open_store(out)
    m = json.loads(store.read_manifest(MANIFEST)[0])
    m.pop("run")
    return {rel: store.read_bytes(rel) for rel in sorted(store.list_files("data"))}, m


def test_collect_to_s3_from_the_command_line_is_the_local_dataset(ray_s3, tmp_path, capsys):
    # 2 shards x 2 worlds, blocks of 2 worlds: the shards write (the catalogue env as is: a command line's)
    cfg = collect_config(file_worlds=2, env_overrides={})
    local = collect(cfg, tmp_path / "local", progress=False)
    assert local.manifest["run"]["writes"] == "shards"
    uri = f"s3://{BUCKET}/cli/ds"
    assert cli_main(["collect", "--env", ENV_ID, "--shards", "2", "--worlds-per-shard", "2", "--steps", "40", "--seed",
                     "3", "--policy", "random", "--fragment-steps", "16", "--snapshot-every", "8", "--file-worlds", "2",
                     "--out", uri, "--no-progress"]) == 0
    assert _dataset(uri) == _dataset(tmp_path / "local")
    assert cli_main(["verify", uri]) == 0
    assert f"{uri}: ok (complete: 40 steps, {40 * 4 * 8:,} rows, 6 files)" in capsys.readouterr().out
    m = json.loads(open_store(uri).read_manifest(MANIFEST)[0])
    assert m["run"]["writes"] == "shards" and m["state"] == {} and open_store(uri).list_files("_run") == {}


def test_the_driver_receives_no_rows_and_an_interrupted_s3_run_resumes_to_the_same_bytes(ray_s3, tmp_path):
    cfg = collect_config(file_worlds=2)
    seen = []

    class Stop(Exception):
        pass

    def stop(fleet, st):
        seen.append((st.seq, st.obs, set(st.arrays)))
        if st.seq >= 20 and all(sh.seq >= 20 for sh in fleet.shards):
            raise Stop()

    uri = f"s3://{BUCKET}/resume/ds"
    with pytest.raises(Stop):
        collect(cfg, uri, progress=False, on_step=stop)
    assert all(keys <= SLIM for _, _, keys in seen)                                     # no row
    assert all(obs is None for seq, obs, _ in seen if seq > 1)     # no observation (but the reset's, once a shard)
    v = inspect(uri)
    assert v.problems == [] and v.exit_code == VERIFY_INCOMPLETE and 2 <= v.present["files"] < 6   # fragment 0 on
    res = collect(cfg, uri, progress=False)
    assert res.manifest["status"] == "complete" and verify(uri) == []
    collect(cfg, tmp_path / "local", progress=False)
    assert _dataset(uri) == _dataset(tmp_path / "local")
