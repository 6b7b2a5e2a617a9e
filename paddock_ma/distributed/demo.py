"""The distributed demo: a collection on a local Ray cluster, its throughput, a dataset summary, verify's
verdict, and a PNG of collected trajectories replayed from the dataset and drawn on the track.

    paddock-ma demo [--env paddock/oval-batch-v0] [--shards 2] [--worlds-per-shard 16]
        [--steps 4000] [--out DIR] [--png trajectories.png] [--seed 1]

No set-up: it starts a private local Ray (``address="local"``), collects with the random policy (cars
crash and come back: several lives per car), then replays a few worlds in this process from their global
seed and the dataset's actions, checks that the replay reproduces the recorded observations bit for bit,
and draws the cars' positions over the track.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np


def replay_world(manifest: dict, table, world: int):
    """Re-run global world ``world`` in this process from the manifest's seed and the dataset's actions.

    Returns (positions float64[S, K, 2] in metres, whether every replayed observation equals the recorded
    one). ``table`` holds the dataset's rows of that world (columns seq, driver, obs, action)."""
    from .shard import ShardCore

    cfg = manifest["config"]
    core = ShardCore(manifest["env_config"], world, 1, reset_placement=cfg["reset_placement"],
                     start_placement=cfg["start_placement"])
    obs = core.reset(cfg["seed"])["obs"]
    controlled = manifest["layout"]["controlled"]
    k = len(controlled)
    index = {d: i for i, d in enumerate(controlled)}
    seq = table["seq"].to_numpy()
    drv = np.array([index[d] for d in table["driver"].to_pylist()])
    d = obs.shape[-1]
    act = np.asarray(table["action"].combine_chunks().flatten().to_numpy(zero_copy_only=False), np.float32).reshape(-1, 3)
    rec = np.asarray(table["obs"].combine_chunks().flatten().to_numpy(zero_copy_only=False), np.float32).reshape(-1, d)
    steps = int(seq.max())
    actions = np.zeros((steps, k, 3), np.float32)
    recorded = np.zeros((steps, k, d), np.float32)
    actions[seq - 1, drv] = act
    recorded[seq - 1, drv] = rec
    same = True
    positions = np.zeros((steps, k, 2))
    for t in range(1, steps + 1):
        same &= bool(np.array_equal(obs[0], recorded[t - 1]))
        _, arrays = core.step(t, actions[t - 1][None])
        obs = arrays["obs"]
        positions[t - 1] = core.engine.car_positions()[0]
    return positions, same


def draw(env_config: dict, trajectories: dict, path: str) -> None:
    """PNG of the config's track (centreline and edges) with each world's car positions, one colour per car."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ..env.batch_env import BatchEnv

    outline = BatchEnv(env_config, 1).track_outline()
    fig, axes = plt.subplots(1, len(trajectories), figsize=(6 * len(trajectories), 6), squeeze=False)
    for ax, (world, pos) in zip(axes[0], trajectories.items()):
        for side in ("left", "right"):
            ax.plot(outline[side][:, 0], outline[side][:, 1], color="0.3", lw=0.8)
        ax.plot(outline["centre"][:, 0], outline["centre"][:, 1], color="0.7", lw=0.5, ls="--")
        for k in range(pos.shape[1]):
            ax.plot(pos[:, k, 0], pos[:, k, 1], ".", ms=1.5)
        ax.set_title(f"world {world}: {pos.shape[1]} cars, {pos.shape[0]} steps")
        ax.set_aspect("equal")
        ax.axis("off")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _compile_ahead(console) -> None:
    """Compile the kernels here, with a status line, when ``make install``'s warm-up has not filled the
    cache for these sources (edited code, or a run without ``make install``): the shards then load them
    from the cache they inherit. Otherwise each shard would compile the same kernels at once, out of
    sight in its log, for minutes on two cores, and the fleet's step deadline would count that time."""
    from .. import warm

    if warm.is_warm():
        return
    console.print("the package changed since `make install` warmed numba's cache (or it never did): "
                  "`paddock-ma warm` runs first, compiling what the cache lacks before the shards start")
    out = warm.warm()
    console.print(f"{out['compiled']} functions compiled in {out['seconds']} s ({out['cache_dir']})")


