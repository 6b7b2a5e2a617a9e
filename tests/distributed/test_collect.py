"""collect / verify on a real local Ray: byte-identical datasets with and without faults, resume, refusals."""

import json
import os
import signal

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from paddock_ma.cli import main as cli_main
from paddock_ma.dataset.format import MANIFEST, CollectError
from paddock_ma.dataset.verify import VERIFY_INCOMPLETE, inspect, verify
from paddock_ma.distributed.collection.run import collect
from paddock_ma.distributed.testing import FaultyShardCore

from .conftest import ENV_ID, collect_config, measured_hang_deadline, parquet_bytes

pytestmark = pytest.mark.ray


def _files(root):
    m = json.loads((root / MANIFEST).read_text())
    return {f["path"]: f["sha256"] for f in m["files"]}, m


def test_a_clean_collection_verifies_and_holds_every_transition(clean):
    assert verify(clean) == []
    files, m = _files(clean)
    assert m["status"] == "complete" and len(files) == 3       # 40 steps = fragments of 16, 16, 8; 4 worlds: 1 block
    assert m["config"]["steps"] == 40 and m["package_version"] and "config_hash" in m
    assert sum(f["rows"] for f in m["files"]) == 40 * 4 * 8
    t = pq.read_table(clean / "data")
    assert t.num_rows == 40 * 4 * 8
    assert t.column("truncated").to_numpy().sum() > 0          # cars did end episodes and start new lives
    done = t.filter(pa.compute.or_(t["terminated"], t["truncated"]))
    assert done["final_obs"].null_count == 0 and t["final_obs"].null_count == t.num_rows - done.num_rows
    assert set(done["end_reason"].to_pylist()) <= {"destroyed", "stalled-off-track", "max-steps", "collection-end"}
    assert t.schema.field("obs").type.list_size == 298 and t.schema.field("action").type.list_size == 3


def test_killed_and_hung_shards_give_byte_identical_files(clean, env_config, tmp_path):
    kills = {(0, 5), (1, 13), (0, 17), (1, 30), (0, 33)}

    def fault(fleet, st):
        if (st.shard, st.seq) in kills:
            os.kill(fleet.shard_pids()[st.shard], signal.SIGKILL)

    deadline = measured_hang_deadline(env_config)
    res = collect(collect_config(), tmp_path / "ds", progress=False, on_step=fault, deadline_s=deadline,
                  shard_cls=FaultyShardCore.with_faults({1: {"hang_at_seq": 9}}, once_dir=tmp_path))   # first life only
    # the five kills and the hang; a healthy step that load made slower than the deadline (short, to find
    # the hang soon) is failed and recovered as well
    reasons = [f["reason"].split(":")[0] for f in res.manifest["run"]["failures"]]
    assert reasons.count("deadline") >= 1 and len(reasons) >= 6, reasons
    assert set(reasons) <= {"deadline", "ActorDiedError", "ActorUnavailableError"}, reasons
    assert verify(tmp_path / "ds") == []
    assert parquet_bytes(tmp_path / "ds") == parquet_bytes(clean)
    assert _files(tmp_path / "ds")[0] == _files(clean)[0]


def _dataset(root):
    """The dataset as bytes: every data file and the manifest without its run section (timing, shards)."""
    manifest = json.loads((root / MANIFEST).read_text())
    manifest.pop("run")
    return parquet_bytes(root), manifest


