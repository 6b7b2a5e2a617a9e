"""``paddock-ma``: every command and its help, the options a command group shares, the argparse types,
and ``race``'s library."""

import argparse
import inspect
import subprocess
import sys
from pathlib import Path

import pytest

from paddock_ma.cli import arguments
from paddock_ma.cli.bench import BENCHMARKS as BENCHMARK_TABLE
from paddock_ma.cli.main import build_parser, main

ROOT = Path(__file__).resolve().parents[2]
COMMANDS = ("demo", "warm", "race", "bench", "envs", "tracks", "serve", "collect", "verify", "export-paddockjs",
            "policy-server", "view", "record", "replay")
BENCHMARKS = ("core", "env", "threads", "protocol", "sampling", "fleet")     # timed: --seconds, --json, --out
SERVER_BENCHMARKS = ("policy-server", "preview")                             # one JSON line


def help_of(argv, capsys) -> str:
    with pytest.raises(SystemExit) as exit:
        main([*argv, "--help"])
    assert exit.value.code == 0
    return capsys.readouterr().out


def test_top_level_help_lists_every_command(capsys):
    text = help_of([], capsys)
    for command in COMMANDS:
        assert f"\n    {command} " in text or f"\n    {command}\n" in text


def test_every_command_and_benchmark_has_a_help(capsys):
    for command in COMMANDS:
        assert help_of([command], capsys).startswith(f"usage: paddock-ma {command}")
    bench = help_of(["bench"], capsys)
    assert "Without a subcommand: core then env" in bench
    for name in BENCHMARKS:
        assert f"\n    {name} " in bench
        text = help_of(["bench", name], capsys)
        assert text.startswith(f"usage: paddock-ma bench {name}")
        assert all(option in text for option in ("--seconds S", "--json", "--out FILE"))
    for name in SERVER_BENCHMARKS:
        assert f"\n    {name} " in bench or f"\n    {name}\n" in bench
        text = help_of(["bench", name], capsys)
        assert text.startswith(f"usage: paddock-ma bench {name}") and "--seconds" not in text


def test_bench_options_reach_each_benchmark():
    parse = build_parser().parse_args
    core = parse(["bench", "core", "--worlds", "1,64", "--cars", "4", "--track", "oval", "--ticks-per-call", "2",
                  "--track-seeds", "3", "--no-start"])
    assert (core.worlds, core.cars, core.track, core.ticks_per_call, core.track_seeds, core.with_start) == (
        (1, 64), 4, "oval", 2, 3, False)
    fleet = parse(["bench", "--seconds", "2", "fleet", "--worlds", "16", "--shards", "1", "--depths", "2",
                   "--collect-steps", "8", "--env", "paddock/oval-batch-v0"])
    assert (fleet.seconds, fleet.worlds, fleet.shards, fleet.depths, fleet.collect_steps, fleet.env) == (
        2.0, (16,), (1,), (2,), 8, "paddock/oval-batch-v0")
    sampling = parse(["bench", "sampling", "--paths", "torch,engine", "--rollout", "8", "--worlds", "2"])
    assert (sampling.paths, sampling.rollout, sampling.worlds) == (("torch", "engine"), 8, 2)
    protocol = parse(["bench", "protocol", "--worlds", "2", "--cars", "3", "--seconds", "0.5"])
    assert (protocol.worlds, protocol.cars, protocol.seconds) == (2, 3, 0.5)
    env = parse(["bench", "env", "--actions", "driver", "--ray-floor", "--warmup-steps", "10", "--no-paddock-env"])
    assert (env.actions, env.ray_floor, env.warmup_steps, env.paddock_env) == (("driver",), True, 10, False)
    preview = parse(["bench", "preview", "--worlds", "2", "--steps", "30", "--fps", "1000", "--pairs", "2", "--thread"])
    assert (preview.worlds, preview.steps, preview.fps, preview.pairs, preview.process) == (2, 30, 1000.0, 2, False)
    server = parse(["bench", "policy-server", "--drivers", "3", "--requests", "20"])
    assert (server.drivers, server.requests) == (3, 20)


@pytest.mark.parametrize("argv, message", [
    (["bench", "core", "--worlds", "1,0"], "argument --worlds: got '1,0'"),
    (["bench", "env", "--seconds", "-1"], "argument --seconds: got '-1'"),
    (["bench", "env", "--actions", "random"], "argument --actions: got 'random'"),
    (["bench", "protocol", "--worlds", "2,4"], "argument --worlds: got '2,4'; expected a whole number, at least 1"),
    (["bench", "env", "--seconds", "inf"], "argument --seconds: got 'inf'; expected a finite number of seconds > 0"),
    (["bench", "preview", "--fps", "0"], "argument --fps: got '0'; expected a finite number > 0"),
    (["race", "--seconds", "nan"], "argument --seconds: got 'nan'; expected a finite number of seconds > 0"),
    (["collect", "--env", "e", "--shards", "1", "--worlds-per-shard", "1", "--steps", "1", "--out", "o",
      "--deadline", "inf"], "argument --deadline: got 'inf'; expected a finite number of seconds > 0"),
    (["serve", "--env", "e", "--worlds", "0"], "argument --worlds: got '0'; expected a whole number of worlds from 1"),
    (["view", "--port", "65536"], "argument --port: got '65536'; expected a whole number from 0 to 65535"),
    (["bench", "--protocol"], "unrecognized arguments: --protocol"),
])
def test_bad_bench_options_are_refused_naming_the_option(argv, message, capsys):
    with pytest.raises(SystemExit) as exit:
        build_parser().parse_args(argv)
    assert exit.value.code == 2 and message in capsys.readouterr().err


