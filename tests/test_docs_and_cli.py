"""The README's example runs, and the command line's subcommands work end to end."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_readme_starts_with_the_two_commands_and_its_example_runs():
    text = (ROOT / "README.md").read_text()
    head = "\n".join(text.splitlines()[:40])
    assert "make demo" in head and "make test" in head
    code = re.search(r"```python\n(.*?)```", text, re.S).group(1)
    assert len(code.strip().splitlines()) <= 16
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    first, second = out.stdout.splitlines()[:2]
    assert first.startswith("(4, 8, ")
    assert float(first.split()[-1]) > 0                        # the cars moved forward
    assert "@0" in second and second.endswith(" 24")           # 8 cars x 3 lives declared


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "paddock_ma.cli", *args], capture_output=True, text=True,
                          timeout=600, cwd=ROOT)


def test_cli_lists_tracks_and_envs():
    tracks = run_cli("tracks")
    assert tracks.returncode == 0
    names = [line.split()[0] for line in tracks.stdout.splitlines()]
    assert {"oval", "grand-prix", "technical"} <= set(names)
    envs = run_cli("envs")
    assert envs.returncode == 0 and "paddock/gp-batch-v0" in envs.stdout


def test_cli_race_runs_a_short_race():
    out = run_cli("race", "--worlds", "2", "--cars", "6", "--seconds", "5")
    assert out.returncode == 0, out.stderr
    for name in ("oval", "grand-prix", "technical"):
        assert name in out.stdout


def test_core_race_example_finishes_a_race():
    out = subprocess.run([sys.executable, str(ROOT / "examples" / "core_race.py"), "--track", "oval", "--cars", "4"],
                         capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert "finished=True" in out.stdout
    assert out.stdout.count(" P") == 4


def test_bench_report_has_every_section():
    """``paddock-ma bench --ray-floor`` end to end on a tiny budget: every figure is present and
    plausible, and the BatchEnv rows of the diagnostic ray layouts follow the workload's."""
    from paddock_ma import bench

    report = bench.run(worlds=(1,), env_worlds=(2,), seconds=0.05, with_start=False, ray_floor=True)
    assert report["core"][0]["car_ticks_per_s"] > 0 and report["core"][0]["memory_per_world_bytes"] > 0
    env = report["batch_env"][0]
    assert env["worlds"] == 2 and env["car_steps_per_s"] > 0 and env["core_ms"] > 0 and env["sensors_obs_ms"] > 0
    rows = [(row["rays"], row["actions"]) for row in report["batch_env"]]
    assert rows == [(r, a) for r in bench.RAY_VARIANTS for a in ("constant", "driver")]
    assert all(row["car_steps_per_s"] > 0 for row in report["batch_env"])
    assert [row["actions"] for row in report["paddock_env"]] == ["constant", "driver"]
    assert all(row["car_steps_per_s"] > 0 for row in report["paddock_env"])
    tracks = report["tracks"]
    assert 0 < tracks["procedural_median_s"] <= tracks["procedural_max_s"] and tracks["locate_hint_ns"] > 0
    text = bench.format_report(report)
    for heading in ("car-ticks/s", "BatchEnv", "PaddockEnv", "procedural track build",
                    "BatchEnv, driver actions, rays: perpendicular", "rays: none"):
        assert heading in text


def test_bench_ray_variants_are_the_workload_with_other_rays():
    """The diagnostic ray layouts of ``--ray-floor``: as many rays as the workload's (16) of 120 m all at +-90 degrees
    (the cheapest rays: each crosses the track), and no rays at all."""
    import math

    from paddock_ma import bench
    from paddock_ma.env.batch_env import BatchEnv

    perpendicular = BatchEnv(bench.env_bench_config(rays="perpendicular"), 1)
    assert perpendicular.sensors.ray_count.tolist() == [16] * 20
    assert BatchEnv(bench.env_bench_config(), 1).sensors.ray_count.tolist() == [16] * 20
    assert sorted({round(math.degrees(a)) for a in perpendicular.sensors.ray_angle[0]}) == [-90, 90]
    assert BatchEnv(bench.env_bench_config(rays="none"), 1).sensors.ray_count.tolist() == [0] * 20
    with pytest.raises(ValueError, match="rays: got 'sideways'"):
        bench.env_bench_config(rays="sideways")
    workload, across = bench.env_bench_config(), bench.env_bench_config(rays="perpendicular")
    assert across["sensors"]["rays"]["channels"] == workload["sensors"]["rays"]["channels"]
    assert {k: v for k, v in across.items() if k != "sensors"} == {k: v for k, v in workload.items() if k != "sensors"}
