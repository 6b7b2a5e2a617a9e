"""`paddock-ma bench --fleet` runs every fleet measurement on a tiny budget and reports comparable rows."""

import json

import pytest

pytestmark = pytest.mark.ray


def test_bench_fleet_reports_every_path(ray_local, capsys):
    from paddock_ma.cli import main
    assert main(["bench", "--fleet", "--env-worlds", "2", "--seconds", "0.3", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    speeds = {r["what"]: r for r in rows if "car_steps_per_s" in r}
    assert {"in-process ShardCore", "ShardFleet, 1 shard(s), 1 call(s) in flight",
            "ShardFleet, 2 shard(s), 2 call(s) in flight"} <= set(speeds)
    assert all(r["car_steps_per_s"] > 0 and r["vs_in_process"] > 0 for r in speeds.values())
    assert speeds["in-process ShardCore"]["vs_in_process"] == 1.0
    calls = next(r for r in rows if "array_ms" in r)
    assert 0 < calls["array_ms"] and 0 < calls["json_ms"] and 0 < calls["json_f32_ms"]
    collected = next(r for r in rows if r["what"].startswith("collect"))
    assert collected["rows"] > 0 and collected["rows_per_s"] > 0
