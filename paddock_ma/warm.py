"""Compile the simulation's kernels ahead, into the cache later runs load: ``paddock-ma warm``.

A first run compiles every numba kernel it calls before its first step (minutes on two cores: the
sensing kernel alone takes over a minute). ``make install`` runs this module once instead, so a user's
first ``make demo`` or README snippet loads compiled code (~1-3 s).

What it runs: the paths a first run takes, on tiny worlds: for every catalogue env its engine
(``BatchEnv``: reset, step, auto-reset, ``reset_drivers`` with each placement policy), its one-world dict
API (``PaddockEnv``), a physical-driver observation object, the README's adapters (PettingZoo, the
gymnasium vector env), the demo's shard (``distributed.shard.ShardCore`` with the random policy, as
``make demo`` collects and replays), the sim's own race (``new_race``/``step_state``: ``paddock-ma
race``), the parallel engine and a car's tick called from Python (replays of PaddockJS's traces). numba specialises a kernel on its arguments' types (dtypes, dimensions, layouts, read-only or
not), never on a config's values, so running these calls stores exactly the specialisations later runs
of them load.

The cache is the one every later run uses: importing ``paddock_ma.sim`` resolves the directory
(``paddock_ma/sim/__pycache__/numba-<hash of the sim sources>``, or ``NUMBA_CACHE_DIR`` when set), and
Ray shards inherit it. numba keys each entry on its source file's modification time, so the warm-up is
run where the code will run (after a clone, not before). When it is done it writes ``paddock-warm.json``
in that directory: the numba and Python versions and every module's size and modification time.
``is_warm()`` compares them without loading any kernel, so running this module again costs under a
second while nothing changed; after an edit anywhere in the package it runs again, loading what is still
cached and compiling the rest.

    paddock-ma warm [--force] [--quiet]
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent
MARKER = "paddock-warm.json"
MARKER_VERSION = 1


def cache_dir() -> Path:
    """The numba cache directory of this process (imports ``paddock_ma.sim``, which chooses it)."""
    from . import sim

    return sim.numba_cache_dir() or Path(os.environ["NUMBA_CACHE_DIR"])


def source_stamp() -> dict:
    """What the cached code depends on: versions and every module's (mtime_ns, size)."""
    from importlib.metadata import version

    files = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        st = path.stat()
        files[str(path.relative_to(PACKAGE))] = [st.st_mtime_ns, st.st_size]
    return {"marker_version": MARKER_VERSION, "numba": version("numba"), "python": sys.version.split()[0],
            "files": files}


def is_warm(directory: Path | None = None) -> bool:
    """Whether a complete warm-up of these exact sources filled ``directory`` (default: this process's
    cache directory). Cheap: reads the marker and stats the modules."""
    directory = directory or cache_dir()
    try:
        marker = json.loads((directory / MARKER).read_text())
    except (OSError, ValueError):
        return False
    return marker.get("stamp") == source_stamp()


def exercise_env(env_id: str, num_worlds: int = 2) -> None:
    """The calls a first run of catalogue env ``env_id`` makes, on ``num_worlds`` tiny worlds."""
    import numpy as np

    from .catalog import make
    from .value_rules import PLACEMENT_POLICIES

    batch = make(env_id, num_worlds=num_worlds, auto_reset=True, reset_placement="random")
    batch.reset(seed=0)
    k = len(batch.controlled)
    actions = np.zeros((num_worlds, k, 3), np.float32)
    actions[..., 1] = 0.5
    batch.step(actions)
    for placement in PLACEMENT_POLICIES:
        batch.reset_drivers(np.ones((num_worlds, k), bool), placement)
        batch.step(actions)
    batch.running_mask()
    one = make(env_id)
    one.reset(seed=0)
    one.step({d: {"steering": 0.0, "throttle": 0.5, "brake": 0.0} for d in one.controlled})
    one.reset_drivers({d: None for d in one.controlled})
    one.step({d: {"steering": 0.1, "throttle": 0.5, "brake": 0.0} for d in one.controlled})


