"""Settings and fixtures of the whole test session.

numba fixes its thread count when its threads first launch and refuses any later compile if
``NUMBA_NUM_THREADS`` then reads otherwise; Ray shards (and ``ShardCore`` run in process) pin it to 1.
Setting it here, first, before any test module is imported, keeps it one value for the whole session
whatever order the tests run in. Tests that need several threads start a child process with their own
value (tests/env/test_threads.py).

pytest-xdist (``make test`` runs two workers): every test module that starts Ray or RLlib runs on one
worker, one test after another (``pytest_xdist_make_scheduler`` below), while the other tests share both workers; Ray's fault tests
already tolerate a busy machine, but two Ray instances at once on two cores would only slow each other.
The PaddockJS port's tally (tests/protocol/paddockjs_port) is gathered from every worker and printed
once.

Ray: one local instance for the session (``ray_session``, ``ray_local``), started only when a test asks
for it. Never ``ray stop``: the local instance is ``ray.shutdown()``-ed, and a multi-node test Cluster
(tests/distributed) tears down its own nodes.
"""

import json
import os

import pytest

os.environ.setdefault("NUMBA_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("RAY_AUTH_MODE", "disabled")       # throwaway test clusters: no token file

# the local instance: two CPUs and a small object store. No job-wide thread settings: a shard pins its
# own (distributed.shard.ACTOR_OPTIONS), and tests/distributed/test_shard_threads.py checks that it does.
LOCAL_INIT = dict(address="local", num_cpus=2, object_store_memory=150 * 1024**2, include_dashboard=False,
                  log_to_driver=False)


@pytest.fixture(scope="session")
def ray_session():
    """The session's Ray state: ``local()`` joins the local instance (starting it), ``shutdown()`` leaves
    it (a driver joins one cluster at a time, so a multi-node test leaves it first)."""
    import ray

    class Session:
        mode = None

        def local(self):
            if self.mode != "local":
                if ray.is_initialized():
                    ray.shutdown()
                ray.init(**LOCAL_INIT)
                self.mode = "local"
            return ray

        def shutdown(self):
            if ray.is_initialized():
                ray.shutdown()
            self.mode = None

    s = Session()
    yield s
    s.shutdown()


@pytest.fixture
def ray_ready():
    """What must be done in this process before Ray workers start (nothing by default; the distributed
    tests override it to compile the kernels once here, so shards do not all compile at once)."""
    return None


@pytest.fixture
def ray_local(ray_session, ray_ready):
    """The ``ray`` module, joined to the session's local instance."""
    return ray_session.local()


# -- pytest-xdist: Ray's tests on one worker -------------------------------------------------------------
# pytest-xdist's own ``--dist loadgroup`` reads ``xdist_group`` marks into the test ids, which pytest 9's
# read-only node ids ignore (every test ran on either worker); this scheduler does the grouping from the
# test modules instead. The controller sees test ids only, so a module is the unit: one that starts Ray or
# RLlib (here or in a subprocess) says so in its text.
RAY_WORDS = ("import ray", "rllib", "ray_local", "ray_session", "mark.ray", "mark.cluster")
_STARTS_RAY: dict[str, bool] = {}


def module_starts_ray(path) -> bool:
    """Whether the test module at ``path`` starts Ray or RLlib (see ``RAY_WORDS``)."""
    key = str(path)
    if key not in _STARTS_RAY:
        with open(key, encoding="utf-8") as f:
            text = f.read()
        _STARTS_RAY[key] = any(word in text for word in RAY_WORDS)
    return _STARTS_RAY[key]


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """``--dist loadgroup``: every test of a module that starts Ray in one scope, run in order on one
    worker; every other test its own scope, on whichever worker is free."""
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling

    root = config.rootpath

    class RayTestsOnOneWorker(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return "ray" if module_starts_ray(root / nodeid.split("::", 1)[0]) else nodeid

    return RayTestsOnOneWorker(config, log)


# -- the PaddockJS port's tally (tests/protocol/paddockjs_port), over every xdist worker ------------------
def pytest_configure(config):
    config.paddockjs_port_tally = {"worker": None, "rows": {}}   # {test: {declared, held, cannot}}


def pytest_sessionfinish(session):
    """A pytest-xdist worker sends its tally to the controller."""
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:
        workeroutput["paddockjs_port_tally"] = json.dumps(session.config.paddockjs_port_tally)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    """The controller gathers a finished worker's tally."""
    got = json.loads(getattr(node, "workeroutput", {}).get("paddockjs_port_tally", "null") or "null")
    if got and got["rows"]:
        tally = node.config.paddockjs_port_tally
        tally["worker"] = got["worker"]
        tally["rows"].update(got["rows"])


def pytest_terminal_summary(terminalreporter):
    tally = terminalreporter.config.paddockjs_port_tally
    rows = tally["rows"]
    if not rows:
        return
    total = sum(r["declared"] for r in rows.values())
    held = sum(r["held"] for r in rows.values())
    write = terminalreporter.write_line
    write(f"PaddockJS 2.0.0 environment.test.js port, over {tally['worker']}: {held} of {total} assertions hold "
          f"({len(rows)} tests)")
    for name in sorted(rows):
        r = rows[name]
        if r["held"] != r["declared"]:
            write(f"  {name}: {r['held']}/{r['declared']}")
        for what, why in r["cannot"]:
            write(f"    cannot hold over JSON: {what} ({why})")
