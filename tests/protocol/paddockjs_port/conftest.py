"""The ``port`` fixture and the count of PaddockJS assertions that hold (printed after the run).

``port.env(key_or_config)`` starts a worker (``harness.WorkerEnv``); ``port.expect(n)`` is the test's
``Expectations`` (``n``: the assertions PaddockJS's test makes when it runs). After the session the
terminal summary says how many of the ported assertions hold, over which worker, and names those that
cannot hold over JSON.
"""

from __future__ import annotations

import copy

import pytest

from .harness import CONFIGS, WorkerEnv, worker_name
from .matchers import Expectations

TALLY: dict[str, Expectations] = {}


class Port:
    def __init__(self, name: str, directory):
        self.name, self.directory = name, directory
        self.envs: list[WorkerEnv] = []
        self.expectations: Expectations | None = None

    def config(self, key: str) -> dict:
        """A copy of the recorded PaddockJS config ``key``."""
        return copy.deepcopy(CONFIGS[key])

    def env(self, config) -> WorkerEnv:
        """``createPaddockEnvironment(config)``: a worker with this config (a fixture key or a dict)."""
        doc = self.config(config) if isinstance(config, str) else config
        env = WorkerEnv(doc, self.directory, f"env-{len(self.envs)}")
        self.envs.append(env)
        return env

    def expect(self, declared: int) -> Expectations:
        self.expectations = Expectations(self.name, declared)
        TALLY[self.name] = self.expectations
        return self.expectations


@pytest.fixture
def port(request, tmp_path):
    p = Port(request.node.name, tmp_path)
    yield p
    for env in p.envs:
        env.close()


def pytest_terminal_summary(terminalreporter):
    if not TALLY:
        return
    total = sum(x.declared for x in TALLY.values())
    held = sum(x.held for x in TALLY.values())
    write = terminalreporter.write_line
    write(f"PaddockJS 2.0.0 environment.test.js port, over {worker_name()}: {held} of {total} assertions hold "
          f"({len(TALLY)} tests)")
    for name, x in TALLY.items():
        if x.held != x.declared:
            write(f"  {name}: {x.held}/{x.declared}")
        for what, why in x.cannot:
            write(f"    cannot hold over JSON: {what} ({why})")
