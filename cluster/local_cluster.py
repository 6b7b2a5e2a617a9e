"""A multi-node Ray cluster on one machine: one head and K worker raylets, each its own `ray start`.

Usable as a library (``LocalCluster``) and as a command line::

    python cluster/local_cluster.py start --workers 2 [--base-port 26400] [--state-dir DIR] [--dashboard]
    python cluster/local_cluster.py status [--state-dir DIR]
    python cluster/local_cluster.py stop [--state-dir DIR]

Each node is one ``ray start --block`` process started in a new session (its own process group), so
every daemon it spawns (GCS, raylet, agents) shares that group. ``stop`` signals exactly the process
groups this launcher recorded in ``<state-dir>/cluster.json`` (SIGTERM, then SIGKILL after a grace
period) and nothing else: it never runs ``ray stop``, which kills every Ray process on the machine.

Ports: node ``i`` (0 = head) uses ``base_port + 100 * i + offset`` for its GCS (head only), node
manager, object manager, agents and metrics, and ``[base_port + 100 * i + 20, + 99]`` for its workers,
so several launchers with distinct base ports coexist (Ray's autoscaler and dashboard metrics ports,
44217 and 44227 by default for every cluster, are moved into the head's block too). Node resources: the
head gets ``{"head": 1}``, worker ``i`` gets ``{"worker": 1, "node<i>": 1}`` (pin actors with
``resources={"node1": 0.01}``). The dashboard is off by default; ``--dashboard`` binds it to
127.0.0.1.

Loopback: every node runs ``ray start --node-ip-address=127.0.0.1`` through ``RAY_START_ON_LOOPBACK``,
which keeps that address as given (plain ``ray start`` rewrites a loopback address to the machine's own
one and then binds its GCS, raylet, core worker and agent gRPC servers to every interface, its runtime
env agent to the machine's address and its Prometheus metrics endpoints, which take no token, to every
interface). So every port of the cluster, its workers' and its clients' included, listens on 127.0.0.1
only; a client sets ``LOOPBACK_CLIENT_ENV`` so ``ray.init`` keeps 127.0.0.1 too (``client_env()``).
The stub replaces one function of Ray's private API (``ray._private.services.resolve_ip_for_localhost``):
tests/distributed/test_local_cluster.py fails if a Ray upgrade changes what it does.

Authentication: on by default. ``start`` writes a random token to ``<state-dir>/auth_token`` (mode 0600)
and runs every node with ``RAY_AUTH_MODE=token`` and ``RAY_AUTH_TOKEN_PATH`` pointing at it, so a
process without the token cannot join or call the cluster, other users of this machine included; a
client sets the same two variables (``client_env()``; the CLI prints them). ``--no-auth``
(``auth=False``) runs with ``RAY_AUTH_MODE=disabled``. tests/distributed/test_local_cluster.py checks
that nothing listens beyond loopback and that a client without the token (or with another) is refused.

Connect with the token variables set, then ``ray.init(address=cluster.address)`` or
``paddock-ma collect --address <address>``.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from paddock_ma.dataset.processes import process_group_members, process_start_ticks

STATE_FILE = "cluster.json"
READY_MARK = "Ray runtime started"
_PORT_OFFSETS = {"gcs": 0, "node_manager": 1, "object_manager": 2, "client_server": 3, "agent_listen": 4,
                 "agent_grpc": 5, "runtime_env_agent": 6, "metrics_export": 7, "dashboard": 8,
                 "autoscaler_metrics": 9, "dashboard_metrics": 10}


# `ray start`, run so that its nodes stay on loopback: Ray rewrites a loopback --node-ip-address (and a
# loopback --address) to the machine's own address (ray._private.services.resolve_ip_for_localhost); kept
# as given, Ray binds its gRPC servers, agents and metrics endpoint to 127.0.0.1 instead of every interface.
RAY_START_ON_LOOPBACK = ("import sys, ray._private.services as services; "
                         "services.resolve_ip_for_localhost = lambda host: host; "
                         "from ray.scripts.scripts import main; sys.argv[0] = 'ray'; sys.exit(main())")
# A client keeps 127.0.0.1 as the address it connects to only with this (Ray's single-machine mode for the
# client process, the same rewrite turned off); a node must not have it (`ray start` refuses worker nodes).
LOOPBACK_CLIENT_ENV = {"RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"}


class LocalClusterError(RuntimeError):
    """A launcher failure; the message names the value at fault and the fix."""


def _default_state_dir() -> Path:
    return Path(os.environ.get("PADDOCK_CLUSTER_DIR", f"/tmp/paddock-cluster-{os.getuid()}"))


def _ray_executable() -> str:
    here = Path(sys.executable).parent / "ray"
    found = str(here) if here.exists() else shutil.which("ray")
    if not found:
        raise LocalClusterError("the `ray` command was not found next to this Python or on PATH; "
                                "install the project (`make install`) or put ray on PATH")
    return found


@dataclass
class NodeRecord:
    """One `ray start --block` process: its process group leader ``pid`` (== pgid), role and ports."""
    name: str
    pid: int
    ports: dict
    resources: dict
    num_cpus: int
    log: str
    start_time: float
    member_pids: list = field(default_factory=list)   # the group's processes seen when the node was ready


class LocalCluster:
    """Start, inspect and stop a head plus ``num_workers`` worker raylets on this machine.

    base_port: first port of the head's block of 100 (node ``i`` uses ``base_port + 100 * i`` ...). Keep
    the blocks below Linux's ephemeral ports (32768+, handed to outgoing connections, Ray's included) and
    above Ray's worker ports (10002-19999).
    head_cpus / worker_cpus: logical CPUs each node advertises (the head 0 by default, so actors land
    on the workers and a removed worker takes its actors with it). object_store_mb: per node, MiB
    (Ray's minimum is 75). state_dir: where ``cluster.json``, the token, the node logs and Ray's temp dir
    live. auth: token authentication (see the module docstring).
    """

    def __init__(self, num_workers: int = 2, base_port: int = 26400, head_cpus: int = 0, worker_cpus: int = 1,
                 object_store_mb: int = 100, state_dir: str | os.PathLike | None = None, dashboard: bool = False,
                 auth: bool = True):
        if not isinstance(num_workers, int) or num_workers < 0:
            raise LocalClusterError(f"num_workers: got {num_workers!r}; expected an integer >= 0")
        if not isinstance(base_port, int) or not 1024 <= base_port <= 65535 - 100 * (num_workers + 1):
            raise LocalClusterError(f"base_port: got {base_port!r}; expected 1024..{65535 - 100 * (num_workers + 1)} "
                                    "(each node takes a block of 100 ports)")
        if object_store_mb < 75:
            raise LocalClusterError(f"object_store_mb: got {object_store_mb}; Ray needs at least 75 MiB")
        self.num_workers = num_workers
        self.base_port = base_port
        self.head_cpus = head_cpus
        self.worker_cpus = worker_cpus
        self.object_store_mb = object_store_mb
        self.state_dir = Path(state_dir) if state_dir is not None else _default_state_dir()
        self.dashboard = dashboard
        self.auth = bool(auth)
        self.nodes: list[NodeRecord] = []

    @property
    def token_path(self) -> Path:
        return self.state_dir / "auth_token"

    def auth_env(self) -> dict:
        """The token variables every node and client of this cluster runs with."""
        if not self.auth:
            return {"RAY_AUTH_MODE": "disabled"}
        return {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN_PATH": str(self.token_path)}

    def client_env(self) -> dict:
        """The environment variables a process needs to join this cluster (``ray.init`` reads them): the
        token's, and ``LOOPBACK_CLIENT_ENV`` (so it connects to 127.0.0.1 as given)."""
        return {**self.auth_env(), **LOOPBACK_CLIENT_ENV}

    @property
    def ray_temp_dir(self) -> str:
        """Ray's session/log/socket root for this cluster: short (AF_UNIX socket paths are capped at
        107 bytes) and private to this base port, so a bare ``ray.init()`` elsewhere never finds it."""
        return f"/tmp/pdk-{os.getuid()}-{self.base_port}"

    # -- addresses ---------------------------------------------------------------------------------
    @property
    def address(self) -> str:
        """``host:port`` of the head's GCS, for ``ray.init(address=...)`` and ``ray start --address``."""
        return f"127.0.0.1:{self.base_port}"

    def _ports(self, index: int) -> dict:
        base = self.base_port + 100 * index
        ports = {k: base + v for k, v in _PORT_OFFSETS.items()}
        ports["min_worker"], ports["max_worker"] = base + 20, base + 99
        return ports

    @property
    def state_file(self) -> Path:
        return self.state_dir / STATE_FILE

    # -- start -------------------------------------------------------------------------------------
    def start(self, timeout_s: float = 90.0) -> "LocalCluster":
        """Start the head, then the workers; returns self once every node logged that it is up.

        Refuses (LocalClusterError) when this state dir already records a running cluster. On any
        failure, every node started so far is stopped before the error is raised.
        """
        if self.state_file.exists():
            recorded = LocalCluster.load(self.state_dir)
            if any(recorded.alive().values()):
                raise LocalClusterError(f"{self.state_file} records a running cluster at {recorded.address}; "
                                        "stop it first (`local_cluster.py stop`) or pass another --state-dir")
            self.state_file.unlink()
        self.state_dir.mkdir(parents=True, exist_ok=True)
        if self.auth:
            fd = os.open(self.token_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w") as fh:
                fh.write(secrets.token_hex(32))
        try:
            self._start_node(0, timeout_s)
            for i in range(1, self.num_workers + 1):
                self._start_node(i, timeout_s)
        except BaseException:
            self.stop()
            raise
        return self

    def _start_node(self, index: int, timeout_s: float) -> None:
        ports = self._ports(index)
        head = index == 0
        name = "head" if head else f"node{index}"
        resources = {"head": 1} if head else {"worker": 1, name: 1}
        cpus = self.head_cpus if head else self.worker_cpus
        _ray_executable()               # the message when Ray is not installed next to this Python
        cmd = [sys.executable, "-c", RAY_START_ON_LOOPBACK, "start", "--block", "--disable-usage-stats",
               "--node-ip-address=127.0.0.1",
               f"--num-cpus={cpus}", f"--resources={json.dumps(resources)}",
               f"--object-store-memory={self.object_store_mb * 1024 * 1024}",
               f"--node-manager-port={ports['node_manager']}", f"--object-manager-port={ports['object_manager']}",
               f"--min-worker-port={ports['min_worker']}", f"--max-worker-port={ports['max_worker']}",
               f"--dashboard-agent-listen-port={ports['agent_listen']}",
               f"--dashboard-agent-grpc-port={ports['agent_grpc']}",
               f"--runtime-env-agent-port={ports['runtime_env_agent']}",
               f"--metrics-export-port={ports['metrics_export']}"]
        if head:
            cmd += ["--head", f"--port={ports['gcs']}", f"--ray-client-server-port={ports['client_server']}",
                    f"--temp-dir={self.ray_temp_dir}"]
            cmd += ([f"--include-dashboard=true", "--dashboard-host=127.0.0.1", f"--dashboard-port={ports['dashboard']}"]
                    if self.dashboard else ["--include-dashboard=false"])
        else:
            cmd += [f"--address={self.address}"]
        log = self.state_dir / f"{name}.log"
        env = {k: v for k, v in os.environ.items() if k not in ("RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH")}
        env = {k: v for k, v in env.items() if k not in LOOPBACK_CLIENT_ENV}
        env.update(self.auth_env(), OMP_NUM_THREADS="1", NUMBA_NUM_THREADS="1",
                   AUTOSCALER_METRIC_PORT=str(ports["autoscaler_metrics"]),
                   DASHBOARD_METRIC_PORT=str(ports["dashboard_metrics"]))
        with open(log, "wb") as fh:
            proc = subprocess.Popen(cmd, stdout=fh, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                    start_new_session=True, env=env)
        record = NodeRecord(name=name, pid=proc.pid, ports=ports, resources=resources, num_cpus=cpus, log=str(log),
                            start_time=time.time())
        self.nodes.append(record)
        self._save()
        deadline = time.monotonic() + timeout_s
        while READY_MARK not in log.read_text(errors="replace"):
            if proc.poll() is not None:
                raise LocalClusterError(f"{name}: `ray start` exited with code {proc.returncode}; see {log} "
                                        f"(a port in {ports['node_manager'] - 1}..{ports['max_worker']} may be taken: "
                                        "pass another --base-port)")
            if time.monotonic() > deadline:
                raise LocalClusterError(f"{name}: not up after {timeout_s:.0f} s; see {log}")
            time.sleep(0.2)
        record.member_pids = process_group_members(proc.pid)
        self._save()

    # -- state file --------------------------------------------------------------------------------
    def _save(self) -> None:
        doc = {"address": self.address, "base_port": self.base_port, "num_workers": self.num_workers,
               "head_cpus": self.head_cpus, "worker_cpus": self.worker_cpus, "object_store_mb": self.object_store_mb,
               "dashboard": self.dashboard, "auth": self.auth,
               "nodes": [dict(asdict(n), start_ticks=process_start_ticks(n.pid)) for n in self.nodes]}
        tmp = self.state_file.with_suffix(".tmp")
        tmp.write_text(json.dumps(doc, indent=2))
        os.replace(tmp, self.state_file)

    @classmethod
    def load(cls, state_dir: str | os.PathLike | None = None) -> "LocalCluster":
        """The cluster recorded in ``state_dir`` (LocalClusterError when there is none)."""
        sd = Path(state_dir) if state_dir is not None else _default_state_dir()
        path = sd / STATE_FILE
        if not path.exists():
            raise LocalClusterError(f"{path} does not exist: no cluster was started with --state-dir {sd}")
        doc = json.loads(path.read_text())
        cluster = cls(doc["num_workers"], doc["base_port"], doc["head_cpus"], doc["worker_cpus"],
                      doc["object_store_mb"], sd, doc["dashboard"], doc.get("auth", True))
        cluster._start_ticks = {}
        for n in doc["nodes"]:
            ticks = n.pop("start_ticks", None)
            rec = NodeRecord(**n)
            cluster.nodes.append(rec)
            cluster._start_ticks[rec.pid] = ticks
        return cluster

    def _is_ours(self, rec: NodeRecord) -> bool:
        """Whether ``rec.pid`` is still the process this launcher started (not a reused pid)."""
        now = process_start_ticks(rec.pid)
        recorded = getattr(self, "_start_ticks", {}).get(rec.pid, now)
        return now is not None and now == recorded

    # -- status / stop -----------------------------------------------------------------------------
    def live_pids(self) -> list[int]:
        """The live pids of every node's process group (its `ray start`, GCS, raylet, agents, workers)."""
        return sorted({p for n in self.nodes if self._is_ours(n) for p in process_group_members(n.pid)})

    def alive(self) -> dict:
        """``{node name: True when its `ray start` process group still has live processes}``."""
        return {n.name: self._is_ours(n) and bool(process_group_members(n.pid)) for n in self.nodes}

    def status(self) -> dict:
        """A JSON-able summary: address, and per node its pid, ports, resources and liveness."""
        alive = self.alive()
        return {"address": self.address, "state_dir": str(self.state_dir), "ray_temp_dir": self.ray_temp_dir,
                "client_env": self.client_env(),
                "nodes": [{"name": n.name, "pid": n.pid, "alive": alive[n.name], "num_cpus": n.num_cpus,
                           "resources": n.resources, "node_manager_port": n.ports["node_manager"], "log": n.log}
                          for n in self.nodes]}

    def stop(self, grace_s: float = 3.0) -> list[int]:
        """Stop exactly the process groups this launcher started (workers first, then the head).

        SIGTERM to each recorded group, SIGKILL to what is left after ``grace_s`` (raylets and the GCS take
        longer than that to shut down gracefully; a throwaway cluster keeps no state worth it). Returns the pids
        signalled. The state file is removed once nothing of the cluster is left.
        """
        signalled = []
        # a group whose leader exited may still hold daemons; its pgid cannot be reused while they live
        ours = [n for n in reversed(self.nodes)
                if self._is_ours(n) or (process_start_ticks(n.pid) is None and process_group_members(n.pid))]
        for n in ours:
            members = process_group_members(n.pid)
            if members:
                signalled += members
                try:
                    os.killpg(n.pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
        deadline = time.monotonic() + grace_s
        while time.monotonic() < deadline and any(process_group_members(n.pid) for n in ours):
            for n in ours:   # reap our own children (library use) so they do not linger as zombies
                try:
                    os.waitpid(n.pid, os.WNOHANG)
                except ChildProcessError:
                    pass
            time.sleep(0.2)
        for n in ours:
            if process_group_members(n.pid):
                try:
                    os.killpg(n.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            try:
                os.waitpid(n.pid, 0 if n.pid in process_group_members(n.pid) else os.WNOHANG)
            except ChildProcessError:
                pass
        deadline = time.monotonic() + 5.0    # SIGKILL is delivered asynchronously
        while time.monotonic() < deadline and any(process_group_members(n.pid) for n in ours):
            time.sleep(0.1)
        if not any(process_group_members(n.pid) for n in ours) and self.state_file.exists():
            self.state_file.unlink()
        return sorted(set(signalled))

    def __enter__(self) -> "LocalCluster":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--state-dir", default=None, help=f"default {_default_state_dir()} ($PADDOCK_CLUSTER_DIR)")
    sub = parser.add_subparsers(dest="command", required=True)
    start = sub.add_parser("start", help="start a head and --workers worker raylets")
    start.add_argument("--workers", type=int, default=2)
    start.add_argument("--base-port", type=int, default=26400)
    start.add_argument("--head-cpus", type=int, default=0)
    start.add_argument("--worker-cpus", type=int, default=1)
    start.add_argument("--object-store-mb", type=int, default=100)
    start.add_argument("--dashboard", action="store_true", help="start the dashboard, bound to 127.0.0.1")
    start.add_argument("--no-auth", action="store_true", help="RAY_AUTH_MODE=disabled: only on a machine with "
                       "no other users (the ports listen on 127.0.0.1)")
    sub.add_parser("status", help="print the recorded nodes and whether they are alive (JSON)")
    stop = sub.add_parser("stop", help="stop exactly the processes this launcher started")
    stop.add_argument("--grace", type=float, default=3.0, help="seconds between SIGTERM and SIGKILL")
    args = parser.parse_args(argv)
    try:
        if args.command == "start":
            cluster = LocalCluster(args.workers, args.base_port, args.head_cpus, args.worker_cpus,
                                   args.object_store_mb, args.state_dir, args.dashboard, not args.no_auth).start()
            print(json.dumps(cluster.status(), indent=2))
            env = " ".join(f"{k}={v}" for k, v in cluster.client_env().items())
            print(f"\nconnect: export {env} RAY_ADDRESS={cluster.address}, then ray.init(address="
                  f"{cluster.address!r}) or paddock-ma collect --address auto ...", file=sys.stderr)
        elif args.command == "status":
            print(json.dumps(LocalCluster.load(args.state_dir).status(), indent=2))
        else:
            pids = LocalCluster.load(args.state_dir).stop(args.grace)
            print(f"stopped {len(pids)} processes: {pids}")
    except LocalClusterError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