def test_the_dataset_does_not_depend_on_the_number_of_shards(clean, tmp_path):
    # 1 x 4 worlds and 2 x 2 (the session's Ray has 2 CPUs); files of 3 worlds: blocks [0, 3) and [3, 4),
    # so with 2 shards the first block spans both
    runs = {"one": collect_config(num_shards=1, worlds_per_shard=4, file_worlds=3), "two": collect_config(file_worlds=3)}
    for name, cfg in runs.items():
        collect(cfg, tmp_path / name, progress=False)
        assert verify(tmp_path / name) == []
    data, manifest = _dataset(tmp_path / "one")
    assert sorted(data) == [f"block-{b:04d}-frag-{f:06d}.parquet" for b in (0, 1) for f in (0, 1, 2)]
    assert _dataset(tmp_path / "two") == (data, manifest)
    # the same rows as the clean run's files of 64 worlds (one block), which are cut otherwise
    key = [("world", "ascending"), ("driver", "ascending"), ("seq", "ascending")]
    a = pq.read_table(clean / "data").sort_by(key)
    b = pq.read_table(tmp_path / "one" / "data").sort_by(key)
    assert a.column_names == b.column_names and a.num_rows == b.num_rows
    for name in a.column_names:              # lap_time_seconds is NaN without a lap: NaN-aware equality
        x, y = a[name].combine_chunks(), b[name].combine_chunks()
        if pa.types.is_fixed_size_list(x.type):
            assert x.is_null().equals(y.is_null()), name
            x, y = x.flatten(), y.flatten()
        if pa.types.is_floating(x.type):
            assert np.array_equal(x.to_numpy(zero_copy_only=False), y.to_numpy(zero_copy_only=False),
                                  equal_nan=True), name
        else:
            assert x.equals(y), name
    with pytest.raises(CollectError, match="another shard layout"):      # a resume keeps its layout
        m = json.loads((tmp_path / "one" / MANIFEST).read_text())
        m["status"] = "running"
        (tmp_path / "one" / MANIFEST).write_text(json.dumps(m))
        collect(collect_config(file_worlds=3), tmp_path / "one", progress=False)


class _Interrupt(Exception):
    pass


def test_an_interrupted_run_resumes_to_the_same_bytes(clean, tmp_path):
    out = tmp_path / "ds"

    def stop(fleet, st):
        if st.seq >= 20 and all(sh.seq >= 20 for sh in fleet.shards):    # both past fragment 0's end
            raise _Interrupt()

    with pytest.raises(_Interrupt):
        collect(collect_config(), out, progress=False, on_step=stop)
    files, m = _files(out)
    assert m["status"] == "running" and 1 <= len(files) < 3     # fragment 0 written (both shards passed step 16)
    v = inspect(out)                             # a partial run is consistent as far as it goes: incomplete
    assert v.problems == [] and v.exit_code == VERIFY_INCOMPLETE and v.present["files"] == len(files)
    assert verify(out)[0].startswith("incomplete:") and "paddock-ma collect --env" not in v.resume   # overrides
    with pytest.raises(CollectError, match="provenance_sha256 does not match"):     # an edited config is refused
        m2 = dict(m, env_config=dict(m["env_config"], seed=99))
        (out / MANIFEST).write_text(json.dumps(m2))
        try:
            collect(collect_config(), out, progress=False)
        finally:
            (out / MANIFEST).write_text(json.dumps(m))
    res = collect(collect_config(), out, progress=False)
    assert res.manifest["status"] == "complete"
    assert parquet_bytes(out) == parquet_bytes(clean) and verify(out) == []
    with pytest.raises(CollectError, match="already holds this complete dataset"):
        collect(collect_config(), out, progress=False)
    m = json.loads((out / MANIFEST).read_text())
    m["status"], m["code_fingerprint"] = "running", "0000000000000000"     # as if collected by other code
    (out / MANIFEST).write_text(json.dumps(m))
    with pytest.raises(CollectError, match="other paddock_ma code"):
        collect(collect_config(), out, progress=False)


