"""``paddock-ma bench core`` and ``bench env`` end to end on tiny budgets, and ``bench`` without a subcommand."""

import json
import math
import os
import subprocess
import sys

import pytest

from paddock_ma.bench import core, default, env
from paddock_ma.cli.main import main


def test_core_bench_reports_the_core_and_the_tracks(tmp_path, capsys):
    out = tmp_path / "core.json"
    assert main(["bench", "core", "--worlds", "1,2", "--cars", "4", "--seconds", "0.05", "--track-seeds", "2",
                 "--no-start", "--out", str(out)]) == 0
    report = json.loads(out.read_text())
    assert [(r["worlds"], r["cars_per_world"], r["track"]) for r in report["core"]] == [(1, 4, "grand-prix"),
                                                                                       (2, 4, "grand-prix")]
    assert all(r["car_ticks_per_s"] > 0 and r["memory_per_world_bytes"] > 0 and r["seconds"] >= 0.05
               for r in report["core"])
    assert "start" not in report
    tracks = report["tracks"]
    assert 0 < tracks["procedural_median_s"] <= tracks["procedural_max_s"] and tracks["locate_hint_ns"] > 0
    text = capsys.readouterr().out             # Markdown printed, the JSON written to --out
    assert "| physics | worlds | cars/world | car-ticks/s (1 core) | memory/world |" in text
    assert "| simulator | 2 | 4 |" in text
    assert "procedural track build" in text and "| start |" not in text


