"""The distributed demo end to end on a tiny budget: collection, summary, verify, replay, PNG."""

import pytest

from .conftest import ENV_ID

pytestmark = pytest.mark.ray


def test_demo_collects_verifies_replays_and_draws(ray_local, tmp_path, capsys):
    from paddock_ma.cli.main import main
    png = tmp_path / "t.png"
    code = main(["demo", "--env", ENV_ID, "--shards", "2", "--worlds-per-shard", "1", "--steps", "40",
                 "--out", str(tmp_path / "ds"), "--png", str(png), "--replay-worlds", "1"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "observations identical to the dataset" in out and "verify" in out
    assert png.stat().st_size > 10_000 and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
