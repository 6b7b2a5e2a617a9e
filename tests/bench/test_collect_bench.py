"""`paddock-ma bench collect`: the fleet without writing, the driver writing and the shards writing, on a tiny
budget, with each row's CPU a row measured (the shards' from /proc) and the same rows in every run."""

import json

import pytest

from paddock_ma.bench import collection

pytestmark = [pytest.mark.ray, pytest.mark.timeout(1800)]


def test_bench_collect_reports_rates_cpu_and_bytes_per_row(capsys):
    from paddock_ma.cli import main
    assert main(["bench", "collect", "--env", "paddock/oval-batch-v0", "--worlds", "2", "--steps", "16",
                 "--fragment-steps", "8", "--file-worlds", "2", "--shards", "1", "--repeats", "1", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    rows = {r["what"]: r for r in report["rows"]}
    assert set(rows) == {"fleet only, 1 shard(s), no writing", "collect, 1 shard(s), driver writes, local disk",
                         "collect, 1 shard(s), shards writes, local disk"}
    for r in rows.values():
        assert r["rows"] == 2 * 8 * 16 and r["rows_per_s"] > 0 and r["repeat"] == 1
        # (a tiny run: a shard's /proc CPU moves in 10 ms ticks, so it may read 0 here)
        assert r["driver_us_per_row"] >= 0 and r["shard_us_per_row"] >= 0 and (r["driver_share"] or 0) >= 0
    written = [r for r in rows.values() if "bytes_per_row" in r]
    assert len(written) == 2 and written[0]["bytes_per_row"] == written[1]["bytes_per_row"] > 0   # the same files
    assert "| collect, 1 shard(s), shards writes, local disk | 1 | 2 | 16 |" in collection.format_report(report)
