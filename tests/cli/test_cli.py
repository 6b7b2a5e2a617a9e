"""``paddock-ma``: every command and its help, the options a command group shares, and ``race``'s library."""

import subprocess
import sys
from pathlib import Path

import pytest

from paddock_ma.cli import build_parser, main

ROOT = Path(__file__).resolve().parents[2]
COMMANDS = ("warm", "race", "bench", "envs", "tracks", "serve", "collect", "verify")
BENCHMARKS = ("core", "env", "threads", "protocol", "sampling", "fleet")


def help_of(argv, capsys) -> str:
    with pytest.raises(SystemExit) as exit:
        main([*argv, "--help"])
    assert exit.value.code == 0
    return capsys.readouterr().out


def test_top_level_help_lists_every_command(capsys):
    text = help_of([], capsys)
    for command in ("demo", *COMMANDS):
        assert f"\n    {command} " in text


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


def test_bench_options_reach_each_benchmark():
    parse = build_parser().parse_args
    core = parse(["bench", "core", "--worlds", "1,64", "--cars", "4", "--track", "oval", "--ticks-per-call", "2",
                  "--track-seeds", "3", "--no-start"])
    assert (core.worlds, core.cars, core.track, core.ticks_per_call, core.track_seeds, core.no_start) == (
        (1, 64), 4, "oval", 2, 3, True)
    fleet = parse(["bench", "--seconds", "2", "fleet", "--worlds", "16", "--shards", "1", "--depths", "2",
                   "--collect-steps", "8", "--env", "paddock/oval-batch-v0"])
    assert (fleet.seconds, fleet.worlds, fleet.shards, fleet.depths, fleet.collect_steps, fleet.env) == (
        2.0, (16,), (1,), (2,), 8, "paddock/oval-batch-v0")
    sampling = parse(["bench", "sampling", "--paths", "torch,engine", "--rollout", "8", "--worlds", "2"])
    assert (sampling.paths, sampling.rollout, sampling.worlds) == (("torch", "engine"), 8, 2)
    protocol = parse(["bench", "protocol", "--worlds", "2", "--cars", "3", "--seconds", "0.5"])
    assert (protocol.worlds, protocol.cars, protocol.seconds) == (2, 3, 0.5)
    env = parse(["bench", "env", "--actions", "driver", "--ray-floor", "--warmup-steps", "10", "--no-paddock-env"])
    assert (env.actions, env.ray_floor, env.warmup_steps, env.no_paddock_env) == (("driver",), True, 10, True)


@pytest.mark.parametrize("argv, message", [
    (["bench", "core", "--worlds", "1,0"], "argument --worlds: got '1,0'"),
    (["bench", "env", "--seconds", "-1"], "argument --seconds: got '-1'"),
    (["bench", "env", "--actions", "random"], "argument --actions: got 'random'"),
    (["bench", "protocol", "--worlds", "2,4"], "argument --worlds: got '2,4'; expected one whole number"),
    (["bench", "--protocol"], "unrecognized arguments: --protocol"),
])
def test_bad_bench_options_are_refused_naming_the_option(argv, message, capsys):
    with pytest.raises(SystemExit) as exit:
        build_parser().parse_args(argv)
    assert exit.value.code == 2 and message in capsys.readouterr().err


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