def exercise_object_view() -> None:
    """The physical-driver observation object (PaddockJS's patch offsets, radar extras): the catalogue's
    full-output env has the default profile."""
    from .env.environment import PaddockEnv

    env = PaddockEnv({"drivers": 2, "controlled_drivers": ["car-00"], "track": "oval",
                      "observation": {"profile": "physical-driver"}})
    env.reset(seed=0)
    env.step({"car-00": {"steering": 0.0, "throttle": 0.5, "brake": 0.0}})


def exercise_adapters(env_id: str = "paddock/oval-batch-v0") -> None:
    """The README's adapters: a PettingZoo step with lives and a gymnasium vector env step."""
    import gymnasium

    from .adapters.pettingzoo_env import parallel_env

    pz = parallel_env(env_id, auto_reset=True, max_lives=3)
    pz.reset(seed=0)
    pz.step({a: pz.action_space(a).sample() for a in pz.agents})
    envs = gymnasium.make_vec(env_id, num_envs=16)
    envs.reset(seed=0)
    envs.step(envs.action_space.sample())
    envs.close()


def exercise_demo(env_id: str = "paddock/oval-batch-v0") -> None:
    """``make demo``'s shard work: a ShardCore collecting with the random policy (actions read-only, as
    Ray delivers them; snapshots and a restore, as the fleet takes them), and a replayed world."""
    import numpy as np

    from .catalog import resolve_config_dict
    from .distributed.collection.config import CollectConfig
    from .distributed.policies import resolve_policy
    from .distributed.shard import ShardCore

    cfg = CollectConfig(env=env_id, num_shards=1, worlds_per_shard=2, steps=3)   # its placement defaults
    config = resolve_config_dict(env_id)
    policy = resolve_policy("random")
    for worlds in (2, 1):            # collection shards, then the demo's one-world replay
        core = ShardCore(config, 0, worlds, reset_placement=cfg.reset_placement, start_placement=cfg.start_placement)
        obs = core.reset(1)["obs"]
        for seq in (1, 2):
            actions = policy(obs, worlds=np.arange(worlds), seq=seq, seed=1)
            # as Ray hands arrays to an actor: read-only, which numba compiles as another specialisation
            actions.setflags(write=False)
            obs = core.step(seq, actions, snapshot=seq == 2)[1]["obs"]
        core.step(3, None)
        core.restore(core.snapshot())


def exercise_race() -> None:
    """``paddock-ma race`` and the bench's core: built-in drivers through ``step_state``."""
    from .sim.race.start import new_race
    from .sim.step import step_state
    from .sim.track.load import load_track

    state = new_race(load_track("oval"), 1, 4, seed=1, standing_start=0, total_laps=50)
    step_state(state, n_ticks=4)


def exercise_reset_and_threads() -> None:
    """The kernels a reset compiles (placement, sensing, vectors) and the engine's parallel variants
    (``BatchEnv(parallel=True)``: ``paddock-ma bench threads``, ``parallel=True`` in the adapters), and
    ``exercise_vehicle_replay``."""
    import numpy as np

    from .bench.env import bench_batch_env
    from .catalog import make

    make("paddock/gp-batch-v0", num_worlds=2).reset(seed=0)
    bench_batch_env(2, seconds=0.01, actions_from="driver", warmup_steps=1, threads=1)
    parallel = make("paddock/oval-batch-v0", num_worlds=2, parallel=True, auto_reset=True)
    parallel.reset(seed=0)
    parallel.step(np.zeros((2, len(parallel.controlled), 3), np.float32))
    exercise_vehicle_replay()