def test_bad_input_is_refused_before_any_work(tmp_path, capsys, ray_local):
    base = ["collect", "--env", ENV_ID, "--shards", "1", "--worlds-per-shard", "1", "--steps", "5", "--policy", "builtin",
            "--no-progress"]

    def run(*extra, out=None):
        code = cli_main(base[:1] + [a for a in base[1:]] + ["--out", str(out or tmp_path / "new")] + list(extra))
        return code, capsys.readouterr().err

    code, err = run()
    assert code == 0
    assert (tmp_path / "new" / MANIFEST).exists()
    cases = [
        ((["--env", "paddock/nope-v0"]), "unknown environment 'paddock/nope-v0'"),
        ((["--shards", "0"]), "num_shards: got 0"),
        ((["--worlds-per-shard", "-2"]), "worlds_per_shard: got -2"),
        ((["--steps", "0"]), "steps: got 0"),
        ((["--policy", "nosuchmodule:act"]), "policy: cannot load"),
        ((["--shards", "3"]), "num_shards: got 3, but the cluster has 2 CPUs"),     # the session's Ray has 2
        ((["--deadline", "0"]), "--deadline: got '0'"),
        ((["--deadline", "inf"]), "--deadline: got 'inf'; expected a finite number"),
    ]
    for extra, message in cases:
        argv = list(base)
        for flag, value in zip(extra[::2], extra[1::2]):
            if flag in argv:
                argv[argv.index(flag) + 1] = value
            else:
                argv += [flag, value]
        try:
            code = cli_main(argv + ["--out", str(tmp_path / "never")])
        except SystemExit as exc:              # argparse's own checks (a type): exit 2 as well
            code = exc.code
        err = capsys.readouterr().err
        assert code == 2 and message in err, (extra, err)
        assert not (tmp_path / "never").exists()
    # --out: a directory with other content, another config's run, an unwritable place
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "notes.txt").write_text("keep me")
    code, err = run(out=tmp_path / "busy")
    assert code == 2 and "is not empty" in err and (tmp_path / "busy" / "notes.txt").read_text() == "keep me"
    code = cli_main([a if a != "5" else "6" for a in base] + ["--out", str(tmp_path / "new")])
    assert code == 2 and "another config" in capsys.readouterr().err
    (tmp_path / "afile").write_text("")
    code, err = run(out=tmp_path / "afile" / "ds")
    assert code == 2 and "cannot write" in err
    (tmp_path / "afile").write_text("")
    code, err = run(out=tmp_path / "afile")
    assert code == 2 and "not a directory" in err
    code, err = run(out="/proc/paddock-ma-never")            # writable by its permissions, not in fact
    assert code == 2 and "--out: cannot write to /proc/paddock-ma-never" in err
    with pytest.raises(CollectError, match="reset_placement: got 'teleport'; expected one of"):
        collect(collect_config(reset_placement="teleport"), tmp_path / "never", progress=False)
    with pytest.raises(CollectError, match="deadline_s: got inf"):
        collect(collect_config(), tmp_path / "never", progress=False, deadline_s=float("inf"))
    assert not (tmp_path / "never").exists()


def test_unreachable_address_is_refused_before_any_work(tmp_path):
    import subprocess
    import sys
    from paddock_ma.distributed.collection.ray_connect import check_address
    with pytest.raises(CollectError, match="expected auto, local or HOST:PORT"):
        check_address("nowhere")
    out = tmp_path / "x"
    proc = subprocess.run([sys.executable, "-m", "paddock_ma.cli", "collect", "--env", ENV_ID, "--shards", "1",
                           "--worlds-per-shard", "1", "--steps", "5", "--out", str(out), "--address", "127.0.0.1:9"],
                          capture_output=True, text=True, timeout=120, env=dict(os.environ, RAY_ADDRESS=""))
    assert proc.returncode == 2, proc.stderr
    assert "address: cannot reach 127.0.0.1:9" in proc.stderr and "address 'local'" in proc.stderr
    assert not out.exists()


