"""Closed-loop parity with PaddockJS 2.0.0 through the environment: prints the parity table of
docs/paddockjs-compatibility.md. The comparison itself is the test ``tests/env/test_paddockjs_closed_loop.py``
(run by ``make test``); this prints its table.

    PYTHONPATH=. .venv/bin/python tools/paddockjs/closed_loop_parity.py
"""

import runpy
from pathlib import Path

TEST = Path(__file__).resolve().parents[2] / "tests" / "env" / "test_paddockjs_closed_loop.py"

if __name__ == "__main__":
    print(runpy.run_path(str(TEST))["parity_table"]())
