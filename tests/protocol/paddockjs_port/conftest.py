"""The ``port`` fixture and the count of PaddockJS assertions that hold (printed after the run).

``port.env(key_or_config)`` starts a worker (``harness.WorkerEnv``); ``port.expect(n)`` is the test's
``Expectations`` (``n``: the assertions PaddockJS's test makes when it runs). Each test's row (declared,
held, cannot hold over JSON) goes into the session's tally, which tests/conftest.py prints after the run.
"""

from __future__ import annotations

import copy

import pytest

from .harness import CONFIGS, WorkerEnv, worker_name
from .matchers import Expectations


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
        return self.expectations

    def tally_row(self) -> dict:
        """This test's row of the session's tally (tests/conftest.py prints it): declared, held, cannot."""
        x = self.expectations
        return {"declared": x.declared, "held": x.held, "cannot": [list(c) for c in x.cannot]}


@pytest.fixture
def port(request, tmp_path):
    p = Port(request.node.name, tmp_path)
    yield p
    for env in p.envs:
        env.close()
    if p.expectations is not None:
        tally = request.config.paddockjs_port_tally
        tally["worker"], tally["rows"][p.name] = worker_name(), p.tally_row()
