"""cluster/local_cluster.py: a head and worker raylets on this machine, stopped by the pids it recorded."""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .conftest import free_port_base, load_launcher

ROOT = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.ray, pytest.mark.cluster]


def test_launcher_starts_nodes_and_stops_exactly_its_processes(tmp_path):
    lc = load_launcher()
    bystander = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    base = free_port_base(6)       # its nodes, and a second start's block 400 ports on
    cluster = lc.LocalCluster(num_workers=1, base_port=base, state_dir=tmp_path / "c", object_store_mb=80)
    try:
        cluster.start()
        status = lc.LocalCluster.load(tmp_path / "c").status()
        assert [n["name"] for n in status["nodes"]] == ["head", "node1"]
        assert all(n["alive"] for n in status["nodes"])
        # a second start over the same state dir is refused, naming the fix
        with pytest.raises(lc.LocalClusterError, match="stop it first"):
            lc.LocalCluster(num_workers=1, base_port=base + 400, state_dir=tmp_path / "c").start()
        probe = ("import ray, json; ray.init(address=%r, log_to_driver=False); "
                 "print(json.dumps(sorted(k for n in ray.nodes() if n['Alive'] for k in n['Resources'] "
                 "if k in ('head', 'node1', 'worker'))))" % cluster.address)
        out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60,
                             env=dict(os.environ, **cluster.client_env()))
        assert json.loads(out.stdout.strip().splitlines()[-1]) == ["head", "node1", "worker"], out.stderr[-2000:]
    finally:
        pids = lc.LocalCluster.load(tmp_path / "c").stop() if (tmp_path / "c" / "cluster.json").exists() else []
    assert pids, "stop signalled nothing"
    time.sleep(0.5)
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as fh:
                assert fh.read().rsplit(")", 1)[1].split()[0] == "Z", f"pid {pid} survived stop"
        except FileNotFoundError:
            pass
    assert bystander.poll() is None, "stop touched a process it did not start"
    bystander.kill()
    assert not (tmp_path / "c" / "cluster.json").exists()
    import shutil
    shutil.rmtree(cluster.ray_temp_dir, ignore_errors=True)       # the stopped cluster's Ray logs


def test_launcher_rejects_bad_values(tmp_path):
    lc = load_launcher()
    with pytest.raises(lc.LocalClusterError, match="num_workers"):
        lc.LocalCluster(num_workers=-1, state_dir=tmp_path)
    with pytest.raises(lc.LocalClusterError, match="base_port"):
        lc.LocalCluster(base_port=80, state_dir=tmp_path)
    with pytest.raises(lc.LocalClusterError, match="does not exist"):
        lc.LocalCluster.load(tmp_path / "nothing")


def _descendants(pids) -> set:
    """``pids`` and every process they started, however deep (core workers are the raylets' children)."""
    children = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                ppid = int(Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[1])
            except OSError:
                continue
            children.setdefault(ppid, []).append(int(entry))
    out, todo = set(), list(pids)
    while todo:
        pid = todo.pop()
        if pid not in out:
            out.add(pid)
            todo += children.get(pid, [])
    return out


def _listening(pids) -> dict:
    """``{port: [addresses]}`` of the TCP sockets in LISTEN state owned by ``pids`` (from /proc)."""
    import ipaddress
    inodes = set()
    for pid in pids:
        try:
            for fd in os.listdir(f"/proc/{pid}/fd"):
                link = os.readlink(f"/proc/{pid}/fd/{fd}")
                if link.startswith("socket:["):
                    inodes.add(link[8:-1])
        except OSError:
            continue
    out = {}
    for table, v6 in (("/proc/net/tcp", False), ("/proc/net/tcp6", True)):
        for line in Path(table).read_text().splitlines()[1:]:
            f = line.split()
            if f[3] != "0A" or f[9] not in inodes:
                continue
            hexaddr, hexport = f[1].split(":")
            raw = bytes.fromhex(hexaddr)
            raw = b"".join(raw[i:i + 4][::-1] for i in range(0, len(raw), 4))    # /proc prints host-order words
            addr = ipaddress.ip_address(raw)
            if v6 and addr.ipv4_mapped:
                addr = addr.ipv4_mapped
            out.setdefault(int(hexport, 16), []).append(addr)
    return out


def test_launcher_cluster_requires_its_token_and_listens_on_loopback_only(tmp_path):
    """Every TCP port a process of the cluster listens on (GCS, raylets, agents, metrics, the core workers
    of its actors, and the client's own) is on loopback, and nothing serves a client without the token."""
    lc = load_launcher()
    base = free_port_base(2)
    cluster = lc.LocalCluster(num_workers=1, base_port=base, state_dir=tmp_path / "c", object_store_mb=80)
    client = None
    try:
        cluster.start()
        assert oct(os.stat(cluster.token_path).st_mode & 0o777) == "0o600"
        probe = ("import ray; ray.init(address=%r, log_to_driver=False); "
                 "print('joined', ray.get(ray.remote(lambda: 7).remote()))" % cluster.address)
        # a client that stays connected, with an actor on a worker node, while the sockets are listed
        stay = ("import ray, sys; ray.init(address=%r, log_to_driver=False); "
                "a = ray.remote(num_cpus=1)(type('A', (), {'f': lambda self: 7})).remote(); "
                "print('joined', ray.get(a.f.remote()), flush=True); sys.stdin.read()" % cluster.address)
        client = subprocess.Popen([sys.executable, "-c", stay], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True, env=dict(os.environ, **cluster.client_env()))
        assert client.stdout.readline().strip() == "joined 7", client.stderr.read()[-2000:] if client.poll() else ""
        # on loopback too (refused for the token, not for the address), without it or with another one
        env = dict({k: v for k, v in os.environ.items() if not k.startswith("RAY_AUTH")}, **lc.LOOPBACK_CLIENT_ENV)
        # (both at once: a refused client gives up only after its connection retries)
        (tmp_path / "wrong").write_text("0" * 64)
        refused = {mode: subprocess.Popen([sys.executable, "-c", probe], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                          text=True, env=dict(env, RAY_AUTH_MODE=mode, **extra))
                   for mode, extra in (("disabled", {}),      # no token, and a token of its own (another cluster's)
                                       ("token", {"RAY_AUTH_TOKEN_PATH": str(tmp_path / "wrong")}))}
        for mode, proc in refused.items():
            out, _ = proc.communicate(timeout=120)
            assert proc.returncode != 0 and "joined" not in out, (mode, out)
        listening = _listening(_descendants(cluster.live_pids() + [client.pid]))
        assert {base, base + 1, base + 101} <= set(listening), listening      # GCS, both raylets: what was listed
        beyond = {port: addrs for port, addrs in listening.items() if any(not a.is_loopback for a in addrs)}
        assert beyond == {}, beyond
    finally:
        if client is not None:
            client.kill()
            client.wait()
        cluster.stop()
        import shutil
        shutil.rmtree(cluster.ray_temp_dir, ignore_errors=True)