def test_bench_options_default_to_their_benchmarks_run_defaults():
    """The table restates no default: each option's default is its benchmark's ``run`` default."""
    parse = build_parser().parse_args
    for name, bench in BENCHMARK_TABLE.items():
        signature = inspect.signature(bench.module.run).parameters
        args = parse(["bench", name])
        for option in bench.options:
            assert getattr(args, option.parameter) == signature[option.parameter].default, (name, option.flag)
        assert "seconds" not in args                 # run's own seconds applies


def test_a_report_option_on_a_server_benchmark_is_refused(capsys):
    assert main(["bench", "--json", "preview"]) == 2
    assert "apply to the timed benchmarks only" in capsys.readouterr().err


def test_record_refuses_an_unknown_policy_and_view_a_config_without_demo(tmp_path, capsys):
    out = tmp_path / "t.json"
    assert main(["record", "--policy", "throtle", "--out", str(out)]) == 2
    assert "argument --policy: got 'throtle'; expected one of 'builtin', 'throttle', 'actor'" in capsys.readouterr().err
    assert not out.exists()
    assert main(["view", "--config", "race.json"]) == 2
    assert "--config: give it with --demo" in capsys.readouterr().err


def test_parsing_loads_no_simulation():
    """numba's thread count is set after parsing (``bench threads``), so building the parser must not
    import numba, nor the heavy libraries a command loads when it runs."""
    code = ("import sys; from paddock_ma.cli.main import build_parser; build_parser().parse_args(['bench', 'core']); "
            "print(sorted(m for m in ('numba', 'torch', 'ray', 'aiohttp', 'pyarrow') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert out.returncode == 0 and out.stdout.strip() == "[]", out.stderr


@pytest.mark.parametrize("kind, good, bad", [
    (arguments.seconds, {"0.5": 0.5, "30": 30.0}, ["0", "-1", "inf", "nan", "x", ""]),
    (arguments.positive_number, {"10": 10.0, "0.25": 0.25}, ["0", "-2", "inf", "nan", "x"]),
    (arguments.count, {"1": 1, "64": 64}, ["0", "-3", "1.5", "x", "2,4", "True"]),
    (arguments.index, {"0": 0, "7": 7}, ["-1", "x"]),
    (arguments.integer, {"-3": -3, "0": 0}, ["1.0", "x"]),
    (arguments.port, {"0": 0, "8787": 8787}, ["65536", "-1"]),
    (arguments.counts, {"1,64,1024": (1, 64, 1024), "1,2,1,2": (1, 2, 1, 2)}, ["0,2", "x", "", "1,,2"]),
    (arguments.names(("constant", "driver")), {"driver": ("driver",), "constant,driver": ("constant", "driver")},
     ["", "random", "driver,"]),
    (arguments.host_port, {"127.0.0.1:8787": ("127.0.0.1", 8787)}, ["8787", "host:", "host:0", "host:x"]),
])
def test_each_kind_of_value_has_one_type_that_names_the_bad_text(kind, good, bad):
    for text, value in good.items():
        assert kind(text) == value
    for text in bad:
        with pytest.raises(argparse.ArgumentTypeError, match=f"^got {text!r}; "):
            kind(text)


def test_python_dash_m_runs_the_same_command_line():
    out = subprocess.run([sys.executable, "-m", "paddock_ma.cli", "envs"], capture_output=True, text=True,
                         timeout=600, cwd=ROOT)
    assert out.returncode == 0 and "paddock/gp-batch-v0" in out.stdout


def test_race_library_function_is_deterministic_and_sums_up_the_race():
    from paddock_ma.rollout.race import race_builtin_drivers, race_every_track
    from paddock_ma.sim.track.load import list_tracks

    first = race_builtin_drivers("oval", worlds=2, cars=4, seconds=90.0, seed=3)
    again = race_builtin_drivers("oval", worlds=2, cars=4, seconds=90.0, seed=3)
    other = race_builtin_drivers("oval", worlds=2, cars=4, seconds=90.0, seed=4)
    assert (first.track, first.worlds, first.cars, first.ticks) == ("oval", 2, 4, 5400)
    assert first.checksum == again.checksum != other.checksum
    assert first.laps_completed > 0 and first.best_lap_seconds > 0 and first.car_ticks_per_s > 0
    assert first.lap_meters > 0 and first.contacts >= 0 and 0 <= first.destroyed <= 8
    assert [r.track for r in race_every_track(worlds=1, cars=2, seconds=1.0)] == list_tracks()
