"""A PaddockJS environment driven through worker messages, as the port of its tests uses it.

``createPaddockEnvironment(config)`` becomes a real worker process started with the config as a file
(``paddock-ma serve --config FILE``); each environment method becomes the message PaddockJS's
``createEnvironmentWorkerProtocol`` maps to it (``reset`` -> ``{type: "reset", options}``, ...) and
returns the reply's ``result``, or raises ``RequestFailed`` where PaddockJS's method would throw.

With ``PADDOCKJS_CHECKOUT`` set to a PaddockJS 2.0.0 source tree, the worker is PaddockJS's own protocol
under Node (``tools/paddockjs/serve_environment.mjs``) instead: the port checked against the original.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from tests.helpers.worker import ROOT, WORKER_ENV, finish, reply_of, serve_argv

FIXTURE = ROOT / "tests/fixtures/paddockjs-2.0.0/environment-test-configs.json"
CONFIGS = json.loads(FIXTURE.read_text(encoding="utf-8"))
SIM_UNITS_PER_METER = 12.0      # PaddockJS's state snapshots (track, positions) are in its sim units
PADDOCKJS_CHECKOUT = os.environ.get("PADDOCKJS_CHECKOUT")


def worker_name() -> str:
    """Which worker the port talks to."""
    return f"PaddockJS 2.0.0 under Node ({PADDOCKJS_CHECKOUT})" if PADDOCKJS_CHECKOUT else "paddock-ma serve"


def sim_units_to_meters(value: float) -> float:
    return value / SIM_UNITS_PER_METER


class WorkerRefused(Exception):
    """The worker did not start with this config (its stderr says why)."""


class RequestFailed(Exception):
    """An error reply where PaddockJS's environment method returns."""

    def __init__(self, reply: dict):
        super().__init__(f"{reply.get('code', '')} {reply.get('error')!r}")
        self.reply = reply


class WorkerEnv:
    """One environment = one worker process with ``config`` (a dict) as its ``--config`` file."""

    def __init__(self, config: dict, directory: Path, name: str):
        self.path = directory / f"{name}.json"
        self.path.write_text(json.dumps(config), encoding="utf-8")
        self.stderr_path = directory / f"{name}.stderr"
        if PADDOCKJS_CHECKOUT:
            argv = ["node", str(ROOT / "tools/paddockjs/serve_environment.mjs"), PADDOCKJS_CHECKOUT,
                    "--config", str(self.path)]
        else:
            argv = serve_argv("--config", str(self.path))
        self._stderr = open(self.stderr_path, "wb")
        self.process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr,
                                        env=WORKER_ENV, cwd=ROOT)
        self.next_id = 0

    def handle(self, message: dict) -> dict:
        """Send one message as it is; its reply."""
        line = json.dumps(message).encode()
        try:
            self.process.stdin.write(line + b"\n")
            self.process.stdin.flush()
            reply = self.process.stdout.readline()
        except BrokenPipeError:
            reply = b""
        if not reply:
            self.process.wait(30)
            raise WorkerRefused(self.stderr_path.read_text(encoding="utf-8", errors="replace").strip())
        return reply_of(reply)

    def _call(self, kind: str, **fields):
        self.next_id += 1
        message = {"id": self.next_id, "type": kind}
        message.update({k: v for k, v in fields.items() if v is not None})
        reply = self.handle(message)
        if not reply.get("ok"):
            raise RequestFailed(reply)
        return reply.get("result")

    # PaddockJS's environment methods, as its worker protocol maps them to messages
    def reset(self, options: dict | None = None):
        return self._call("reset", options=options)

    def step(self, actions: dict):
        return self._call("step", actions=actions)

    def reset_drivers(self, placements: dict, result_options: dict | None = None):
        return self._call("resetDrivers", placements=placements, resultOptions=result_options)

    def get_state(self, options: dict | None = None):
        return self._call("getState", stateOptions=options)

    def get_action_spec(self):
        return self._call("getActionSpec")

    def get_observation_spec(self):
        return self._call("getObservationSpec")

    def close(self) -> None:
        finish(self.process)
        self._stderr.close()
