"""PaddockJS 2.0.0's golden reset-and-step runs (tests/fixtures/paddockjs-2.0.0/*.reset-and-steps.json) and
the check of one of our results against one of their records: shared by tests/env/test_golden_steps.py
(the Python API, snake_case) and tests/protocol/test_golden_wire.py (the worker protocol, camelCase)."""

import json
from pathlib import Path

from paddock_ma.paddockjs.naming import python_name

FIXTURES = Path(__file__).parent.parent / "fixtures" / "paddockjs-2.0.0"
CONFIGS = ("default-profile", "physical-driver", "physical-driver-front-heavy", "batch-training")
# keys of 2.0.0's info that ours lacks, and ours that it lacks: the track's name, the structured action
# errors, and info.drivers, which the golden files record per driver
INFO_DIFFERENCES = (set(), {"track", "actionErrorDetails", "drivers"})


def golden(name: str) -> dict:
    """A golden run, its config on one of our tracks (2.0.0's procedural track seed has no twin here)."""
    doc = json.loads((FIXTURES / f"{name}.reset-and-steps.json").read_text())
    doc["config"] = {k: v for k, v in doc["config"].items() if k != "trackSeed"} | {"track": "oval"}
    return doc


def check_result(result: dict, record: dict, driver: str, name=python_name):
    """One result against a golden record (reset or a step) of ``driver``, in ``name``'s spelling."""
    assert list(result) == [name(k) for k in record["resultKeys"]]
    expected_info = set(record["info"]) - INFO_DIFFERENCES[0]
    assert {name(k) for k in expected_info} | {name(k) for k in INFO_DIFFERENCES[1]} == set(result["info"])
    entry = result["info"]["drivers"][driver]
    assert list(entry) == [name(k) for k in record["driver"]["infoDriver"]]
    assert list(result["metrics"][driver]) == [name(k) for k in record["driver"]["metrics"]]
    assert set(result["observation"][driver]) == {name(k) for k in record["driver"]["observationKeys"]}
    assert (result["state"] is None) == (record["state"] is None)
