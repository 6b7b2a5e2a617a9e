"""The README's example runs, and the command line's subcommands work end to end."""

import re
import subprocess
import sys
from pathlib import Path

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