def run_demo(*, env: str, shards: int, worlds_per_shard: int, steps: int, seed: int, out: str | None, png: str,
             replay_worlds: int) -> int:
    """``paddock-ma demo``: collect ``steps`` steps of ``shards`` x ``worlds_per_shard`` worlds of ``env``
    with the random policy into ``out`` (None: a new temporary directory), print the summary and verify's
    verdict, replay the first ``replay_worlds`` worlds and draw them into the PNG ``png``. Returns the exit
    code: 0 when verify finds no problem and the replays match, 1 otherwise, 2 on a bad input."""
    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    os.environ.setdefault("NUMBA_NUM_THREADS", "1")
    import pyarrow.compute as pc
    import pyarrow.parquet as pq
    import ray
    from rich.console import Console
    from rich.table import Table

    from ..dataset.format import MANIFEST, CollectError
    from ..dataset.verify import verify
    from .collection.config import CollectConfig
    from .collection.run import collect

    console = Console()
    _compile_ahead(console)
    ours = not ray.is_initialized()          # shut down only a Ray this demo started
    out = Path(out) if out else Path(tempfile.mkdtemp(prefix="paddock-demo-")) / "dataset"
    cfg = CollectConfig(env=env, num_shards=shards, worlds_per_shard=worlds_per_shard,
                        steps=steps, seed=seed, policy="random")
    console.print(f"[bold]paddock_ma distributed demo[/]: {shards} shards x {worlds_per_shard} worlds of "
                  f"{env} on a local Ray cluster, {steps} steps, random policy -> {out}")
    try:
        res = collect(cfg, out, address="local", progress=True, console=console,
                      ray_init_kwargs={"object_store_memory": 200 * 1024**2})
    except CollectError as exc:
        print(f"demo: {exc}", file=sys.stderr)
        return 2
    t0 = time.perf_counter()
    problems = verify(out)
    verify_s = time.perf_counter() - t0
    t = pq.read_table(out / "data", columns=["world", "driver", "episode_id", "terminated", "truncated",
                                             "end_reason", "legal_progress_delta_meters", "lap_completed"])
    ends = pc.value_counts(t["end_reason"].drop_null()).to_pylist()
    episodes = len(set(zip(t["world"].to_pylist(), t["driver"].to_pylist(), t["episode_id"].to_pylist())))
    table = Table(title="collection")
    table.add_column("what")
    table.add_column("value", justify="right")
    for what, value in (
            ("transitions (rows)", f"{res.rows:,}"), ("files", str(len(res.manifest["files"]))),
            ("seconds (incl. start-up)", f"{res.seconds:.1f}"), ("shard-steps/s", f"{res.steps_per_s:,.1f}"),
            ("transitions/s with Parquet", f"{res.transitions_per_s:,.0f}"),
            ("episodes (car lives)", f"{episodes:,}"),
            ("episode ends", ", ".join(f"{e['values']}: {e['counts']}" for e in ends) or "none"),
            ("laps completed", f"{int(pc.sum(t['lap_completed']).as_py() or 0):,}"),
            ("legal progress (km)", f"{(pc.sum(t['legal_progress_delta_meters']).as_py() or 0) / 1000:,.1f}"),
            ("verify", ("ok" if not problems else f"FAILED: {problems[0]}") + f" ({verify_s:.1f} s)")):
        table.add_row(what, value)
    console.print(table)
    manifest = json.loads((out / MANIFEST).read_text())
    trajectories, same = {}, True
    for world in range(min(replay_worlds, manifest["layout"]["total_worlds"])):
        rows = pq.read_table(out / "data", columns=["world", "seq", "driver", "obs", "action"],
                             filters=[("world", "=", world)])
        trajectories[world], ok = replay_world(manifest, rows, world)
        same &= ok
    console.print(f"replayed worlds {list(trajectories)} in this process from the seed and the recorded actions: "
                  + ("[green]observations identical to the dataset[/]" if same else "[red]observations differ[/]"))
    draw(manifest["env_config"], trajectories, png)
    console.print(f"trajectories drawn on the track: {png}")
    if ours:
        ray.shutdown()
    return 0 if not problems and same else 1