def test_verify_names_the_first_problem(clean, tmp_path):
    import shutil
    bad = tmp_path / "bad"
    shutil.copytree(clean, bad)
    path = sorted((bad / "data").glob("*.parquet"))[0]
    t = pq.read_table(path)
    # a duplicated transition (row 5 replaced by a copy of row 4), with the manifest's hash updated
    m = json.loads((bad / MANIFEST).read_text())
    import hashlib

    def rewrite(table):
        pq.write_table(table, path)
        for f in m["files"]:
            if f["path"] == f"data/{path.name}":
                f["sha256"] = hashlib.sha256(path.read_bytes()).hexdigest()
                f["bytes"] = path.stat().st_size
        (bad / MANIFEST).write_text(json.dumps(m))
    rewrite(pa.concat_tables([t.slice(0, 5), t.slice(4, 1), t.slice(6)]))
    problems = verify(bad)
    assert problems and problems[0].startswith("duplicate transition"), problems
    assert cli_main(["verify", str(bad)]) == 1
    # a lost transition: row 5's step moved away (the file keeps its row count)
    seq = t["seq"].to_numpy().copy()
    seq[5] += 100
    rewrite(t.set_column(t.schema.get_field_index("seq"), t.schema.field("seq"), pa.array(seq)))
    assert verify(bad)[0].startswith("gap:"), verify(bad)
    # a file with a row less than its place in the dataset holds
    rewrite(t.slice(1))
    assert verify(bad)[0] == f"data/{path.name}: {t.num_rows - 1} rows, manifest says {t.num_rows}", verify(bad)
    # a file changed behind the manifest's back
    path.write_bytes(path.read_bytes()[:-10])
    assert "SHA-256" in verify(bad)[0]
    assert cli_main(["verify", str(clean)]) == 0


def test_a_module_policy_is_loaded_by_name(clean, tmp_path):
    """--policy MODULE:FN: the random policy named by its module gives the same first fragment (whose last
    rows here end the collection: the same transitions, truncated)."""
    out = tmp_path / "named"
    collect(collect_config(steps=16, policy="paddock_ma.distributed.policies:random_policy"), out, progress=False)
    assert verify(out) == []
    name = "block-0000-frag-000000.parquet"
    a, b = pq.read_table(out / "data" / name), pq.read_table(clean / "data" / name)
    for col in ("world", "driver", "episode_id", "seq", "obs", "action", "progress_delta_meters", "terminated"):
        assert a[col].equals(b[col]), col
    cut = pa.compute.equal(a["end_reason"], "collection-end")
    assert pa.compute.all(pa.compute.equal(a.filter(cut)["seq"], 16)).as_py() and a.filter(cut).num_rows > 0


def _copy(clean, dst):
    import shutil
    shutil.copytree(clean, dst)
    return dst, json.loads((dst / MANIFEST).read_text())


