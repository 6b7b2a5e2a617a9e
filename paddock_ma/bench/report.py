"""The benchmarks' one report format: a JSON-able dict per run, shown as Markdown tables or as JSON.

Every benchmark's ``run(...)`` returns a dict of plain values (the figures and the facts of the
workload) and its ``format_report(report)`` renders it with ``table`` (the Markdown tables BENCHMARKS.md
keeps). ``emit`` is how every ``paddock-ma bench`` subcommand shows a report: the Markdown, or the JSON
with ``as_json``; and with ``out`` it also writes the JSON to a file, whatever is shown.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Callable, Iterable, Sequence, TextIO


def table(columns: Sequence[str], rows: Iterable[Sequence], left: int = 0) -> list[str]:
    """Lines of a Markdown table: the header ``columns``, then one line per row (cells shown with
    ``str``; an empty cell as a blank). The first ``left`` columns are left-aligned (labels), the rest
    right-aligned (figures)."""
    def line(cells) -> str:
        return "|" + "|".join(f" {c} " if str(c) != "" else " " for c in cells) + "|"
    lines = [line(columns), "|" + "|".join("---" if i < left else "---:" for i in range(len(columns))) + "|"]
    return lines + [line(row) for row in rows]


def to_json(report) -> str:
    """The report as indented JSON (what ``--json`` prints and ``--out`` writes)."""
    return json.dumps(report, indent=2)


def emit(report: dict, format_report: Callable[[dict], str], *, as_json: bool = False, out: str | None = None,
         stream: TextIO | None = None) -> None:
    """Print ``report`` to ``stream`` (stdout): ``format_report(report)``, or its JSON with ``as_json``;
    with ``out``, also write the JSON to that file path."""
    print(to_json(report) if as_json else format_report(report), file=stream or sys.stdout)
    if out:
        Path(out).write_text(to_json(report) + "\n")