def test_env_bench_reports_batch_env_paddock_env_and_the_ray_floor(capsys):
    """``bench env --ray-floor``: every row present and plausible, the diagnostic ray layouts after the workload's."""
    assert main(["bench", "env", "--worlds", "2", "--seconds", "0.05", "--warmup-steps", "3", "--ray-floor",
                 "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    rows = [(row["rays"], row["actions"], row["worlds"]) for row in report["batch_env"]]
    assert rows == [(r, a, 2) for r in env.RAY_VARIANTS for a in ("constant", "driver")]
    first = report["batch_env"][0]
    assert first["car_steps_per_s"] > 0 and first["core_ms"] > 0 and first["sensors_obs_ms"] > 0
    assert all(row["car_steps_per_s"] > 0 for row in report["batch_env"])
    assert [row["actions"] for row in report["paddock_env"]] == ["constant", "driver"]
    assert all(row["car_steps_per_s"] > 0 for row in report["paddock_env"])
    text = env.format_report(report)
    for heading in ("BatchEnv, simulator, constant actions |", "PaddockEnv (dict), simulator, driver actions",
                    "BatchEnv, simulator, driver actions, rays: perpendicular", "rays: none"):
        assert heading in text


def test_env_bench_options_select_actions_and_skip_paddock_env(capsys):
    assert main(["bench", "--json", "env", "--worlds", "1", "--actions", "driver", "--no-paddock-env",
                 "--warmup-steps", "1", "--seconds", "0.02"]) == 0
    report = json.loads(capsys.readouterr().out)        # --json given before the subcommand's name
    assert [(r["actions"], r["worlds"]) for r in report["batch_env"]] == [("driver", 1)]
    assert "paddock_env" not in report
    with pytest.raises(ValueError, match="actions: got 'sideways'"):
        env.run(actions=("sideways",))


def test_physics_option_runs_each_mode_in_its_own_rows(tmp_path, capsys, monkeypatch):
    """``--physics simulator,arcade``: core and env rows for each mode, and each row's race really runs in that
    mode (the rules vector the kernels read), not only labelled so."""
    from paddock_ma.env.batch_env import BatchEnv
    from paddock_ma.sim.core import layout as L
    from paddock_ma.sim.race import start

    seen = []
    real_new_race = start.new_race
    monkeypatch.setattr(start, "new_race", lambda *a, **kw: seen.append(kw["physics_mode"]) or real_new_race(*a, **kw))
    out = tmp_path / "core.json"
    assert main(["bench", "core", "--worlds", "1", "--cars", "2", "--seconds", "0.02", "--track-seeds", "1",
                 "--no-start", "--physics", "simulator,arcade", "--out", str(out)]) == 0
    assert [r["physics"] for r in json.loads(out.read_text())["core"]] == ["simulator", "arcade"]
    assert seen == [L.PHYSICS_SIMULATOR, L.PHYSICS_ARCADE]
    capsys.readouterr()                  # the core report's Markdown
    assert main(["bench", "env", "--worlds", "1", "--actions", "constant", "--warmup-steps", "1", "--seconds", "0.02",
                 "--physics", "arcade", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert [r["physics"] for r in report["batch_env"] + report["paddock_env"]] == ["arcade", "arcade"]
    arcade = BatchEnv(env.env_bench_config(physics="arcade"), 1)
    arcade.reset(seed=1)
    assert arcade.state.rules[0, L.R_PHYSICS_MODE] == L.PHYSICS_ARCADE
    with pytest.raises(ValueError, match="physics: got 'rally'"):
        core.bench_core(1, physics="rally")
    with pytest.raises(SystemExit):      # argparse names the choices and exits 2
        main(["bench", "core", "--physics", "rally"])


def test_ray_variants_are_the_workload_with_other_rays():
    """The diagnostic ray layouts of ``--ray-floor``: as many rays as the workload's (16) of 120 m all at +-90 degrees
    (the cheapest rays: each crosses the track), and no rays at all."""
    from paddock_ma.env.batch_env import BatchEnv

    perpendicular = BatchEnv(env.env_bench_config(rays="perpendicular"), 1)
    assert perpendicular.sensors.ray_count.tolist() == [16] * 20
    assert BatchEnv(env.env_bench_config(), 1).sensors.ray_count.tolist() == [16] * 20
    assert sorted({round(math.degrees(a)) for a in perpendicular.sensors.ray_angle[0]}) == [-90, 90]
    assert BatchEnv(env.env_bench_config(rays="none"), 1).sensors.ray_count.tolist() == [0] * 20
    with pytest.raises(ValueError, match="rays: got 'sideways'"):
        env.env_bench_config(rays="sideways")
    workload, across = env.env_bench_config(), env.env_bench_config(rays="perpendicular")
    assert across["sensors"]["rays"]["channels"] == workload["sensors"]["rays"]["channels"]
    assert {k: v for k, v in across.items() if k != "sensors"} == {k: v for k, v in workload.items() if k != "sensors"}


def test_bench_without_a_subcommand_is_core_then_env_in_one_report():
    from paddock_ma.cli.main import build_parser
    from paddock_ma.cli.bench import cmd_default

    args = build_parser().parse_args(["bench", "--seconds", "0.5"])
    assert args.func is cmd_default and args.seconds == 0.5
    core_part = {"workload": core.CORE_WORKLOAD, "core": [{"physics": "simulator", "worlds": 1, "cars_per_world": 20,
                                                           "car_ticks_per_s": 9, "memory_per_world_bytes": 2048}]}
    env_part = {"env_workload": env.ENV_WORKLOAD, "batch_env": [], "paddock_env": []}
    text = default.format_report({**core_part, **env_part})
    assert text == core.format_report(core_part) + "\n\n" + env.format_report(env_part)
    assert text.index("car-ticks/s") < text.index("Environment workload")


def test_the_start_snippets_run_in_a_fresh_process():
    """The start rows' snippets (the sim's first step; the README snippet's first env step) each print their
    fields when run as ``bench core`` runs them, here with this checkout's numba cache."""
    child = dict(os.environ, NUMBA_NUM_THREADS="1")
    for snippet, fields in ((core.COMPILE_SNIPPET, 2), (core.FIRST_ENV_STEP_SNIPPET, 4)):
        out = subprocess.run([sys.executable, "-c", snippet], capture_output=True, text=True, env=child, timeout=600)
        assert out.returncode == 0, out.stderr
        values = [float(v) for v in out.stdout.split()]
        assert len(values) == fields and values[0] > 0 and values[1] > 0
