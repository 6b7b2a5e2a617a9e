"""The benchmarks' one timer and one report format."""

import json

import pytest

from paddock_ma.bench.report import emit, table
from paddock_ma.bench.timing import accumulating, time_calls, time_for


def test_time_for_counts_calls_and_units_after_the_warmup_for_the_budget():
    made = []
    timing = time_for(lambda: made.append(3) or 3, seconds=0.02, warmup=5)
    assert timing.calls >= 1 and len(made) == timing.calls + 5      # warm-up calls are made, not counted
    assert timing.units == 3 * timing.calls                          # the workload's own count of work
    assert timing.seconds >= 0.02 and timing.cpu_seconds >= 0
    once = time_for(lambda: None, seconds=0.0)                       # at least one call, counted as one unit
    assert (once.calls, once.units) == (1, 1)
    with pytest.raises(TypeError, match="the workload returned str; expected its count of work"):
        time_for(lambda: "done", seconds=0.0)


def test_time_calls_makes_exactly_that_many_calls():
    made = []
    timing = time_calls(lambda: made.append(1), 7)
    assert timing.calls == len(made) == 7 and timing.per_call_seconds == timing.seconds / 7


def test_accumulating_adds_up_the_time_inside_a_callable_and_passes_results_through():
    spent = {}
    wrapped = accumulating(lambda x, y=1: x + y, spent, "part")
    assert spent == {"part": 0.0}
    assert wrapped(2, y=3) == 5 and spent["part"] > 0


def test_table_is_markdown_with_labels_left_and_figures_right():
    assert table(("what", "n", "note"), [("a", 1, ""), ("b", "2,000", "x")], left=1) == [
        "| what | n | note |", "|---|---:|---:|", "| a | 1 | |", "| b | 2,000 | x |"]


def test_emit_prints_markdown_or_json_and_writes_json_to_a_file(tmp_path, capsys):
    report = {"rows": [{"worlds": 2, "speed": 10}]}
    out = tmp_path / "report.json"
    emit(report, lambda r: f"{len(r['rows'])} row(s)", out=str(out))
    assert capsys.readouterr().out == "1 row(s)\n" and json.loads(out.read_text()) == report
    emit(report, lambda r: "unused", as_json=True)
    assert json.loads(capsys.readouterr().out) == report
