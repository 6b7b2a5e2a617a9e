"""``paddock-ma bench protocol`` runs every path on a small workload and reports comparable rows."""

import json

from paddock_ma.bench import protocol
from paddock_ma.cli.main import main


def test_every_path_runs_and_is_compared_with_in_process_arrays(tmp_path, capsys):
    out = tmp_path / "protocol.json"
    assert main(["bench", "protocol", "--worlds", "2", "--cars", "3", "--seconds", "0.3", "--out", str(out)]) == 0
    table = capsys.readouterr().out
    report = json.loads(out.read_text())
    assert report["cars_per_world"] == 3
    paths = [(row["path"], row["worlds"]) for row in report["rows"]]
    assert paths == [("in-process arrays (BatchEnv.step)", 1), ("in-process JSON (dict)", 1),
                     ("NDJSON worker (dict)", 1), ("in-process arrays (BatchEnv.step)", 2),
                     ("in-process JSON (json)", 2), ("NDJSON worker (json)", 2),
                     ("in-process JSON (f32-base64)", 2), ("NDJSON worker (f32-base64)", 2),
                     ("NDJSON worker, Node.js client (f32-base64)", 2)]
    for row in report["rows"]:
        assert row["car_steps_per_s"] > 0 and row["ms_per_step"] > 0 and row["ratio_to_in_process"] > 0
    assert all(row["round_trip_ms_median"] > 0 for row in report["rows"] if "NDJSON" in row["path"])
    assert table.strip() == protocol.format_report(report)
    assert table.count("\n| ") == len(report["rows"]) + 1 and "NDJSON worker (f32-base64)" in table