def test_verify_catches_a_change_to_any_listed_file(clean, tmp_path):
    m = json.loads((clean / MANIFEST).read_text())
    assert len(m["files"]) == 3
    for i, f in enumerate(m["files"]):            # each file in turn, the last one included
        bad, _ = _copy(clean, tmp_path / f"byte{i}")
        p = bad / f["path"]
        data = bytearray(p.read_bytes())
        data[len(data) // 2] ^= 0x01
        p.write_bytes(bytes(data))
        problems = verify(bad)
        assert problems == [f"{f['path']}: SHA-256 " + problems[0].split("SHA-256 ", 1)[1]], (i, problems)
        assert cli_main(["verify", str(bad)]) == 1
        p.unlink()
        assert verify(bad) == [f"{f['path']}: listed in the manifest but missing"], i


def test_verify_covers_the_provenance_and_rejects_stray_files(clean, tmp_path, capsys):
    edits = {"config.seed": lambda m: m["config"].update(seed=m["config"]["seed"] + 1),
             "config.env": lambda m: m["config"].update(env="paddock/gp-batch-v0"),
             "config_hash": lambda m: m.update(config_hash="0" * 64),
             "env_config": lambda m: m["env_config"]["episode"].update(max_steps=21),
             "seeds.root": lambda m: m["seeds"].update(root=7),
             "layout.controlled": lambda m: m["layout"].update(controlled=m["layout"]["controlled"][::-1]),
             "code_fingerprint": lambda m: m.update(code_fingerprint="x"),
             "files[0].rows": lambda m: m["files"][0].update(rows=m["files"][0]["rows"] + 1)}
    for name, edit in edits.items():
        bad, m = _copy(clean, tmp_path / name)
        edit(m)
        (bad / MANIFEST).write_text(json.dumps(m))
        assert verify(bad) and cli_main(["verify", str(bad)]) == 1, name
    # files the manifest does not list: pyarrow.dataset would read them as rows (or fail on them)
    first = json.loads((clean / MANIFEST).read_text())["files"][0]["path"]
    strays = {"data/block-0000-frag-000000.parquet.partial": "a file in data/", "data/block-9": "a file in data/",
              "data/sub/block-0000-frag-000000.parquet": "a folder in data/", "notes.txt": "not part of the dataset"}
    for rel, message in strays.items():
        bad, _ = _copy(clean, tmp_path / rel.replace("/", "_"))
        (bad / rel).parent.mkdir(parents=True, exist_ok=True)
        (bad / rel).write_bytes((clean / first).read_bytes())
        problems = verify(bad)
        assert problems and message in problems[0] and rel.split("/")[-2 if "sub" in rel else -1] in problems[0], \
            (rel, problems)
    # a manifest of the wrong shape: a verdict naming the field, never a traceback
    shapes = {"files: null": (lambda m: m.update(files=None), "files is None"),
              "no layout": (lambda m: m.pop("layout"), "layout is None"),
              "a file entry": (lambda m: m["files"].__setitem__(0, "x"), "files[0] is 'x'"),
              "a path": (lambda m: m["files"][0].update(path=None), "files[0].path is None"),
              "steps": (lambda m: m["config"].update(steps="40"), "config.steps is '40'"),
              "not an object": (lambda m: m.clear(), "format [1, 2]")}
    for name, (edit, message) in shapes.items():
        bad, m = _copy(clean, tmp_path / name.replace(" ", "_").replace(":", ""))
        edit(m)
        (bad / MANIFEST).write_text(json.dumps(m) if m else "[1, 2]")
        capsys.readouterr()
        assert cli_main(["verify", str(bad)]) == 1, name
        err = capsys.readouterr().err
        assert message in err and "Traceback" not in err, (name, err)
    bad, _ = _copy(clean, tmp_path / "truncated")
    (bad / MANIFEST).write_bytes((clean / MANIFEST).read_bytes()[:100])
    assert "unreadable" in verify(bad)[0]


@pytest.mark.parametrize("sig, code, why", [(signal.SIGINT, 130, "interrupted"),
                                            (signal.SIGTERM, 143, "terminated (SIGTERM)")])
def test_ctrl_c_and_sigterm_stop_after_the_last_committed_fragment_and_say_how_to_resume(tmp_path, sig, code, why):
    import subprocess
    import sys
    import time
    out = tmp_path / "ds"
    cmd = [sys.executable, "-m", "paddock_ma.cli", "collect", "--env", ENV_ID, "--shards", "1", "--worlds-per-shard",
           "2", "--steps", "100000", "--fragment-steps", "16", "--snapshot-every", "8", "--policy", "random",
           "--out", str(out), "--no-progress"]
    proc = subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True, env=dict(os.environ, RAY_ADDRESS=""))
    try:
        while not (out / MANIFEST).exists() or not json.loads((out / MANIFEST).read_text())["files"]:
            assert proc.poll() is None, proc.stderr.read()[-3000:]        # wait for a committed fragment
            time.sleep(0.2)
        proc.send_signal(sig)
        try:
            _, err = proc.communicate(timeout=300)
        except subprocess.TimeoutExpired:       # say where it stood, for the hang's diagnosis
            proc.kill()
            err = proc.communicate()[1]
            pytest.fail(f"collect did not exit within 300 s of {sig.name}; its stderr ends: {err[-3000:]}")
    finally:
        proc.kill()
    assert proc.returncode == code, err[-3000:]
    assert f"{why}; the run stopped after its last committed fragment" in err and "resumable" in err, err
    assert "Traceback" not in err
    v = inspect(out)
    assert v.problems == [] and v.exit_code == VERIFY_INCOMPLETE and v.present["files"] >= 1
