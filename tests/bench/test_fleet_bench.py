"""`paddock-ma bench fleet` runs every fleet measurement on a tiny budget and reports comparable rows.

It starts (and shuts down) its own private local Ray unless the session already joined one."""

import json

import pytest

from paddock_ma.bench import fleet

# a fleet start is several actor starts: tens of seconds each on a loaded machine (hang guard, not a speed)
pytestmark = [pytest.mark.ray, pytest.mark.timeout(1800)]


def test_bench_fleet_reports_every_path(capsys):
    from paddock_ma.cli.main import main
    assert main(["bench", "fleet", "--worlds", "2", "--seconds", "0.3", "--collect-steps", "16", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["env_id"] == "paddock/gp-batch-v0"
    rows = report["rows"]
    speeds = {r["what"]: r for r in rows if "car_steps_per_s" in r}
    assert set(speeds) == {"in-process ShardCore"} | {f"ShardFleet, {n} shard(s), {d} call(s) in flight"
                                                      for n in (1, 2) for d in (1, 2)}
    assert all(r["car_steps_per_s"] > 0 and r["vs_in_process"] > 0 and r["worlds"] == 2 for r in speeds.values())
    assert speeds["in-process ShardCore"]["vs_in_process"] == 1.0
    calls = next(r for r in rows if "array_ms" in r)
    assert 0 < calls["array_ms"] and 0 < calls["json_ms"] and 0 < calls["json_f32_ms"]
    collected = next(r for r in rows if r["what"].startswith("collect"))
    assert collected["what"] == "collect, 2 shard(s), Parquet on" and collected["steps"] == 16
    assert collected["rows"] > 0 and collected["rows_per_s"] > 0
    text = fleet.format_report(report)
    assert "| ShardFleet, 2 shard(s), 2 call(s) in flight | 2 |" in text
    assert "| ms per call | 2 |" in text and "| collect, 2 shard(s), Parquet on | 2 | 16 |" in text
