"""The warm-up of ``make install`` (``paddock-ma warm``) fills the cache later runs load, and a
compile shows a status line on stderr while a cached run shows nothing."""

import json
import os
import shutil
import subprocess
import sys

from paddock_ma import warm

# A first run in a fresh process: every catalogue env's engine and dict API step once, and a demo shard
# steps with read-only actions and a snapshot. Prints the cache directory it used and how many of the
# package's functions numba compiled.
_FIRST_RUN = """
import numpy as np
import paddock_ma
from paddock_ma import catalog, warm
from paddock_ma.sim.core import compile_status
for env_id in [e["id"] for e in catalog.list_envs()]:
    batch = paddock_ma.make(env_id, num_worlds=3)
    batch.reset(seed=3)
    batch.step(np.full((3, len(batch.controlled), 3), 0.25, np.float32))
    one = paddock_ma.make(env_id)
    one.reset(seed=3)
    one.step({d: {"steering": 0.0, "throttle": 1.0, "brake": 0.0} for d in one.controlled})
from paddock_ma.catalog import resolve_config_dict
from paddock_ma.distributed.shard import ShardCore
core = ShardCore(resolve_config_dict("paddock/oval-batch-v0"), 0, 3)             # a Ray shard of make demo
core.reset(5)
actions = np.full((3, 8, 3), 0.5, np.float32)
actions.setflags(write=False)                                            # as Ray delivers them
core.step(1, actions, snapshot=True)
print(warm.cache_dir(), compile_status.installed().compiled)
"""


def _run(code_or_args, env=None, timeout=900):
    args = code_or_args if isinstance(code_or_args, list) else ["-c", code_or_args]
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, check=True, timeout=timeout,
                          env=env)


def test_after_the_warm_up_a_first_run_compiles_nothing(tmp_path):
    # the Makefile ran it before the suite (then this takes ~0.5 s); otherwise it compiles here what the
    # suite's first tests would compile
    _run(["-m", "paddock_ma.cli", "warm", "--quiet"])
    assert warm.is_warm(warm.cache_dir())
    # The first run reads a copy of the warmed cache: the suite's other worker may meanwhile compile a
    # test's own call of a kernel into the shared cache (a new signature re-indexes that kernel there).
    directory = tmp_path / "numba-cache"
    shutil.copytree(warm.cache_dir(), directory)
    assert warm.is_warm(directory)
    indexes = {p: p.stat().st_mtime_ns for p in directory.rglob("*.nbi")}
    out = _run(_FIRST_RUN, env=dict(os.environ, NUMBA_NUM_THREADS="1",     # as shards and the demo pin it
                                     NUMBA_CACHE_DIR=str(directory)))
    used, compiled = out.stdout.split()
    assert used == str(directory)                # the warm-up's directory is the one runs use
    assert compiled == "0", out.stderr
    assert "compiling simulation kernels" not in out.stderr
    assert {p: p.stat().st_mtime_ns for p in directory.rglob("*.nbi")} == indexes   # nothing re-indexed


def test_a_compile_shows_a_status_line_and_a_cached_run_shows_none(tmp_path):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path))
    code = "from paddock_ma.sim.core.trig import clamp; print(clamp(2.0, 0.0, 1.0))"
    cold = _run(code, env=env, timeout=120)
    assert cold.stdout.strip() == "1.0"                         # stdout is the program's alone
    assert cold.stderr.count("compiling simulation kernels (first run only") == 1, cold.stderr
    warm_run = _run(code, env=env, timeout=120)
    assert warm_run.stderr == ""
    quiet = _run(code.replace("clamp(2.0", "clamp(-2.0"), env=dict(env, NUMBA_CACHE_DIR=str(tmp_path / "q"),
                                                                     PADDOCK_MA_COMPILE_STATUS="0"), timeout=120)
    assert quiet.stderr == ""


def test_the_marker_holds_for_these_sources_only(tmp_path):
    assert not warm.is_warm(tmp_path)
    stamp = warm.source_stamp()
    (tmp_path / warm.MARKER).write_text(json.dumps({"stamp": stamp}))
    assert warm.is_warm(tmp_path)
    first = next(iter(stamp["files"]))
    stamp["files"][first][0] += 1                                # a module edited since the warm-up
    (tmp_path / warm.MARKER).write_text(json.dumps({"stamp": stamp}))
    assert not warm.is_warm(tmp_path)