def exercise_vehicle_replay() -> None:
    """One car's tick and a contact pass called from Python, as a replay of recorded inputs calls them
    (``tests/sim/test_paddockjs_parity.py``, a user comparing with PaddockJS): one world's arrays, float
    inputs."""
    import numpy as np

    from .sim.core import layout as L
    from .sim.race.collisions import resolve_contacts
    from .sim.vehicle.dynamics import integrate_car

    cars_f, cars_i = np.zeros((1, 2, L.NF)), np.zeros((1, 2, L.NI), np.int32)
    params, rules = np.ones((1, 2, L.NP)), np.zeros((1, L.NR))
    cars_i[0, :, L.I_ACTIVE] = 1
    cars_f[0, 1, L.F_X] = 100.0
    integrate_car(cars_f, cars_i, params, rules, 0, 0, 0.0, 0.5, 0.0, 1.0 / 60.0)
    resolve_contacts(cars_f, cars_i, np.full((1, 2), L.FLAG_COLLIDES, np.int32), rules, 0, 2, 1.0 / 60.0)


def exercise_all() -> None:
    """Every exercise but the second process's (``exercise_reset_and_threads``)."""
    from . import catalog

    exercise_race()                 # the step kernel first: the longest compile, while the other process senses
    for env in catalog.list_envs():
        exercise_env(env["id"])
    exercise_object_view()
    exercise_adapters()
    exercise_demo()


def _run_part(part: str) -> subprocess.Popen:
    """``paddock-ma warm --part <part>`` in a child process sharing this one's cache."""
    env = dict(os.environ, NUMBA_NUM_THREADS="1")
    return subprocess.Popen([sys.executable, "-m", "paddock_ma.cli", "warm", "--part", part], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _part_result(proc: subprocess.Popen) -> int:
    """The number of functions a finished part compiled; raises with its stderr if it failed."""
    out, err = proc.communicate()
    if proc.returncode != 0:
        raise RuntimeError(f"warm-up part {proc.args[-1]!r} failed (exit {proc.returncode}):\n{err[-4000:]}")
    return int(json.loads(out.strip().splitlines()[-1])["compiled"])


def warm() -> dict:
    """Run every exercise (compiling what the cache lacks) and write the marker; returns a summary.

    Two processes compile at once (numba compiles one function at a time per process): a child the
    reset and parallel kernels, this one the step kernel and the rest. numba writes a function's cache
    index without a lock, so two processes compiling specialisations of one function at once can leave
    one unindexed: a last child runs every exercise again, loading what is cached and compiling (and
    indexing) anything lost, so the marker is written only over a complete cache."""
    from .sim.core import compile_status

    t0 = time.perf_counter()
    directory = cache_dir()
    status = compile_status.install()
    before = status.compiled if status else 0
    if status:
        status.message, status.hint = "compiling simulation kernels ahead (once per change of the sources)", ""
    other = _run_part("reset-and-threads")
    try:
        exercise_all()
    except BaseException:
        other.kill()
        raise
    compiled = (status.compiled - before) if status else 0
    compiled += _part_result(other)
    compiled += _part_result(_run_part("check"))
    directory.mkdir(parents=True, exist_ok=True)
    tmp = directory / f".{MARKER}.{os.getpid()}"
    tmp.write_text(json.dumps({"stamp": source_stamp(), "written_at": time.strftime("%Y-%m-%dT%H:%M:%S")}, indent=1))
    os.replace(tmp, directory / MARKER)
    return {"cache_dir": str(directory), "compiled": compiled, "seconds": round(time.perf_counter() - t0, 1)}


PARTS = {"reset-and-threads": exercise_reset_and_threads,
         "check": lambda: (exercise_all(), exercise_reset_and_threads())}


def run_part(part: str) -> int:
    """Run one part in this process; prints ``{"compiled": n}`` on stdout (what ``warm`` reads)."""
    from .sim.core import compile_status

    status = compile_status.install()
    if status:
        status.message, status.hint = f"warm-up part {part}", ""
    before = status.compiled if status else 0
    PARTS[part]()
    print(json.dumps({"compiled": (status.compiled - before) if status else 0}))
    return 0
